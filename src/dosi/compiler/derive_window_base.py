"""D-DERIVE M2 `window.base` (datus-extensions D-DERIVE, WIN-BASE-*, WIN-19-06/07): a window
whose series is another metric's (a ratio, a filter or a compose). The metric takes its base's
measures and formula (its own expression is only an approximation, stage tier); windows over
windows stack up to `MAX_WINDOW_LEVELS` stages, each above the first declaring its partition.
"""

from __future__ import annotations

from dataclasses import replace

from dosi.compiler.derive_expansion import DeriveFailed, DerivePass
from dosi.errors import closest
from dosi.ext.derive import ComposeDerive, FilterDerive
from dosi.ir.derive import DeriveIr
from dosi.ir.model import MetricIr

MAX_WINDOW_LEVELS = 3  # WIN-19-06


def window_base(p: DerivePass, m: MetricIr) -> MetricIr:
    name, bname = m.name, m.window_base
    assert bname is not None
    base = p.metrics.get(bname)
    if bname == name:
        raise p.error(name, "metric_reference_cycle", f"metric reference cycle: {name} -> {name}")
    if base is None and bname in p.failed:
        raise DeriveFailed()  # its own error is reported: no follow-on duplicate
    if base is None:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`window.base` of `{name}` names `{bname}`, which is not a metric",
            candidates=tuple(closest(bname, [n for n in p.metrics if n != name])),
        )
    if base.window is not None:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`window.base` of `{name}` names the window metric `{bname}`: an inner window "
            "has no stage of its own to land on",
            hint=f"wrap `{bname}` in a compose metric and name that as the base",
        )
    if base.lod is not None:  # WIN-BASE-04 / LOD-NI-15
        raise p.error(
            name,
            "not_implemented",
            f"`window.base` of `{name}` names `{bname}`, a level-of-detail metric: a window "
            "over a level of detail is not implemented",
            hint="window the plain metric it is based on, and query the LOD metric apart",
        )
    decl = base.derive_decl
    if decl is not None and not isinstance(decl, FilterDerive | ComposeDerive):
        raise p.error(
            name,
            "not_implemented",
            f"`window.base` of `{name}` names the {getattr(decl, 'family', 'derived')} "
            f"metric `{bname}`: a window over it is not implemented",
        )
    p.stack.append(name)
    try:
        e = p.expand(bname, None)
    finally:
        p.stack.pop()
    level = 1 + p.level(bname) if e.stage else 1
    if level > MAX_WINDOW_LEVELS:
        raise p.error(
            name,
            "not_implemented",
            f"metric `{name}` stacks {level} window stages, past the limit of {MAX_WINDOW_LEVELS}",
            hint="compute a lower level in its own query",
        )
    spec = m.window
    # the parser's default (identity): a partition the payload did not declare (WIN-19-07)
    implicit = spec is not None and spec.partition_is_default
    if level >= 2 and spec is not None and spec.family != "offset" and implicit:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`window` of `{name}` reads another window's output (level {level} over "
            f"`{bname}`) and must declare `partition` explicitly: the default is only "
            "unambiguous on a single stage",
            hint=f'add "partition": {{"mode": "query_dimensions"}} to `{spec.family}`',
        )
    chain = [bname]
    subset = bname if isinstance(decl, FilterDerive) else None
    return replace(
        m,
        kind=base.kind,
        formula=base.formula,
        measures=base.measures,
        datasets=base.datasets,
        # the base's axis: a cross-fact base has none (each branch reads its own), never
        # the axis the approximate expression happens to imply
        time_axis=_axis(p, m, base),
        derive=DeriveIr(
            "window",
            "stage",
            base=bname,
            subset_of=subset,
            base_chain=tuple(chain),
            attribution="approximate",
            level=level,
            written=(bname,),
        ),
    )


def _axis(p: DerivePass, m: MetricIr, base: MetricIr) -> str | None:
    """The window's time axis: the base's own; for a cross-fact base, the merged series'
    when every base dataset's primary time lies in one conformed class (issue 20 point 3:
    CONF-14, one axis in several spellings), else none (each branch reads its own, and a
    window needing the axis is refused); never the axis the approximate expression implies."""
    if base.time_axis is not None:
        return base.time_axis
    if len(base.datasets) <= 1:
        return m.time_axis
    conf = p.scope.conformed
    classes = []
    first: str | None = None
    for ds in sorted(base.datasets):
        primary = p.scope.datasets[ds].primary_time
        cls = conf.class_of(ds, primary) if primary is not None else None
        if cls is None:
            return None
        classes.append(cls.name)
        first = first or f"{ds}.{primary}"
    return first if len(set(classes)) == 1 else None
