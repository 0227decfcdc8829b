"""Explicit join paths (`via` on a group-by item): one dimension table reached two ways.

Issue: bed need `entity_join_paths` (MetricFlow's `listing__user__home_state` vs
`user__home_state`). A view's own user and its listing's owner are both rows of `users`; the
item's `via` picks which one the state comes from. Expected values are hand-written SQL over the
same DuckDB tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import assert_rows_equal, dataset, metric, model_doc, rel, result_rows, to_yaml

from dosi.engine import Engine
from dosi.errors import QueryError
from dosi.query.features import query_features

TABLES = """
CREATE TABLE users (id INTEGER, state VARCHAR);
INSERT INTO users VALUES (1, 'CA'), (2, 'NY'), (3, 'TX');
CREATE TABLE listings (id INTEGER, owner_id INTEGER, is_lux BOOLEAN);
INSERT INTO listings VALUES (10, 1, TRUE), (11, 2, FALSE);
CREATE TABLE views (id INTEGER, listing_id INTEGER, user_id INTEGER);
INSERT INTO views VALUES (1, 10, 2), (2, 10, 3), (3, 11, 3), (4, 11, 1), (5, 10, NULL), (6, NULL, 2);
"""


def _model() -> str:
    doc = model_doc(
        [
            dataset("views", ["id", "listing_id", "user_id"], primary_key=["id"]),
            dataset("listings", ["id", "owner_id", "is_lux"], primary_key=["id"]),
            dataset("users", ["id", "state"], primary_key=["id"]),
        ],
        [
            rel("view_listing", "views", "listings", ["listing_id"], ["id"]),
            rel("listing_owner", "listings", "users", ["owner_id"], ["id"]),
            rel("view_user", "views", "users", ["user_id"], ["id"]),
        ],
        [metric("view_count", "COUNT(views.id)"), metric("user_count", "COUNT(users.id)")],
    )
    return to_yaml(doc)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("via") / "via.duckdb"
    con = duckdb.connect(str(path))
    con.execute(TABLES)
    con.close()
    return path


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(model_text=_model())


def _ref(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _error(engine: Engine, query: dict[str, Any]) -> QueryError:
    with pytest.raises(QueryError) as info:
        engine.compile(query)
    return info.value


def test_direct_path_groups_by_the_viewers_state(engine: Engine, db: Path) -> None:
    """`via: []`: views -> users along `view_user` (the viewer)."""
    q = {"metrics": ["view_count"], "group_by": [{"field": "users.state", "via": []}]}
    got = result_rows(engine.execute(q, db_path=str(db)), ["state", "view_count"])
    want = _ref(
        db,
        "SELECT u.state, COUNT(v.id) FROM views v LEFT JOIN users u ON v.user_id = u.id GROUP BY 1",
    )
    assert_rows_equal(got, want)


def test_path_through_listings_groups_by_the_owners_state(engine: Engine, db: Path) -> None:
    """`via: ["listings"]`: views -> listings -> users (the listing's owner); a different
    answer from the direct path over the same tables."""
    q = {"metrics": ["view_count"], "group_by": [{"field": "users.state", "via": ["listings"]}]}
    got = result_rows(engine.execute(q, db_path=str(db)), ["state", "view_count"])
    want = _ref(
        db,
        "SELECT u.state, COUNT(v.id) FROM views v LEFT JOIN listings l ON v.listing_id = l.id "
        "LEFT JOIN users u ON l.owner_id = u.id GROUP BY 1",
    )
    assert_rows_equal(got, want)
    direct = {"metrics": ["view_count"], "group_by": [{"field": "users.state", "via": []}]}
    assert sorted(map(str, got)) != sorted(
        map(str, result_rows(engine.execute(direct, db_path=str(db)), ["state", "view_count"]))
    )


def test_relationship_names_spell_the_same_path(engine: Engine, db: Path) -> None:
    """Each hop may be a relationship name instead of the dataset it reaches."""
    by_ds = {"metrics": ["view_count"], "group_by": [{"field": "users.state", "via": ["listings"]}]}
    by_rel = {
        "metrics": ["view_count"],
        "group_by": [{"field": "users.state", "via": ["view_listing", "listing_owner"]}],
    }
    a = result_rows(engine.execute(by_ds, db_path=str(db)))
    b = result_rows(engine.execute(by_rel, db_path=str(db)))
    assert_rows_equal(a, b)


def test_via_path_with_a_field_of_the_intermediate_dataset(engine: Engine, db: Path) -> None:
    """`listings.is_lux` and the owner's state share the `view_listing` join."""
    q = {
        "metrics": ["view_count"],
        "group_by": ["listings.is_lux", {"field": "users.state", "via": ["listings"]}],
        "order_by": [{"key": "state", "desc": True}],
    }
    res = engine.execute(q, db_path=str(db))
    want = _ref(
        db,
        "SELECT l.is_lux, u.state, COUNT(v.id) FROM views v LEFT JOIN listings l "
        "ON v.listing_id = l.id LEFT JOIN users u ON l.owner_id = u.id GROUP BY 1, 2",
    )
    assert_rows_equal(result_rows(res, ["is_lux", "state", "view_count"]), want)
    states = [r["state"] for r in res["rows"] if r["state"] is not None]
    assert states == sorted(states, reverse=True)


def test_ambiguous_path_suggests_each_route_and_a_runnable_retry(engine: Engine, db: Path) -> None:
    """Without `via` the two routes are `ambiguous_join_path`; the hint spells each `via` and
    `suggested_retry` is a query that runs."""
    err = _error(engine, {"metrics": ["view_count"], "group_by": ["users.state"]})
    assert err.code == "ambiguous_join_path"
    assert len(err.candidates) == 2
    assert err.hint is not None and "via" in err.hint
    retry = err.suggested_retry
    assert retry is not None
    item = retry["group_by"][0]
    assert item["field"] == "users.state" and "via" in item
    assert engine.execute(retry, db_path=str(db))["rows"]


def test_two_paths_to_one_dataset_in_one_query_conflict(engine: Engine) -> None:
    """One query joins `users` once: two items naming different paths are rejected."""
    q = {
        "metrics": ["view_count"],
        "group_by": [
            {"field": "users.state", "via": []},
            {"field": "users.id", "via": ["listings"]},
        ],
    }
    assert _error(engine, q).code == "conflicting_join_paths"


def test_unknown_hop_and_unmatched_path(engine: Engine) -> None:
    """A hop naming nothing is `unknown_join_step`; hops no path follows are `no_join_path`
    with the routes as candidates."""
    bad = {"metrics": ["view_count"], "group_by": [{"field": "users.state", "via": ["nope"]}]}
    assert _error(engine, bad).code == "unknown_join_step"
    off = {
        "metrics": ["view_count"],
        "group_by": [{"field": "users.state", "via": ["listing_owner", "view_listing"]}],
    }
    err = _error(engine, off)
    assert err.code == "no_join_path" and len(err.candidates) == 2


def test_via_never_joins_against_the_arrow(engine: Engine) -> None:
    """A users metric grouped by a views field stays `fan_out_risk` whatever `via` says."""
    q = {"metrics": ["user_count"], "group_by": [{"field": "views.id", "via": ["views"]}]}
    assert _error(engine, q).code == "fan_out_risk"


def test_via_shape_checks(engine: Engine) -> None:
    """`via` is a list of names; metric_time takes none."""
    assert (
        _error(
            engine, {"metrics": ["view_count"], "group_by": [{"field": "users.state", "via": 3}]}
        ).code
        == "invalid_query"
    )


def test_capability_row_names_via() -> None:
    """Clients can tell from the query features that this engine takes `via`."""
    assert "group_by.via" in {r["key"] for r in query_features()}
