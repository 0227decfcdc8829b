"""Access policies through the Python API (issue 30 items 2-4, 6): every answer of a policed
user equals the same query over a database holding only that user's rows; hidden members are
`access_denied` and absent from listings; broken policies fail closed."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import duckdb
import pytest
from accesskit import ACCESS, MODEL
from enginekit import SHOP_MODEL

import dosi
from dosi import AccessError, Engine, UserContext
from dosi.access.identity import hash_secret, verify_secret
from dosi.access.policy import parse_access
from dosi.errors import ArgumentError

CONFIG = dosi.load_access(ACCESS)
SERVED = Engine(str(MODEL), access=CONFIG)
PLAIN = Engine(str(MODEL))


def user(name: str) -> UserContext:
    found = CONFIG.identities.user(name)
    assert found is not None
    return found


def rows(result: Any) -> list[dict[str, Any]]:
    return sorted(result["rows"], key=repr)


QUERIES: list[dict[str, Any]] = [
    {"metrics": ["revenue", "order_count"]},
    {"metrics": ["revenue"], "group_by": ["orders.region"]},
    {"metrics": ["buyer_count"], "group_by": ["orders.channel"]},
    # a where_sql OR that tries to widen the rows
    {"metrics": ["revenue"], "where_sql": "orders.region = 'AMER' OR 1 = 1"},
    {"metrics": ["revenue"], "where_sql": "orders.region <> 'x' OR orders.region IS NULL"},
    # a FIXED D-LOD total is computed before the query's filters: never before the row filter
    {"metrics": ["revenue_all_time", "revenue"], "group_by": ["orders.channel"]},
    {"metrics": ["revenue_all_time"], "where_sql": "orders.channel = 'web'"},
    # window lookbacks read months before the time range
    {
        "metrics": ["revenue_rolling_3m", "revenue_mom"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-06-01", "end": "2025-01-01"},
    },
    # tagged ranges
    {
        "metrics": ["revenue"],
        "time_ranges": [
            {"tag": "h1", "start": "2024-01-01", "end": "2024-07-01"},
            {"tag": "h2", "start": "2024-07-01", "end": "2025-01-01"},
        ],
    },
    {"metrics": ["revenue"], "group_by": ["metric_time:quarter"]},
    # D-LOD exclude / include rollups and a compose over a FIXED total
    {
        "metrics": ["revenue_channel_free", "revenue"],
        "group_by": ["orders.region", "orders.channel"],
    },
    {"metrics": ["revenue_per_customer"], "group_by": ["orders.channel"]},
    {"metrics": ["revenue_share"], "group_by": ["orders.channel"], "where_sql": "1 = 1 OR true"},
    # densified months (the time spine of the query's own buckets)
    {"metrics": ["order_count"], "group_by": ["metric_time:month"], "densify": "time"},
    # a streaming window over the time axis
    {"metrics": ["order_count"], "group_by": ["metric_time:tumble(30 days)"]},
    # a join to the customers dataset (visible, unfiltered for ana)
    {"metrics": ["revenue"], "group_by": ["customers.segment"]},
]


@pytest.mark.parametrize("name", ["ana", "tom", "eve", "boss", "sam"])
@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "+".join(q["metrics"]))
def test_issue30_matrix_equals_the_users_rows(
    name: str, query: dict[str, Any], acl_db: Path, only_rows: dict[str, Path]
) -> None:
    """issue 30 item 6: users x metrics x shapes, each answer equal to the answer over a
    database that holds only the user's rows (eve: OR of two policies)."""
    scoped = SERVED.as_user(user(name))
    allowed = set(query["metrics"]) <= {m["name"] for m in scoped.metrics()}
    dims = {d["name"] for d in scoped.dimensions()}
    allowed = allowed and all(
        g.startswith("metric_time") or g in dims for g in query.get("group_by", [])
    )
    if not allowed:
        with pytest.raises(AccessError) as err:
            scoped.execute(query, db_path=acl_db)
        assert err.value.code == "access_denied"
        return
    got = scoped.execute(query, db_path=acl_db)
    want = PLAIN.execute(query, db_path=only_rows[name])
    assert rows(got) == rows(want)


def test_issue30_hand_sql_for_one_region(acl_db: Path) -> None:
    """issue 30 item 6: revenue by channel for ana against hand-written SQL."""
    got = SERVED.as_user(user("ana")).execute(
        {"metrics": ["revenue"], "group_by": ["orders.channel"]}, db_path=acl_db
    )
    con = duckdb.connect(str(acl_db), read_only=True)
    want = con.execute(
        "SELECT channel, SUM(amount) FROM orders WHERE region = 'EMEA' GROUP BY 1 ORDER BY 1"
    ).fetchall()
    con.close()
    assert [(r["channel"], r["revenue"]) for r in got["rows"]] == want


def test_issue30_select_and_dimension_only_rows(acl_db: Path, only_rows: dict[str, Path]) -> None:
    """issue 30 item 3: `select` detail rows and dimension-only queries read filtered rows."""
    scoped = SERVED.as_user(user("tom"))
    q = {"from": "orders", "fields": ["orders.order_id", "orders.tenant_id"], "limit": 1000}
    got = scoped.select(q, db_path=acl_db)
    assert {r["tenant_id"] for r in got["rows"]} == {1, 3}
    assert rows(got) == rows(PLAIN.select(q, db_path=only_rows["tom"]))
    dims = scoped.execute({"group_by": ["orders.tenant_id"]}, db_path=acl_db)
    assert sorted(r["tenant_id"] for r in dims["rows"]) == [1, 3]


def test_issue30_context_filter_never_widens(acl_db: Path, only_rows: dict[str, Path]) -> None:
    q = {
        "metrics": ["revenue_all_time", "revenue"],
        "group_by": ["orders.channel"],
        "context_filter": "orders.region IN ('AMER', 'APAC', 'EMEA')",
    }
    got = SERVED.as_user(user("ana")).execute(q, db_path=acl_db)
    assert rows(got) == rows(PLAIN.execute(q, db_path=only_rows["ana"]))


def test_issue30_semantic_sql_is_filtered(acl_db: Path, only_rows: dict[str, Path]) -> None:
    sql = "SELECT orders__region, MEASURE(revenue) FROM acl_shop GROUP BY 1"
    scoped = SERVED.as_user(user("ana"))
    got = scoped.sql(sql, db_path=acl_db)
    assert rows(got) == rows(PLAIN.sql(sql, db_path=only_rows["ana"]))
    assert [r["orders__region"] for r in got["rows"]] == ["EMEA"]
    assert "total_cost" not in scoped.sql_table().names


def test_issue30_attribution_reads_only_the_users_rows(
    acl_db: Path, only_rows: dict[str, Path]
) -> None:
    req = {
        "metric": "revenue",
        "current": {"start": "2025-01-01", "end": "2025-04-01"},
        "baseline": {"start": "2024-01-01", "end": "2024-04-01"},
        "dimensions": ["orders.channel"],
    }
    got = SERVED.as_user(user("ana")).attribute(req, db_path=acl_db)
    want = PLAIN.attribute(req, db_path=only_rows["ana"])
    assert got["total_change"] == want["total_change"]
    assert got["top_dimension_values"] == want["top_dimension_values"]
    hidden = dict(req, dimensions=["orders.cost"])
    with pytest.raises(AccessError):
        SERVED.as_user(user("ana")).attribute(hidden, db_path=acl_db)


def test_issue30_hidden_members_are_denied_and_unlisted(acl_db: Path) -> None:
    """issue 30 item 3: access_denied names the policy; listings, lineage and errors omit
    hidden members."""
    ana = SERVED.as_user(user("ana"))
    names = {m["name"] for m in ana.metrics()}
    assert "total_cost" not in names and "revenue" in names
    dims = {d["name"] for d in ana.dimensions()}
    assert "customers.email" not in dims and "orders.cost" not in dims
    assert "orders.region" in dims
    for query in (
        {"metrics": ["total_cost"]},
        {"metrics": ["revenue"], "group_by": ["customers.email"]},
        {"metrics": ["revenue"], "where_sql": "orders.cost > 10"},
        {"metrics": ["revenue"], "where_sql": "total_cost > 10"},
    ):
        with pytest.raises(AccessError) as err:
            ana.execute(query, db_path=acl_db)
        assert err.value.code == "access_denied"
        assert "emea_managers" in err.value.message
    with pytest.raises(AccessError):
        ana.explain({"metrics": ["total_cost"]})
    with pytest.raises(AccessError):
        ana.select({"from": "orders", "fields": ["orders.cost"]}, db_path=acl_db)
    lineage = ana.lineage()
    assert "total_cost" not in str(lineage) and "region = " not in str(lineage)
    tom = SERVED.as_user(user("tom"))
    assert {d["name"] for d in tom.datasets()} == {"orders"}
    with pytest.raises(AccessError):
        tom.execute({"metrics": ["customer_total"]}, db_path=acl_db)
    with pytest.raises(dosi.QueryError) as unknown:
        tom.execute({"metrics": ["total_cos"]}, db_path=acl_db)
    assert "total_cost" not in unknown.value.candidates


def test_issue30_deny_by_default_and_missing_attribute(acl_db: Path) -> None:
    """issue 30 items 2 and 4: groups without a policy see nothing; a user without the
    attribute a filter reads gets an error, never an unfiltered answer."""
    nobody = SERVED.as_user(user("nobody"))
    assert nobody.metrics() == [] and nobody.datasets() == []
    with pytest.raises(AccessError) as err:
        nobody.execute({"metrics": ["revenue"]}, db_path=acl_db)
    assert err.value.code == "access_denied"
    with pytest.raises(AccessError) as missing:
        SERVED.as_user(user("lacks"))
    assert missing.value.code == "access_attribute_missing"


def test_issue30_attributes_are_typed_literals(acl_db: Path) -> None:
    """issue 30 item 2: an attribute is bound as a literal, never pasted as SQL text."""
    sly = UserContext("sly", ("emea",), {"region": "EMEA' OR '1'='1"})
    got = SERVED.as_user(sly).execute({"metrics": ["order_count"]}, db_path=acl_db)
    assert got["rows"][0]["order_count"] == 0
    wrong = UserContext("w", ("tenants",), {"tenant_ids": ["1"]})
    with pytest.raises(AccessError) as err:
        SERVED.as_user(wrong)
    assert err.value.code == "access_attribute_type"


@pytest.mark.parametrize(
    "rows_text, code",
    [
        ("orders.region = lower({user.region})", "access_policy_invalid"),
        ("orders.nope = {user.region}", "access_policy_invalid"),
        ("orders.region = (SELECT 1)", "access_policy_invalid"),
        ("orders.region = customers.segment", "access_policy_invalid"),
        ("orders.region = = 1", "access_policy_invalid"),
    ],
)
def test_issue30_bad_filters_fail_closed(rows_text: str, code: str) -> None:
    config = parse_access({"policies": [{"name": "p", "groups": ["g"], "rows": [rows_text]}]})
    assert config.policies is not None
    with pytest.raises(AccessError) as err:
        SERVED.as_user(UserContext("u", ("g",), {"region": "EMEA"}), config.policies)
    assert err.value.code == code


def test_issue30_the_filter_is_in_the_compiled_sql() -> None:
    """issue 28/30: the user's row filter is part of the SQL text, so a cache keyed on the
    SQL never hands one user's rows to another."""
    q = {"metrics": ["revenue"]}
    a = SERVED.as_user(user("ana")).compile(q)["sql"]
    t = SERVED.as_user(user("tom")).compile(q)["sql"]
    assert "'EMEA'" in a and "tenant_id IN (1, 3)" in t and a != t
    assert SERVED.compile(q)["sql"] == PLAIN.compile(q)["sql"]


def test_issue30_engine_user_argument(acl_db: Path, only_rows: dict[str, Path]) -> None:
    e = Engine(str(MODEL), access=ACCESS, user=user("ana"))
    q = {"metrics": ["revenue"]}
    assert rows(e.execute(q, db_path=acl_db)) == rows(PLAIN.execute(q, db_path=only_rows["ana"]))
    with pytest.raises(ArgumentError):
        Engine(str(MODEL), user=user("ana"))


def test_issue30_unreadable_access_file_fails(tmp_path: Path) -> None:
    bad = tmp_path / "access.yaml"
    bad.write_text("policies: [ {name: p", encoding="utf-8")
    with pytest.raises(AccessError) as err:
        Engine(str(MODEL), access=bad)
    assert err.value.code == "access_config_invalid"
    plain = tmp_path / "plain.yaml"
    plain.write_text("users: [{name: a, token_hash: secret}]", encoding="utf-8")
    with pytest.raises(AccessError):
        dosi.load_access(plain)


def test_issue30_python_audit_line(acl_db: Path, caplog: pytest.LogCaptureFixture) -> None:
    """issue 30 item 5: one structured line per call of a user's engine, no secrets."""
    ana = SERVED.as_user(user("ana"))
    with caplog.at_level(logging.INFO, logger="dosi.audit"):
        ana.execute({"metrics": ["revenue"]}, db_path=acl_db)
        with pytest.raises(AccessError):
            ana.execute({"metrics": ["total_cost"]}, db_path=acl_db)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "dosi.audit"]
    assert [(x["surface"], x["user"], x["action"], x["metrics"], x["outcome"]) for x in lines] == [
        ("python", "ana", "execute", ["revenue"], "ok"),
        ("python", "ana", "execute", ["total_cost"], "access_denied"),
    ]
    assert "EMEA" not in caplog.text


def test_issue30_attribute_types_match_fields() -> None:
    """issue 30 item 2: a number where a text field is compared is refused for the user."""
    config = parse_access(
        {"policies": [{"name": "p", "groups": ["g"], "rows": ["orders.region = {user.region}"]}]}
    )
    assert config.policies is not None
    with pytest.raises(AccessError) as err:
        SERVED.as_user(UserContext("u", ("g",), {"region": 7}), config.policies)
    assert err.value.code == "access_attribute_type"
    with pytest.raises(AccessError):
        SERVED.as_user(user("ana")).validate_sources()


def test_issue30_passwords_and_tokens() -> None:
    """issue 30 item 1: hashed secrets, checked in constant time."""
    ids = CONFIG.identities
    assert ids.by_token("ana-token") == user("ana")
    assert ids.by_token("ana-token ") is None and ids.by_token("") is None
    assert ids.by_password("boss", "boss-pass") == user("boss")
    assert ids.by_password("boss", "boss-pas") is None
    assert ids.by_password("ghost", "boss-pass") is None
    stored = hash_secret("pw", "scrypt")
    assert stored.startswith("scrypt:") and verify_secret("pw", stored)


def test_issue30_filter_through_a_relationship() -> None:
    """issue 30 item 3: a fact table restricted by the fields of a dataset it joins
    many-to-one; a path that does not exist is a policy error."""
    sql = SERVED.as_user(user("sam")).compile({"metrics": ["revenue"]})["sql"]
    assert "EXISTS" in sql and "'smb'" in sql
    backwards = {"dataset": "customers", "filter": "orders.region = {user.region}"}
    config = parse_access({"policies": [{"name": "p", "groups": ["g"], "rows": [backwards]}]})
    assert config.policies is not None
    with pytest.raises(AccessError) as err:
        SERVED.as_user(UserContext("u", ("g",), {"region": "EMEA"}), config.policies)
    assert err.value.code == "access_policy_invalid"


def test_issue30_user_keyword_per_call(acl_db: Path, only_rows: dict[str, Path]) -> None:
    q = {"metrics": ["revenue"], "group_by": ["orders.region"]}
    got = SERVED.execute(q, db_path=acl_db, user=user("ana"))
    assert rows(got) == rows(PLAIN.execute(q, db_path=only_rows["ana"]))
    with pytest.raises(AccessError):
        SERVED.compile({"metrics": ["total_cost"]}, user=user("ana"))
    assert PLAIN.execute(q, db_path=acl_db, user=user("ana"))["row_count"] == 3  # no policies


def test_issue30_param_columns_keep_their_metric(shop_db: Path) -> None:
    """issue 30 item 3: D-PARAM columns (`revenue_moving_avg__n_2`) are checked as their
    model metric: allowed where it is, denied where it is not."""
    config = parse_access(
        {
            "policies": [
                {"name": "avg", "groups": ["a"], "metrics": ["revenue_moving_avg"]},
                {"name": "plain", "groups": ["p"], "metrics": ["revenue"]},
            ]
        }
    )
    assert config.policies is not None
    shop = Engine(SHOP_MODEL, access=config.policies)
    q = {
        "metrics": ["revenue_moving_avg"],
        "group_by": ["metric_time:year"],
        "params": {"n": [2, 3]},
    }
    got = shop.as_user(UserContext("a", ("a",))).execute(q, db_path=shop_db)
    assert got["columns"] == [
        "metric_time__year",
        "revenue_moving_avg__n_2",
        "revenue_moving_avg__n_3",
    ]
    assert rows(got) == rows(Engine(SHOP_MODEL).execute(q, db_path=shop_db))
    with pytest.raises(AccessError):
        shop.as_user(UserContext("p", ("p",))).execute(q, db_path=shop_db)


def test_issue30_metric_dimensions_read_only_the_users_rows(
    acl_db: Path, only_rows: dict[str, Path]
) -> None:
    """issue 30 item 3: a metric dimension's inner query reads the row-filtered model (per
    customer order counts over the user's rows only), equal to the answer over only the
    user's rows; a hidden inner metric is `access_denied`."""
    q = {
        "metrics": ["revenue"],
        "group_by": ["orders.channel"],
        "metric_dimensions": {
            "customer_orders": {"metric": "order_count", "by": ["orders.customer_id"]}
        },
        "where_sql": "customer_orders >= 3",
    }
    got = SERVED.as_user(user("tom")).execute(q, db_path=acl_db)
    assert got["rows"], "the filter keeps some customers"
    assert rows(got) == rows(PLAIN.execute(q, db_path=only_rows["tom"]))
    hidden = {
        **q,
        "metric_dimensions": {"c": {"metric": "total_cost", "by": ["orders.customer_id"]}},
    }
    hidden["where_sql"] = "c > 0"
    with pytest.raises(AccessError) as err:
        SERVED.as_user(user("ana")).execute(hidden, db_path=acl_db)
    assert err.value.code == "access_denied"


def test_issue30_literal_templates_never_cross_users(acl_db: Path) -> None:
    """issue 30 item 3 with issue 27's literal-variant plan cache: templates the owner's
    engine learnt are not the user's; the user's SQL carries the row filter and its rows are
    the user's own."""
    owner = Engine(str(MODEL), access=CONFIG)
    q = {"metrics": ["revenue"], "where_sql": "orders.channel = 'web'", "limit": 5}
    for limit in (5, 6, 7):  # the second variant makes a template; the third reads it
        owner.compile({**q, "limit": limit})
    scoped = owner.as_user(user("ana"))
    sql = scoped.compile({**q, "limit": 8})["sql"]
    assert "EMEA" in sql
    got = scoped.execute({**q, "limit": 9}, db_path=acl_db)
    con = duckdb.connect(str(acl_db), read_only=True)
    want = con.execute(
        "SELECT SUM(amount) FROM orders WHERE region = 'EMEA' AND channel = 'web'"
    ).fetchone()
    con.close()
    assert want is not None and [r["revenue"] for r in got["rows"]] == [want[0]]


def test_issue30_model_warnings_are_the_owners(acl_db: Path) -> None:
    """issue 30 item 3: model warnings name the model's metrics (here the hidden `total_cost`);
    the owner sees them, a policed user none (in `warnings` and in a query's answer)."""
    text = MODEL.read_text().replace(
        "{dialect: ANSI_SQL, expression: SUM(orders.cost)}",
        "{dialect: DUCKDB, expression: SUM(orders.cost)}",
    )
    owner = Engine(model_text=text, access=CONFIG)
    assert any("total_cost" in json.dumps(w) for w in owner.warnings)
    ana = owner.as_user(user("ana"))
    assert ana.warnings == []
    got = ana.execute({"metrics": ["revenue"]}, db_path=acl_db)
    assert not any("total_cost" in json.dumps(w) for w in got["warnings"])
