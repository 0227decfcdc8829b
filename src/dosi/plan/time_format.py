"""Branch dims and time filters over a field, D-FORMAT aware (datus-extensions §3 D-FORMAT).

An encoded field's dim keeps its raw stored expression plus the layout: the renderer groups by
the raw value and asks the dialect to decode it once per group (FMT-GRP-05); its time filter
keeps the raw column and has its bounds folded into the stored encoding (FMT-FLT-01).
"""

from __future__ import annotations

import datetime as dt

from dosi.ir.model import FieldIr
from dosi.plan.records import BranchDim, TimeFilter
from dosi.query.stream_window import StreamWindow


def branch_dim(
    output: str, f: FieldIr, grain: str | None, window: StreamWindow | None = None
) -> BranchDim:
    fmt = f.time_format if f.encoded else None
    datatype = fmt.decoded_datatype if fmt is not None else f.datatype
    return BranchDim(output, f.expr, grain, window, datatype, fmt)


def time_filter(
    f: FieldIr,
    start: dt.date | dt.datetime | None,
    end: dt.date | dt.datetime | None,
) -> TimeFilter:
    fmt = f.time_format if f.encoded else None
    return TimeFilter(f.expr, start, end, f.datatype, fmt)
