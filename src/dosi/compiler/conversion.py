"""D-CONVERSION compile: a metric's `conversion` declaration resolved against the compiled
metrics (after every metric exists, before D-DERIVE, so composes can name a conversion metric).

The base and conversion metrics are single plain aggregates (a D-DERIVE filter metric is one)
over one dataset each, with a time axis on that dataset. The metric's own expression must be
what the declaration computes, written as Ossie SQL over the two metrics' aggregates:
`conversion / base` for `conversion_rate`, `conversion` for `conversions` (the expression an
engine without the key would run: the extension never redefines the metric's SQL, it says how
the two aggregates' rows link). The metric then reads two measures: a converted measure (the
conversion aggregate over the conversion events attributed to base events: `MeasureIr.
conversion`) and the base metric's measure.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.compiler.context import Site
from dosi.compiler.derive_gate import canonical
from dosi.compiler.measures import safe_division
from dosi.compiler.metric_scope import MetricScope
from dosi.errors import closest
from dosi.ext.conversion import ConversionSpec, FieldPair
from dosi.ir.conversion import ConversionIr
from dosi.ir.model import FieldIr, MeasureIr, MetricIr

INVALID = "invalid_datus_extension"
MISMATCH = "conversion_expression_mismatch"
SUFFIX = "__conversions"  # measure names: no stem holds a double underscore (S-MEASURE-1)


class _Failed(Exception):
    """An error was reported; the metric is dropped."""


class _Pass:
    def __init__(self, scope: MetricScope, metrics: dict[str, MetricIr]) -> None:
        self.scope = scope
        self.metrics = metrics

    def error(self, name: str, message: str, code: str = INVALID, **kw: object) -> _Failed:
        path = f"metrics[{name}]"
        site = Site(path, self.scope.cx.line([("metrics", name)]))
        self.scope.cx.sink.error(code, message, path=site.path, line=site.line, **kw)
        return _Failed()

    def event_metric(self, name: str, side: str, ref: str) -> tuple[MetricIr, MeasureIr]:
        """The base / conversion metric: a single plain aggregate over one dataset."""
        m = self.metrics.get(ref)
        if m is None or ref == name:
            others = [n for n in self.metrics if n != name]
            raise self.error(
                name,
                f"`conversion.{side}` of `{name}` names `{ref}`, which is not "
                + ("another metric" if ref == name else "a metric"),
                candidates=tuple(closest(ref, others)),
            )
        family = getattr(m.derive_decl, "family", None)
        plain = (
            m.kind == "aggregate"
            and len(m.measures) == 1
            and m.window is None
            and m.window_base is None
            and m.lod is None
            and m.params is None
            and m.conversion_decl is None
            and family in (None, "filter")
        )
        meas = self.scope.registry.measures[m.measures[0]] if m.measures else None
        if not plain or meas is None or meas.semi_additive is not None:
            raise self.error(
                name,
                f"`conversion.{side}` of `{name}` names `{ref}`, which is not a single plain "
                "aggregate (no window, params, level of detail, semi_additive or nested "
                "conversion)",
                hint=f"name a metric like COUNT(dataset.id) as the {side} event metric",
            )
        if side == "conversion" and meas.datasets != frozenset({meas.dataset}):
            raise self.error(
                name,
                f"the conversion event metric `{ref}` of `{name}` reads "
                f"{', '.join(sorted(meas.datasets - {meas.dataset}))} through a join; a "
                "conversion event aggregate reads its own dataset's columns",
            )
        return m, meas

    def time_of(self, name: str, side: str, m: MetricIr, meas: MeasureIr) -> str:
        axis = m.time_axis
        if axis is None or axis.partition(".")[0] != meas.dataset:
            times = [f.qualified for f in self.scope.datasets[meas.dataset].fields.values()]
            raise self.error(
                name,
                f"the {side} event metric `{m.name}` of `{name}` has no time axis on "
                f"`{meas.dataset}`; a conversion orders events in time",
                candidates=tuple(times),
                hint=f'declare "time_dimension" on `{m.name}` or on dataset `{meas.dataset}` '
                "(D-TIME)",
            )
        return axis

    def field(self, name: str, key: str, ref: str, dataset: str) -> FieldIr:
        ds = self.scope.datasets[dataset]
        field_name = ref
        if "." in ref:
            owner, _, field_name = ref.partition(".")
            if owner != dataset:
                raise self.error(
                    name,
                    f"`{key}` of `{name}` names `{ref}`, not a field of `{dataset}`",
                    candidates=tuple(f"{dataset}.{f}" for f in closest(field_name, ds.fields)),
                )
        f = ds.fields.get(field_name)
        if f is None:
            raise self.error(
                name,
                f"`{key}` of `{name}` ({ref}) matches no field of `{dataset}`",
                candidates=tuple(f"{dataset}.{f}" for f in closest(field_name, ds.fields)),
            )
        return f

    def pair(self, name: str, key: str, p: FieldPair, base: str, conv: str) -> tuple[str, str]:
        b = self.field(name, f"{key}.base", p.base, base)
        c = self.field(name, f"{key}.conversion", p.conversion, conv)
        return b.qualified, c.qualified

    def compile_one(self, m: MetricIr, spec: ConversionSpec) -> MetricIr:
        name = m.name
        if m.window is not None or m.semi_additive is not None or m.derive_decl is not None:
            raise self.error(
                name,
                f"metric `{name}` carries `conversion` together with a window, derive or "
                "semi_additive declaration, which is not implemented",
                code="not_implemented",
                hint="window or compose the conversion metric from another metric (D-DERIVE)",
            )
        base, base_meas = self.event_metric(name, "base", spec.base)
        conv, conv_meas = self.event_metric(name, "conversion", spec.conversion)
        self.gate(m, spec, base, conv)
        bds, cds = base_meas.dataset, conv_meas.dataset
        ir = ConversionIr(
            base_metric=base.name,
            conversion_metric=conv.name,
            base_measure=base_meas.name,
            conversion_measure=conv_meas.name,
            base_dataset=bds,
            conversion_dataset=cds,
            entity=self.pair(name, "conversion.entity", spec.entity, bds, cds),
            base_time=self.time_of(name, "base", base, base_meas),
            conversion_time=self.time_of(name, "conversion", conv, conv_meas),
            window=spec.window,
            constant_properties=tuple(
                self.pair(name, f"conversion.constant_properties[{i}]", p, bds, cds)
                for i, p in enumerate(spec.constant_properties)
            ),
            calculation=spec.calculation,
        )
        converted = self.scope.registry.add(
            replace(
                conv_meas,
                name=f"{name}{SUFFIX}",
                dataset=bds,
                signature=f"conversion:{conv_meas.signature}|{ir.key}",
                # the branch joins what the base events' condition reads (base side)
                datasets=base_meas.datasets,
                explicit_name=False,
                conversion=ir,
            )
        )
        if spec.calculation == "conversion_rate":
            formula = safe_division(
                exp.Div(this=exp.column(converted), expression=exp.column(base_meas.name))
            )
            measures: tuple[str, ...] = (converted, base_meas.name)
            kind = "ratio"
        else:
            # the base measure rides along for its groups: MetricFlow joins the converted and
            # the base aggregates FULL OUTER, so a group with base events and no conversion
            # is a row (NULL, or the metric's fill_nulls_with), as it is for a rate
            formula, measures, kind = (
                exp.column(converted),
                (converted, base_meas.name),
                "aggregate",
            )
        return replace(
            m,
            kind=kind,  # type: ignore[arg-type]
            formula=formula,
            measures=measures,
            datasets=frozenset({bds}),
            time_axis=base.time_axis,
            _pure_count=kind == "aggregate" and conv_meas.is_count,
            conversion=ir,
        )

    def gate(self, m: MetricIr, spec: ConversionSpec, base: MetricIr, conv: MetricIr) -> None:
        """The metric's expression is what the declaration computes, in Ossie SQL."""
        assert base.expr_tree is not None and conv.expr_tree is not None
        assert m.expr_tree is not None
        want: exp.Expression = conv.expr_tree.copy()
        if spec.calculation == "conversion_rate":
            want = exp.Div(this=want, expression=base.expr_tree.copy())
        want = canonical(want)
        got = canonical(m.expr_tree)
        if got != want:
            raise self.error(
                m.name,
                f"the expression of conversion metric `{m.name}` ({got.sql()}) is not what its "
                f"declaration computes: {spec.calculation} of `{conv.name}` over `{base.name}` "
                f"is {want.sql()}",
                code=MISMATCH,
                hint=f"write the expression {want.sql()}",
            )


def compile_conversions(scope: MetricScope, metrics: dict[str, MetricIr]) -> None:
    """Every metric declaring `conversion`, compiled in place (dropped after an error)."""
    p = _Pass(scope, metrics)
    for name in list(metrics):
        m = metrics[name]
        if m.conversion_decl is None:
            continue
        try:
            metrics[name] = p.compile_one(m, m.conversion_decl)
        except _Failed:
            metrics.pop(name, None)
