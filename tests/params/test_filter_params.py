"""D-PARAM `filter.literal` slots (PARAM-SLOT-06/08/09, PARAM-INST-02/03, PARAM-BIND-01): a
D-DERIVE filter's `:name` markers re-fold at the bound values; a compose inherits its members'
params. Expected numbers from hand-written DuckDB SQL over the test_params table."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_params import HEAD, approx, db, metric, model_issues, sql_rows, values  # noqa: F401

from dosi import Engine
from dosi.query.params import expand_params
from dosi.query.spec import parse_query

R = {
    "name": "r",
    "type": "string",
    "default": "east",
    "allowed": ["east", "west", "north", "us-east", "us_east"],
}
T = {"name": "t", "type": "float", "default": 1.5, "min": 0}
EAST = "SUM(CASE WHEN sales.region = 'east' AND sales.amount > 1.5 THEN sales.amount END)"
FILTERS = (
    metric(
        "region_rev",
        {
            "params": [R, T],
            "derive": {"type": "filter", "base": "revenue", "where": "region = :r AND amount > :t"},
        },
        expr=EAST,
    )
    + metric(
        "west_big",
        {},
        expr="SUM(CASE WHEN sales.region = 'west' AND sales.amount > 2 THEN sales.amount END)",
    )
    + metric(
        "share",
        {"derive": {"type": "compose", "expr": "region_rev / revenue"}},
        expr=f"{EAST} / SUM(sales.amount)",
    )
)


BIG = "SUM(CASE WHEN sales.amount > 1.5 THEN sales.amount END)"
FILTERS += metric(
    "big",
    {"params": [T], "derive": {"type": "filter", "base": "revenue", "where": "amount > :t"}},
    expr=BIG,
) + metric(
    "big_mom",
    {"window": {"base": "big", "type": "pop", "offset": "1 month", "calculation": "delta"}},
    expr=BIG,
)


FILTERS += metric(
    "big_share",
    {"derive": {"type": "compose", "expr": "big / revenue"}},
    expr=f"{BIG} / SUM(sales.amount)",
) + metric(
    "big_share_rank",
    {"window": {"base": "big_share", "rank": {"function": "rank"}}},
    expr=f"{BIG} / SUM(sales.amount)",
)


@pytest.fixture(scope="module")
def eng() -> Engine:
    return Engine(model_text=HEAD + FILTERS)


def test_param_slot_06_08_filter_literals_rebind(eng: Engine, db: Path) -> None:  # noqa: F811
    """Two params in one predicate; a string and a float literal; one column per value."""
    q = {
        "metrics": ["region_rev"],
        "group_by": ["sales.region"],
        "params": {"r": ["east", "west"], "t": 2},
    }
    res = eng.execute(q, db_path=db)
    assert res["columns"] == ["region", "region_rev__r_east__t_2", "region_rev__r_west__t_2"]
    want = sql_rows(
        db,
        "SELECT region, SUM(CASE WHEN region = 'east' AND amount > 2 THEN amount END), "
        "SUM(CASE WHEN region = 'west' AND amount > 2 THEN amount END) FROM sales "
        "GROUP BY region ORDER BY region",
    )
    assert values(res) == approx(want)
    assert res["outputs"][1]["params"] == {"r": "west", "t": 2.0}


def test_param_inst_03_bound_literal_shares_the_hand_written_measure(eng: Engine) -> None:
    """CORE-MEAS-02: r=west, t=2 re-materialises exactly west_big's aggregate."""
    c = eng.compile({"metrics": ["region_rev", "west_big"], "params": {"r": "west", "t": 2}})
    agg = "SUM(CASE WHEN sales.region = 'west' AND sales.amount > 2 THEN sales.amount END)"
    assert c["sql"].count(agg) == 2  # one per output column of the flat select, same text
    exp = expand_params(
        eng.model, parse_query({"metrics": ["region_rev"], "params": {"r": "west", "t": 2}})
    )
    inst = exp.model.metrics["region_rev__r_west__t_2"]
    assert inst.measures == eng.model.metrics["west_big"].measures


def test_param_bind_01_compose_inherits_member_params(eng: Engine, db: Path) -> None:  # noqa: F811
    """PARAM-BIND-01: share = region_rev / revenue accepts region_rev's t."""
    q = {"metrics": ["share"], "params": {"t": [1.5, 4]}}
    res = eng.execute(q, db_path=db)
    assert res["columns"] == ["share__t_1_5", "share__t_4"]
    want = sql_rows(
        db,
        "SELECT SUM(CASE WHEN region = 'east' AND amount > 1.5 THEN amount END) / SUM(amount), "
        "SUM(CASE WHEN region = 'east' AND amount > 4 THEN amount END) / SUM(amount) FROM sales",
    )
    assert values(res) == approx(want)
    listed = eng.metric("share")["params"]
    assert [(p["name"], p.get("declared_on")) for p in listed] == [
        ("r", "region_rev"),
        ("t", "region_rev"),
    ]


def test_param_slot_09_predicate_without_column_is_rejected() -> None:
    extra = metric(
        "m",
        {
            "params": [{"name": "t", "type": "int", "default": 1, "min": 0}],
            "derive": {"type": "filter", "base": "revenue", "where": ":t < 7"},
        },
        expr="SUM(CASE WHEN 1 < 7 THEN sales.amount END)",
    )
    assert "invalid_datus_extension" in model_issues(extra)


def test_param_inst_02_expression_must_be_the_default_instantiation() -> None:
    """PARAM-INST-02: the D-DERIVE gate ties the authored expression to the defaults."""
    extra = metric(
        "m",
        {"params": [T], "derive": {"type": "filter", "base": "revenue", "where": "amount > :t"}},
        expr="SUM(CASE WHEN sales.amount > 3 THEN sales.amount END)",
    )
    assert "derive_expression_mismatch" in model_issues(extra)


def test_param_bind_01_window_base_inherits_the_filter_params(eng: Engine, db: Path) -> None:  # noqa: F811
    """A window over a param filter series binds the filter's `t` (declared_on in the catalog)."""
    q = {"metrics": ["big_mom"], "group_by": ["metric_time:month"], "params": {"t": [2, 30]}}
    res = eng.execute(q, db_path=db)
    assert res["columns"] == ["metric_time__month", "big_mom__t_2", "big_mom__t_30"]
    want = sql_rows(
        db,
        "WITH b AS (SELECT date_trunc('month', sale_date)::DATE m, "
        "SUM(CASE WHEN amount > 2 THEN amount END) v2, SUM(CASE WHEN amount > 30 THEN amount END) v30 "
        "FROM sales GROUP BY 1) SELECT c.m, c.v2 - p.v2, c.v30 - p.v30 FROM b c "
        "LEFT JOIN b p ON p.m = c.m - INTERVAL 1 MONTH ORDER BY c.m",
    )
    assert values(res) == approx(want)
    assert eng.metric("big_mom")["params"][0]["declared_on"] == "big"


def test_param_bind_01_window_over_compose_rebinds_the_leaf(eng: Engine, db: Path) -> None:  # noqa: F811
    """A rank over a compose base binds the compose's leaf param: the ranks order the bound
    shares (the reference engine ranks the default-bound series here: a wrong number)."""
    q = {
        "metrics": ["big_share_rank", "big_share"],
        "group_by": ["sales.region"],
        "params": {"t": 30},
    }
    res = eng.execute(q, db_path=db)
    assert res["columns"] == ["region", "big_share_rank__t_30", "big_share__t_30"]
    want = sql_rows(
        db,
        "WITH b AS (SELECT region, SUM(CASE WHEN amount > 30 THEN amount END) / SUM(amount) s "
        "FROM sales GROUP BY 1) SELECT region, RANK() OVER (ORDER BY s DESC), s FROM b ORDER BY region",
    )
    assert values(res) == approx(want)
