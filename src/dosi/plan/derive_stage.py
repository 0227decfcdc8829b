"""D-DERIVE stage tier lowering: a compose with window members (DRV-CMP-10, DRV-NEST-08).

The members stay members: every window member (direct, or inside a nested stage compose) is a
(hidden when not requested) metric of the one window stage, every other member a (hidden)
metric carried beside it, and the compose is arithmetic over their output columns above the
stage. Nested stage composes are substituted inside-out, so one SELECT computes them all."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ir.model import MetricIr, ModelIr


@dataclass(frozen=True)
class DerivedColumn:
    """One stage-tier compose: its arithmetic over the columns of the window stage."""

    name: str
    formula: exp.Expression

    def describe(self) -> str:
        return f"{self.name} = {self.formula.sql()}"


@dataclass
class StageLowering:
    windows: list[MetricIr] = field(default_factory=list)  # window members
    plain: list[MetricIr] = field(default_factory=list)  # carried members
    derived: list[DerivedColumn] = field(default_factory=list)  # requested composes only

    @property
    def member_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in [*self.windows, *self.plain])


def is_stage_compose(m: MetricIr) -> bool:
    return m.derive is not None and m.derive.is_stage_compose


def lower_stage(model: ModelIr, metrics: Iterable[MetricIr]) -> StageLowering:
    out = StageLowering()
    requested = {m.name for m in metrics}
    seen: set[str] = set()

    def inline(m: MetricIr, depth: int) -> exp.Expression:
        assert m.derive is not None and m.derive.stage_formula is not None
        if depth > 64:  # pragma: no cover - cycles are compile errors
            raise QueryError("metric_reference_cycle", f"`{m.name}` nests too deeply")

        def repl(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and not n.table:
                member = model.metrics.get(n.name)
                if member is not None and is_stage_compose(member):
                    return exp.Paren(this=inline(member, depth + 1))
                if member is not None and n.name not in seen:
                    seen.add(n.name)
                    if member.window is not None:
                        out.windows.append(member)
                    elif n.name not in requested:
                        out.plain.append(member)
            return n

        return m.derive.stage_formula.copy().transform(repl)

    for m in metrics:
        if is_stage_compose(m):
            out.derived.append(DerivedColumn(m.name, inline(m, 0)))
    return out
