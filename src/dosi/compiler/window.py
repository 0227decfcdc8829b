"""D-WINDOW references, checked once every metric is compiled: `frame.second` names a plain
single-aggregate metric of the same base dataset; `partition.exclude` names model fields."""

from __future__ import annotations

from collections.abc import Mapping

from dosi.compiler.context import CompileContext
from dosi.errors import closest
from dosi.ir.model import DatasetIr, MetricIr


def check_window_references(
    cx: CompileContext, metrics: Mapping[str, MetricIr], datasets: Mapping[str, DatasetIr]
) -> None:
    for name, m in metrics.items():
        w = m.window
        if w is None:
            continue
        mpath = f"metrics[{name}]"
        mline = cx.line([("metrics", name)])
        second = getattr(w, "second", None)
        if second is not None:
            other = metrics.get(second)
            if other is not None and other.lod is not None:  # D-LOD: no window over LOD
                cx.sink.error(
                    "not_implemented",
                    f"`window.frame.second` of `{name}` names `{second}`, a level-of-detail "
                    "metric: a window over a level of detail is not implemented",
                    path=mpath,
                    line=mline,
                    hint="name the plain aggregate metric it is based on",
                )
            elif other is None or other.kind != "aggregate" or other.window is not None:
                why = "no such metric" if other is None else "it is not a plain single aggregate"
                cx.sink.error(
                    "invalid_datus_extension",
                    f"`window.frame.second` of `{name}` names `{second}`: {why}",
                    path=mpath,
                    line=mline,
                    candidates=closest(second, list(metrics)),
                )
            elif other.datasets != m.datasets:
                cx.sink.error(
                    "invalid_datus_extension",
                    f"`window.frame.second` of `{name}` names `{second}`, which aggregates "
                    "another dataset; both series must come from one base dataset",
                    path=mpath,
                    line=mline,
                )
        partition = getattr(w, "partition", None)
        for ref in getattr(partition, "exclude", ()) or ():
            ds, _, fname = ref.partition(".")
            d = datasets.get(ds)
            if d is None or fname not in d.fields:
                everything = [f.qualified for x in datasets.values() for f in x.fields.values()]
                cx.sink.error(
                    "invalid_datus_extension",
                    f"`window.partition.exclude` of `{name}` names `{ref}`, which is not a "
                    "field of the model",
                    path=mpath,
                    line=mline,
                    candidates=closest(ref, everything),
                )
