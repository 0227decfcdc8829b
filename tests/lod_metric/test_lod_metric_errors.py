"""D-LOD metric rejections: the declaration checks at model load, the not-yet table rows at
query time, attribution and basic mode (datus-extensions §3 D-LOD "not yet", §5; CHECKLIST
LOD-NI-01/04/05/06/07/09/12, LOD-FXM-06/07, LOD-REL-02/03/04, LOD-FLD-09, LOD-BAS-02).

Codes follow the reference engine where it is more precise than the spec's table: a fixed key
(or an excluded dimension) the view does not group by is `lod_dimension_not_grouped`, and an
outer aggregate around fixed(...) is rejected when the model loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lodmetrickit
import pytest
from lodmetrickit import PLAIN, lod, metric

import dosi
from dosi.errors import ModelError, QueryError


def _load(extra: list[dict[str, Any]], mode: str = "datus") -> dosi.Engine:
    # without the fixed field: basic mode drops it (D-LOD field half), which is not under test
    text = lodmetrickit.model_text([*PLAIN, *extra], lod_field=False)
    return dosi.Engine(model_text=text, mode=mode)


def _model_codes(extra: list[dict[str, Any]], mode: str = "datus") -> list[tuple[str, str]]:
    with pytest.raises(ModelError) as err:
        _load(extra, mode)
    return [(d.code, d.path or "") for d in err.value.issues]


@pytest.mark.parametrize(
    ("expr", "text", "code"),
    [
        # LOD-REL-02: include needs an outer aggregate
        ("SUM(SUM(orders.amount))", "include(revenue, orders.user_id)", "invalid_datus_extension"),
        # include with no dimension is the view's own grain
        ("AVG(SUM(orders.amount))", "avg(include(revenue))", "invalid_datus_extension"),
        # LOD-REL-03: exclude forbids one
        ("AVG(SUM(orders.amount))", "avg(exclude(revenue))", "invalid_datus_extension"),
        # LOD-FXM-07 / LOD-NI-01: agg(fixed(...)) is rejected, never computed
        (
            "AVG(SUM(orders.amount))",
            "avg(fixed(revenue, orders.user_id))",
            "invalid_datus_extension",
        ),
        ("SUM(SUM(orders.amount))", "foo(revenue)", "invalid_datus_extension"),
        (
            "MEDIAN(SUM(orders.amount))",
            "median(include(revenue, orders.user_id))",
            "invalid_datus_extension",
        ),
        ("SUM(SUM(orders.amount))", "exclude(revenue, channel_id)", "invalid_datus_extension"),
        ("SUM(SUM(orders.amount))", "exclude(no_such_metric)", "invalid_datus_extension"),
        ("SUM(SUM(orders.amount))", "exclude(revenue, orders.nope)", "invalid_datus_extension"),
        # a key on another dataset than the base's
        ("SUM(SUM(orders.amount))", "exclude(revenue, channel.channel_name)", "not_implemented"),
        # LOD-REL-04: the expression is the nested aggregate the declaration describes
        ("SUM(orders.amount)", "exclude(revenue)", "invalid_datus_extension"),
        (
            "MAX(SUM(orders.amount))",
            "avg(include(revenue, orders.user_id))",
            "derive_expression_mismatch",
        ),
        ("MAX(SUM(orders.amount))", "exclude(revenue)", "derive_expression_mismatch"),
        ("SUM(COUNT(orders.amount))", "exclude(revenue)", "derive_expression_mismatch"),
    ],
)
def test_declaration_checks(expr: str, text: str, code: str) -> None:
    assert _model_codes([lod("x", expr, text)]) == [(code, "metrics[x]")]


def test_extra_payload_key_is_invalid() -> None:
    bad = metric(
        "x",
        "SUM(SUM(orders.amount))",
        {"v": "1.10", "derive": {"type": "lod", "expr": "exclude(revenue)", "base": "revenue"}},
    )
    # an unreadable payload: the metric falls back to its expression, a nested aggregate
    assert _model_codes([bad]) == [
        ("invalid_datus_extension", "metrics[x]"),
        ("nested_aggregate", "metrics[x]"),
    ]


def test_nested_lod_is_rejected_whatever_the_order() -> None:
    """LOD-FLD-09: a derive base that is itself a LOD metric, declared before or after."""
    outer = lod("outer", "SUM(SUM(orders.amount))", "exclude(g)")
    inner = lod("g", "SUM(SUM(orders.amount))", "exclude(revenue)")
    assert ("invalid_datus_extension", "metrics[outer]") in _model_codes([outer, inner])
    assert ("invalid_datus_extension", "metrics[outer]") in _model_codes([inner, outer])


def test_base_declared_after_the_lod_metric_resolves() -> None:
    later = metric("rev2", "SUM(orders.amount)")
    eng = _load([lod("x", "SUM(SUM(orders.amount))", "exclude(rev2)"), later])
    assert [m["name"] for m in eng.metrics()][-2:] == ["x", "rev2"]


def test_basic_mode_fails_closed_on_lod_metrics() -> None:
    """LOD-BAS-02: without the declaration the expression is a nested aggregate: the model is
    refused with nested_aggregate rather than computing one level of it."""
    codes = _model_codes([lod("x", "SUM(SUM(orders.amount))", "exclude(revenue)")], "basic")
    assert codes == [("nested_aggregate", "metrics[x]")]


def test_datus_mode_reads_the_same_model() -> None:
    eng = _load([lod("x", "SUM(SUM(orders.amount))", "exclude(revenue)")])
    assert "x" in [m["name"] for m in eng.metrics()]


CH = {"field": "orders.channel_id"}
USER = {"field": "orders.user_id"}


@pytest.mark.parametrize(
    ("query", "code"),
    [
        # LOD-NI-04: a plain metric of the include base's dataset
        ({"metrics": ["revenue", "revenue_per_user"], "group_by": [CH]}, "not_implemented"),
        ({"metrics": ["order_count", "revenue_per_user"], "group_by": [CH]}, "not_implemented"),
        # LOD-NI-05: include with exclude (or fixed)
        ({"metrics": ["revenue_per_user", "revenue_grand"], "group_by": [CH]}, "not_implemented"),
        (
            {"metrics": ["revenue_per_user", "revenue_fixed_all"], "group_by": [CH]},
            "not_implemented",
        ),
        # LOD-FXM-06 / LOD-NI-01: fixed keys not in the view's grouping (or no group-by)
        ({"metrics": ["revenue_fixed_by_channel"]}, "lod_dimension_not_grouped"),
        (
            {"metrics": ["revenue_fixed_by_channel"], "group_by": [USER]},
            "lod_dimension_not_grouped",
        ),
        (
            {
                "metrics": ["revenue_fixed_by_channel"],
                "group_by": [{"field": "channel.channel_id"}],
            },
            "lod_dimension_not_grouped",
        ),
        # an excluded dimension the view does not carry
        ({"metrics": ["revenue_excl_channel"]}, "lod_dimension_not_grouped"),
        (
            {"metrics": ["revenue_excl_channel"], "group_by": [{"field": "channel.channel_name"}]},
            "lod_dimension_not_grouped",
        ),
        # LOD-NI-04 / LOD-NI-10: a D-LOD field read beside a LOD metric (aggregated,
        # grouped by, or filtered on)
        (
            {"metrics": ["avg_user_revenue", "revenue_per_user"], "group_by": [CH]},
            "not_implemented",
        ),
        ({"metrics": ["avg_user_revenue", "revenue_grand"], "group_by": [CH]}, "not_implemented"),
        (
            {"metrics": ["revenue_fixed_all"], "group_by": ["orders.user_revenue"]},
            "not_implemented",
        ),
        (
            {
                "metrics": ["revenue", "revenue_fixed_by_channel"],
                "group_by": [CH],
                "where_sql": "orders.user_revenue > 15",
            },
            "not_implemented",
        ),
        # LOD-NI-11: an include dimension and a group-by item of the same output name
        ({"metrics": ["revenue_per_user"], "group_by": ["acct.user_id"]}, "duplicate_output_name"),
        # LOD-NI-07: grouping by a relative-view metric
        (
            {"metrics": ["revenue"], "group_by": [{"field": "revenue_per_user"}]},
            "unknown_dimension",
        ),
        ({"metrics": ["revenue"], "group_by": [{"field": "revenue_grand"}]}, "unknown_dimension"),
    ],
)
def test_not_yet_rows(lod_engine: dosi.Engine, query: dict[str, Any], code: str) -> None:
    with pytest.raises(QueryError) as err:
        lod_engine.compile(query)
    assert err.value.code == code
    assert err.value.hint


def test_grouping_by_a_lod_metric_shows_the_fixed_field_spelling(lod_engine) -> None:
    with pytest.raises(QueryError) as err:
        lod_engine.compile({"metrics": ["revenue"], "group_by": ["revenue_per_user"]})
    assert "fixed(revenue, orders.user_id)" in (err.value.hint or "")


def _window_engine(db: Path) -> dosi.Engine:
    mom = metric(
        "rev_mom",
        "SUM(orders.amount)",
        {"v": "1.3", "window": {"type": "pop", "offset": "1 month", "calculation": "delta"}},
    )
    return dosi.Engine(
        model_text=lodmetrickit.model_text([*PLAIN, *lodmetrickit.LOD, mom]),
        connections={"db": {"type": "duckdb", "uri": str(db)}},
    )


@pytest.mark.parametrize("lod_metric", ["revenue_per_user", "revenue_grand", "revenue_fixed_all"])
def test_lod_metric_beside_a_window_metric(lod_db: Path, lod_metric: str) -> None:
    """LOD-NI-06 / LOD-NI-09 (and fixed, as the reference engine rejects it too)."""
    eng = _window_engine(lod_db)
    with pytest.raises(QueryError) as err:
        eng.compile({"metrics": [lod_metric, "rev_mom"], "group_by": ["metric_time:month"]})
    assert err.value.code == "not_implemented"
    # the window metric alone still runs
    assert eng.execute({"metrics": ["rev_mom"], "group_by": ["metric_time:month"]})["rows"]


def test_frame_second_naming_a_lod_metric_is_not_implemented() -> None:
    corr = metric(
        "corr_x",
        "SUM(orders.amount)",
        {
            "v": "1.3",
            "window": {"frame": {"function": "corr", "second": "revenue_grand", "preceding": 2}},
        },
    )
    codes = _model_codes([*lodmetrickit.LOD, corr])
    assert ("not_implemented", "metrics[corr_x]") in codes


def test_lod_metrics_are_not_attributable(lod_engine) -> None:
    """LOD-NI-12 / SURF-ATTR-04: `attributable: false` in the catalog, and an attribution
    request is answered up front as unsupported / level_of_detail, with no statement run."""
    by_name = {m["name"]: m for m in lod_engine.metrics()}
    for name in ("revenue_per_user", "revenue_grand", "revenue_fixed_by_channel"):
        assert by_name[name]["attributable"] is False
        assert by_name[name]["attribution_strategy"] == "unsupported"
        assert by_name[name]["derive_family"] == "lod"
    assert by_name["revenue"]["attributable"] is True
    assert by_name["revenue_excl_channel"]["required_dimensions"] == ["orders.channel_id"]
    res = lod_engine.attribute(
        {
            "metric": "revenue_grand",
            "dimensions": ["orders.channel_id"],
            "baseline": {"start": "2025-01-01", "end": "2025-02-01"},
            "current": {"start": "2025-02-01", "end": "2025-03-01"},
        }
    )
    assert res["attributable"] is False
    assert res["unsupported_reason"]["code"] == "level_of_detail"
    assert res["comparison_metadata"]["queries_executed"] == 0


def test_basic_mode_fails_closed_on_a_compose_over_lod() -> None:
    """LOD-REL-10 / LOD-BAS-02: the share's own expression is a nested aggregate too."""
    codes = _model_codes([*lodmetrickit.LOD, *lodmetrickit.SHARES], "basic")
    assert ("nested_aggregate", "metrics[revenue_share]") in codes
    assert ("nested_aggregate", "metrics[revenue_grand]") in codes


def test_a_nested_compose_without_lod_members_stays_nested_aggregate() -> None:
    bad = lodmetrickit.compose(
        "not_lod", "SUM(orders.amount) / SUM(SUM(orders.amount))", "revenue / order_count"
    )
    assert _model_codes([bad]) == [("nested_aggregate", "metrics[not_lod]")]


def test_compose_over_include_is_not_implemented(lod_engine) -> None:
    with pytest.raises(QueryError) as err:
        lod_engine.compile(
            {"metrics": ["revenue_per_user", "revenue_share"], "group_by": ["orders.channel_id"]}
        )
    assert err.value.code == "not_implemented"


def test_compose_over_lod_is_not_attributable(lod_engine) -> None:
    by_name = {m["name"]: m for m in lod_engine.metrics()}
    assert by_name["revenue_share"]["attributable"] is False


@pytest.mark.parametrize("base", ["revenue_grand", "revenue_share", "revenue_per_user"])
def test_window_base_naming_a_lod_metric_is_not_implemented(base: str) -> None:
    """WIN-BASE-04 / LOD-NI-15: no window over a level of detail (a compose over one too)."""
    w = metric(
        "w",
        "SUM(orders.amount)",
        {
            "v": "1.10",
            "window": {"base": base, "type": "pop", "offset": "1 month", "calculation": "delta"},
        },
    )
    codes = _model_codes([*lodmetrickit.LOD, *lodmetrickit.SHARES, w])
    assert codes == [("not_implemented", "metrics[w]")]


def test_a_flat_expression_for_a_compose_over_lod_is_a_mismatch() -> None:
    """LOD-REL-10: the compose's expression must be the nested aggregate; a flat one would
    compute the denominator at the view's grain (every share 1)."""
    flat = lodmetrickit.compose(
        "flat_share", "SUM(orders.amount) / SUM(orders.amount)", "revenue / revenue_grand"
    )
    codes = _model_codes([*lodmetrickit.LOD, flat])
    assert codes == [("derive_expression_mismatch", "metrics[flat_share]")]


def test_lineage_draws_lod_members(lod_engine) -> None:
    """SURF-CLI-05: a LOD metric derives from its base, a compose over one from its members."""
    g = lod_engine.lineage()
    edges = {(e["source"], e["target"], e["family"]) for e in g["edges"] if e["kind"] == "derives"}
    assert ("metric:revenue", "metric:revenue_grand", "lod") in edges
    assert ("metric:revenue_grand", "metric:revenue_share", "compose") in edges
    node = next(n for n in g["nodes"] if n["id"] == "metric:revenue_per_user")
    assert node["kind"] == "metric_derived"
