"""The model's measures, keyed by aggregate signature, and the names they go by (D-MEASURE).

Every metric that spells the same aggregate shares one measure. Its name is the D-MEASURE
declaration if any, else the stem (S-MEASURE-1). A name may never stand for two signatures,
nor a signature for two declared names (`measure_name_collision`). When a declaration names an
aggregate an earlier metric already took under its stem, the declared name wins for both: the
registry records the rename, and the metric pass rewrites the metrics built so far.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.compiler.context import CompileContext, Site
from dosi.compiler.measures import agg_name, measure_stem
from dosi.ir.model import MeasureIr, MetricIr
from dosi.ir.semi_additive import SemiAdditiveIr


class MeasureRegistry:
    def __init__(self, cx: CompileContext) -> None:
        self.cx = cx
        self.measures: dict[str, MeasureIr] = {}
        self._by_signature: dict[str, str] = {}
        self._explicit: dict[str, str] = {}  # declared name -> signature (D-MEASURE)
        self._renames: list[tuple[str, str]] = []

    def name_for(
        self,
        metric: str,
        node: exp.AggFunc,
        owner: str,
        signature: str,
        explicit: str | None,
        site: Site,
        semi: tuple[SemiAdditiveIr, str] | None = None,
    ) -> str | None:
        """The measure name of `node` (registering a new measure); None after a collision.
        `semi`: a D-SEMI declaration and the stem suffix its measures take (the signature
        carries it, so the plain aggregate stays a measure of its own)."""
        if semi is not None:
            signature = f"{signature}|semi_additive:{semi[0].key}"
        existing = self._by_signature.get(signature)
        if explicit is None:
            if existing is not None:
                return existing
            stem = measure_stem(owner, node) + (semi[1] if semi is not None else "")
            if stem in self.measures:
                self._collision(metric, stem, site, other_sig=self.measures[stem].signature)
                return None
            self.measures[stem] = _new_measure(stem, node, owner, signature, False, semi)
            self._by_signature[signature] = stem
            return stem
        if existing == explicit:
            return explicit
        if self._explicit.get(explicit, signature) != signature:
            self._collision(metric, explicit, site)
            return None
        if existing is not None and self.measures[existing].explicit_name:
            self._collision(metric, explicit, site, other=existing)
            return None
        if explicit in self.measures:  # the declared name is another aggregate's stem (MEAS-04)
            self._collision(metric, explicit, site, other_sig=self.measures[explicit].signature)
            return None
        if existing is not None:
            # an earlier textual twin took the stem: the declared name wins for both
            old = self.measures.pop(existing)
            self._renames.append((existing, explicit))
            self.measures[explicit] = replace(old, name=explicit, explicit_name=True)
        else:
            self.measures[explicit] = _new_measure(explicit, node, owner, signature, True, semi)
        self._by_signature[signature] = explicit
        self._explicit[explicit] = signature
        return explicit

    def add(self, measure: MeasureIr) -> str:
        """A measure built by a later pass (a D-SEMI filter variant, a D-CONVERSION converted
        measure): the one already registered under its signature, else this one; a name
        another signature holds takes a numbered suffix."""
        existing = self._by_signature.get(measure.signature)
        if existing is not None:
            return existing
        name, n = measure.name, 2
        while name in self.measures:
            name, n = f"{measure.name}_{n}", n + 1
        self.measures[name] = replace(measure, name=name)
        self._by_signature[measure.signature] = name
        return name

    def apply_renames(self, metrics: dict[str, MetricIr]) -> None:
        """Rewrite the metrics built so far to the names declared since the last call."""
        for old, new in self._renames:
            for name, m in list(metrics.items()):
                if old in m.measures:
                    formula = m.formula.transform(
                        lambda n, old=old, new=new: (
                            exp.column(new)
                            if isinstance(n, exp.Column) and not n.table and n.name == old
                            else n
                        )
                    )
                    metrics[name] = replace(
                        m,
                        formula=formula,
                        measures=tuple(new if x == old else x for x in m.measures),
                    )
        self._renames.clear()

    def _collision(
        self,
        metric: str,
        name: str,
        site: Site,
        other: str | None = None,
        other_sig: str | None = None,
    ) -> None:
        self.cx.sink.error(
            "measure_name_collision",
            f"metric `{metric}`: measure name `{name}` already names a different aggregate"
            + (f" ({other_sig.split(':', 1)[1]})" if other_sig else "")
            + (f" (also named `{other}`)" if other else ""),
            path=site.path,
            line=site.line,
            hint='name the measure explicitly with the DATUS extension {"measure": {"name": '
            '"..."}} (D-MEASURE) and list "measure" in requires',
        )


def _new_measure(
    name: str,
    node: exp.AggFunc,
    owner: str,
    signature: str,
    explicit: bool,
    semi: tuple[SemiAdditiveIr, str] | None = None,
) -> MeasureIr:
    refs = frozenset({c.table for c in node.find_all(exp.Column) if c.table} | {owner})
    return MeasureIr(
        name=name,
        dataset=owner,
        agg=agg_name(node),
        expr=node.copy(),
        signature=signature,
        datasets=refs,
        explicit_name=explicit,
        semi_additive=semi[0] if semi is not None else None,
    )
