"""`dosi list` and `dosi info`."""

from __future__ import annotations

import csv
import io
import json

import pytest
from clikit import SHOP_MODEL

import dosi
from dosi.ext import capabilities
from dosi.frontends.cli import output


@pytest.fixture(scope="module")
def engine():
    return dosi.Engine(model_path=SHOP_MODEL)


def js(result):
    return json.loads(result.stdout)


def as_json(value):
    """What a catalog value looks like after a JSON round trip (tuples become lists)."""
    return json.loads(json.dumps(value))


# -- list metrics ---------------------------------------------------------------------------------
def test_list_metrics_table(shop, engine):
    r = shop("list", "metrics")
    assert r.exit_code == 0, r.output
    names = [line.split("|")[0].strip() for line in r.stdout.splitlines()[2:]]
    assert names == [m["name"] for m in engine.metrics()]
    assert "revenue_mom" in names
    assert "offset/percent_change" in r.stdout  # window column


def test_list_defaults_to_metrics(shop):
    assert shop("list").stdout == shop("list", "metrics").stdout


def test_list_metrics_json_and_csv(shop, engine):
    r = shop("list", "metrics", "-f", "json")
    assert js(r) == as_json(engine.metrics())
    c = shop("list", "metrics", "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(c.stdout)))
    assert [row["name"] for row in rows] == [m["name"] for m in engine.metrics()]
    assert rows[0]["datasets"] == "orders"


def test_list_one_metric(shop, engine):
    r = shop("list", "metrics", "--metric", "revenue_ytd", "-f", "json")
    assert r.exit_code == 0
    assert js(r) == as_json(engine.metric("revenue_ytd"))
    t = shop("list", "metrics", "--metric", "revenue_ytd")
    assert "requires_time_axis" in t.stdout


def test_list_unknown_metric(shop):
    r = shop("list", "metrics", "--metric", "revnue", "-f", "json")
    assert r.exit_code == 2
    assert js(r)["error"]["code"] == "unknown_metric"


# -- list dimensions ------------------------------------------------------------------------------
def test_list_dimensions_for_metric(shop, engine):
    r = shop("list", "dimensions", "--metric", "revenue", "-f", "json")
    assert r.exit_code == 0
    want = [d for d in engine.dimensions("revenue") if d["is_dimension"]]
    assert js(r) == as_json(want)
    names = {d["name"] for d in want}
    assert {"orders.channel", "regions.region_name", "orders.order_date"} <= names
    assert "refunds.refund_date" not in names  # not reachable many-to-one from orders
    assert "orders.amount" not in names  # is_dimension: false


def test_list_dimensions_all(shop, engine):
    r = shop("list", "dimensions", "--all", "-f", "json")
    assert js(r) == as_json(engine.dimensions())
    amount = next(d for d in js(r) if d["name"] == "orders.amount")
    assert amount["is_dimension"] is False
    t = shop("list", "dimensions", "--all")
    assert "is_dimension" in t.stdout.splitlines()[0]


def test_list_dimensions_table(shop):
    r = shop("list", "dimension")  # the singular works too
    assert r.exit_code == 0
    header = [c.strip() for c in r.stdout.splitlines()[0].split("|")]
    assert header == ["name", "datatype", "grains", "description"]  # the short default
    assert "orders.order_date" in r.stdout
    wide = shop("list", "dimensions", "--wide").stdout.splitlines()[0]
    assert [c.strip() for c in wide.split("|")][:5] == [
        "name", "is_time", "time_granularity", "grains", "datatype",
    ]


def test_list_columns_picks_keys_in_every_format(shop):
    """Issue 26: --columns chooses the table's columns, and JSON / CSV carry just those."""
    t = shop("list", "metrics", "--columns", "name,datasets")
    assert [c.strip() for c in t.stdout.splitlines()[0].split("|")] == ["name", "datasets"]
    rows = js(shop("list", "metrics", "--columns", "name,kind", "-f", "json"))
    assert rows and all(set(r) == {"name", "kind"} for r in rows)
    assert {r["name"] for r in rows} == {m["name"] for m in js(shop("list", "-f", "json"))}
    c = shop("list", "datasets", "-c", "name,source", "-f", "csv").stdout.splitlines()
    assert c[0] == "name,source" and "orders,main.orders" in c
    bad = shop("list", "metrics", "--columns", "name,nope", "-f", "json")
    assert bad.exit_code == 2
    err = json.loads(bad.stdout)["error"]
    assert err["code"] == "unknown_column" and "datasets" in err["candidates"]
    both = shop("list", "--columns", "name", "--wide", "-f", "json")
    assert json.loads(both.stdout)["error"]["code"] == "conflicting_options"


def test_list_table_fits_a_120_column_terminal(shop, monkeypatch):
    """Issue 26: on a terminal, `dosi list dimensions` is one line per dimension within the
    terminal's width (long text cut with an ellipsis), never folded over lines."""
    monkeypatch.setattr(output, "stdout_is_terminal", lambda: True)
    names = [d["name"] for d in js(shop("list", "dimensions", "-f", "json"))]
    for args in ((), ("--wide",)):
        lines = shop("list", "dimensions", *args, env={"COLUMNS": "120"}).stdout.splitlines()
        assert max(len(ln) for ln in lines) <= 120
        body = [ln for ln in lines if ln.startswith("│")]  # one line per dimension
        assert [ln.split("│")[1].strip() for ln in body] == names


def test_list_dimensions_lists_metric_time_with_its_grains(shop):
    """Issue 8 item 6: metric_time is listed with the grains it allows, one row per distinct
    time axis / grain set (revenue_mom's offset allows day and month only)."""
    rows = js(shop("list", "dimensions", "-f", "json"))
    mt = [d for d in rows if d["name"] == "metric_time"]
    axes = {d["time_axis"] for d in mt}
    assert axes == {"orders.order_date", "refunds.refund_date", "events.event_ts"}
    mom = next(d for d in mt if "revenue_mom" in d["metrics"])
    assert mom["grains"] == ["day", "month"]
    plain = next(d for d in mt if "revenue" in d["metrics"])
    assert plain["grains"] == ["day", "week", "month", "quarter", "year"]
    one = js(shop("list", "dimensions", "--metric", "revenue_mom", "-f", "json"))
    assert one[0]["name"] == "metric_time" and one[0]["grains"] == ["day", "month"]
    table = shop("list", "dimensions", "--metric", "revenue_mom").stdout.splitlines()
    assert table[2].startswith("metric_time") and "day, month" in table[2]


# -- list datasets --------------------------------------------------------------------------------
def test_list_datasets(shop, engine):
    r = shop("list", "datasets", "-f", "json")
    assert js(r) == as_json(engine.datasets())
    assert len(js(r)) == 7
    t = shop("list", "datasets")
    assert "main.order_items" in t.stdout
    assert "order_id, line_no" in t.stdout


def test_list_one_dataset(shop, engine):
    r = shop("list", "datasets", "--dataset", "refunds", "-f", "json")
    assert js(r) == as_json(engine.dataset("refunds"))
    t = shop("list", "datasets", "--dataset", "refunds")
    assert t.exit_code == 0
    assert "refund_amount" in t.stdout
    assert "refunds_to_orders" in t.stdout


def test_list_option_conflicts(shop):
    assert shop("list", "metrics", "--dataset", "orders").exit_code == 2
    assert shop("list", "datasets", "--metric", "revenue").exit_code == 2


# -- info -----------------------------------------------------------------------------------------
def _key_rows(keys):
    if isinstance(keys, dict):
        return [{"key": k, **v} for k, v in keys.items()]
    return list(keys)


def test_info_json():
    from click.testing import CliRunner

    from dosi.frontends.cli import cli

    r = CliRunner().invoke(cli, ["info", "--format", "json"])
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    caps = capabilities()
    assert data["datus_ext_version"] == dosi.DATUS_EXT_VERSION == caps["version"]
    assert data["engine_version"] == dosi.__version__
    assert data["history"] == caps["history"]
    assert data["keys"] == caps["keys"]
    rows = _key_rows(data["keys"])
    assert len(rows) >= 13
    for row in rows:
        assert {"key", "extension", "carriers", "since", "impact", "fallback"} <= set(row)
    assert set(data["impacts"]) == {"inert", "degraded", "documented", "silent"}


def test_info_text(run):
    r = run("info")
    assert r.exit_code == 0
    assert f"datus-ext version: {dosi.DATUS_EXT_VERSION}" in r.stdout
    for row in _key_rows(capabilities()["keys"]):
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith(row["key"] + " "))
        assert row["extension"] in line
        assert row["impact"] in line
        assert row["since"] in line
    assert "history" in r.stdout
    for h in capabilities()["history"]:
        assert any(ln.startswith(h["version"] + " ") for ln in r.stdout.splitlines())


def test_version(run):
    r = run("--version")
    assert r.exit_code == 0
    assert dosi.__version__ in r.stdout
    assert dosi.DATUS_EXT_VERSION in r.stdout
