"""D-SEMI compile: a metric's `semi_additive` declaration resolved against the model
(datus-extensions roadmap `semi_additive`, ignore impact silent).

The non-additive dimension is a time field of the dataset the metric aggregates; window
groupings are fields of the same dataset. The declaration becomes part of each of the metric's
measures (`SemiAdditiveIr` on `MeasureIr`), so a plain aggregate spelled the same way stays a
measure of its own. Also here: the combinations a semi-additive metric refuses, and a D-DERIVE
filter over a semi-additive base inheriting the declaration (its measure is the base's snapshot
rows, never the plain sum of every snapshot).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi import ext
from dosi.compiler.context import Site
from dosi.compiler.metric_scope import MetricScope
from dosi.errors import closest
from dosi.ir.model import FieldIr, MeasureIr, MetricIr
from dosi.ir.semi_additive import SemiAdditiveIr

INVALID = "invalid_datus_extension"
SUFFIX = "__semi_"  # measure names: no stem holds a double underscore (S-MEASURE-1)


def _error(scope: MetricScope, site: Site, message: str, **kw: object) -> None:
    scope.cx.sink.error(INVALID, message, path=site.path, line=site.line, **kw)


def resolve_semi_additive(
    scope: MetricScope,
    metric: str,
    spec: ext.SemiAdditiveSpec,
    tree: exp.Expression,
    pin: str | None,
    site: Site,
) -> SemiAdditiveIr | None:
    """The declaration with its fields resolved, or None after its errors are reported."""
    read = sorted(
        {c.table for c in tree.find_all(exp.Column) if c.table} | ({pin} if pin else set())
    )
    dim = _field(scope, metric, "semi_additive.dimension", spec.dimension, read, site)
    if dim is None:
        return None
    if not dim.is_time:
        times = [f.qualified for f in scope.datasets[dim.dataset].fields.values() if f.is_time]
        _error(
            scope,
            site,
            f"`semi_additive.dimension` of metric `{metric}` names `{dim.qualified}`, which is "
            "not a time field",
            candidates=tuple(times),
            hint="name the snapshot date or timestamp (an is_time field)",
        )
        return None
    groups: list[str] = []
    for g in spec.window_groupings:
        f = _field(scope, metric, "semi_additive.window_groupings", g, [dim.dataset], site)
        if f is None:
            return None
        if f.dataset != dim.dataset:
            _error(
                scope,
                site,
                f"`semi_additive.window_groupings` of metric `{metric}` names `{f.qualified}`; "
                f"window groupings are fields of `{dim.dataset}`, the dimension's dataset",
                candidates=tuple(closest(f.name, scope.datasets[dim.dataset].fields)),
            )
            return None
        if f.qualified == dim.qualified:
            _error(
                scope,
                site,
                f"`semi_additive.window_groupings` of metric `{metric}` names the dimension "
                f"`{dim.qualified}` itself",
                hint="group the snapshot by the entity that holds a balance, e.g. an account",
            )
            return None
        groups.append(f.qualified)
    return SemiAdditiveIr(dim.qualified, spec.snapshot, tuple(groups))


def _field(
    scope: MetricScope, metric: str, key: str, ref: str, read: list[str], site: Site
) -> FieldIr | None:
    """`dataset.field`, or a bare name of a field of the datasets the metric reads."""
    datasets = scope.datasets
    if "." in ref:
        ds, _, name = ref.partition(".")
        d = datasets.get(ds)
        f = d.fields.get(name) if d is not None else None
        hits = [f] if f is not None else []
    else:
        hits = [
            datasets[d].fields[ref] for d in read if d in datasets and ref in datasets[d].fields
        ]
    if len(hits) == 1:
        return hits[0]
    own = [f.qualified for d in read if d in datasets for f in datasets[d].fields.values()]
    if hits:
        what = f"is ambiguous ({', '.join(h.qualified for h in hits)})"
    else:
        what = "matches no field of the datasets the metric aggregates"
    _error(
        scope,
        site,
        f"`{key}` of metric `{metric}` ({ref}) {what}",
        candidates=tuple(closest(ref, own) or own[:8]),
        hint='write it as "dataset.field"',
    )
    return None


def check_semi_additive(
    scope: MetricScope,
    metric: str,
    semi: SemiAdditiveIr,
    kind: str,
    owners: list[str],
    site: Site,
) -> bool:
    """Every measure on the dimension's dataset; `min` / `max` over one aggregate."""
    dataset = semi.dimension.partition(".")[0]
    others = sorted({o for o in owners if o != dataset})
    if others:
        _error(
            scope,
            site,
            f"metric `{metric}` is semi-additive along `{semi.dimension}` but aggregates "
            f"{', '.join(others)}: every aggregate of a semi-additive metric reads the "
            "dimension's dataset",
            hint="declare one semi-additive metric per dataset and compose them (D-DERIVE)",
        )
        return False
    if semi.by_value and kind != "aggregate":
        _error(
            scope,
            site,
            f'`semi_additive.snapshot` "{semi.snapshot}" of metric `{metric}` picks the snapshot '
            f"by its value, which needs a single aggregate, but the expression is a {kind}",
            candidates=("last", "first"),
            hint='use "last" or "first" (by time), or put min / max on a single-aggregate '
            "metric and compose it",
        )
        return False
    return True


def refuse_combinations(scope: MetricScope, metric: str, mext: ext.MetricExt, site: Site) -> bool:
    """Declarations a semi-additive metric cannot carry yet: a structured error, never a
    declaration silently dropped."""
    if mext.semi_additive is None:
        return True
    clash = None
    if mext.lod is not None or mext.lod_invalid:
        clash = "a D-LOD `derive.lod`"
    elif getattr(mext.derive, "family", None) == "compose":
        clash = "a D-DERIVE compose (declare semi_additive on its members instead)"
    elif mext.conversion is not None:
        clash = "`conversion`"
    if clash is None:
        return True
    scope.cx.sink.error(
        "not_implemented",
        f"metric `{metric}` carries `semi_additive` together with {clash}, which is not "
        "implemented",
        path=site.path,
        line=site.line,
        hint="declare semi_additive on a plain aggregate metric and derive from it",
    )
    return False


def measure_suffix(semi: SemiAdditiveIr) -> str:
    """What a semi-additive measure's stem gets appended (its own name, its own branch)."""
    dim = semi.dimension.partition(".")[2]
    groups = "".join(f"_by_{g.partition('.')[2]}" for g in semi.window_groupings)
    return f"{SUFFIX}{semi.snapshot}_{dim}{groups}"


def inherit(scope: MetricScope, m: MetricIr, base: MetricIr) -> MetricIr:
    """A D-DERIVE filter over a semi-additive base: its measure becomes semi-additive the same
    way (the filter selects rows among the base's snapshot rows)."""
    measures = scope.registry.measures
    semi = measures[base.measures[0]].semi_additive if base.measures else None
    if semi is None or not m.measures or measures[m.measures[0]].semi_additive is not None:
        return m
    plain = measures[m.measures[0]]
    name = scope.registry.add(variant_measure(plain, semi, plain.name + measure_suffix(semi)))
    formula = m.formula.transform(
        lambda n: (
            exp.column(name)
            if isinstance(n, exp.Column) and not n.table and n.name == plain.name
            else n
        )
    )
    return replace(m, formula=formula, measures=(name,), semi_additive=semi)


def variant_measure(plain: MeasureIr, semi: SemiAdditiveIr, name: str) -> MeasureIr:
    return replace(
        plain,
        name=name,
        signature=f"{plain.signature}|semi_additive:{semi.key}",
        semi_additive=semi,
        explicit_name=False,
    )
