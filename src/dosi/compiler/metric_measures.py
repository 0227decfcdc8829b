"""A metric's aggregates become named measures of one owning dataset; what remains is the
formula over measure names (S-MEASURE-1, D-DATASET, D-MEASURE).

The owner of an aggregate is the dataset every other dataset it reads is many-to-one reachable
from; an aggregate that reads no column (COUNT(*), a constant) belongs to the D-DATASET pin,
else to the metric's only other owner, else to the model's only dataset.
"""

from __future__ import annotations

from sqlglot import exp

from dosi import ext
from dosi.compiler.constant_owners import member_owners
from dosi.compiler.context import Site
from dosi.compiler.measures import safe_division
from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.sqlparse import strip_parens
from dosi.compiler.trees import discard, sql_text
from dosi.ir.semi_additive import SemiAdditiveIr


def split_measures(
    scope: MetricScope,
    metric: str,
    tree: exp.Expression,
    pin: str | None,
    mext: ext.MetricExt,
    site: Site,
    semi: tuple[SemiAdditiveIr, str] | None = None,
) -> tuple[exp.Expression | None, list[str], list[str]]:
    """(formula, measure names, owners), or (None, [], []) after an error. `semi`: the
    metric's D-SEMI declaration and its measures' stem suffix."""
    sink, datasets = scope.cx.sink, scope.datasets
    aggs = list(tree.find_all(exp.AggFunc))
    owners: list[str | None] = []
    for a in aggs:
        o = _owner(scope, metric, a, site)
        if o is False:
            return None, [], []
        owners.append(o)  # type: ignore[arg-type]
    known = {o for o in owners if o}
    if pin is None and None in owners:  # row counts of a compose: its members' pins
        left_to_right = [n for n in tree.walk(bfs=False) if isinstance(n, exp.AggFunc)]
        loose = [a for a in left_to_right if owners[_index(aggs, a)] is None]
        for agg_id, owner in member_owners(scope, mext.derive, loose).items():
            owners[next(i for i, a in enumerate(aggs) if id(a) == agg_id)] = owner
    for i, o in enumerate(owners):
        if o is not None:
            continue
        if pin is not None:
            owners[i] = pin
        elif len(known) == 1:
            owners[i] = next(iter(known))
        elif len(datasets) == 1:
            owners[i] = next(iter(datasets))
        else:
            sink.error(
                "count_star_needs_dataset",
                f"metric `{metric}` counts rows (`{aggs[i].sql()}`) but nothing says which "
                "dataset's rows",
                path=site.path,
                line=site.line,
                candidates=sorted(datasets),
                hint='pin it with the DATUS extension {"dataset": "<name>"} (D-DATASET), or '
                "count a column: COUNT(dataset.key)",
            )
            return None, [], []
    explicit = mext.measure_name
    if explicit is not None and len(aggs) != 1:
        sink.error(
            "invalid_datus_extension",
            f"`measure` on metric `{metric}` needs a single-aggregate expression",
            path=site.path,
            line=site.line,
        )
        explicit = None
    names: list[str] = []
    replacements: list[tuple[exp.AggFunc, str]] = []
    for a, owner in zip(aggs, owners, strict=True):
        assert owner is not None
        signature = f"{owner}:{sql_text(a)}"
        name = scope.registry.name_for(metric, a, owner, signature, explicit, site, semi)
        if name is None:
            return None, [], []
        names.append(name)
        replacements.append((a, name))
    formula = tree
    for a, name in replacements:
        replaced = exp.column(name)
        if a is formula:
            formula = replaced
        else:
            a.replace(replaced)
        discard(a)  # the measure keeps its own copy (MeasureRegistry.name_for)
    formula = safe_division(strip_parens(formula), owned=True)  # the parse is ours
    loose = [c for c in formula.find_all(exp.Column) if c.table]
    if loose:
        sink.error(
            "not_an_aggregate",
            f"metric `{metric}` reads `{loose[0].sql()}` outside any aggregate",
            path=site.path,
            line=site.line,
            hint="wrap every field reference of a metric in an aggregate",
        )
        return None, [], []
    return formula, names, [o for o in owners if o]


def _index(aggs: list[exp.AggFunc], node: exp.AggFunc) -> int:
    return next(i for i, a in enumerate(aggs) if a is node)


def _owner(scope: MetricScope, metric: str, node: exp.AggFunc, site: Site) -> str | bool | None:
    """The dataset a measure aggregates: the one every other referenced dataset is
    many-to-one reachable from. None = no column (COUNT(*) or a constant)."""
    refs = {c.table for c in node.find_all(exp.Column) if c.table}
    # a field whose expression reads no column (dbt's `expr: 1`) still belongs to its dataset
    refs |= {
        str(n.meta["dosi_field"]).partition(".")[0]
        for n in node.walk()
        if n.meta and "dosi_field" in n.meta
    }
    if not refs:
        return None
    if len(refs) == 1:
        return next(iter(refs))
    for cand in sorted(refs):
        if all(scope.graph.reachable(cand, other) for other in refs if other != cand):
            return cand
    scope.cx.sink.error(
        "measure_spans_datasets",
        f"metric `{metric}` aggregates over {', '.join(sorted(refs))}, which no single "
        "dataset reaches through many-to-one relationships",
        path=site.path,
        line=site.line,
        hint="aggregate each dataset in its own aggregate call",
    )
    return False
