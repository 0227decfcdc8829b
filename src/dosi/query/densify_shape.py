"""The `densify` query key's shape (no names resolved: `dosi.query.densify` does that).

`"time"` fills every bucket of the grouped time grain, `"all"` also crosses the grouped
categorical values, `"windows"` computes window metrics over the filled series but returns the
rows that have data, `"covered"` returns those rows and the empty buckets in which a window
metric has a value (an offset reading a bucket with data, a frame holding one), `false` (or `"none"`) fills nothing; `true` is `"time"`. Absent, the
model's default applies (its DOSI setting `densify`, dosi.ext.settings).
"""

from __future__ import annotations

from typing import Any

from dosi.errors import QueryShapeError, bounded, closest

#: The modes, as the query key spells them (`false` is "none").
DENSIFY_MODES: tuple[str, ...] = ("time", "all", "windows", "covered", "none")


def parse_densify(value: Any) -> str | None:
    """The query key's value as one of DENSIFY_MODES, or None when absent (or null)."""
    if value is None:
        return None
    if value is True:
        return "time"
    if value is False:
        return "none"
    if isinstance(value, str) and value.strip().lower() in DENSIFY_MODES:
        return value.strip().lower()
    shown = bounded(value, 40)
    raise QueryShapeError(
        "invalid_query",
        f'`densify` must be "time", "all", "windows", "covered" or false, got {shown}',
        candidates=closest(str(value), DENSIFY_MODES) or ["time", "all", "windows"],
        hint='"densify": "time" returns every bucket of the grouped time grain; "all" also '
        "crosses the grouped categorical values",
    )
