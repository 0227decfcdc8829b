"""Catalog fields of a D-LOD metric (`dosi list metrics`, SURF-CLI-03): the derive family,
its base and declaration, and the dimensions a query must group by to read it."""

from __future__ import annotations

from typing import Any

from dosi.ir.model import MetricIr


def lod_summary(m: MetricIr) -> dict[str, Any]:
    """`derive_family` / `derive_base` / `derive_expr` / `required_dimensions` of a LOD
    metric; empty for every other metric (their derive fields are D-DERIVE's)."""
    lod = m.lod
    if lod is None:
        return {}
    if lod.kind == "compose":  # a compose over LOD members (LOD-REL-10)
        return {
            "derive_family": "compose",
            "derive_base": None,
            "derive_expr": lod.text,
            "derive_members": [{"metric": n} for n in lod.members],
            "lod_kind": "compose",
            "required_dimensions": [],
        }
    return {
        "derive_family": "lod",
        "derive_base": lod.base,
        "derive_expr": lod.text,
        "lod_kind": lod.kind,
        "required_dimensions": list(lod.dims) if lod.kind != "include" else [],
    }


def lod_lineage(m: MetricIr) -> tuple[str | None, tuple[str, ...]]:
    """(derive family, member metrics as written) of a LOD metric for `dosi lineage`: the
    base of include / exclude / fixed, the members of a compose over LOD metrics."""
    lod = m.lod
    if lod is None:
        return None, ()
    if lod.kind == "compose":
        return "compose", lod.members
    return "lod", (lod.base,)
