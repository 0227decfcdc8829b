"""D-DIM: whether each field is a dimension, and the rule that decided it.

A declaration wins; else keys (primary, single-column unique of a measured dataset) and
relationship columns are not dimensions, nor are fields an aggregate measures; time fields and
everything else are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlglot import exp

from dosi.ir.model import DatasetIr, MetricIr, RelationshipIr


def dimension_roles(
    datasets: Mapping[str, DatasetIr],
    relationships: Iterable[RelationshipIr],
    metrics: Mapping[str, MetricIr],
    measured_fields: set[tuple[str, str]],
) -> dict[tuple[str, str], tuple[bool, str]]:
    owners = {o for m in metrics.values() for o in m.datasets}
    rel_cols: dict[str, set[str]] = {}
    for r in relationships:
        rel_cols.setdefault(r.from_dataset, set()).update(r.from_columns)
        rel_cols.setdefault(r.to_dataset, set()).update(r.to_columns)
    roles: dict[tuple[str, str], tuple[bool, str]] = {}
    for d in datasets.values():
        single_unique = {k[0] for k in d.unique_keys if len(k) == 1} if d.name in owners else set()
        for f in d.fields.values():
            key = (d.name, f.name)
            # keys and relationship columns name source columns: a field plays their role when
            # it is that column, by name or by its expression
            names = {f.name} | _bare_column(f.expr)
            if f.is_dimension is not None:
                roles[key] = (f.is_dimension, "declared")
            elif names & set(d.primary_key):
                roles[key] = (False, "primary_key")
            elif names & single_unique:
                roles[key] = (False, "unique_key")
            elif names & rel_cols.get(d.name, set()):
                roles[key] = (False, "relationship_column")
            elif key in measured_fields:
                roles[key] = (False, "measured")
            else:
                roles[key] = (True, "time" if f.is_time else "default")
    return roles


def _bare_column(expr: exp.Expression) -> set[str]:
    """The source column a field is, when its expression is exactly one column."""
    return {expr.name} if isinstance(expr, exp.Column) else set()
