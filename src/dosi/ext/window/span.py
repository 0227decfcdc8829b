"""`span` on a frame window (1.15, issue 22): a trailing frame measured in calendar time, not in
buckets.

    "frame": {"function": "sum", "span": "2 month"}
    {"type": "rolling", "function": "sum", "span": {"count": 2, "granularity": "month"}}

A bucket is in the frame of bucket `t` when it starts after `t - span` and no later than `t`:
a 2-month span read on 2020-03-31 sums the days 2020-02-01 .. 2020-03-31, whatever the number
of buckets in between (a ROWS frame of `periods` counts buckets; over a series with gaps, or at
a grain finer than the span's unit, those are not calendar months). The span's unit is a grain
at least as coarse as the series it frames; it is a RANGE frame over the time key, so empty
buckets need no densification for the value to be right.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from dosi.ext.envelope import json_type
from dosi.ext.grains import FIXED_SECONDS, MONTHS
from dosi.ext.window.reader import WindowReader, alternatives, is_int, present, show

#: the calendar units a span counts (a week is 7 days, a quarter 3 months)
SPAN_GRAINS: tuple[str, ...] = (
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "quarter",
    "year",
)
SPAN_KEYS: tuple[str, ...] = ("count", "granularity")
#: a span reaches back at most 10,000 years (its scan bound must stay a calendar date)
_MAX_YEARS = 10_000


class Span(NamedTuple):
    """`count` units of `granularity`, back from the current bucket."""

    count: int
    granularity: str

    def describe(self) -> str:
        return f"{self.count} {self.granularity}"


def finer_than(span_grain: str, series_grain: str) -> bool:
    """Is the span's unit finer than the series grain (so a span cannot start on a bucket)?"""
    rank = {g: i for i, g in enumerate(SPAN_GRAINS)}
    if series_grain not in rank:  # a fiscal / retail / custom series: only whole months+ fit
        return span_grain not in MONTHS
    return rank[span_grain] < rank[series_grain]


def parse_span(r: WindowReader, key: str, raw: Any) -> Span | None:
    """`"<count> <granularity>"` (one trailing `s` accepted) or `{count, granularity}`."""
    r.feature("window.frame.span")
    hint = 'e.g. "span": "2 month" or {"count": 2, "granularity": "month"}'
    if isinstance(raw, str):
        parts = raw.split(" ")
        if len(parts) != 2 or not parts[0].isascii() or not parts[0].isdigit():
            r.err(key, f'must be "<count> <granularity>" (got {show(raw)})', hint)
            return None
        unit = parts[1] if parts[1] in SPAN_GRAINS else parts[1].removesuffix("s")
        return _checked(r, key, parts[0], unit, hint)
    obj = r.obj(key, raw)
    if obj is None:
        return None
    r.deny_unknown(key, obj, SPAN_KEYS)
    if not present(obj, "count") or not present(obj, "granularity"):
        r.err(key, "needs both `count` (an integer >= 1) and `granularity`", hint)
        return None
    count = obj["count"]
    if not is_int(count):
        r.err(f"{key}.count", f"must be an integer >= 1 (got {json_type(count)} {show(count)})")
        return None
    unit = obj["granularity"]
    if not isinstance(unit, str):
        r.err(f"{key}.granularity", f"must be {alternatives(SPAN_GRAINS)} (got {show(unit)})")
        return None
    return _checked(r, key, str(count), unit, hint)


def _checked(r: WindowReader, key: str, count_s: str, unit: str, hint: str) -> Span | None:
    if unit not in SPAN_GRAINS:
        r.err(key, f"granularity {show(unit)} must be {alternatives(SPAN_GRAINS)}", hint)
        return None
    count = int(count_s) if len(count_s) < 16 else -1
    if count < 1:
        r.err(key, f"count must be an integer >= 1 (got {count_s[:20]})", hint)
        return None
    years = count * (MONTHS[unit] / 12 if unit in MONTHS else FIXED_SECONDS[unit] / (366 * 86_400))
    if years > _MAX_YEARS:
        r.err(key, f"spans more than {_MAX_YEARS:,} years ({count} {unit}s)", hint)
        return None
    return Span(count, unit)


#: frame keys a span replaces or cannot be read with
_EXCLUSIVE: tuple[str, ...] = (
    "preceding",
    "following",
    "units",
    "scope",
    "require_full_window",
    "exclusion",
    "history",
)


def check_span(r: WindowReader, kp: str, raw: dict[str, Any]) -> None:
    """A span is the frame's start (RANGE over time, ending at the current bucket): it replaces
    `preceding` and the bound / unit keys, and reads time ascending."""
    for k in _EXCLUSIVE:
        if present(raw, k):
            r.err(
                f"{kp}.{k}",
                f"cannot be combined with `{kp}.span`: a span frames the buckets of the "
                "trailing calendar interval ending at the current bucket",
                hint=f"remove `{kp}.{k}`, or remove span for a frame counted in buckets",
            )
    order = raw.get("order")
    if isinstance(order, dict) and (
        order.get("by", "time") != "time" or order.get("direction", "asc") != "asc"
    ):
        r.err(
            f"{kp}.order",
            f"must be time ascending with `{kp}.span` (a span is measured back in time)",
            hint=f"remove `{kp}.order`",
        )
