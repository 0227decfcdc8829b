"""D-DERIVE compile: resolve metric references, fold filters, expand composes, enforce the
expression-equivalence gate and record the metadata (datus-extensions D-DERIVE).

Flatten tier (filter; compose over leaf / filter / flatten-tier compose members): the metric's
own `expression` must equal the expansion of its declaration (`derive_expression_mismatch`),
so the metric is computed from that expression, exactly as basic mode computes it. Stage tier
(`window.base`, compose with window members): the declaration drives the plan; the expression
is only an approximation. Runs after every metric compiled, so a reference may point anywhere
in the document; cycles are `metric_reference_cycle` with the full path.

This module is the pass: the member expansion with its cache and cycle check, and the
dispatch per family. Each idea has its own module: filter folding (`derive_filter`), compose
(`derive_compose`), the equivalence gate (`derive_gate`) and `window.base`
(`derive_window_base`); `derive_expansion` is what they share.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from dosi.compiler.context import Site
from dosi.compiler.derive_compose import compile_compose, expand_compose
from dosi.compiler.derive_expansion import DeriveFailed, Expansion, number
from dosi.compiler.derive_filter import compile_filter, fold
from dosi.compiler.derive_gate import canonical
from dosi.compiler.derive_window_base import window_base
from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.sqlparse import parse_scalar
from dosi.ext.derive import ComposeDerive, FilterDerive
from dosi.ir.model import MetricIr

__all__ = ["DeriveCompiler", "compile_derives"]


class DeriveCompiler:
    def __init__(
        self, scope: MetricScope, metrics: dict[str, MetricIr], rejected: Iterable[str] = ()
    ) -> None:
        self.scope = scope
        self.metrics = metrics
        self.cache: dict[tuple[str, float | int | None], Expansion] = {}
        self.stack: list[str] = []
        # declared metrics already rejected (reported): a reference to one fails silently,
        # never as a second "not a metric" error (issue 20 point 9)
        self.failed: set[str] = set(rejected)

    # -- diagnostics ---------------------------------------------------------------------------
    def site(self, name: str) -> Site:
        path = f"metrics[{name}]"
        return Site(path, self.scope.cx.line([("metrics", name)]))

    def error(self, name: str, code: str, message: str, **kw: object) -> DeriveFailed:
        s = self.site(name)
        self.scope.cx.sink.error(code, message, path=s.path, line=s.line, **kw)
        self.failed.add(name)
        return DeriveFailed()

    # -- the pass ------------------------------------------------------------------------------
    def run(self) -> None:
        for name in list(self.metrics):
            m = self.metrics.get(name)
            if m is None or (m.derive_decl is None and m.window_base is None):
                continue
            try:
                self.compile_one(name)
            except DeriveFailed:
                self.failed.add(name)
                self.metrics.pop(name, None)
        for name in self.failed:
            self.metrics.pop(name, None)

    def compile_one(self, name: str) -> None:
        m = self.metrics[name]
        if m.window_base is not None:
            self.metrics[name] = window_base(self, m)
            return
        decl = m.derive_decl
        if isinstance(decl, FilterDerive):
            self.metrics[name] = compile_filter(self, m, decl)
        elif isinstance(decl, ComposeDerive):
            self.metrics[name] = compile_compose(self, m, decl)
        # other families (lod) are compiled by their own modules

    # -- expansion -----------------------------------------------------------------------------
    def expand(self, name: str, fill: float | int | None) -> Expansion:
        key = (name, fill)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        if name in self.failed:
            raise DeriveFailed()  # reported already
        if name in self.stack:
            start = self.stack.index(name)
            cycle = [*self.stack[start:], name]
            # reported on the metric whose reference closes the loop, path from it
            closer = self.stack[-1]
            at = cycle.index(closer)
            path = [*cycle[at:-1], *cycle[:at], closer]
            raise self.error(
                closer,
                "metric_reference_cycle",
                "metric reference cycle: " + " -> ".join(path),
                hint="break the cycle: a derived metric cannot reach itself through its members",
            )
        m = self.metrics.get(name)
        if m is None:  # dropped after its own error
            raise DeriveFailed()
        self.stack.append(name)
        try:
            out = self._expand(m, fill)
        finally:
            self.stack.pop()
        self.cache[key] = out
        return out

    def _expand(self, m: MetricIr, fill: float | int | None) -> Expansion:
        decl = m.derive_decl
        if m.lod is not None:  # D-LOD: never its base's expression (LOD-REL-10)
            return Expansion(None, [m.name], None, stage=True)
        if m.window is not None:
            if m.window_base is not None:
                self.expand(m.window_base, None)  # cycles through a base
            return Expansion(None, [m.name], None, stage=True)
        if isinstance(decl, FilterDerive):
            tree: exp.Expression = fold(self, m, decl)
        elif isinstance(decl, ComposeDerive):
            return expand_compose(self, m, decl, fill)
        elif decl is not None:  # another family (lod): opaque here
            return Expansion(None, [m.name], None, stage=True)
        else:
            assert m.expr_tree is not None
            tree = canonical(m.expr_tree)
        if fill is not None:
            tree = exp.Coalesce(this=tree, expressions=[number(fill)])
        return Expansion(tree, [m.name], {m.name: 1.0})

    def level(self, name: str) -> int:
        """The window stage a metric's value exists after (0: an aggregate)."""
        m = self.metrics.get(name)
        if m is None:
            return 0
        if m.window is not None:
            base = m.window_base
            if base is not None and self.metrics.get(base) is not None:
                inner = self.level(base)
                return inner + 1 if inner >= 1 else 1
            return 1
        decl = m.derive_decl
        if isinstance(decl, ComposeDerive):
            tree = parse_scalar(decl.expr, None)
            return max((self.level(c.name) for c in tree.find_all(exp.Column)), default=0)
        return 0


def compile_derives(
    scope: MetricScope, metrics: dict[str, MetricIr], rejected: Iterable[str] = ()
) -> None:
    """The D-DERIVE pass over compiled metrics (edits `metrics`: metadata added, failures
    dropped after their errors); `rejected` names declared metrics whose errors are already
    reported."""
    DeriveCompiler(scope, metrics, rejected).run()
