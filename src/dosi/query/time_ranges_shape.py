"""The shape of the `time_ranges` query key (CORE-Q-11): a list of tagged ranges
`{"tag", "start"?, "end"?, "dimension"?}`; each tag becomes a `<metric>__<tag>` column.
Resolution and the per-tag gates live in `dosi.query.time_ranges`."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dosi.errors import QueryError, QueryShapeError, bounded

TAG = re.compile(r"[a-z0-9_]+")
_KEYS = ("tag", "start", "end", "dimension")

When = dt.date | dt.datetime


@dataclass(frozen=True)
class TaggedRange:
    tag: str
    start: When | None
    end: When | None
    dimension: str | None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tag": self.tag}
        if self.start is not None:
            out["start"] = self.start.isoformat()
        if self.end is not None:
            out["end"] = self.end.isoformat()
        if self.dimension is not None:
            out["dimension"] = self.dimension
        return out


def parse_time_ranges(
    raw: Any, parse_when: Callable[[Any, str], When | None]
) -> tuple[TaggedRange, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise QueryShapeError(
            "invalid_query",
            f"`time_ranges` must be a list of tagged ranges, got {bounded(raw, 60)}",
            hint='e.g. "time_ranges": [{"tag": "h1", "start": "2024-01-01", "end": "2024-07-01"}]',
        )
    out: list[TaggedRange] = []
    for item in raw:
        if not isinstance(item, dict):
            raise QueryShapeError("invalid_query", "each time_ranges entry is an object")
        extra = sorted(set(item) - set(_KEYS))
        if extra:
            raise QueryError(
                "unknown_query_key",
                f"unknown time_ranges key `{extra[0]}`",
                candidates=list(_KEYS),
            )
        tag = item.get("tag")
        if tag is None:
            raise QueryShapeError("invalid_query", "each time_ranges entry needs a `tag`")
        if not isinstance(tag, str) or TAG.fullmatch(tag) is None:
            raise QueryError(
                "unsupported_filter",
                f"time range tag {bounded(tag, 40)} must be non-empty lowercase [a-z0-9_]",
            )
        if any(r.tag == tag for r in out):
            raise QueryError(
                "unsupported_filter",
                f'duplicate time range tag "{tag}"',
                hint="give each range its own tag",
            )
        start = parse_when(item.get("start"), "start")
        end = parse_when(item.get("end"), "end")
        if start is None and end is None:
            raise QueryError(
                "unsupported_filter",
                f'time range "{tag}" needs at least one of start/end',
            )
        dim = item.get("dimension")
        if dim is not None and not isinstance(dim, str):
            raise QueryError("unsupported_filter", "`dimension` of a time range is a field name")
        out.append(TaggedRange(tag, start, end, dim))
    return tuple(out)
