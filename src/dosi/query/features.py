"""Query-level features beyond the DATUS model keys, listed in `dosi info` and
`GET /v1/capabilities` (`query_features`) beside the DATUS registry, so a client can tell
whether this engine takes them before it sends one (an engine that does not answers
`unknown_query_key`, never a different number)."""

from __future__ import annotations

from typing import Any

QUERY_FEATURES: tuple[dict[str, Any], ...] = (
    {
        "key": "metric_dimensions",
        "queries": "with or without metrics",
        "what": "a metric's value per entity, joined to the entity's rows, read as a field in "
        "where_sql and group_by (docs/metric-dimensions.md)",
    },
    {
        "key": "group_by.via",
        "queries": "with metrics",
        "what": "a group-by object's join path when several many-to-one paths reach its "
        'dataset: each hop a relationship or dataset name (docs/query.md, "Choosing a join '
        'path")',
    },
    {
        "key": "min_max_only",
        "queries": "without metrics",
        "what": "one row: each grouped column's smallest and largest value "
        "(docs/dimension-only-queries.md)",
    },
)


def query_features() -> list[dict[str, Any]]:
    """A fresh copy of the rows."""
    return [dict(r) for r in QUERY_FEATURES]
