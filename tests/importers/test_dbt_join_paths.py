"""MetricFlow entity paths as dosi join paths (bed need `entity_join_paths`).

`user__home_state_latest` (the view's own user) and `listing__user__home_state_latest` (the
listing's owner) reach the same users model along different routes; the translation names each
route with `via` (docs/query.md, "Choosing a join path").
"""

from __future__ import annotations

from pathlib import Path

from dosi.importers.dbt.manifest import load_manifest
from dosi.importers.dbt.names import DbtNames
from dosi.importers.dbt.queries import QueryTranslator

SIMPLE = Path(__file__).resolve().parents[1] / "fixtures/metricflow/semantic_manifest_yamls"


def _translate(*group_by: str) -> list[object]:
    names = DbtNames(load_manifest(SIMPLE / "simple_manifest", "main"))
    t = QueryTranslator(names).translate(metrics=["views"], group_by=list(group_by))
    return list(t.query["group_by"])


def test_entity_paths_name_their_route() -> None:
    """One entity: the direct relationship (`via: []`); two: through the first one's model."""
    assert _translate("user__home_state_latest") == [
        {"field": "users_latest.home_state_latest", "via": []}
    ]
    assert _translate("listing__user__home_state_latest") == [
        {"field": "users_latest.home_state_latest", "via": ["listings_latest"]}
    ]
