"""D-VALIDITY (dosi 1.15) as a range join: the version of a slowly changing dimension valid at
the fact row's time, `start <= t AND (t < end OR end IS NULL)`, beside the key pairs."""

from __future__ import annotations

from sqlglot import exp

from dosi.ir.model import FieldIr, ModelIr, RelationshipIr
from dosi.sql.util import and_all


def join_condition(
    model: ModelIr, rel: RelationshipIr, at: FieldIr | None
) -> exp.Expression | None:
    """The ON of a many-to-one join: every key pair, and the valid version when `rel` lands on
    a D-VALIDITY dataset (`at`: the fact's time, from dosi.plan.validity.version_time)."""
    preds: list[exp.Expression] = [
        exp.EQ(this=a.copy(), expression=b.copy())
        for a, b in zip(rel.from_exprs, rel.to_exprs, strict=True)
    ]
    target = model.datasets[rel.to_dataset]
    v = target.validity
    if v is not None and at is not None:
        start = target.fields[v.start].expr
        end = target.fields[v.end].expr
        preds.append(exp.GTE(this=at.expr.copy(), expression=start.copy()))
        open_end = exp.Is(this=end.copy(), expression=exp.Null())
        before_end = exp.LT(this=at.expr.copy(), expression=end.copy())
        preds.append(exp.Or(this=before_end, expression=open_end))
    return and_all(preds)
