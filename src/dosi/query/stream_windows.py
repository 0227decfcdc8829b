"""Streaming windows in metric queries: the group-by syntax, its checks and the plan shape.

A group-by item can bucket a time axis (``metric_time`` or a time field such as
``events.event_ts``) into streaming windows (window-udf.md: tumble, hop, cumulate, session).
The item yields two output columns, ``window_start`` and ``window_end`` (microsecond timestamps
without time zone, UDF-GEN-03), in place of the time item.

Syntax (one string form and one object form per window type; the first argument is always the
window length)::

    "metric_time:tumble(1 hour)"                   {"type": "tumble", "size": "1 hour"}
    "metric_time:tumble(1 hour, 15 minutes)"       {"type": "tumble", "size": "1 hour",
                                                    "offset": "15 minutes"}
    "metric_time:hop(15 minutes, 5 minutes)"       {"type": "hop", "size": "15 minutes",
                                                    "slide": "5 minutes"}
    "metric_time:hop(15 minutes, 5 minutes, 1 minute)"   (size, slide, offset)
    "metric_time:cumulate(1 day, 1 hour)"          {"type": "cumulate", "size": "1 day",
                                                    "step": "1 hour"}
    "metric_time:session(30 minutes)"              {"type": "session", "gap": "30 minutes"}

The object form is ``{"field": "metric_time", "window": {...}}``; ``"window"`` may also hold the
string form (``"hop(15 minutes, 5 minutes)"``). In the string form an argument may be named
(``hop(slide=5 minutes, size=15 minutes)``); arguments are separated by commas, so write a
combined interval without one (``"1 hour 30 minutes"`` or ``"PT1H30M"``). Intervals are what
`dosi.udf.parse_interval_ms` reads (``"5 minutes"``, ``"INTERVAL '1' HOUR"``, ``"PT30S"``); in the
object form an integer is milliseconds. Window type and argument names are case-insensitive.

Semantics (decided for dosi, CHECKLIST UDF-GAP-04/05; windows are half-open ``[start, end)``):

* ``tumble(size[, offset])``: windows ``[offset + j*size, offset + (j+1)*size)``; each row is in
  exactly one (UDF-TUM-02/03). ``offset`` may be negative.
* ``hop(size, slide[, offset])``: windows of length ``size`` starting every ``slide`` on the grid
  ``offset + j*slide``; a row counts in *every* window that contains it (``ceil(size/slide)`` or
  ``floor(size/slide)`` windows), not only the earliest one that the ``hop`` UDF returns
  (UDF-HOP-02/04). ``slide <= size``.
* ``cumulate(size, step)``: epochs ``[j*size, (j+1)*size)`` (aligned to 1970-01-01, as the
  ``cumulate`` UDF, UDF-CUM-01); inside an epoch the windows ``[epoch, epoch + i*step)`` for
  ``i = 1..size/step``; a row counts in every window of its epoch that ends after it. ``size`` is a
  multiple of ``step``. No offset. (1970-01-01 was a Thursday: 1-week tumble / cumulate windows
  start on Thursdays unless shifted with an offset, e.g. ``tumble(1 week, -3 days)``.)
* ``session(gap)``: per combination of the *other* group-by values, events ordered by time; a
  new session starts when the time since the previous event is larger than ``gap`` (a gap of
  exactly ``gap`` continues the session). ``window_start`` is the first event's time and
  ``window_end`` the last event's time plus ``gap``.

Rows whose event time is NULL belong to no window. Windows without rows are not returned (no
densification). ``where_sql`` and ``time_range`` filter rows by event time *before* windowing,
so windows at the edges of a ``time_range`` hold only the rows inside it (and sessions are cut
there). Every metric is aggregated per window from the rows, so COUNT DISTINCT and ratios are
exact per window (hop and cumulate rows are expanded to their windows before aggregating).

Rules: lengths are positive, fixed-length (no months or years) and whole milliseconds
(`dosi.udf.validation`); at most one streaming window per query; a hop or cumulate gives at
most `MAX_WINDOWS_PER_ROW` windows per row; a grain and a window on one item are exclusive;
D-WINDOW metrics with a streaming window are ``not_implemented``; a session over metrics of
several datasets is ``not_implemented`` (tumble, hop and cumulate merge several datasets on
``window_start``/``window_end`` and the other group-by values). Without ``order_by`` rows are
ordered by ``window_start``, then the other group-by values, then ``window_end``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from dosi.errors import QueryError, QueryShapeError
from dosi.query.spec import Query
from dosi.query.stream_window import (
    MAX_WINDOWS_PER_ROW,
    WINDOW_END,
    WINDOW_START,
    format_window,
    parse_window_object,
    parse_window_text,
    windows_per_row,
)

if TYPE_CHECKING:
    from dosi.ir.model import MetricIr
    from dosi.query.stream_window import StreamWindow

__all__ = [
    "MAX_WINDOWS_PER_ROW",
    "WINDOW_END",
    "WINDOW_START",
    "check_stream_query",
    "format_window",
    "parse_window_object",
    "parse_window_text",
    "stream_window_of",
    "windows_per_row",
]


class WindowedDim(Protocol):
    """What the checks read of a resolved group-by item (`dosi.query.resolve.ResolvedDim`)."""

    @property
    def window(self) -> StreamWindow | None: ...
    @property
    def spelling(self) -> str: ...
    @property
    def output(self) -> str: ...


# ------------------------------------------------------------------------------ checks


def stream_window_of(dims: Sequence[WindowedDim]) -> WindowedDim | None:
    """The (single) group-by item carrying a streaming window, if any."""
    return next((d for d in dims if d.window is not None), None)


def check_stream_query(
    query: Query, metrics: Sequence[MetricIr], dims: Sequence[WindowedDim]
) -> None:
    """Query-level rules for streaming windows (called by `resolve_query`)."""
    windowed = [d for d in dims if d.window is not None]
    if not windowed:
        return
    if len(windowed) > 1:
        raise QueryError(
            "not_implemented",
            "at most one streaming window per query; got "
            + ", ".join(f"`{d.spelling}`" for d in windowed),
            hint=f"keep one streaming window, e.g. `{windowed[0].spelling}`",
        )
    for item in query.group_by:
        if item.window is not None and item.grain is not None:
            raise QueryShapeError(
                "invalid_query",
                f"group_by `{item.field}` has both a `grain` and a `window`",
                hint="a streaming window replaces the grain: drop `grain`, or drop `window`",
            )
    dim = windowed[0]
    window_metrics = [m.name for m in metrics if m.window is not None]
    if window_metrics:
        raise QueryError(
            "not_implemented",
            f"window metrics ({', '.join(window_metrics)}) cannot be combined with the "
            f"streaming window `{dim.spelling}`",
            metrics=window_metrics,
            hint="query the window metrics with a calendar grain (metric_time:<grain>), or "
            "drop them from this query",
        )
    taken = {d.output: d.spelling for d in dims if d is not dim}
    taken.update({m.name: f"metric `{m.name}`" for m in metrics})
    for name in (WINDOW_START, WINDOW_END):
        if name in taken:
            raise QueryError(
                "duplicate_output_name",
                f"the streaming window `{dim.spelling}` produces `{name}`, and so does "
                f"{taken[name] if taken[name].startswith('metric') else f'`{taken[name]}`'}",
                hint="rename the field or the metric in the model, or drop it from the query",
            )
