"""What the D-DERIVE compile pass shares between its ideas (datus-extensions D-DERIVE): a
metric expanded as a member, the failure that drops a metric, and the pass itself as the
filter folding (`derive_filter`), compose expansion (`derive_compose`), the equivalence gate
(`derive_gate`) and `window.base` (`derive_window_base`) see it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from dosi.compiler.context import Site
from dosi.compiler.metric_scope import MetricScope
from dosi.ir.model import MetricIr

EXACT_AGGS = frozenset({"sum", "count", "count_star"})  # DRV-CMP-08
METRIC_TIME = "metric_time"


class DeriveFailed(Exception):
    """A derive error was reported; the metric is dropped."""


@dataclass
class Expansion:
    """A metric expanded as a member: its canonical tree (None on the stage tier), its leaf
    metrics in order, and its linear decomposition over them (None when not linear)."""

    tree: exp.Expression | None
    leaves: list[str]
    linear: dict[str, float] | None
    stage: bool = False
    refs: int = 1


class DerivePass(Protocol):
    """The D-DERIVE pass (`dosi.compiler.derive.DeriveCompiler`) as its ideas use it."""

    scope: MetricScope
    metrics: dict[str, MetricIr]
    stack: list[str]

    def site(self, name: str) -> Site: ...

    def error(self, name: str, code: str, message: str, **kw: object) -> DeriveFailed:
        """Report `code` on metric `name`, mark it failed; the caller raises the result."""
        ...

    def expand(self, name: str, fill: float | int | None) -> Expansion:
        """Metric `name` expanded as a member (cached; cycles reported)."""
        ...

    def level(self, name: str) -> int:
        """The window stage a metric's value exists after (0: an aggregate)."""
        ...


def agg_kind(m: MetricIr, scope: MetricScope) -> str | None:
    if len(m.measures) != 1 or m.kind != "aggregate":
        return None
    meas = scope.registry.measures.get(m.measures[0])
    return meas.agg if meas is not None else None


def number(v: float | int) -> exp.Expression:
    return exp.Literal.number(v)
