"""One user's view of a model (issue 30 items 2-4).

The model a user queries is the served model with every dataset's base relation replaced by
`(SELECT * FROM <source> AS <dataset> WHERE <row filter>)`. Every scan of every plan shape
(branch aggregates, joins, D-LOD rollups and broadcasts, window scans and their expansion,
densify, `select` detail rows, attribution, calendar tables) reads `DatasetIr.source`, so no
query shape can read around the filter, and the filter is part of the compiled SQL text (a
cache keyed on the SQL never serves one user's rows to another). Visibility (which metrics,
fields and datasets) is checked on the resolved query before any SQL runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from sqlglot import exp

from dosi.access.identity import UserContext
from dosi.access.policy import Policy, PolicySet
from dosi.access.row_filter import RowFilter, compile_row_filter
from dosi.errors import AccessError
from dosi.ir.model import DatasetIr, FieldIr, MetricIr, ModelIr
from dosi.query.detail import ResolvedDetail
from dosi.query.metric_dimensions import PREFIX as MD_PREFIX
from dosi.query.resolve import ResolvedQuery
from dosi.sql.util import table_aliased


@dataclass(frozen=True)
class AccessScope:
    """What one user may see: `model` (row-filtered sources) for compiling, the visible
    names for listings and checks, and the matching policies (named in errors)."""

    user: UserContext
    policies: tuple[str, ...]
    base: ModelIr  # the served model (original sources)
    model: ModelIr  # the model this user compiles against (row-filtered sources)
    datasets: frozenset[str]
    fields: frozenset[str]  # qualified `dataset.field`
    metrics: frozenset[str]
    filtered: tuple[str, ...]  # datasets whose rows a filter restricts

    def denied(self, what: str, name: str) -> AccessError:
        by = ", ".join(f"`{p}`" for p in self.policies) or "none (deny by default)"
        return AccessError(
            "access_denied",
            f"{what} `{name}` is not visible to user `{self.user.name}` (policies: {by})",
            hint="ask for a metric or field your policies allow, or have the access file "
            "changed (docs/access-policies.md)",
            detail={"user": self.user.name, "policies": list(self.policies), what: name},
        )

    def check_metric(self, m: MetricIr | str) -> None:
        name = m if isinstance(m, str) else m.name
        if name not in self.metrics:
            raise self.denied("metric", name)

    def _declared(self, name: str) -> str:
        """The model metric behind a compiled one: D-PARAM and time_ranges expansions name
        theirs `<metric>__<suffix>`; a name that maps to no model metric stays as it is (and
        is denied, fail closed)."""
        if name in self.base.metrics:
            return name
        owners = [b for b in self.base.metrics if name.startswith(b + "__")]
        return max(owners, key=len) if owners else name

    def check_field(self, f: FieldIr | str) -> None:
        name = f if isinstance(f, str) else f.qualified
        dataset = name.split(".", 1)[0]
        if dataset.startswith(MD_PREFIX) and dataset not in self.base.datasets:
            return  # a query's metric dimension: the engine checked its metric and keys
        if name not in self.fields:
            raise self.denied("dimension", name)

    def check_dataset(self, name: str) -> None:
        if name not in self.datasets:
            raise self.denied("dataset", name)

    def check_resolved(self, rq: ResolvedQuery, aliases: Mapping[str, str] | None = None) -> None:
        """Every metric and field a resolved metric query reads must be visible: the
        requested metrics and those a metric filter names, group-by fields, where_sql,
        context_filter, time_range and tagged-range fields."""
        if not self.policies:
            raise self.denied("query", "any")
        for m in rq.planned_metrics:
            self.check_metric(self._declared((aliases or {}).get(m.name, m.name)))
        for f in _resolved_fields(rq):
            self.check_field(f)

    def check_detail(self, rd: ResolvedDetail) -> None:
        """A detail or dimension-only query: its dataset and every field it lists or filters."""
        if not self.policies:
            raise self.denied("query", "any")
        self.check_dataset(rd.query.dataset)
        for df in rd.fields:
            self.check_field(df.field)
        for w in rd.where:
            for f in w.fields:
                self.check_field(f)
        if rd.time_field is not None and rd.query.time_range is not None:
            self.check_field(rd.time_field)

    def visible_name(self, name: str) -> bool:
        """A candidate name an error may show: a visible metric, field or dataset."""
        return name in self.metrics or name in self.fields or name in self.datasets

    def visible_model(self) -> ModelIr:
        """The model with hidden members removed and the original sources (lineage)."""
        base = self.base
        datasets = {
            n: replace(d, fields={k: f for k, f in d.fields.items() if f.qualified in self.fields})
            for n, d in base.datasets.items()
            if n in self.datasets
        }
        return replace(
            base,
            datasets=datasets,
            metrics={n: m for n, m in base.metrics.items() if n in self.metrics},
            relationships=tuple(
                r
                for r in base.relationships
                if r.from_dataset in self.datasets and r.to_dataset in self.datasets
            ),
        )


def _resolved_fields(rq: ResolvedQuery) -> list[FieldIr]:
    out = [d.field for d in rq.dims if d.field is not None]
    for w in (rq.where, rq.context):
        if w is not None:
            out.extend(w.fields)
    if rq.time_range is not None and rq.time_range.field is not None:
        out.append(rq.time_range.field)
    out.extend(f for _, f in rq.range_scans.values())
    return out


def _metric_datasets(model: ModelIr, m: MetricIr) -> set[str]:
    out = set(m.datasets)
    for name in m.measures:
        measure = model.measures.get(name)
        if measure is not None:
            out |= set(measure.datasets) | {measure.dataset}
    return out


def _wrapped(ds: DatasetIr, predicate: exp.Expression) -> exp.Expression:
    """`(SELECT * FROM <source> AS <name> WHERE <predicate>)`: the base relation, filtered."""
    inner = exp.select(exp.Star()).from_(table_aliased(ds.source.copy(), ds.name), copy=False)
    return exp.Subquery(this=inner.where(predicate, copy=False))


def _any_of(preds: Iterable[exp.Expression]) -> exp.Expression:
    items = [exp.Paren(this=p) for p in preds]
    out = items[0]
    for p in items[1:]:
        out = exp.Or(this=out, expression=p)
    return out


def scope_for(model: ModelIr, policies: PolicySet, user: UserContext) -> AccessScope:
    """The user's scope; an AccessError when a matching policy does not compile for this
    user (a missing attribute, a bad filter): fail closed, never an unfiltered model."""
    matching = policies.for_user(user)
    names = tuple(p.name for p in matching)
    datasets: set[str] = set()
    fields: set[str] = set()
    metrics: set[str] = set()
    # dataset -> the per-policy predicates; None in the list: a policy reads it unfiltered
    rows: dict[str, list[exp.Expression | None]] = {}
    for p in matching:
        seen = _policy_datasets(model, p)
        datasets |= seen
        fields |= {
            f.qualified
            for d in seen
            for f in model.datasets[d].fields.values()
            if p.dimensions.allows(f.qualified)
        }
        metrics |= {
            m.name
            for m in model.metrics.values()
            if p.metrics.allows(m.name) and _metric_datasets(model, m) <= seen
        }
        own = _policy_rows(model, p, user)
        for d in seen:
            preds = own.get(d)
            rows.setdefault(d, []).append(_all_of(preds) if preds else None)
    new_datasets = dict(model.datasets)
    filtered = []
    for d, preds in rows.items():
        if any(p is None for p in preds):
            continue  # some matching policy reads every row of the dataset
        new_datasets[d] = replace(
            model.datasets[d], source=_wrapped(model.datasets[d], _any_of(preds))
        )
        filtered.append(d)
    for d in model.datasets:
        if d not in datasets:  # hidden: no row of it is ever read (joins included)
            new_datasets[d] = replace(
                model.datasets[d], source=_wrapped(model.datasets[d], exp.false())
            )
    scoped = replace(model, datasets=new_datasets)
    return AccessScope(
        user,
        names,
        model,
        scoped,
        frozenset(datasets),
        frozenset(fields),
        frozenset(metrics),
        tuple(sorted(filtered)),
    )


def _policy_datasets(model: ModelIr, p: Policy) -> set[str]:
    return {d for d in model.datasets if p.datasets.allows(d)}


def _policy_rows(model: ModelIr, p: Policy, user: UserContext) -> dict[str, list[exp.Expression]]:
    out: dict[str, list[exp.Expression]] = {}
    for rule in p.rows:
        rf: RowFilter = compile_row_filter(model, p.name, rule.text, user, rule.dataset)
        out.setdefault(rf.dataset, []).append(rf.predicate)
    return out


def _all_of(preds: list[exp.Expression]) -> exp.Expression:
    out: exp.Expression = exp.Paren(this=preds[0])
    for p in preds[1:]:
        out = exp.And(this=out, expression=exp.Paren(this=p))
    return out
