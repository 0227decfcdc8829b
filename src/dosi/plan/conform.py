"""D-CONFORM planning: each branch reads a conformed dimension in its own fact's spelling
(datus-extensions §3 D-CONFORM; CONF-04 to CONF-10, CONF-13).

A many_to_many edge is never joined. A branch rooted at a fact that cannot reach the dataset
of a group-by item, a where_sql field or the time_range dimension along many-to-one edges
reads the paired column of its own fact instead; the branch projects it under the query's
output name, so the merge of branches (S-FAN-3) lines the facts up. Grains truncate each
branch's own column, and the coarser fact's D-GRAIN floor applies (CONF-07/08).
"""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.fields import field_reference
from dosi.errors import QueryError
from dosi.ir.conform import ConformedIr, conformity
from dosi.ir.model import FieldIr, ModelIr
from dosi.plan.joins import JoinGraph
from dosi.query.resolve import ResolvedQuery, check_grain


class ConformedSpellings:
    """Which field a branch rooted at a given fact reads for each field the query names."""

    def __init__(self, model: ModelIr, graph: JoinGraph) -> None:
        self.model = model
        self.graph = graph
        self.conf: ConformedIr = conformity(model)

    @property
    def active(self) -> bool:
        return bool(self.conf.classes)

    def field_in_branch(self, root: str, f: FieldIr) -> FieldIr:
        """`f` as the branch over `root` reads it: `f` when `root` reaches its dataset, else
        the paired spelling on `root` (or on a dataset `root` reaches); `f` again when there
        is none, so the join path reports why the dataset is out of reach."""
        if not self.active or self.graph.reachable(root, f.dataset):
            return f
        cls = self.conf.class_of(f.dataset, f.name)
        if cls is None:
            return f
        own = cls.member_on(root)
        if own is not None:
            return own
        return next((m for m in cls.members if self.graph.reachable(root, m.dataset)), f)

    def reaches(self, root: str, f: FieldIr) -> bool:
        """`root` can read `f`: many-to-one, or through a conformed spelling."""
        return self.graph.reachable(root, self.field_in_branch(root, f).dataset)

    def check_grain(self, f: FieldIr, grain: str | None, spelling: str) -> None:
        """D-GRAIN floor of the column a branch truncates (CONF-08): a month-stored fact
        refuses `:day` even when the query spells the other fact's daily column."""
        if grain is not None and self.active:
            check_grain(self.model, f, grain, spelling)

    def where_in_branch(
        self, root: str, rq: ResolvedQuery
    ) -> tuple[exp.Expression, tuple[FieldIr, ...]] | None:
        """The row filter with every field replaced by the spelling the branch reads, and the
        fields it then reads (None without a row filter)."""
        if rq.where is None:
            return None
        if not self.active:  # the common case: no pairing, nothing to translate
            return rq.where.expr, rq.where.fields
        swap = {f.qualified: self.field_in_branch(root, f) for f in rq.where.fields}
        for q, f in swap.items():
            if f.qualified != q:
                _refuse_encoded_spelling(q, f)
        fields = tuple(dict.fromkeys(swap.values()))
        if all(k == v.qualified for k, v in swap.items()):
            return rq.where.expr, fields

        def rewrite(node: exp.Expression) -> exp.Expression:
            q = node.meta.get("dosi_field")
            if q in swap and swap[q].qualified != q:
                return field_reference(swap[q].qualified, swap[q].expr)
            return node

        return rq.where.expr.transform(rewrite, copy=True), fields

    def unreachable(self, root: str, err: QueryError) -> QueryError:
        """A join-path error of a branch over a paired fact, explained: only the paired
        columns are shared between conformed facts (CONF-10)."""
        if not self.active or err.code != "no_join_path" or not self.conf.paired(root):
            return err
        shared = [
            m.qualified
            for c in self.conf.classes
            if c.member_on(root) is not None
            for m in c.members
            if m.name in self.model.datasets[m.dataset].fields
        ]
        return QueryError(
            err.code,
            f"{err.message}. `{root}` is paired with other facts by a conformed "
            "(many_to_many) relationship, but only the paired columns are shared: a group-by "
            "or filter on any other column of another fact cannot land on this fact's rows",
            candidates=err.candidates or shared,
            hint="group or filter by a paired column ("
            + ", ".join(shared)
            + "), or express the one-sided condition as a D-DERIVE `filter` metric",
            metrics=err.metrics,
        )


def _refuse_encoded_spelling(spelled: str, target: FieldIr) -> None:
    """CONF-13: a where_sql comparison is never moved onto a D-FORMAT-encoded spelling (its
    literals are not in the stored encoding); time_range converts bounds, where_sql cannot."""
    if not target.encoded:
        return
    raise QueryError(
        "unsupported_filter",
        f"where_sql names `{spelled}`, which is conformed to `{target.qualified}`, a "
        "D-FORMAT encoded column: a comparison cannot be moved onto its stored encoding",
        candidates=[spelled, target.qualified],
        hint=f'filter the date with "time_range": {{"dimension": "{spelled}", "start": ..., '
        '"end": ...}: its bounds are converted to each fact\'s own encoding',
    )
