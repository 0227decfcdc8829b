"""Pure-Python window boundaries on epoch milliseconds (window-udf.md, decided formulas).

All values are integers in epoch milliseconds; Python's `//` and `%` floor toward minus infinity,
so pre-1970 (negative) timestamps fall in the window that really contains them. The SQL
implementations (`duckdb_macros`, `datafusion_udfs`, `dosi.sql.stream_window_bounds`) compute
the same results and return them as microsecond timestamps; these functions are what the planner and the tests use
when they need a boundary in Python.

Formulas (UDF-GAP-05 as decided for dosi):

* ``tumble  = floor((ts - offset) / interval) * interval + offset``; ``tumble_end = tumble + interval``
* ``adj = ts - size + slide - offset``; ``hop = adj - floor_mod(adj, slide) + offset`` (the earliest
  window of length ``size`` on the ``slide`` grid that contains ``ts``); ``hop_end = hop + size``
* ``cumulate = floor(ts / size) * size`` (size-aligned epoch, offset 0); ``cumulate_end = + size``
* ``session(ts, gap) = ts`` (passthrough; real sessions are computed by Ring 0)
"""

from __future__ import annotations

from dosi.udf.validation import check_cumulate, check_hop, check_offset, check_window_length

__all__ = ["cumulate", "cumulate_end", "hop", "hop_end", "session", "tumble", "tumble_end"]


def tumble(ts_ms: int, interval_ms: int, offset_ms: int = 0) -> int:
    """Start of the tumbling window containing `ts_ms` (UDF-TUM-02)."""
    check_window_length("tumble", "interval", interval_ms)
    check_offset("tumble", offset_ms)
    return (ts_ms - offset_ms) // interval_ms * interval_ms + offset_ms


def tumble_end(ts_ms: int, interval_ms: int, offset_ms: int = 0) -> int:
    """Exclusive end of the tumbling window containing `ts_ms` (UDF-TUM-03)."""
    check_window_length("tumble_end", "interval", interval_ms)
    check_offset("tumble_end", offset_ms)
    return (ts_ms - offset_ms) // interval_ms * interval_ms + offset_ms + interval_ms


def _hop_start(ts_ms: int, slide_ms: int, size_ms: int, offset_ms: int) -> int:
    adj = ts_ms - size_ms + slide_ms - offset_ms
    return adj - adj % slide_ms + offset_ms


def hop(ts_ms: int, slide_ms: int, size_ms: int, offset_ms: int = 0) -> int:
    """Start of the earliest sliding window that contains `ts_ms` (UDF-HOP-02)."""
    check_hop("hop", slide_ms, size_ms, offset_ms)
    return _hop_start(ts_ms, slide_ms, size_ms, offset_ms)


def hop_end(ts_ms: int, slide_ms: int, size_ms: int, offset_ms: int = 0) -> int:
    """Exclusive end of the earliest sliding window that contains `ts_ms` (UDF-HOP-03)."""
    check_hop("hop_end", slide_ms, size_ms, offset_ms)
    return _hop_start(ts_ms, slide_ms, size_ms, offset_ms) + size_ms


def session(ts_ms: int, gap_ms: int) -> int:
    """Passthrough: `ts_ms` itself; `gap_ms` is only validated (UDF-SES-01)."""
    check_window_length("session", "gap", gap_ms)
    return ts_ms


def cumulate(ts_ms: int, step_ms: int, size_ms: int) -> int:
    """Start of the size-aligned epoch containing `ts_ms` (UDF-CUM-01)."""
    check_cumulate("cumulate", step_ms, size_ms)
    return ts_ms // size_ms * size_ms


def cumulate_end(ts_ms: int, step_ms: int, size_ms: int) -> int:
    """Exclusive end of the size-aligned epoch containing `ts_ms` (UDF-CUM-02)."""
    check_cumulate("cumulate_end", step_ms, size_ms)
    return ts_ms // size_ms * size_ms + size_ms
