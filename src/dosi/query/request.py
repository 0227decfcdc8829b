"""Reading a request object (JSON text or a dict) under the query bounds, its keys checked
against the ones its kind defines: the one reader behind detail queries and attribution
requests, so both reject hostile input (huge numbers, deep nesting) the way queries do."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dosi.errors import QueryError, QueryShapeError, closest
from dosi.query.bounds import check_query_bounds


def shape_error(what: str, message: str, **kw: Any) -> QueryShapeError:
    return QueryShapeError("invalid_query", f"invalid {what}: {message}", **kw)


def request_object(raw: Any, keys: Sequence[str], *, what: str, shape: str) -> dict[str, Any]:
    """`raw` as a dict of known keys; `what` names the request kind in messages and `shape`
    says what the object should look like."""
    if isinstance(raw, str):
        check_query_bounds(raw)
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise shape_error(what, f"not valid JSON: {exc.msg}") from None
        except (ValueError, RecursionError):  # a 5,000-digit number, or deep nesting
            raise shape_error(
                what, "the JSON holds an out-of-range number or nests too deeply"
            ) from None
    check_query_bounds(raw)
    if not isinstance(raw, dict):
        raise shape_error(what, shape)
    for key in raw:
        if key not in keys:
            raise QueryError(
                "unknown_query_key",
                f"the {what} defines no key `{key}`",
                candidates=closest(key, keys) or list(keys),
                hint=f"drop `{key}`, or spell it as one of the candidates",
            )
    return raw
