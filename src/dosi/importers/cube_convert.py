"""The Cube project converter: cubes -> datasets, members -> fields and metrics, joins ->
relationships (see `cube.py` for the mapping, `cube_members.py` for member SQL)."""

from __future__ import annotations

import json
from typing import Any

from sqlglot import exp

from dosi.ext.envelope import DATUS_VENDOR
from dosi.importers.common import (
    Notes,
    datus_entry,
    field_obj,
    relationship_obj,
    safe_name,
)
from dosi.importers.cube_measures import MeasureBuilder
from dosi.importers.cube_members import (
    DIMENSION_TYPES,
    REF,
    CubeDataset,
    MemberSql,
    NotCarried,
)
from dosi.importers.cube_project import CubeProject
from dosi.importers.sql_refs import Ref, RefError, parse, ref_of, render, tokenize
from dosi.importers.yaml_writer import COMMENT

_MANY_TO_ONE = {"many_to_one", "belongs_to", "belongsto"}
_ONE_TO_MANY = {"one_to_many", "has_many", "hasmany"}
_ONE_TO_ONE = {"one_to_one", "has_one", "hasone"}


class CubeConverter:
    """Builds the model of one project; `notes` collects what could not be carried."""

    def __init__(self, project: CubeProject, notes: Notes, dialect: str | None) -> None:
        self.project = project
        self.notes = notes
        self.datasets: dict[str, CubeDataset] = {}
        self.sources: dict[str, str] = {}
        self.sql = MemberSql(self.datasets, _no_measures, dialect)
        self.dialect = dialect
        self.metrics: list[dict[str, Any]] = []
        self.metric_member: dict[str, tuple[str, str]] = {}
        self.relationships: list[dict[str, Any]] = []

    def warn(self, code: str, where: str, reason: str, hint: str | None = None) -> None:
        self.notes.warn(code, f"{reason}; not carried", path=where, hint=hint)

    # -- datasets --------------------------------------------------------------------------
    def build_datasets(self) -> None:
        taken: list[str] = []
        for cube in self.project.cubes.values():
            source = cube.raw.get("sql_table") or cube.raw.get("sql")
            if not isinstance(source, str) or not source.strip():
                self.warn("cube_without_source", cube.name, "the cube has no sql_table or sql")
                continue
            if REF.search(source):
                self.warn(
                    "cube_source_reference",
                    cube.name,
                    "its sql reads other cubes or context variables ({...})",
                    "materialize the query as a table or view and point sql_table at it",
                )
                continue
            name = safe_name(cube.name, taken)
            taken.append(name)
            self.datasets[cube.name] = CubeDataset(cube, name)
            self.sources[cube.name] = source.strip()
        for cube in self.datasets:
            self._dimensions(cube)
        for cube in self.datasets:
            self._segments(cube)

    def _dimensions(self, cube: str) -> None:
        ds = self.datasets[cube]
        for dim in ds.spec.dimensions:
            where = f"{cube}.{dim['name']}"
            kind = str(dim.get("type", "string")).lower()
            try:
                if kind not in DIMENSION_TYPES:
                    raise NotCarried(
                        f"cube_{kind}_dimension" if kind in ("geo", "switch") else "cube_type",
                        f"dimension type {kind} has no Ossie counterpart",
                    )
                tree = self.sql.dimension_tree(cube, dim["name"])
            except NotCarried as nc:
                self.warn(nc.code, where, nc.reason, nc.hint)
                continue
            fname = safe_name(dim["name"], ds.taken())
            is_time = kind == "time"
            synonyms = [where] + ([str(dim["title"])] if dim.get("title") else [])
            ds.fields.append(
                field_obj(
                    fname,
                    render(tree),
                    datatype=DIMENSION_TYPES[kind],
                    is_time=True if is_time else None,
                    label=str(dim["title"]) if dim.get("title") else None,
                    description=dim.get("description"),
                    synonyms=synonyms,
                )
            )
            ds.field_of[dim["name"]] = fname
            if is_time:
                ds.time_fields.append(fname)
            if dim.get("primary_key"):
                ds.primary_key.append(fname)
            if dim.get("granularities"):
                self.notes.warn(
                    "cube_custom_granularity",
                    "custom granularities are not carried (the standard day ... year grains "
                    "remain)",
                    path=where,
                )

    def _segments(self, cube: str) -> None:
        ds = self.datasets[cube]
        for seg in ds.spec.segments:
            where = f"{cube}.{seg['name']}"
            try:
                tree = self.sql.row(cube, str(seg.get("sql", "")))
            except NotCarried as nc:
                self.warn(nc.code, where, nc.reason, nc.hint)
                continue
            fname = safe_name(seg["name"], ds.taken())
            if fname != seg["name"]:
                fname = safe_name(f"{seg['name']}_segment", ds.taken())
            ds.fields.append(
                field_obj(
                    fname,
                    render(tree),
                    datatype="Boolean",
                    description=(seg.get("description") or f"Cube segment {seg['name']}.")
                    + f" Filter with where_sql: {ds.name}.{fname} = true.",
                    synonyms=[where],
                    comment=f"Cube segment {seg['name']}: a boolean field to filter on",
                )
            )
            ds.field_of.setdefault(f"segment:{seg['name']}", fname)

    # -- metrics ---------------------------------------------------------------------------
    def build_metrics(self) -> None:
        builder = MeasureBuilder(self.datasets, self.notes, self.dialect)
        self.metrics, self.metric_member = builder.metrics()

    # -- joins -----------------------------------------------------------------------------
    def build_relationships(self) -> None:
        seen: set[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = set()
        taken: list[str] = []
        for cube, ds in self.datasets.items():
            for join in ds.spec.joins:
                where = f"{cube}.joins.{join['name']}"
                target = join["name"]
                if target not in self.datasets:
                    self.warn("cube_join_target_unknown", where, f"cube {target} is not imported")
                    continue
                rel = str(join.get("relationship", "many_to_one")).lower()
                try:
                    pairs = self._join_pairs(cube, target, str(join.get("sql", "")))
                except NotCarried as nc:
                    self.warn(nc.code, where, nc.reason, nc.hint)
                    continue
                if rel in _ONE_TO_MANY:
                    frm, to = target, cube
                    pairs = [(b, a) for a, b in pairs]
                elif rel in _MANY_TO_ONE | _ONE_TO_ONE:
                    frm, to = cube, target
                else:
                    self.warn("cube_join_relationship", where, f"relationship {rel} is unknown")
                    continue
                key = (frm, to, tuple(a for a, _ in pairs), tuple(b for _, b in pairs))
                if key in seen:
                    continue
                seen.add(key)
                f_ds, t_ds = self.datasets[frm].name, self.datasets[to].name
                base = f"{f_ds}_to_{t_ds}"
                rname = safe_name(base, taken)
                taken.append(rname)
                self.relationships.append(
                    relationship_obj(
                        rname,
                        f_ds,
                        t_ds,
                        [a for a, _ in pairs],
                        [b for _, b in pairs],
                        comment=f"Cube join {cube} -> {target} ({rel})",
                    )
                )

    def _join_side(self, cube: str, node: exp.Expression, refs: list[Ref]) -> tuple[str, str]:
        """(cube, field) one side of a join equality reads."""
        if not isinstance(node, exp.Column):
            raise NotCarried("cube_join_not_equi", f"join side {node.sql()} is not a column")
        table_ref = ref_of(node.table, refs) if node.table else None
        if table_ref is not None:
            owner, member = self.sql.split(cube, table_ref)
            if member is not None:
                raise NotCarried("cube_join_not_equi", f"join side {table_ref.text}.{node.name}")
            target = self.datasets[owner]
            return owner, target.column_field(exp.column(node.name))
        ref = ref_of(node.name, refs)
        if ref is not None:
            owner, member = self.sql.split(cube, ref)
            target = self.datasets[owner]
            if member is None or member not in target.field_of:
                raise NotCarried("cube_join_not_equi", f"join side {ref.text} is not a dimension")
            return owner, target.field_of[member]
        if node.table in self.datasets:
            return node.table, self.datasets[node.table].column_field(exp.column(node.name))
        raise NotCarried("cube_join_not_equi", f"join side {node.sql()} names no cube")

    def _join_pairs(self, cube: str, target: str, sql: str) -> list[tuple[str, str]]:
        """(this cube's field, the target's field) per equality of the join condition."""
        text, refs = tokenize(sql, REF)
        try:
            tree = parse(text, self.dialect)
        except RefError as err:
            raise NotCarried("cube_sql_unparsed", str(err)) from None
        terms = list(tree.flatten()) if isinstance(tree, exp.And) else [tree]
        pairs = []
        for term in terms:
            if not isinstance(term, exp.EQ):
                raise NotCarried("cube_join_not_equi", "the join condition is not column = column")
            left = self._join_side(cube, term.this, refs)
            right = self._join_side(cube, term.expression, refs)
            if left[0] == target and right[0] == cube:
                left, right = right, left
            if left[0] != cube or right[0] != target:
                raise NotCarried("cube_join_not_equi", "the condition does not pair the two cubes")
            pairs.append((left[1], right[1]))
        return pairs

    # -- output ----------------------------------------------------------------------------
    def dataset_objs(self, keep: set[str] | None = None) -> list[dict[str, Any]]:
        out = []
        for cube, ds in self.datasets.items():
            if keep is not None and cube not in keep:
                continue
            obj: dict[str, Any] = {
                COMMENT: f"cube {cube} ({ds.spec.file})",
                "name": ds.name,
                "source": self.sources[cube],
            }
            if ds.primary_key:
                obj["primary_key"] = list(ds.primary_key)
            if ds.spec.raw.get("description"):
                obj["description"] = str(ds.spec.raw["description"])
            if ds.spec.raw.get("title"):
                obj["ai_context"] = {"synonyms": [str(ds.spec.raw["title"])]}
            obj["fields"] = ds.fields
            out.append(obj)
        return out


def _no_measures(cube: str, name: str) -> exp.Expression:
    raise NotCarried(
        "cube_cross_cube_reference", f"reads measure {cube}.{name} where a row value belongs"
    )


def hide_dimension(field: dict[str, Any]) -> None:
    """Mark a field `is_dimension: false` (D-DIM), keeping any other DATUS keys it has."""
    exts = field.get("custom_extensions") or []
    payload: dict[str, Any] = {}
    others = []
    for e in exts:
        if str(e.get("vendor_name", "")).upper() == DATUS_VENDOR:
            payload = {k: v for k, v in json.loads(e["data"]).items() if k not in ("v", "requires")}
        else:
            others.append(e)
    payload["is_dimension"] = False
    field["custom_extensions"] = [*others, datus_entry(payload)]
