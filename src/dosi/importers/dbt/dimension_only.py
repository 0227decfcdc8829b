"""MetricFlow queries without metrics (distinct dimension values) as dosi dimension-only
queries (docs/dimension-only-queries.md): the translation is the metric query's, with
`metrics: []`; what dosi answers differently is named as a need here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

METRIC_TIME = "metric_time"
_SUB_DAY = ("hour", "minute", "second")


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
    has_spine: bool = False,
) -> None:
    """`metric_time` without a metric is MetricFlow's time spine (every bucket of the spine
    table). dosi lists its day spine's buckets for metric_time grouped alone at day or coarser,
    or as a date part (`has_spine`: the project declares one); beside other dimensions
    (MetricFlow crosses the spine with them), or at a sub-day grain (MetricFlow's hour and
    second spines) it is a need."""
    names = [*group_by, *group_by_items, *(str(o.get("name")) for o in group_by_objs)]
    if not any(_names_metric_time(n) for n in names):
        return
    texts = [*group_by, *group_by_items, *(str(dict(o)) for o in group_by_objs)]
    alone = all(_names_metric_time(n) for n in names)
    sub_day = any(g in x for x in texts for g in _SUB_DAY)
    if has_spine and alone and not sub_day:
        return
    t.need(
        "time_spine",
        "metric_time in a query without metrics lists the time spine's buckets; dosi lists "
        "its day spine for metric_time alone at day or coarser (or as a date part of a day or "
        "coarser), not crossed with other dimensions or at a sub-day grain",
    )
