"""Ossie document versions: the current model, and the in-memory upgrade of 0.1.1.

The engine's model is 0.2.0.dev0 (`dosi.model.schema`). 0.1.1 is the spec's only release
(apache/ossie, tag osi-0.1.1-rc1, core-spec/osi-schema.json, Apache-2.0); its schema differs
from the current one in exactly these ways, which is all this module encodes:

- the document may declare top-level `dialects` and `vendors` arrays (enumeration listings
  that 0.2.0.dev0 dropped);
- the Dialect enum has no BIGQUERY;
- `vendor_name` is an enum (COMMON, SNOWFLAKE, SALESFORCE, DBT, DATABRICKS, GOODDATA), where
  0.2.0.dev0 accepts any string;
- Field and Metric have no `datatype`. `dimension.is_time` therefore has no datatype-derived
  default; absent means "not a time field", which is what 0.2.0.dev0's rule gives a field
  without a datatype, so the meaning survives the upgrade unchanged.

A 0.1.1 document that breaks its own schema stays an error; one that keeps it is upgraded by
dropping the two listings and relabelling the version.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

CURRENT = "0.2.0.dev0"
V0_1_1 = "0.1.1"
READABLE = (CURRENT, V0_1_1)

V0_1_1_DIALECTS = frozenset({"ANSI_SQL", "SNOWFLAKE", "MDX", "TABLEAU", "DATABRICKS", "MAQL"})
V0_1_1_VENDORS = frozenset({"COMMON", "SNOWFLAKE", "SALESFORCE", "DBT", "DATABRICKS", "GOODDATA"})
V0_1_1_LISTINGS = {"dialects": V0_1_1_DIALECTS, "vendors": V0_1_1_VENDORS}

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    """One 0.1.1 schema violation: where (a raw-document location) and what."""

    loc: Loc
    code: str
    message: str
    hint: str


def document_version(data: Any) -> str | None:
    version = data.get("version") if isinstance(data, dict) else None
    return str(version) if isinstance(version, (str, int, float)) else None


def upgrade_0_1_1(data: dict[str, Any]) -> tuple[dict[str, Any], list[Finding]]:
    """The document as 0.2.0.dev0, and every way it breaks the 0.1.1 schema."""
    findings = list(_violations(data))
    upgraded = {k: v for k, v in data.items() if k not in V0_1_1_LISTINGS}
    upgraded["version"] = CURRENT
    return upgraded, findings


_RETRY = f"declare `version: {CURRENT}` to use it"


def _violations(data: dict[str, Any]) -> Iterator[Finding]:
    for key, allowed in V0_1_1_LISTINGS.items():
        values = data.get(key)
        if key in data and not isinstance(values, list):
            yield Finding(
                (key,),
                "invalid_model_value",
                f"`{key}`: must be a list in Ossie {V0_1_1}",
                f"write `{key}` as a list, or drop it",
            )
        for i, value in enumerate(values if isinstance(values, list) else []):
            if value not in allowed:
                yield _not_in_enum((key, i), key[:-1], value, allowed)
    models = data.get("semantic_model")
    for m, model in _items(models):
        base: Loc = ("semantic_model", m)
        yield from _vendors(model, base)
        for key in ("datasets", "relationships", "metrics"):
            for i, obj in _items(model.get(key)):
                loc = (*base, key, i)
                yield from _vendors(obj, loc)
                if key == "metrics":
                    yield from _expression(obj, loc)
                if key == "datasets":
                    for j, f in _items(obj.get("fields")):
                        floc = (*loc, "fields", j)
                        yield from _vendors(f, floc)
                        yield from _expression(f, floc)


def _items(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


def _vendors(obj: dict[str, Any], loc: Loc) -> Iterator[Finding]:
    for i, ext in _items(obj.get("custom_extensions")):
        vendor = ext.get("vendor_name")
        if isinstance(vendor, str) and vendor not in V0_1_1_VENDORS:
            yield _not_in_enum(
                (*loc, "custom_extensions", i, "vendor_name"), "vendor_name", vendor, V0_1_1_VENDORS
            )


def _expression(obj: dict[str, Any], loc: Loc) -> Iterator[Finding]:
    """Field / Metric: no `datatype` in 0.1.1, and dialects from its smaller enum."""
    if "datatype" in obj:
        yield Finding(
            (*loc, "datatype"),
            "unknown_model_key",
            f"unknown key `datatype` (Ossie {V0_1_1} has no datatype; it arrived in {CURRENT})",
            f"remove `datatype`, or {_RETRY}",
        )
    expression = obj.get("expression")
    entries = expression.get("dialects") if isinstance(expression, dict) else None
    for i, entry in _items(entries):
        dialect = entry.get("dialect")
        if isinstance(dialect, str) and dialect not in V0_1_1_DIALECTS:
            yield _not_in_enum(
                (*loc, "expression", "dialects", i, "dialect"), "dialect", dialect, V0_1_1_DIALECTS
            )


def _not_in_enum(loc: Loc, what: str, value: Any, allowed: frozenset[str]) -> Finding:
    return Finding(
        loc,
        "invalid_model_value",
        f"`{what}`: {value!r} is not one of Ossie {V0_1_1}'s values ({', '.join(sorted(allowed))})",
        f"use one of them, or {_RETRY}",
    )
