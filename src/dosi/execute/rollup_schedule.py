"""When a rollup's refresh rule says it is due (issue 28 item 1: "a refresh rule ... on a
schedule"), and which time buckets a scheduled incremental refresh recomputes. Pure functions
of the declarations, the stored build times and the clock; `dosi serve`'s watcher thread calls
`Engine.rollups_scheduled`, which uses them (docs/rollups-and-cache.md, "Refresh rules")."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from dosi.execute.rollup_store import BuiltRollup
from dosi.ir.rollup import RollupIr

#: grains whose buckets start at a calendar-independent date (a week's start is the model's)
_PARTITIONED = ("hour", "day", "month", "quarter", "year")


def due(r: RollupIr, built: Mapping[str, BuiltRollup], fresh: bool, now: dt.datetime) -> bool:
    """Its `refresh.every` has passed since its build (or it was never built), and it is not
    known to be fresh (a fresh rollup is left alone; a server's without a refresh key is
    never known fresh, so it is rebuilt on the schedule)."""
    if r.refresh.every is None or fresh:
        return False
    b = built.get(r.name)
    if b is None or b.signature != r.signature:
        return True
    try:
        at = dt.datetime.fromisoformat(b.built_at)
    except ValueError:
        return True
    return (now.replace(tzinfo=None) - at).total_seconds() >= r.refresh.every


def partition_start(r: RollupIr, now: dt.datetime) -> dt.date | None:
    """The first day of the last `refresh.partitions` time buckets before and including the
    one `now` falls in (UTC): what a scheduled refresh recomputes; None: rebuild it whole
    (no partitions declared, no time field, or week buckets, whose start is the model's)."""
    n = r.refresh.partitions
    if n is None or r.time is None or r.grain not in _PARTITIONED:
        return None
    today = now.date()
    if r.grain in ("hour", "day"):
        # an hour rollup's partitions are whole days here (`since` is a date)
        return today - dt.timedelta(days=n - 1)
    months = {"month": 1, "quarter": 3, "year": 12}[r.grain]
    start = (today.year * 12 + today.month - 1) // months * months
    first = start - (n - 1) * months
    return dt.date(first // 12, first % 12 + 1, 1)
