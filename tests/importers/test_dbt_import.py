"""`dosi import dbt` (issue 25, item 1): dbt's semantic layer read with dbt-semantic-interfaces.

Inputs written by others: MetricFlow's sample dbt project (dbt's own YAML: `semantic_models:`
with `model: ref(...)`, vendored in tests/fixtures/dbt_sample_project) and MetricFlow's test
manifests (tests/fixtures/metricflow). Expected values are hand-written SQL over the sample
project's seeds on DuckDB. The MetricFlow test bed (tests/metricflow) asks MetricFlow's own
questions of the imported manifests. Requirement IDs: CORE-MOD-01 (the written model loads),
DRV-FIL-02 / DRV-CMP-01 (filter and compose metrics), WIN-CUM-01 (cumulative), ENV-REQ-03
(the envelope the importer writes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml
from click.testing import CliRunner
from enginekit import assert_rows_equal

from dosi import validate
from dosi.engine import Engine
from dosi.errors import OsiError
from dosi.frontends.cli import cli
from dosi.importers.dbt import SAVED_QUERIES_KEY, import_dbt
from dosi.importers.dbt.manifest import load_manifest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SAMPLE = FIXTURES / "dbt_sample_project"
SIMPLE = FIXTURES / "metricflow" / "semantic_manifest_yamls" / "simple_manifest"
TABLES = {
    "transactions": "transactions_seed",
    "customers": "customers_seed",
    "countries": "countries_seed",
}


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample project built as dbt would: each model `select * from` its seed."""
    path = tmp_path_factory.mktemp("dbt_sample") / "sample.duckdb"
    con = duckdb.connect(str(path))
    for model, seed in TABLES.items():
        csv = SAMPLE / "seeds" / f"{seed}.csv"
        con.execute(f"CREATE TABLE main.{model} AS SELECT * FROM read_csv_auto('{csv}')")
    con.close()
    return path


@pytest.fixture(scope="module")
def sample_model() -> dict[str, Any]:
    return import_dbt(SAMPLE, schema="main").plain()


@pytest.fixture(scope="module")
def sample_engine(sample_model: dict[str, Any], sample_db: Path) -> Engine:
    return Engine(
        model_text=yaml.safe_dump(sample_model),
        connections={"db": {"type": "duckdb", "uri": str(sample_db)}},
    )


def _ref(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _metric(model: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in model["semantic_model"][0]["metrics"] if m["name"] == name)


def _datus(obj: dict[str, Any]) -> dict[str, Any]:
    for e in obj.get("custom_extensions") or ():
        if e["vendor_name"] == "DATUS":
            return json.loads(e["data"])
    return {}


# -- the sample dbt project: answers -------------------------------------------------------------
def test_sample_project_validates_with_descriptions_and_labels(sample_model: dict) -> None:
    """CORE-MOD-01: the written model loads; descriptions and labels carry over."""
    assert validate(yaml.safe_dump(sample_model))["valid"]
    sm = sample_model["semantic_model"][0]
    ds = {d["name"]: d for d in sm["datasets"]}
    assert set(ds) == set(TABLES)
    assert ds["transactions"]["source"] == "main.transactions"
    assert ds["transactions"]["description"].startswith("Each row represents one transaction")
    assert ds["transactions"]["primary_key"] == ["transaction"]
    assert _metric(sample_model, "new_customers")["ai_context"]["synonyms"] == ["New Customer"]
    fields = {f["name"]: f for f in ds["transactions"]["fields"]}
    assert fields["transaction_amount_usd"]["description"] == (
        "The total USD value of the transaction."
    )
    rels = {(r["from"], r["to"]) for r in sm["relationships"]}
    assert rels == {("transactions", "customers"), ("customers", "countries")}


def test_sample_project_transactions_per_day(sample_engine: Engine, sample_db: Path) -> None:
    r = sample_engine.execute(
        {"metrics": ["transactions", "transaction_amount"], "group_by": ["metric_time:day"]}
    )
    expected = _ref(
        sample_db,
        "SELECT CAST(ds AS TIMESTAMP), COUNT(*), "
        "SUM(transaction_amount_usd) FROM main.transactions GROUP BY 1",
    )
    assert_rows_equal([tuple(x.values()) for x in r.arrow.to_pylist()], expected)


def test_sample_project_derived_and_ratio_by_joined_dimension(
    sample_engine: Engine, sample_db: Path
) -> None:
    """A derived metric (revenue_usd) and a ratio (cancellation_rate) per customer country:
    one join, many to one."""
    r = sample_engine.execute(
        {
            "metrics": ["revenue_usd", "cancellation_rate"],
            "group_by": ["customers.customer_country"],
        }
    )
    expected = _ref(
        sample_db,
        """
        SELECT c.country,
          SUM(t.transaction_amount_usd)
            - SUM(CASE WHEN transaction_type_name = 'cancellation' THEN transaction_amount_usd
                  ELSE 0 END)
            + SUM(CASE WHEN transaction_type_name = 'alteration' THEN transaction_amount_usd
                  ELSE 0 END),
          SUM(CASE WHEN transaction_type_name = 'cancellation' THEN transaction_amount_usd
              ELSE 0 END) / NULLIF(SUM(t.transaction_amount_usd), 0)
        FROM main.transactions t LEFT JOIN main.customers c ON t.id_customer = c.id_customer
        GROUP BY 1""",
    )
    assert_rows_equal([tuple(x.values()) for x in r.arrow.to_pylist()], expected)


def test_sample_project_filters_on_joined_dimensions(
    sample_engine: Engine, sample_db: Path
) -> None:
    """`{{ Dimension('customer__customer_country') }} = 'MX'` (one hop) and
    `{{ Dimension('country__region', entity_path=['customer']) }} = 'NA'` (two hops) become
    CASE aggregates that dosi evaluates through the joins."""
    r = sample_engine.execute(
        {"metrics": ["cancellations_mx", "transaction_usd_na"], "group_by": ["metric_time:month"]}
    )
    expected = _ref(
        sample_db,
        """
        SELECT DATE_TRUNC('month', CAST(t.ds AS TIMESTAMP)),
          SUM(CASE WHEN c.country = 'MX' THEN CASE WHEN transaction_type_name = 'cancellation'
              THEN transaction_amount_usd ELSE 0 END END),
          SUM(CASE WHEN k.region = 'NA' THEN t.transaction_amount_usd END)
        FROM main.transactions t
        LEFT JOIN main.customers c ON t.id_customer = c.id_customer
        LEFT JOIN main.countries k ON c.country = k.country
        GROUP BY 1""",
    )
    assert_rows_equal([tuple(x.values()) for x in r.arrow.to_pylist()], expected)


def test_sample_project_cumulative_metric(sample_engine: Engine, sample_db: Path) -> None:
    """WIN-CUM-01: an all-time cumulative metric is a running total over the days with data
    (MetricFlow also fills the days between from its time spine: the test bed's `time_spine`
    need)."""
    r = sample_engine.execute(
        {"metrics": ["cumulative_transactions"], "group_by": ["metric_time:day"]}
    )
    days = _ref(
        sample_db,
        "SELECT CAST(ds AS TIMESTAMP), COUNT(*) FROM main.transactions GROUP BY 1 ORDER BY 1",
    )
    running, expected = 0, []
    for day, n in days:
        running += n
        expected.append((day, running))
    assert_rows_equal([tuple(x.values()) for x in r.arrow.to_pylist()], expected)


def test_saved_queries_are_dosi_queries(
    sample_model: dict, sample_engine: Engine, sample_db: Path
) -> None:
    """dbt's saved queries land on the model's DBT extension as dosi queries that run."""
    ext = next(
        e
        for e in sample_model["semantic_model"][0]["custom_extensions"]
        if e["vendor_name"] == "DBT"
    )
    saved = {q["name"]: q for q in json.loads(ext["data"])[SAVED_QUERIES_KEY]}
    q = saved["core_transaction_metrics"]
    assert q["description"] == "Important transaction metrics."
    assert q["query"] == {
        "metrics": ["transactions", "quick_buy_transactions"],
        "group_by": ["metric_time:day", "customers.customer_country"],
    }
    r = sample_engine.execute(q["query"])
    expected = _ref(
        sample_db,
        """
        SELECT CAST(t.ds AS TIMESTAMP), c.country, COUNT(*),
          SUM(CASE WHEN transaction_type_name = 'quick-buy' THEN 1 ELSE 0 END)
        FROM main.transactions t LEFT JOIN main.customers c ON t.id_customer = c.id_customer
        GROUP BY 1, 2""",
    )
    assert_rows_equal([tuple(x.values()) for x in r.arrow.to_pylist()], expected)


def test_semantic_manifest_json_gives_the_same_model(tmp_path: Path) -> None:
    """`target/semantic_manifest.json` (what `dbt parse` writes) imports like the YAML."""
    manifest = load_manifest(SAMPLE, schema="main")
    target = tmp_path / "proj" / "target"
    target.mkdir(parents=True)
    (target / "semantic_manifest.json").write_text(manifest.json())
    from_json = import_dbt(tmp_path / "proj", schema="main", name="dbt_sample_project").plain()
    from_yaml = import_dbt(SAMPLE, schema="main").plain()
    assert from_json == from_yaml
    direct = import_dbt(
        target / "semantic_manifest.json", schema="main", name="dbt_sample_project"
    ).plain()
    assert direct == from_yaml


# -- MetricFlow's manifest: the mapping and the warnings -------------------------------------------
@pytest.fixture(scope="module")
def simple() -> Any:
    return import_dbt(SIMPLE, schema="main", name="simple_manifest")


def test_metric_kinds_map_to_datus_payloads(simple: Any) -> None:
    """simple -> aggregate (D-TIME when the measure's time axis is not the model's); filter ->
    D-DERIVE filter; ratio / derived -> compose; offset_window -> D-WINDOW offset;
    cumulative -> D-WINDOW cumulative / rolling (grain_to_date -> reset)."""
    doc = simple.plain()
    assert validate(yaml.safe_dump(doc))["valid"]
    m = {x["name"]: x for x in doc["semantic_model"][0]["metrics"]}
    assert m["bookings"]["expression"]["dialects"][0]["expression"] == (
        "SUM(bookings_source.bookings)"
    )
    assert _datus(m["booking_payments"])["time_dimension"] == "bookings_source.paid_at"
    f = _datus(m["instant_booking_value"])["derive"]
    assert f == {
        "type": "filter",
        "base": "booking_value",
        "where": "bookings_source.is_instant = TRUE",
    }
    assert _datus(m["bookings_per_booker"])["derive"] == {
        "type": "compose",
        "expr": "bookings / bookers",
    }
    lag = _datus(m["bookings_growth_2_weeks__bookings_2_weeks_ago"])["window"]
    assert lag == {
        "offset": {"count": 14, "granularity": "day"},
        "calculation": "value",
        # a grain the shift does not land on sums the days' values, as MetricFlow's spine
        "period_value": {"value": "sum", "grain": "day"},
    }
    assert _datus(m["bookings_growth_2_weeks"])["derive"]["expr"] == (
        "bookings - bookings_growth_2_weeks__bookings_2_weeks_ago"
    )
    assert _datus(m["revenue_mtd"])["window"] == {
        "type": "cumulative",
        "function": "sum",
        "reset": "month",
        # MetricFlow's period_agg (default first) over the day running values (issue 22)
        "period_value": {"value": "first", "grain": "day"},
    }
    # a cumulative `window` is calendar time: a 1.15 span, not 7 buckets (issue 22)
    assert _datus(m["trailing_7_days_bookings"])["window"]["span"] == "7 day"
    assert _datus(m["trailing_2_months_revenue"])["window"] == {
        "type": "rolling",
        "function": "sum",
        "span": "2 month",
        "period_value": {"value": "average", "grain": "day"},
    }
    assert m["median_booking_value"]["expression"]["dialects"][0]["expression"] == (
        "MEDIAN(bookings_source.median_booking_value)"
    )
    # issue 21 item 5: dbt percentile measures are percentile aggregates
    exprs = {n: m[n]["expression"]["dialects"][0]["expression"] for n in m}
    assert exprs["booking_value_p99"] == (
        "PERCENTILE_CONT(0.99) WITHIN GROUP (ORDER BY bookings_source.booking_value_p99)"
    )
    assert exprs["discrete_booking_value_p99"].startswith("PERCENTILE_DISC(0.99) WITHIN GROUP")
    assert exprs["approximate_continuous_booking_value_p99"].startswith("APPROX_QUANTILE(")


def test_what_does_not_carry_is_a_structured_warning(simple: Any) -> None:
    """Each skipped metric has one warning naming it and the reason, with a stable code."""
    by_metric: dict[str, set[str]] = {}
    for w in simple.warnings:
        assert w.severity == "warning" and w.code and w.message
        assert w.path and w.path.split(":")[0] in ("metric", "semantic_model", "saved_query")
        if w.path.startswith("metric:"):
            by_metric.setdefault(w.path[len("metric:") :], set()).add(w.code)
    expected = {
        "bookings_offset_alien_day": "custom_granularity_not_supported",
        "active_listings": "metric_filter_not_carried",  # a Metric(...) filter (issue 23 bed)
        "bookings_join_to_time_spine": "time_spine_not_carried",
    }
    metrics = {m["name"] for m in simple.plain()["semantic_model"][0]["metrics"]}
    for metric, code in expected.items():
        assert code in by_metric.get(metric, set()), metric
    for metric in ("active_listings",):
        assert metric not in metrics
    # `offset_to_grain` carries since D-WINDOW 1.15's offset.period_start
    assert "bookings_at_start_of_month" in metrics
    assert "offset_to_grain_not_supported" not in {c for cs in by_metric.values() for c in cs}
    # a cumulative count-distinct carries since D-WINDOW 1.15's count_distinct frames
    assert {"every_two_days_bookers", "every_2_days_bookers_2_days_ago"} <= metrics
    assert "cumulative_not_additive" not in {c for cs in by_metric.values() for c in cs}
    skipped = {
        m
        for m, codes in by_metric.items()
        if any(
            "not_supported" in c
            or c in ("filter_not_carried", "input_not_imported", "cumulative_not_additive")
            for c in codes
        )
    }
    assert not skipped & metrics


def test_envelope_versions_and_requires(simple: Any) -> None:
    """ENV-REQ-03: every DATUS entry the importer writes carries `v`; no silent key is used
    without `requires`."""
    doc = simple.plain()
    for m in doc["semantic_model"][0]["metrics"]:
        for e in m.get("custom_extensions") or ():
            if e["vendor_name"] == "DATUS":
                data = json.loads(e["data"])
                assert "v" in data
                assert "measure" not in data or "measure" in data.get("requires", [])


# -- errors and the CLI --------------------------------------------------------------------------
def test_unreadable_inputs_are_structured_errors(tmp_path: Path) -> None:
    with pytest.raises(OsiError) as err:
        import_dbt(tmp_path / "missing")
    assert err.value.code == "invalid_dbt_project"
    (tmp_path / "x.yml").write_text("models:\n  - name: a\n")
    with pytest.raises(OsiError) as err:
        import_dbt(tmp_path)
    assert err.value.code == "invalid_dbt_project"
    assert "no dbt semantic models" in err.value.message
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(OsiError) as err:
        import_dbt(tmp_path / "bad.json")
    assert err.value.code == "invalid_dbt_project"


def test_cli_import_writes_a_model_that_validates(tmp_path: Path) -> None:
    out = tmp_path / "model.yaml"
    runner = CliRunner()
    queries = tmp_path / "queries"
    r = runner.invoke(
        cli,
        [
            "import",
            "dbt",
            str(SAMPLE),
            "--schema",
            "main",
            "-o",
            str(out),
            "--queries",
            str(queries),
            "-f",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["datasets"] == 3 and report["metrics"] == 13
    # a cumulative `window` is a 1.15 span now, no approximation to warn about (issue 22)
    assert {w["code"] for w in report["warnings"]} == set()
    v = runner.invoke(cli, ["validate", "-m", str(out)])
    assert v.exit_code == 0, v.output
    assert sorted(p.name for p in queries.iterdir()) == [
        "core_transaction_metrics.json",
        "cumulative_transaction_metrics.json",
    ]
    q = json.loads((queries / "core_transaction_metrics.json").read_text())
    assert q["metrics"] == ["transactions", "quick_buy_transactions"]
    c = runner.invoke(
        cli,
        ["compile", "-m", str(out), "--query-file", str(queries / "core_transaction_metrics.json")],
    )
    assert c.exit_code == 0, c.output
    bad = runner.invoke(cli, ["import", "dbt", str(tmp_path), "-f", "json"])
    assert bad.exit_code == 3
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_dbt_project"
