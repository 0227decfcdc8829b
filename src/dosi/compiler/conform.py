"""D-CONFORM model compile: many_to_many edges -> conformity classes (datus-extensions §3
D-CONFORM; CHECKLIST CONF-03, CONF-09, CONF-16, CONF-17, JOIN-06).

Declared once, checked once: each column pair must agree on `dimension.is_time` and, when both
sides declare one, on `datatype`; a dataset contributes at most one column to a class; a
many_to_many edge takes no `join_type`. Model validation still warns
`relationship_target_not_unique` on such an edge: correct under strict Ossie, and the only
signal a consumer that ignores the key gets.
"""

from __future__ import annotations

from collections.abc import Mapping

from dosi.compiler.context import CompileContext
from dosi.errors import closest
from dosi.ext.conform import JOIN_TYPE_ON_CONFORMED_HINT, is_conformed
from dosi.ir.conform import ConformClass, ConformedIr
from dosi.ir.model import DatasetIr, FieldIr, RelationshipIr

INVALID = "invalid_datus_extension"


def relationship_kind(cx: CompileContext, rext: object, rpath: str, rline: int | None) -> str:
    """`many_to_many` when the payload declares it (datus mode only: basic mode reads no
    payload, so the edge stays an ordinary many-to-one join, CONF-18)."""
    if not is_conformed(getattr(rext, "cardinality", None)):
        return "many_to_one"
    if getattr(rext, "join_type", None) is not None:
        cx.sink.error(
            INVALID,
            "`join_type` does not apply to a `cardinality: many_to_many` relationship: a "
            "conformed edge pairs dimensions of two facts and is never joined row by row",
            path=rpath,
            line=rline,
            hint=JOIN_TYPE_ON_CONFORMED_HINT,
            candidates=("join_type",),
        )
    return "many_to_many"


def compile_conformed(
    cx: CompileContext, edges: tuple[RelationshipIr, ...], datasets: Mapping[str, DatasetIr]
) -> ConformedIr | None:
    """The classes the column pairs of `edges` form, after checking every pair."""
    if not edges:
        return None
    parent: dict[tuple[str, str], tuple[str, str]] = {}
    members: dict[tuple[str, str], FieldIr] = {}
    first_edge: dict[tuple[str, str], RelationshipIr] = {}

    def find(k: tuple[str, str]) -> tuple[str, str]:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for e in edges:
        path = f"relationships[{e.name}]"
        line = cx.line([("relationships", e.name)])
        _warn_not_unique(cx, e, datasets[e.to_dataset], path, line)
        for fc, tc in zip(e.from_columns, e.to_columns, strict=True):
            a = _member(cx, e, "from", datasets[e.from_dataset], fc)
            b = _member(cx, e, "to", datasets[e.to_dataset], tc)
            if a is None or b is None:
                continue
            _check_pair(cx, e, a, b, path, line)
            for m in (a, b):
                key = (m.dataset, m.name)
                if key not in parent:
                    parent[key] = key
                    members[key] = m
                    first_edge[key] = e
            ra, rb = find((a.dataset, a.name)), find((b.dataset, b.name))
            if ra != rb:
                parent[rb] = ra
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for key in members:  # declaration order
        groups.setdefault(find(key), []).append(key)
    classes: list[ConformClass] = []
    for keys in groups.values():
        _check_one_per_dataset(cx, [members[k] for k in keys], first_edge[keys[0]])
        seen: set[str] = set()
        picked = []
        for k in keys:
            if k[0] not in seen:
                seen.add(k[0])
                picked.append(members[k])
        classes.append(ConformClass(members[keys[0]].qualified, tuple(picked)))
    return ConformedIr(edges=edges, classes=tuple(classes))


def _member(
    cx: CompileContext, e: RelationshipIr, side: str, ds: DatasetIr, column: str
) -> FieldIr | None:
    """The paired column's field. A conformed dimension is grouped and filtered by name, so
    each spelling must be a declared field (an ordinary edge may name a bare key column)."""
    f = ds.fields.get(column)
    if f is None:
        cx.sink.error(
            "unknown_column",
            f"relationship `{e.name}` pairs `{ds.name}.{column}`, which is not a declared "
            f"field of `{ds.name}`: each spelling of a conformed dimension must be a field",
            path=f"relationships[{e.name}].{side}_columns",
            line=cx.line([("relationships", e.name)]),
            candidates=tuple(closest(column, ds.fields)),
            hint=f"declare `{column}` as a field of `{ds.name}`, or pair a declared field",
            stage="invalid_model",
        )
    return f


def _check_pair(
    cx: CompileContext,
    e: RelationshipIr,
    a: FieldIr,
    b: FieldIr,
    path: str,
    line: int | None,
) -> None:
    """CONF-16: both spellings are one dimension: the same is_time, the same declared type."""
    if a.is_time != b.is_time:
        t, n = (a, b) if a.is_time else (b, a)
        cx.sink.error(
            INVALID,
            f"relationship `{e.name}` pairs `{a.qualified}` with `{b.qualified}`, but "
            f"`{t.qualified}` is a time dimension (dimension.is_time) and `{n.qualified}` is "
            "not; a conformed pair is one dimension spelled on two facts",
            path=path,
            line=line,
            hint="pair a date with a date and a key with a key, or mark both columns "
            "dimension.is_time the same way",
        )
    if a.datatype is not None and b.datatype is not None and a.datatype != b.datatype:
        cx.sink.error(
            INVALID,
            f"relationship `{e.name}` pairs `{a.qualified}` ({a.datatype}) with "
            f"`{b.qualified}` ({b.datatype}): conformed columns must share a datatype",
            path=path,
            line=line,
            hint="pair columns of one datatype, or correct the datatype a field declares",
        )


def _check_one_per_dataset(cx: CompileContext, members: list[FieldIr], e: RelationshipIr) -> None:
    """CONF-16: a dataset spells a conformed dimension once; two of its columns in one class
    (directly, or through a chain of pairs) would make one dimension two different things."""
    by_ds: dict[str, list[str]] = {}
    for m in members:
        by_ds.setdefault(m.dataset, []).append(m.qualified)
    for ds, cols in by_ds.items():
        if len(cols) > 1:
            cx.sink.error(
                INVALID,
                f"the conformed pairs put {' and '.join(f'`{c}`' for c in cols)} in one "
                f"class: dataset `{ds}` may contribute only one column to a conformed "
                "dimension",
                path=f"relationships[{e.name}]",
                line=cx.line([("relationships", e.name)]),
                hint="check the column order of from_columns / to_columns: the i-th columns "
                "on both sides must be the same dimension",
                candidates=tuple(cols),
            )


def _warn_not_unique(
    cx: CompileContext, e: RelationshipIr, target: DatasetIr, path: str, line: int | None
) -> None:
    """CONF-17: the target columns of a fact-to-fact pairing are not a key of the target, which
    is what strict Ossie reads as a many-to-one edge that may fan out."""
    cols = set(e.to_columns)
    keys = [set(target.primary_key), *(set(k) for k in target.unique_keys)]
    if any(k and k <= cols for k in keys):
        return
    cx.sink.warn(
        "relationship_target_not_unique",
        f"relationship `{e.name}`: to_columns [{', '.join(e.to_columns)}] are not the primary "
        f"key or a unique key of `{e.to_dataset}`; a consumer that reads it as a many-to-one "
        "join would repeat rows (it is declared a conformed many_to_many pairing, which dosi "
        "never joins)",
        path=f"{path}.to_columns",
        line=line,
        hint="keep `cardinality: many_to_many` in `requires` so engines without D-CONFORM "
        "refuse the model instead of joining the facts",
    )
