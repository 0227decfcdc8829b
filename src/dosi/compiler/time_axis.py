"""D-TIME for metrics: the axis a metric's time grain and windows follow.

The metric's own `time_dimension` declaration wins (a bare name resolves in the metric's own
datasets first); else the unique primary time of the datasets owning its measures; else none.
"""

from __future__ import annotations

from collections.abc import Mapping

from dosi import ext
from dosi.compiler.context import CompileContext, Site
from dosi.ir.model import DatasetIr, FieldIr


def metric_time_axis(
    cx: CompileContext,
    datasets: Mapping[str, DatasetIr],
    metric: str,
    mext: ext.MetricExt,
    owners: list[str],
    site: Site,
) -> str | None:
    declared = mext.time_dimension
    if declared is not None:
        f = _find_time_field(datasets, declared, owners)
        if f is None or not f.is_time:
            what = "matches no field" if f is None else f"names `{f.qualified}`, not a time field"
            cx.sink.error(
                "invalid_datus_extension",
                f"`time_dimension` of metric `{metric}` ({declared}) {what}",
                path=site.path,
                line=site.line,
                candidates=[
                    x.qualified for d in datasets.values() for x in d.fields.values() if x.is_time
                ][:8],
            )
        else:
            return f.qualified
    primaries = {
        f"{o}.{datasets[o].primary_time}" for o in owners if datasets[o].primary_time is not None
    }
    if len(primaries) == 1:
        return next(iter(primaries))
    return None


def _find_time_field(
    datasets: Mapping[str, DatasetIr], ref: str, owners: list[str]
) -> FieldIr | None:
    if "." in ref:
        ds, _, name = ref.partition(".")
        d = datasets.get(ds)
        return d.fields.get(name) if d else None
    # a bare name resolves in the metric's own datasets first (D-TIME)
    for o in dict.fromkeys(owners):
        f = datasets[o].fields.get(ref)
        if f is not None:
            return f
    hits = [d.fields[ref] for d in datasets.values() if ref in d.fields]
    return hits[0] if len(hits) == 1 else None
