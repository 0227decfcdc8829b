"""The share and streak families on every surface but the numbers (DATUS 1.13): payload
validation (structured `invalid_datus_extension` with the key path, a hint and candidates),
the two spellings (general-form key, reserved window type) reading to one spec, the version
gate dating them 1.13, the capability registry (`dosi info`, `/v1/capabilities`), catalog
metadata, explain, attribution classification and the dialect gate."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
import sqlglot
from click.testing import CliRunner
from test_window_payload import bad, ok, read_window
from wm_common import make_engine

import dosi
from dosi.errors import QueryError
from dosi.ext import ShareWindow, StreakWindow, capabilities
from dosi.ext.window import PartitionSpec
from dosi.frontends.cli import cli
from dosi.frontends.contract import engine_capabilities
from dosi.plan.attribution import attribution_strategy
from dosi.plan.window_gates import check_window_gates
from dosi.query.resolve import resolve_query
from dosi.query.spec import parse_query
from dosi.sql.dialects import DIALECTS

# -- the two spellings -----------------------------------------------------------------------


def test_share_spellings_read_to_one_spec() -> None:
    assert ok({"share": {}}) == ShareWindow()
    assert ok({"type": "share"}) == ShareWindow(sugar="share")
    none = PartitionSpec("none")
    assert ok({"share": {"partition": {"mode": "none"}}}) == ShareWindow(none)
    assert ok({"type": "share", "partition": {"mode": "none"}}) == ShareWindow(none, "share")
    spec = ok({"share": {}})
    assert spec.partition_is_default and not spec.needs_time_axis and spec.reads_time_bucket


def test_streak_spellings_read_to_one_spec() -> None:
    assert ok({"streak": {"op": ">"}}) == StreakWindow(">")
    assert ok({"type": "streak", "op": ">"}) == StreakWindow(">", sugar="streak")
    assert ok(
        {"streak": {"compare": "change", "op": ">=", "target": 1.5, "partition": {"mode": "none"}}}
    ) == StreakWindow(">=", 1.5, "change", PartitionSpec("none"))
    spec = ok({"streak": {"op": "<", "target": -2}})
    assert spec.needs_time_axis and spec.one_row_per_bucket and spec.masked_outside_range


# -- validation ------------------------------------------------------------------------------


def test_share_unknown_key_is_rejected_with_candidates() -> None:
    d = bad({"share": {"partiton": {"mode": "none"}}}, "window.share.partiton")
    assert d[0].candidates == ("partition",)


def test_share_partition_modes() -> None:
    d = bad({"share": {"partition": {"mode": "query_dimensions"}}}, "window.share.partition.mode")
    assert "share of 1" in d[0].message and "time_bucket" in (d[0].hint or "")
    bad({"share": {"partition": {"mode": "bucket"}}}, "window.share.partition.mode")
    bad({"type": "share", "partition": {"mode": "query_dimensions"}}, "window.partition.mode")
    bad(
        {"share": {"partition": {"mode": "query_dimensions_except"}}},
        "window.share.partition.exclude",
    )
    bad({"share": 3}, "window.share")


def test_streak_op_is_required_and_checked() -> None:
    d = bad({"streak": {}}, "window.streak.op")
    assert "required" in d[0].message and ">" in d[0].candidates
    d = bad({"streak": {"op": "gt"}}, "window.streak.op")
    assert "compare" in (d[0].hint or "")
    d = bad({"streak": {"op": "=>"}}, "window.streak.op")
    assert set(d[0].candidates) & {">=", "="}


@pytest.mark.parametrize("target", ["10", True, [1], {"v": 1}])
def test_streak_target_is_a_number(target: Any) -> None:
    d = bad({"streak": {"op": ">", "target": target}}, "window.streak.target")
    assert "must be a number" in d[0].message


def test_streak_compare_and_partition() -> None:
    d = bad({"streak": {"op": ">", "compare": "growth"}}, "window.streak.compare")
    assert '"compare": "change", "op": ">"' in (d[0].hint or "")
    d = bad(
        {"streak": {"op": ">", "partition": {"mode": "time_bucket"}}},
        "window.streak.partition.mode",
    )
    assert "query_dimensions" in d[0].candidates
    d = bad(
        {
            "streak": {
                "op": ">",
                "partition": {"mode": "query_dimensions_except", "exclude": ["sales.region"]},
            }
        },
        "window.streak.partition.mode",
    )
    assert "several rows in a bucket" in d[0].message
    bad({"streak": {"op": ">", "condition": "growth"}}, "window.streak.condition")


def test_share_and_streak_keys_belong_to_their_shapes() -> None:
    """A family's top-level type keys are foreign to the other shapes (fail closed)."""
    bad({"type": "pop", "offset": "1 month", "op": ">"}, "window.op")
    bad({"share": {}, "streak": {"op": ">"}}, "window")
    bad({"type": "share", "op": ">"}, "window.op")
    bad({"type": "streak", "op": ">", "share": {}}, "window.share")


# -- version gate and capability registry ---------------------------------------------------


def test_share_and_streak_are_dated_1_13() -> None:
    """In-family window growth (§7): declared older than 1.13 -> key newer than declared,
    still honored."""
    for window, feature in (
        ({"share": {}}, "window.share"),
        ({"type": "streak", "op": ">"}, "window.streak"),
    ):
        res = read_window(window, v="1.10")
        assert [d.code for d in res.diagnostics] == ["datus_ext_key_newer_than_declared"]
        assert f"`{feature}`" in res.diagnostics[0].message
        assert res.payload.window is not None
        assert read_window(window, v="1.13").diagnostics == ()


def test_capabilities_list_the_families() -> None:
    caps = capabilities()
    window = next(k for k in caps["keys"] if k["key"] == "window")
    assert window["features"]["window.share"] == "1.13"
    assert window["features"]["window.streak"] == "1.13"
    assert caps["version"] == dosi.DATUS_EXT_VERSION == "1.15"
    assert any(h["version"] == "1.13" and "share" in h.get("note", "") for h in caps["history"])


def test_dosi_info_and_rest_capabilities_show_the_families() -> None:
    """`dosi info --format json` and `GET /v1/capabilities` (its contract function) carry
    the dated features."""
    r = CliRunner().invoke(cli, ["info", "--format", "json"])
    assert r.exit_code == 0, r.output
    for caps in (json.loads(r.stdout), engine_capabilities()):
        window = next(k for k in caps["keys"] if k["key"] == "window")
        assert {window["features"][f] for f in ("window.share", "window.streak")} == {"1.13"}
        assert caps["datus_ext_version"] == "1.15"
    text = CliRunner().invoke(cli, ["info"]).stdout
    assert "1.13" in text and "share and streak" in text


# -- catalog, explain, attribution -------------------------------------------------------------

MODEL = {
    "share": {"share": {"partition": {"mode": "none"}}},
    "runs": {"type": "streak", "compare": "change", "op": ">"},
}


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(MODEL)


def test_catalog_metadata(eng: dosi.Engine) -> None:
    listed = {m["name"]: m for m in eng.metrics()}
    assert (listed["share"]["window_family"], listed["share"]["window_function"]) == (
        "share",
        "share",
    )
    assert (listed["runs"]["window_family"], listed["runs"]["window_function"]) == (
        "streak",
        "streak",
    )
    share = eng.metric("share")
    assert share["requires_time_axis"] is False
    assert share["window"] == {
        "partition": {"mode": "none", "exclude": []},
        "sugar": None,
        "family": "share",
    }
    runs = eng.metric("runs")
    assert runs["requires_time_axis"] is True
    assert runs["window"]["compare"] == "change" and runs["window"]["op"] == ">"
    json.dumps(runs)  # JSON-ready


def test_explain_names_the_families(eng: dosi.Engine) -> None:
    text = eng.explain({"metrics": ["share", "runs"], "group_by": ["metric_time:month"]})
    assert "share: share of the grand total" in text
    assert "runs: streak of buckets with change vs previous bucket > 0" in text


def test_attribution_classification(eng: dosi.Engine) -> None:
    for name, word in (("share", "partition's total"), ("runs", "run length")):
        s = attribution_strategy(eng.model, eng.model.metrics[name])
        assert s.name == "unsupported" and s.reason is not None
        assert s.reason["code"] == "window_metric" and word in s.reason["message"]
        assert eng.metric(name)["attributable"] is False


# -- dialects ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_dialect_renders_sql_it_parses(eng: dosi.Engine, dialect: str) -> None:
    """Every dialect either renders SQL its own parser reads back, or refuses with a
    structured dialect_unsupported_* error (never SQL the warehouse would reject)."""
    q = {"metrics": ["share", "runs"], "group_by": ["sales.region", "metric_time:month"]}
    try:
        sql = eng.compile(q, dialect=dialect)["sql"]
    except QueryError as err:
        assert err.code.startswith("dialect_unsupported"), err
        return
    assert "__streak_start_1" in sql and "NULLIF" in sql.upper()
    tree = sqlglot.parse_one(sql, read=DIALECTS[dialect].name)
    assert tree.find(sqlglot.exp.Window) is not None


def test_window_function_gate_is_structured(eng: dosi.Engine) -> None:
    """The gate reads the families' window function: a dialect without ROW_NUMBER (none of
    dosi's, so one is built here) refuses the streak before any SQL exists."""
    gated = replace(DIALECTS["duckdb"], unsupported_window_functions=frozenset({"row_number"}))
    query = parse_query({"metrics": ["runs"], "group_by": ["metric_time:month"]})
    rq = resolve_query(eng.model, query)
    with pytest.raises(QueryError) as info:
        check_window_gates(rq, gated)
    assert info.value.code == "dialect_unsupported_window_function"
    assert "ROW_NUMBER" in str(info.value)
