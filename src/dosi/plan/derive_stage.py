"""D-DERIVE stage tier lowering: composes with window members (DRV-CMP-10, DRV-NEST-08) and
windows over them (nested windows, WIN-19-06).

The members stay members: every level-1 window member (direct, or inside a nested stage
compose) is a (hidden when not requested) metric of the first window stage, every other
member a (hidden) metric carried beside it, and each compose is arithmetic over their output
columns after the stage its members need. A window over such a compose is a further stage
(level 2 or 3) reading that column. Nested stage composes are substituted inside-out, so one
SELECT per level computes them all."""

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
    level: int = 1  # computed after this window stage

    def describe(self) -> str:
        return f"{self.name} = {self.formula.sql()}"


@dataclass
class StageLowering:
    windows: list[MetricIr] = field(default_factory=list)  # level-1 window members
    plain: list[MetricIr] = field(default_factory=list)  # carried members
    derived: list[DerivedColumn] = field(default_factory=list)
    nested: list[MetricIr] = field(default_factory=list)  # windows of level 2 and 3


def is_stage_compose(m: MetricIr) -> bool:
    return m.derive is not None and m.derive.is_stage_compose


def is_nested_window(m: MetricIr) -> bool:
    return m.window is not None and m.derive is not None and m.derive.level >= 2


def lower_stage(model: ModelIr, metrics: Iterable[MetricIr]) -> StageLowering:
    out = StageLowering()
    metrics = list(metrics)
    requested = {m.name for m in metrics}
    seen: set[str] = set()
    done: set[str] = set()

    def window(m: MetricIr) -> None:
        if m.name in seen:
            return
        seen.add(m.name)
        if is_nested_window(m):
            assert m.derive is not None and m.derive.base is not None
            compose(model.metrics[m.derive.base])  # the series it reads, computed first
            out.nested.append(m)
        else:
            out.windows.append(m)

    def inline(m: MetricIr, depth: int) -> exp.Expression:
        assert m.derive is not None and m.derive.stage_formula is not None
        if depth > 64:  # pragma: no cover - cycles are compile errors
            raise QueryError("metric_reference_cycle", f"`{m.name}` nests too deeply")

        def repl(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and not n.table:
                member = model.metrics.get(n.name)
                if member is None:
                    return n
                if is_stage_compose(member):
                    return exp.Paren(this=inline(member, depth + 1))
                if member.window is not None:
                    window(member)
                elif n.name not in requested and n.name not in seen:
                    seen.add(n.name)
                    out.plain.append(member)
            return n

        return m.derive.stage_formula.copy().transform(repl)

    def compose(m: MetricIr) -> None:
        if m.name in done:
            return
        done.add(m.name)
        assert m.derive is not None
        out.derived.append(DerivedColumn(m.name, inline(m, 0), m.derive.level))

    for m in metrics:
        if is_stage_compose(m):
            compose(m)
        elif is_nested_window(m):
            window(m)
    out.derived.sort(key=lambda d: d.level)
    return out
