"""MetricFlow queries without metrics (distinct dimension values) as dosi dimension-only
queries (docs/dimension-only-queries.md): the translation is the metric query's, with
`metrics: []`; what dosi answers differently is named as a need here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

METRIC_TIME = "metric_time"


class _Needs(Protocol):
    def need(self, code: str, why: str) -> None: ...


def _names_metric_time(text: str) -> bool:
    t = text.strip()
    return t == METRIC_TIME or t.startswith(METRIC_TIME + "__") or "'metric_time'" in t


def dimension_only_needs(
    t: _Needs,
    group_by: Sequence[str],
    group_by_items: Sequence[str],
    group_by_objs: Sequence[Mapping[str, Any]],
) -> None:
    """`metric_time` without a metric is MetricFlow's time spine (every bucket of the spine
    table); dosi's metric_time is each metric's own time axis, so such a query has no axis
    (`metric_time_needs_metric`)."""
    names = [*group_by, *group_by_items, *(str(o.get("name")) for o in group_by_objs)]
    if any(_names_metric_time(n) for n in names):
        t.need(
            "time_spine",
            "metric_time in a query without metrics lists the time spine's buckets; dosi's "
            "metric_time is a metric's time axis",
        )
