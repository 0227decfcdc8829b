"""The LookML project converter: views -> datasets and fields, explores -> relationships.

A view's source is its `sql_table_name` (parsed in the project's warehouse dialect and
written portably), its `derived_table: {sql}` query, or the view's name (Looker's default).
Explore joins become many-to-one relationships from the many side to the one side, as
their `relationship` says, with `type: inner` as D-JOIN `join_type: inner`; a join `from:`
another view under a new name (a role-playing join) becomes a dataset of its own over the
same source. The explore itself is not kept: the engine joins along the relationships.
"""

from __future__ import annotations

import re
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.importers.common import Notes, field_obj, relationship_obj, safe_name
from dosi.importers.cube_members import NotCarried
from dosi.importers.lookml_fields import (
    DATATYPES,
    GRAIN_TIMEFRAMES,
    LIQUID,
    REF,
    LookmlDataset,
    LookmlSql,
    yes,
)
from dosi.importers.lookml_measures import LookmlMeasures
from dosi.importers.lookml_project import LookmlProject
from dosi.importers.sql_refs import Ref, RefError, parse, ref_of, render, tokenize
from dosi.importers.yaml_writer import COMMENT

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MANY_TO_ONE = {"many_to_one"}
_ONE_TO_MANY = {"one_to_many"}
_ONE_TO_ONE = {"one_to_one"}


def _no_measures(view: str, name: str) -> exp.Expression:
    raise NotCarried("lookml_measure_in_dimension", f"reads measure {view}.{name}")


class LookmlConverter:
    def __init__(self, project: LookmlProject, notes: Notes, dialect: str | None) -> None:
        self.project = project
        self.notes = notes
        self.dialect = dialect
        self.datasets: dict[str, LookmlDataset] = {}
        self.sources: dict[str, str] = {}
        self.sql = LookmlSql(self.datasets, _no_measures, dialect)
        self.metrics: list[dict[str, Any]] = []
        self.relationships: list[dict[str, Any]] = []
        self.aliases: list[dict[str, Any]] = []

    def warn(self, code: str, where: str, reason: str, hint: str | None = None) -> None:
        self.notes.warn(code, f"{reason}; not carried", path=where, hint=hint)

    # -- datasets --------------------------------------------------------------------------
    def _source(self, name: str, raw: dict[str, Any]) -> str | None:
        derived = raw.get("derived_table")
        if isinstance(derived, dict):
            sql = derived.get("sql")
            if not isinstance(sql, str):
                self.warn(
                    "lookml_native_derived_table",
                    name,
                    "a native derived table (explore_source) is computed by Looker",
                    "materialize it as a table or view and point sql_table_name at it",
                )
                return None
            if REF.search(sql) or LIQUID.search(sql):
                self.warn(
                    "lookml_derived_table_reference",
                    name,
                    "its derived table SQL reads other views or Liquid templates",
                    "materialize it as a table or view and point sql_table_name at it",
                )
                return None
            try:
                return sqlglot.parse_one(sql, read=self.dialect).sql()
            except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
                self.warn("lookml_sql_unparsed", name, "its derived table SQL does not parse")
                return None
        table = str(raw.get("sql_table_name") or name).strip().strip(";").strip()
        if REF.search(table) or LIQUID.search(table):
            self.warn("lookml_sql_table_name", name, "its sql_table_name is templated")
            return None
        try:
            tree = exp.to_table(table, dialect=self.dialect)
            for ident in tree.find_all(exp.Identifier):
                if not _PLAIN.fullmatch(ident.name):
                    ident.set("quoted", True)  # `looker-private-demo` and the like
            return tree.sql()
        except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
            self.warn("lookml_sql_unparsed", name, f"sql_table_name {table!r} is not a table")
            return None

    def build_datasets(self) -> None:
        taken: list[str] = []
        for view in self.project.views.values():
            if str(view.raw.get("extension", "")).lower() == "required":
                continue  # an abstract view: only the views extending it are real
            source = self._source(view.name, view.raw)
            if source is None:
                continue
            name = safe_name(view.name, taken)
            taken.append(name)
            self.datasets[view.name] = LookmlDataset(view, name)
            self.sources[view.name] = source
        for view in self.datasets:
            self._fields(view)

    def _fields(self, view: str) -> None:
        ds = self.datasets[view]
        for dim in ds.view.dimensions:
            where = f"{view}.{dim['name']}"
            kind = str(dim.get("type", "string"))
            try:
                tree = self.sql.member_row(view, dim["name"])
            except NotCarried as nc:
                self.warn(nc.code, where, nc.reason, nc.hint)
                continue
            name = safe_name(dim["name"], [f["name"] for f in ds.fields])
            datatype = DATATYPES.get(kind)
            ds.fields.append(
                field_obj(
                    name,
                    render(tree),
                    datatype=datatype,
                    is_time=True if kind in ("date", "date_time") else None,
                    label=dim.get("label"),
                    description=dim.get("description"),
                    synonyms=[where],
                    datus={"is_dimension": False} if yes(dim.get("hidden")) else None,
                )
            )
            ds.field_of[dim["name"]] = name
            ds.kind_of[dim["name"]] = kind
            if yes(dim.get("primary_key")):
                ds.primary_key.append(name)
        for group in ds.view.dimension_groups:
            self._group(view, ds, group)

    def _group(self, view: str, ds: LookmlDataset, group: dict[str, Any]) -> None:
        where = f"{view}.{group['name']}"
        try:
            tree = self.sql.group_base(view, group, ())
        except NotCarried as nc:
            self.warn(nc.code, where, nc.reason, nc.hint)
            return
        frames = [
            str(t)
            for t in group.get("timeframes")
            or ["raw", "time", "date", "week", "month", "quarter", "year"]
        ]
        dropped = [t for t in frames if t not in GRAIN_TIMEFRAMES]
        if dropped:
            self.notes.warn(
                "lookml_timeframe",
                f"timeframes {', '.join(dropped)} are calendar parts, not grains; the time field "
                f"{group['name']} is grouped by day ... year instead",
                path=where,
            )
        datatype = str(group.get("datatype", "timestamp")).lower()
        datus: dict[str, Any] = {}
        if datatype == "date":
            typed, datus["time_granularity"] = "Date", "day"
        elif datatype == "yyyymmdd":
            typed = "Integer"
            datus["time"] = {"format": "%Y%m%d", "storage": "int"}
        elif datatype in ("epoch",):
            self.warn(
                "lookml_epoch_time", where, "an epoch-seconds time (D-FORMAT has no epoch yet)"
            )
            return
        else:
            typed = "DateTime"
        name = safe_name(group["name"], [f["name"] for f in ds.fields])
        ds.fields.append(
            field_obj(
                name,
                render(tree),
                datatype=typed,
                is_time=True,
                label=group.get("label"),
                description=group.get("description"),
                synonyms=[where] + [f"{where}_{t}" for t in frames if t in GRAIN_TIMEFRAMES],
                datus=datus or None,
                comment=f"dimension group {group['name']}: query it as {ds.name}.{name}:<grain>",
            )
        )
        ds.field_of[f"group:{group['name']}"] = name

    # -- metrics ---------------------------------------------------------------------------
    def build_metrics(self) -> None:
        measures = LookmlMeasures(self.datasets, self.notes, self.dialect)
        self.metrics, _ = measures.metrics()

    # -- explores --------------------------------------------------------------------------
    def build_relationships(self) -> None:
        seen: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {}
        for explore in self.project.explores:
            self._explore(explore, seen)

    def _alias_dataset(self, alias: str, view: str) -> str | None:
        """The dataset an explore name stands for (a role-playing copy for `from:` joins)."""
        if alias == view:
            return self.datasets[view].name if view in self.datasets else None
        if view not in self.datasets:
            return None
        name = safe_name(
            alias, [d.name for d in self.datasets.values()] + [a["name"] for a in self.aliases]
        )
        existing = next((a for a in self.aliases if a["#alias"] == (alias, view)), None)
        if existing is not None:
            return str(existing["name"])
        base = self.datasets[view]
        self.aliases.append(
            {
                "#alias": (alias, view),
                COMMENT: f"view {view} joined as {alias} (a role-playing copy)",
                "name": name,
                "source": self.sources[view],
                **({"primary_key": list(base.primary_key)} if base.primary_key else {}),
                "fields": [dict(f) for f in base.fields],
            }
        )
        return name

    def _explore(self, explore: dict[str, Any], seen: dict[Any, Any]) -> None:
        name = str(explore["name"])
        base_view = str(explore.get("view_name") or explore.get("from") or name)
        for key in ("sql_always_where", "always_filter", "access_filter", "conditionally_filter"):
            if explore.get(key) or explore.get(f"{key}s"):
                self.warn(
                    "lookml_explore_filter",
                    f"explore {name}",
                    f"its {key} (a filter Looker adds to every query)",
                )
        aliases = {name: base_view}
        for join in explore.get("joins") or []:
            aliases[str(join["name"])] = str(join.get("from") or join["name"])
        for join in explore.get("joins") or []:
            where = f"explore {name}.join {join['name']}"
            try:
                self._join(name, base_view, aliases, join, seen)
            except NotCarried as nc:
                self.warn(nc.code, where, nc.reason, nc.hint)

    def _side(
        self, aliases: dict[str, str], node: exp.Expression, refs: list[Ref]
    ) -> tuple[str, str]:
        """(explore alias, field name) one side of a join equality reads."""
        if not isinstance(node, exp.Column) or node.table:
            raise NotCarried("lookml_join_not_equi", f"join side {node.sql()} is not a field")
        ref = ref_of(node.name, refs)
        if ref is None:
            raise NotCarried("lookml_join_not_equi", f"join side {node.name} is not a field")
        parts = ref.parts
        if len(parts) != 2 or parts[0] not in aliases:
            raise NotCarried("lookml_join_not_equi", f"join side {ref.text}")
        ds = self.datasets.get(aliases[parts[0]])
        if ds is None or parts[1] not in ds.field_of:
            raise NotCarried(
                "lookml_join_not_equi", f"join side {ref.text} is not a carried dimension"
            )
        return parts[0], ds.field_of[parts[1]]

    def _join(
        self,
        explore: str,
        base_view: str,
        aliases: dict[str, str],
        join: dict[str, Any],
        seen: dict[Any, Any],
    ) -> None:
        jname = str(join["name"])
        jview = aliases[jname]
        if jview not in self.datasets:
            raise NotCarried(
                "lookml_join_target_unknown", f"joins view {jview}, which is not imported"
            )
        rel = str(join.get("relationship", "many_to_one"))
        kind = str(join.get("type", "left_outer"))
        if rel == "many_to_many":
            raise NotCarried("lookml_many_to_many_join", "a many_to_many join (a fan-out bridge)")
        if kind == "cross":
            raise NotCarried("lookml_cross_join", "a cross join")
        if join.get("foreign_key"):
            target = self.datasets[jview]
            if not target.primary_key:
                raise NotCarried(
                    "lookml_join_not_equi", f"foreign_key join to {jview}, which has no primary key"
                )
            fk = str(join["foreign_key"]).split(".")
            owner, member = (fk[0], fk[1]) if len(fk) == 2 else (explore, fk[0])
            ods = self.datasets.get(aliases.get(owner, owner))
            if ods is None or member not in ods.field_of:
                raise NotCarried("lookml_join_not_equi", f"foreign_key {join['foreign_key']}")
            pairs = [((owner, ods.field_of[member]), (jname, target.primary_key[0]))]
        else:
            sql = join.get("sql_on")
            if not isinstance(sql, str):
                raise NotCarried("lookml_join_not_equi", "a join without sql_on or foreign_key")
            text, refs = tokenize(sql, REF)
            try:
                tree = parse(text, self.dialect)
            except RefError as err:
                raise NotCarried("lookml_sql_unparsed", str(err)) from None
            terms = list(tree.flatten()) if isinstance(tree, exp.And) else [tree]
            pairs = []
            for term in terms:
                if not isinstance(term, exp.EQ):
                    raise NotCarried(
                        "lookml_join_not_equi", "the join condition is not field = field"
                    )
                a, b = (
                    self._side(aliases, term.this, refs),
                    self._side(aliases, term.expression, refs),
                )
                if b[0] != jname:
                    a, b = b, a
                if b[0] != jname or a[0] == jname:
                    raise NotCarried(
                        "lookml_join_not_equi",
                        "the condition does not pair the join with the explore",
                    )
                pairs.append((a, b))
        others = {a[0] for a, _ in pairs}
        if len(others) != 1:
            raise NotCarried("lookml_join_not_equi", "the condition reads more than one other view")
        other = next(iter(others))
        other_ds = self._alias_dataset(other, aliases[other])
        join_ds = self._alias_dataset(jname, jview)
        if other_ds is None or join_ds is None:
            raise NotCarried("lookml_join_target_unknown", "a joined view is not imported")
        if rel in _ONE_TO_MANY:
            frm, to = join_ds, other_ds
            cols = ([b[1] for _, b in pairs], [a[1] for a, _ in pairs])
        else:
            frm, to = other_ds, join_ds
            cols = ([a[1] for a, _ in pairs], [b[1] for _, b in pairs])
        key = (frm, to)
        if key in seen:
            if seen[key] != (tuple(cols[0]), tuple(cols[1])):
                self.notes.warn(
                    "lookml_join_conflict",
                    f"explore {explore} joins {frm} to {to} on other fields than an earlier "
                    "explore; the first is kept",
                    path=f"explore {explore}.join {jname}",
                )
            return
        seen[key] = (tuple(cols[0]), tuple(cols[1]))
        datus = None
        if kind == "inner":
            datus = {"join_type": "inner"}
        elif kind == "full_outer":
            self.notes.warn(
                "lookml_full_outer_as_left",
                "a full outer join became a left join from the many side: rows only the one "
                "side has are not listed",
                path=f"explore {explore}.join {jname}",
            )
        self.relationships.append(
            relationship_obj(
                safe_name(f"{frm}_to_{to}", [r["name"] for r in self.relationships]),
                frm,
                to,
                cols[0],
                cols[1],
                datus=datus,
                comment=f"explore {explore}: join {jname} ({rel}, {kind})",
            )
        )

    # -- output ----------------------------------------------------------------------------
    def dataset_objs(self) -> list[dict[str, Any]]:
        out = []
        for view, ds in self.datasets.items():
            obj: dict[str, Any] = {
                COMMENT: f"view {view} ({ds.view.file})",
                "name": ds.name,
                "source": self.sources[view],
            }
            if ds.primary_key:
                obj["primary_key"] = list(ds.primary_key)
            if ds.view.raw.get("label"):
                obj["ai_context"] = {"synonyms": [str(ds.view.raw["label"])]}
            obj["fields"] = ds.fields
            out.append(obj)
        for alias in self.aliases:
            out.append({k: v for k, v in alias.items() if k != "#alias"})
        return out
