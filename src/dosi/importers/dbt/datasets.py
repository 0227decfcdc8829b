"""dbt semantic models as Ossie datasets, their entities as keys and relationships.

Every semantic model becomes a dataset of the same name reading its `node_relation`; every
entity, dimension and measure a field of it (names.py keeps the mapping):

- an entity is a field holding its key expression, a dimension (D-DIM `is_dimension: true`:
  dbt groups by entities); `primary` (and `natural`) entities are the primary key, `unique`
  ones unique keys;
- a categorical dimension is a plain field; a time dimension is `is_time` with D-GRAIN
  `time_granularity` (second .. year; dbt's grains finer than a second are warned: dosi has
  none);
- a measure is a field with its row expression (a `sum_boolean` measure's boolean counted as
  1 / 0) and D-DIM `is_dimension: false`;
- the model's `defaults.agg_time_dimension` is its D-TIME `time_dimension`.

A foreign entity joins to each model the entity identifies, many to one, on the entity and on
every `is_partition` dimension of one name both models have (MetricFlow's partition join, as
further pairs of the composite key). Entities that identify
two models (one-to-one) also join, from the model with measures, when that adds no second path
between two datasets (dosi refuses ambiguous paths). A natural key is a slowly changing dimension's:
the model's `validity_params` time dimensions become its D-VALIDITY `validity` (dosi 1.15)
and its primary key the natural key with the version start, and a join on it reads the
version valid at the fact row's time; without both bounds it is not joined (a plain join
would repeat rows once per version).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from dbt_semantic_interfaces.type_enums.aggregation_type import AggregationType
from dbt_semantic_interfaces.type_enums.entity_type import EntityType

from dosi.importers.common import Notes, datus_entry, field_obj, relationship_obj
from dosi.importers.dbt.names import DbtNames, ModelInfo
from dosi.importers.dbt.time_grains import SHARED_GRAINS

DBT_VENDOR = "DBT"


def build_datasets(names: DbtNames, notes: Notes) -> list[dict[str, Any]]:
    return [_dataset(info, notes) for info in names.models.values()]


def _dataset(info: ModelInfo, notes: Notes) -> dict[str, Any]:
    sm = info.sm
    rel = sm.node_relation
    source = rel.relation_name or ".".join(
        p for p in (rel.database, rel.schema_name, rel.alias) if p
    )
    fields = []
    measures = {m.name: m for m in sm.measures}
    dims = {d.name: d for d in sm.dimensions}
    ents = {e.name: e for e in sm.entities}
    for el in info.elements.values():
        payload: dict[str, Any] = {}
        dbt: dict[str, Any] = {"element": el.kind, "name": el.name}
        sql = el.expr
        is_time = None
        src: Any
        if el.kind == "entity":
            src = ents[el.name]
            payload["is_dimension"] = True
            dbt["type"] = src.type.value
            if src.role:
                dbt["role"] = src.role
        elif el.kind == "measure":
            src = measures[el.name]
            payload["is_dimension"] = False
            if src.agg is AggregationType.SUM_BOOLEAN:
                sql = f"CASE WHEN {el.expr} THEN 1 ELSE 0 END"
            dbt["agg"] = src.agg.value
            if src.expr is not None:
                dbt["expr"] = src.expr
            if src.agg_params is not None:
                dbt["agg_params"] = json.loads(src.agg_params.json(exclude_none=True))
            if src.agg_time_dimension:
                dbt["agg_time_dimension"] = src.agg_time_dimension
            if src.non_additive_dimension is not None:
                dbt["non_additive_dimension"] = json.loads(src.non_additive_dimension.json())
        else:
            src = dims[el.name]
            if el.kind == "time_dimension":
                is_time = True
                dbt["time_granularity"] = el.grain
                if el.grain in SHARED_GRAINS:
                    payload["time_granularity"] = el.grain
                else:
                    notes.warn(
                        "sub_day_grain_not_carried",
                        f"time dimension `{el.name}` is stored by the {el.grain}; dosi groups "
                        "time by second, minute, hour, day, week, month, quarter or year",
                        path=f"semantic_model:{sm.name}.dimension:{el.name}",
                    )
                if src.type_params is not None and src.type_params.validity_params is not None:
                    vp = src.type_params.validity_params
                    dbt["validity"] = "start" if vp.is_start else "end" if vp.is_end else None
            if src.is_partition:
                dbt["is_partition"] = True
        if src.expr is not None and el.kind != "measure":
            dbt["expr"] = src.expr
        f = field_obj(
            el.field,
            sql,
            is_time=is_time,
            label=src.label,
            description=src.description,
            datus=payload or None,
        )
        f.setdefault("custom_extensions", []).append(
            {"vendor_name": DBT_VENDOR, "data": json.dumps(dbt)}
        )
        fields.append(f)
    out: dict[str, Any] = {"name": sm.name, "source": source}
    primary = [e for e in sm.entities if e.type in (EntityType.PRIMARY, EntityType.NATURAL)]
    validity = scd_validity(info)
    if primary:
        out["primary_key"] = [info.elements[primary[0].name].field]
        if validity is not None and primary[0].type is EntityType.NATURAL:
            out["primary_key"].append(validity["start"])  # one row per version
    unique = [[info.elements[e.name].field] for e in sm.entities if e.type is EntityType.UNIQUE]
    if unique:
        out["unique_keys"] = unique
    if sm.description:
        out["description"] = sm.description.strip()
    if sm.label:
        out["ai_context"] = {"synonyms": [sm.label]}
    out["fields"] = fields
    exts = []
    payload = {}
    default = sm.defaults.agg_time_dimension if sm.defaults is not None else None
    if default and default in info.elements:
        payload["time_dimension"] = info.elements[default].field
    if validity is not None:  # D-VALIDITY (dosi 1.15): a slowly changing dimension
        payload["validity"] = validity
    if payload:
        exts.append(datus_entry(payload))
    dbt_model: dict[str, Any] = {
        "semantic_model": sm.name,
        "node_relation": {"alias": rel.alias, "schema_name": rel.schema_name},
    }
    if info.primary_entity:
        dbt_model["primary_entity"] = info.primary_entity
    exts.append({"vendor_name": DBT_VENDOR, "data": json.dumps(dbt_model)})
    out["custom_extensions"] = exts
    return out


def scd_validity(info: ModelInfo) -> dict[str, str] | None:
    """D-VALIDITY of a semantic model whose time dimensions carry MetricFlow's
    `validity_params` (one `is_start`, one `is_end`): the fields bounding each version."""
    bounds: dict[str, str] = {}
    for d in info.sm.dimensions:
        vp = d.type_params.validity_params if d.type_params is not None else None
        if vp is None:
            continue
        if vp.is_start:
            bounds.setdefault("start", info.elements[d.name].field)
        if vp.is_end:
            bounds.setdefault("end", info.elements[d.name].field)
    return bounds if len(bounds) == 2 else None


def build_relationships(names: DbtNames, notes: Notes) -> list[dict[str, Any]]:
    edges = list(_foreign_edges(names, notes))
    kept: list[tuple[str, str, str]] = []
    for edge in edges:
        kept.append(edge)
    for edge in _one_to_one_edges(names):
        if _adds_no_second_path(kept, edge):
            kept.append(edge)
    for src, dst in sorted(_ambiguous_pairs(kept) or ()):
        notes.warn(
            "ambiguous_join_path",
            f"`{src}` reaches `{dst}` along several entity paths; dbt picks one by the entity "
            "path a name spells (`user__x` vs `listing__user__x`), dosi refuses the query "
            "(ambiguous_join_path) until one relationship is removed",
            path=f"semantic_model:{src}",
        )
    out = []
    for a, b, entity in kept:
        fa = [names.element(a, entity).field]
        fb = [names.element(b, entity).field]
        dbt: dict[str, Any] = {"entity": entity}
        shared = list(_shared_partitions(names, a, b, notes))
        if shared:
            dbt["partitions"] = [p for p, _, _ in shared]
            fa += [x for _, x, _ in shared]
            fb += [y for _, _, y in shared]
        rel = relationship_obj(f"{a}__{entity}__{b}", a, b, fa, fb)
        rel["custom_extensions"] = [{"vendor_name": DBT_VENDOR, "data": json.dumps(dbt)}]
        out.append(rel)
    return out


def _shared_partitions(
    names: DbtNames, a: str, b: str, notes: Notes
) -> Iterator[tuple[str, str, str]]:
    """MetricFlow joins two semantic models on every `is_partition` dimension of the same name
    that both have, as well as the entity: (dimension, field in `a`, field in `b`) for each,
    a further key pair of the (composite) relationship. A pair whose kinds or grains differ is
    not joined (MetricFlow refuses such a project), with a warning."""
    dims_a = {d.name: d for d in names.models[a].sm.dimensions if d.is_partition}
    dims_b = {d.name: d for d in names.models[b].sm.dimensions if d.is_partition}
    for dim in sorted(dims_a.keys() & dims_b.keys()):
        ea, eb = names.element(a, dim), names.element(b, dim)
        if (ea.kind, ea.grain) != (eb.kind, eb.grain):
            notes.warn(
                "partition_join_not_carried",
                f"`{a}` and `{b}` share the partition dimension `{dim}` with different types or "
                f"grains ({ea.kind} {ea.grain or ''} vs {eb.kind} {eb.grain or ''}); they "
                "are joined on the entity alone",
                path=f"semantic_model:{a}.dimension:{dim}",
            )
            continue
        yield dim, ea.field, eb.field


def _foreign_edges(names: DbtNames, notes: Notes) -> Iterator[tuple[str, str, str]]:
    for info in names.models.values():
        for e in info.sm.entities:
            if e.type is not EntityType.FOREIGN:
                continue
            for target in names.entity_models(e.name):
                if target.name == info.name or e.name not in target.elements:
                    continue
                te = next(x for x in target.sm.entities if x.name == e.name)
                if te.type is EntityType.NATURAL and scd_validity(target) is None:
                    notes.warn(
                        "scd_join_not_carried",
                        f"`{info.name}` reaches `{target.name}` through its natural key "
                        f"`{e.name}`, but `{target.name}` has no time dimensions with "
                        "`validity_params` `is_start` and `is_end` to pick a version by, so "
                        "no join is declared (it would repeat rows once per version)",
                        path=f"semantic_model:{target.name}.entity:{e.name}",
                    )
                    continue
                yield (info.name, target.name, e.name)


def _one_to_one_edges(names: DbtNames) -> Iterator[tuple[str, str, str]]:
    for info in names.models.values():
        if not info.sm.measures:
            continue
        for e in info.sm.entities:
            if e.type not in (EntityType.PRIMARY, EntityType.UNIQUE):
                continue
            for target in names.entity_models(e.name):
                if target.name == info.name or e.name not in target.elements:
                    continue
                te = next(x for x in target.sm.entities if x.name == e.name)
                if te.type in (EntityType.PRIMARY, EntityType.UNIQUE):
                    yield (info.name, target.name, e.name)


def _adds_no_second_path(edges: list[tuple[str, str, str]], new: tuple[str, str, str]) -> bool:
    """Adding `new` makes no pair of datasets ambiguous (two directed paths) that was not, and
    closes no cycle."""
    before = _ambiguous_pairs(edges)
    after = _ambiguous_pairs([*edges, new])
    return after is not None and (before is None or after <= before)


def _ambiguous_pairs(edges: list[tuple[str, str, str]]) -> set[tuple[str, str]] | None:
    """Pairs joined by two or more directed paths (None: the graph has a cycle). Path counts
    are capped at 2, so a large graph costs one memoized walk per dataset."""
    graph: dict[str, list[str]] = {}
    for a, b, _ in edges:
        graph.setdefault(a, []).append(b)
    memo: dict[str, dict[str, int]] = {}
    active: set[str] = set()

    def reach(node: str) -> dict[str, int] | None:
        if node in memo:
            return memo[node]
        if node in active:
            return None
        active.add(node)
        out: dict[str, int] = {}
        for nxt in graph.get(node, []):
            sub = reach(nxt)
            if sub is None:
                return None
            out[nxt] = min(2, out.get(nxt, 0) + 1)
            for k, v in sub.items():
                out[k] = min(2, out.get(k, 0) + v)
        active.discard(node)
        memo[node] = out
        return out

    pairs: set[tuple[str, str]] = set()
    for src in graph:
        counts = reach(src)
        if counts is None:
            return None
        pairs |= {(src, dst) for dst, n in counts.items() if n > 1}
    return pairs
