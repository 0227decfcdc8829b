"""D-LOD fixed fields: compile and check (datus-extensions §3 D-LOD; CHECKLIST LOD-FLD-01..13).

Per dataset (`compile_lod_fields`): the `lod` payload parsed (`fixed(base, dims...)` only),
its dims resolved to fields of the same dataset, the field's own aggregate qualified as the
rollup value. After the metrics (`check_lod_model`): the base is a single plain aggregate of
the field's dataset and the field's expression is that aggregate ("the expression is not a
placeholder": `derive_expression_mismatch`); nesting is rejected wherever it hides (a dims
key, the base's argument, a relationship column); a fixed field, or a field reading one, is
never a time axis.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from dosi.compiler.context import CompileContext
from dosi.compiler.fields import RawField, ident
from dosi.errors import closest
from dosi.ext.lod_field import parse_field_lod
from dosi.ir.lod_field import LodFieldIr, lod_refs
from dosi.ir.model import DatasetIr, MeasureIr, MetricIr, RelationshipIr
from dosi.model.schema import DatasetSpec, FieldSpec

INVALID = "invalid_datus_extension"


def lod_field_names(fexts: Mapping[str, object]) -> frozenset[str]:
    """The fields whose DATUS payload declares `lod`."""
    return frozenset(n for n, e in fexts.items() if getattr(e, "lod", None) is not None)


def reads_lod(expr: exp.Expression) -> bool:
    return bool(lod_refs(expr))


def compile_lod_fields(
    cx: CompileContext,
    ds: DatasetSpec,
    raw: dict[str, RawField],
    exprs: dict[str, exp.Expression],
    fexts: Mapping[str, object],
    lines: dict[str, int | None],
) -> dict[str, LodFieldIr]:
    """The LodFieldIr of every fixed field of one dataset whose payload and expression read."""
    out: dict[str, LodFieldIr] = {}
    names = lod_field_names(fexts)
    for name in names:
        f = raw[name]
        payload = fexts[name].lod
        line = lines.get(f.path)
        if f.tree is None or name not in exprs:
            continue  # its expression did not parse: reported already
        spec = parse_field_lod(payload.expr, ds.name, f.path, cx.sink)
        if spec is None:
            continue
        keys: list[str] = []
        ok = True
        for d in spec.dims:
            dsn, _, fname = d.partition(".")
            why = None
            if dsn != ds.name:
                why = (
                    f"names dataset `{dsn}`, but a rollup key must be a field of `{ds.name}`, "
                    "the field's own dataset"
                )
            elif fname not in raw:
                why = f"is not a field of `{ds.name}`"
            elif fname in names or reads_lod(exprs.get(fname, exp.null())):
                why = "is, or reads, a D-LOD field; nested LOD is not supported"
            if why is not None:
                cx.sink.error(
                    INVALID,
                    f"field `{ds.name}.{name}`: lod dims entry `{d}` {why}",
                    path=f.path,
                    line=line,
                    candidates=tuple(closest(fname, list(raw))) if fname not in raw else (),
                )
                ok = False
            else:
                keys.append(fname)
        value = _qualified_value(cx, ds.name, name, f, exprs, names, line)
        if ok and value is not None:
            out[name] = LodFieldIr(spec.base, tuple(keys), value, spec.text)
    return out


def _qualified_value(
    cx: CompileContext,
    dataset: str,
    name: str,
    f: RawField,
    exprs: dict[str, exp.Expression],
    lod_names: frozenset[str],
    line: int | None,
) -> exp.Expression | None:
    """The field's aggregate over qualified columns, sibling fields inlined."""
    assert f.tree is not None
    out = f.tree.copy()
    for col in list(out.find_all(exp.Column)):
        if col.table and col.table != dataset:
            cx.sink.error(
                "invalid_expression",
                f"field `{dataset}.{name}` reads `{col.sql()}` from another dataset; field "
                "expressions read their own dataset only",
                path=f.path,
                line=line,
            )
            return None
        if col.name in lod_names:
            cx.sink.error(
                INVALID,
                f"field `{dataset}.{name}` aggregates the D-LOD field `{col.name}`; nested LOD is "
                "not supported",
                path=f.path,
                line=line,
            )
            return None
        if col.name in exprs and col.name != name:
            new: exp.Expression = exprs[col.name].copy()
            if not isinstance(new, (exp.Column, exp.Literal, exp.Func, exp.Paren)):
                new = exp.Paren(this=new)
        else:
            new = exp.Column(this=col.this.copy(), table=ident(dataset))
        if col is out:
            out = new
        else:
            col.replace(new)
    return out


def check_lod_time(
    cx: CompileContext,
    dataset: str,
    f: FieldSpec,
    expr: exp.Expression,
    path: str,
    line: int | None,
) -> bool:
    """A fixed field, or a field reading one, is never a time axis (LOD-FLD-08): declaring
    dimension.is_time is an error; a Date datatype alone is not an axis. Returns is_time."""
    if f.dimension is not None and f.dimension.is_time:
        what = ", ".join(q.split(".", 1)[1] for q in lod_refs(expr))
        cx.sink.error(
            INVALID,
            f"field `{dataset}.{f.name}` declares dimension.is_time: true but is, or reads, the "
            f"D-LOD field(s) {what}; a rollup value is not a time axis a range or grain can be "
            "pushed to",
            path=path,
            line=line,
            hint="drop dimension.is_time (a Date datatype is fine: the field is grouped as a "
            "value, never as metric_time)",
        )
    return False


def check_lod_model(
    cx: CompileContext,
    datasets: Mapping[str, DatasetIr],
    relationships: tuple[RelationshipIr, ...],
    metrics: Mapping[str, MetricIr],
    measures: Mapping[str, MeasureIr],
) -> None:
    """The checks that need the whole model: each fixed field's base, and relationship
    columns that would read a rollup value."""
    for ds in datasets.values():
        for f in ds.fields.values():
            if f.lod is not None:
                _check_base(cx, f.qualified, f.lod, metrics, measures)
    for r in relationships:
        for e in (*r.from_exprs, *r.to_exprs):
            refs = lod_refs(e)
            if refs:
                cx.sink.error(
                    INVALID,
                    f"relationship `{r.name}` joins on `{refs[0]}`, a D-LOD field (or a field "
                    "reading one); a rollup value is not a stored column and cannot be a join key",
                    path=f"relationships[{r.name}]",
                    line=cx.line([("relationships", r.name)]),
                )
                break


def _check_base(
    cx: CompileContext,
    qualified: str,
    lod: LodFieldIr,
    metrics: Mapping[str, MetricIr],
    measures: Mapping[str, MeasureIr],
) -> None:
    dataset, _, name = qualified.partition(".")
    path = f"datasets[{dataset}].fields[{name}]"
    line = cx.line([("datasets", dataset), ("fields", name)])
    m = metrics.get(lod.base)
    if m is None:
        cx.sink.error(
            INVALID,
            f"field `{qualified}`: lod base `{lod.base}` is not a metric",
            path=path,
            line=line,
            candidates=tuple(closest(lod.base, list(metrics))),
        )
        return
    formula = m.formula
    plain = (
        m.kind == "aggregate"
        and m.window is None
        and len(m.measures) == 1
        and isinstance(formula, exp.Column)
        and formula.name == m.measures[0]
    )
    if not plain:
        cx.sink.error(
            "not_implemented",
            f"field `{qualified}`: a D-LOD base over metric `{m.name}` ({m.kind}) is not "
            "implemented; the base must be a single plain aggregate",
            path=path,
            line=line,
            hint="declare a metric that is one aggregate (e.g. COUNT(DISTINCT ds.col)) and name "
            "it as the base",
        )
        return
    meas = measures[m.measures[0]]
    refs = lod_refs(meas.expr)
    if refs:
        cx.sink.error(
            INVALID,
            f"field `{qualified}`: lod base `{m.name}` aggregates the D-LOD field(s) "
            f"{', '.join(refs)}; nested LOD is not supported",
            path=path,
            line=line,
        )
        return
    if meas.datasets != frozenset({dataset}):
        cx.sink.error(
            INVALID,
            f"field `{qualified}`: lod base `{m.name}` reads "
            f"{', '.join(sorted(meas.datasets))}; a fixed field's base aggregates its own "
            f"dataset `{dataset}`",
            path=path,
            line=line,
        )
        return
    if _canon(meas.expr) != _canon(lod.value):
        cx.sink.error(
            "derive_expression_mismatch",
            f"field `{qualified}`: its expression `{lod.value.sql()}` and its lod base "
            f"`{m.name}` (`{meas.expr.sql()}`) are different aggregates",
            path=path,
            line=line,
            hint="write the base's aggregate verbatim as the field's expression: it is what a "
            "consumer that ignores the extension reads",
        )


def _canon(e: exp.Expression) -> str:
    def strip(n: exp.Expression) -> exp.Expression:
        return n.this if isinstance(n, exp.Paren) else n

    return e.copy().transform(strip).sql(normalize=True, identify=False).lower()
