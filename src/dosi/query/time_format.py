"""Query-time rules for D-FORMAT encoded fields (datus-extensions §3 D-FORMAT).

* `where_sql` may not read an encoded field in any form (FMT-FLT-02): its literals are not the
  stored encoding, so the only way to filter it is `time_range`, whose bounds the engine folds.
* `time_range` bounds on an encoded field are dates (FMT-DEC-19) on a start of the stored period
  (FMT-GRP-02/03): the engine never decides whether a partial month or year belongs in; the
  error offers both aligned bounds. Scan expansion for windows is exempt (FMT-GRP-04): it is
  computed by the planner and folded with `TimeFormat.period_start` / `next_period_start`.
"""

from __future__ import annotations

import datetime as dt

from dosi.errors import QueryError
from dosi.ir.model import FieldIr
from dosi.query.spec import TimeRange


def reject_in_where(f: FieldIr) -> None:
    """FMT-FLT-02: `unsupported_filter` for any where_sql reference to an encoded field."""
    if not f.encoded:
        return
    assert f.time_format is not None
    raise QueryError(
        "unsupported_filter",
        f'`{f.qualified}` is stored encoded (D-FORMAT time.format "{f.time_format.format}"), so '
        "where_sql may not read it in any form (comparison, IN, BETWEEN, IS NULL, a function or "
        "CAST): its constants would not be the stored encoding",
        hint=f'remove it from where_sql and use "time_range": {{"dimension": "{f.qualified}", '
        '"start": "YYYY-MM-DD", "end": "YYYY-MM-DD"}; the engine writes the bounds in the '
        "stored encoding",
    )


def check_bounds(f: FieldIr, tr: TimeRange) -> None:
    """Bounds on an encoded field: ISO dates on a start of the stored period."""
    fmt = f.time_format
    if fmt is None or not fmt.encoded:
        return
    for which, value in (("start", tr.start), ("end", tr.end)):
        if value is None:
            continue
        if isinstance(value, dt.datetime):
            raise QueryError(
                "unsupported_filter",
                f"time_range {which} {value.isoformat()} is not an ISO date (YYYY-MM-DD): "
                f'bounds on `{f.qualified}` (D-FORMAT "{fmt.format}") are dates',
                hint=f"write the {which} as YYYY-MM-DD",
            )
        before = fmt.period_start(value)
        if before == value:
            continue
        after = fmt.next_period_start(value)
        grain = fmt.derived_grain or "day"
        raise QueryError(
            "grain_too_fine",
            f'`{f.qualified}` is stored at {grain} grain (D-FORMAT "{fmt.format}"); the '
            f'time_range {which} "{value.isoformat()}" falls inside a stored period. Use '
            f'"{before.isoformat()}" to {"include" if which == "start" else "exclude"} that '
            f'{grain}, or "{after.isoformat()}" to {"exclude" if which == "start" else "include"}'
            " it",
            candidates=[before.isoformat(), after.isoformat()],
            hint=f"align the {which} to the start of a {grain}: the engine does not decide "
            f"whether a partial {grain} belongs in the range",
        )
