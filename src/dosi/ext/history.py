"""The DATUS version history (datus-extensions §7): the minor that added each payload key
(`HISTORY`) and each in-family shape of `window` (`WINDOW_FEATURES`). The version gate dates
keys and shapes by these; `dosi.ext.registry` publishes them with the keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WINDOW_FEATURES: dict[str, str] = {
    "window.rank": "1.3",
    "window.value": "1.3",
    "window.offset.direction": "1.3",
    "window.frame.order": "1.3",
    "window.frame.partition": "1.3",
    "window.frame.units": "1.3",
    "window.frame.second": "1.3",
    "window.frame.function (W2 statistical)": "1.3",
    "window.frame.function (W3 two-argument)": "1.3",
    "window.frame.scope": "1.9",
    "window.order.nulls": "1.9",
    "window.share": "1.13",
    "window.streak": "1.13",
    "window.frame.following": "1.14",
    "window.frame.units (groups)": "1.14",
    "window.frame.exclusion": "1.14",
    "window.frame.function (regr_*)": "1.14",
    "window.frame.function (percentiles)": "1.14",
    "window.frame.fraction": "1.14",
    "window.value.ignore_nulls": "1.14",
    "window.frame.period_value": "1.14",
    "window.frame.history": "1.15",
    "window.frame.span": "1.15",
    "window.frame.function (count_distinct)": "1.15",
    "window.frame.reset (sub-day)": "1.15",
    "window.offset.period_start": "1.15",
    "window.offset.period_value": "1.15",
}
"""In-family growth of `window` (no registry rows, §7 1.3 / 1.9): the minor that added each
shape. Used by the gate for `datus_ext_key_newer_than_declared` (a new accepted shape of an
existing key is a MINOR bump, §2.1)."""


@dataclass(frozen=True)
class HistoryEntry:
    """One released minor version (datus-extensions §7)."""

    version: str
    date: str
    keys: tuple[str, ...]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version, "date": self.date, "added": list(self.keys)}
        if self.note:
            out["note"] = self.note
        return out


HISTORY: tuple[HistoryEntry, ...] = (
    HistoryEntry("1.0", "2026-07-11", ("join_type", "fill_nulls_with")),
    HistoryEntry(
        "1.1",
        "2026-08-02",
        ("time_dimension", "time_granularity", "dataset"),
        "2026-08-04: the envelope version gate (v) and requires, with no new keys",
    ),
    HistoryEntry("1.2", "2026-08-06", ("window",)),
    HistoryEntry(
        "1.3",
        "2026-08-09",
        (),
        "in-family window growth: rank and value families, offset.direction, frame "
        "order/partition/units/second, W2/W3 functions",
    ),
    HistoryEntry("1.4", "2026-08-12", ("derive", "measure")),
    HistoryEntry("1.5", "2026-08-26", ("params",)),
    HistoryEntry("1.6", "2026-09-02", ("time",)),
    HistoryEntry("1.7", "2026-09-11", ("is_dimension",)),
    HistoryEntry("1.8", "2026-09-16", ("cardinality",)),
    HistoryEntry(
        "1.9",
        "2026-09-16",
        (),
        "in-family window growth: frame.scope, order.nulls, window.base over ratio/compose, "
        "nested windows",
    ),
    HistoryEntry("1.10", "2026-09-23", ("lod",)),
    HistoryEntry("1.11", "2026-12-02", ("semi_additive",)),
    HistoryEntry(
        "1.12",
        "2026-12-02",
        ("conversion",),
        "an engine key the documents do not reserve (conversion metrics); silent, so it "
        "belongs in requires",
    ),
    HistoryEntry(
        "1.13",
        "2026-12-02",
        (),
        "in-family window growth: the share and streak families (general-form keys and their "
        "reserved window types)",
    ),
    HistoryEntry(
        "1.14",
        "2026-12-02",
        (),
        "in-family window growth (the 1.3 roadmap's rest): frame.following, GROUPS units, "
        "frame.exclusion, the regr_* and percentile frame functions (frame.fraction), "
        "value.ignore_nulls",
    ),
    HistoryEntry(
        "1.15",
        "2026-12-02",
        ("empty_buckets", "validity"),
        "in-family window growth: frame.history (a running total over the rows before a "
        "time_range start), frame.span (a trailing frame of calendar time), the count_distinct "
        "frame function (distinct values over the window's rows), hour and minute resets, offset.period_start (the value at the start of the period), an offset's "
        "period_value (a grain the shift does not land on answered from day values); dosi's "
        "metric key empty_buckets (drop the buckets a filtered metric has no row in, "
        "MetricFlow's filter semantics) and dataset key validity (a slowly changing "
        "dimension joined at the version valid at the fact's time), not in the DATUS documents",
    ),
)
