"""The `cache` query key (issue 28 item 4): `"cache": false` asks for a fresh answer from the
warehouse, bypassing (and not filling) the result cache. It changes where the answer comes
from, never what it is, so the engine takes it off the query before compiling: the same
query with and without it shares one compiled plan."""

from __future__ import annotations

import json
from typing import Any

from dosi.errors import QueryShapeError, bounded

CACHE_KEY = "cache"


def cache_option(raw: Any) -> tuple[Any, bool]:
    """(the query without its `cache` key, whether the result cache may answer it)."""
    data = raw
    if isinstance(raw, str):
        if f'"{CACHE_KEY}"' not in raw:
            return raw, True
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return raw, True  # the parser answers the malformed text with its own error
    if not isinstance(data, dict) or CACHE_KEY not in data:
        return raw, True
    value = data[CACHE_KEY]
    if not isinstance(value, bool):
        raise QueryShapeError(
            "invalid_query",
            f"`cache` must be true or false, got {bounded(value, 40)}",
            hint='use "cache": false for an answer read from the warehouse, bypassing the '
            "result cache",
        )
    rest = {k: v for k, v in data.items() if k != CACHE_KEY}
    return rest, value
