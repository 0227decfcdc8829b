"""D-DERIVE M2 `window.base` series: a window over a ratio or a compose reads a series that is
a formula over measures (possibly of several branches), so the planner computes it as a hidden
metric column below the window stage (after the branch merge for a cross-fact base) and the
stage windows that column (WIN-BASE-02, WIN-BASE-05)."""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.ir.model import MetricIr

SERIES_SUFFIX = "__base"


def series_name(m: MetricIr) -> str:
    return f"{m.name}{SERIES_SUFFIX}"


def needs_series(m: MetricIr) -> bool:
    """A window whose base is not one measure column: the series is computed first."""
    if m.window is None or m.window_base is None:
        return False
    f = m.formula
    return not (
        len(m.measures) == 1
        and isinstance(f, exp.Column)
        and not f.table
        and f.name == m.measures[0]
    )


def series_metric(m: MetricIr) -> MetricIr:
    """The hidden metric computing `m`'s base series (its formula over the base's measures)."""
    return replace(m, name=series_name(m), window=None, window_base=None, derive=None)
