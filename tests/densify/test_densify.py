"""The query key `densify` on DuckDB (issue 22, Deliver item 1): every bucket of the grain in
the time_range (or between the data's first and last bucket), empty buckets as each metric's
D-FILL value (FILL-01: `fill_nulls_with`; 0 for a count, S-FAN-6) or NULL; window metrics over
the dense series (a rolling 3-month sum spans three calendar months, an offset reads the
calendar month before, running totals see the empty buckets); the model's default and its
time-spine table; the structured errors.

Expected rows come from plain Python over the hand-written rows (densekit: `datetime` walks the
calendar), never from dosi.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from densekit import SALES, bucket_sums, build, calendar_buckets, model_text
from enginekit import assert_rows_equal, result_rows

from dosi.engine import Engine
from dosi.errors import ModelError, QueryError

D = dt.date
H1 = {"start": "2024-01-01", "end": "2024-07-01"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("dense") / "sales.duckdb")


@pytest.fixture(scope="module")
def engines(db: Path) -> Iterator[Callable[..., Engine]]:
    made: dict[str, Engine] = {}

    def make(settings: dict[str, Any] | None = None) -> Engine:
        key = repr(settings)
        if key not in made:
            made[key] = Engine(model_text=model_text(settings))
        return made[key]

    yield make
    for e in made.values():
        e.close()


@pytest.fixture(scope="module")
def run(engines: Callable[..., Engine], db: Path) -> Callable[..., dict[str, Any]]:
    def go(query: dict[str, Any], settings: dict[str, Any] | None = None) -> dict[str, Any]:
        return engines(settings).execute(query, db_path=db)

    return go


def _q(metrics: list[str], *group_by: str, **kw: Any) -> dict[str, Any]:
    return {"metrics": metrics, "group_by": list(group_by), **kw}


def _iso(d: dt.date) -> str:
    return d.isoformat()


def _month_rows(start: dt.date, end: dt.date) -> list[tuple[Any, ...]]:
    """(month, revenue or NULL, count or 0) for every month of [start, end)."""
    sums = bucket_sums(SALES, "month", start, end)
    out = []
    for b in calendar_buckets(start, end, "month"):
        s, n = sums.get(b, (None, 0))
        out.append((_iso(b), s, n))
    return out


# ------------------------------------------------------------------------------ the result


@pytest.mark.parametrize("grain", ["day", "week", "month", "quarter"])
def test_every_bucket_of_the_range_is_a_row(run: Callable[..., Any], grain: str) -> None:
    """Every `grain` bucket of the time_range is one row; empty ones read NULL for a sum
    without a fill and 0 for a count (S-FAN-6, FILL-01)."""
    start, end = D(2023, 12, 1), D(2024, 8, 1)
    res = run(
        _q(
            ["revenue", "sales_count", "revenue_or_zero"],
            f"metric_time:{grain}",
            time_range={"start": _iso(start), "end": _iso(end)},
            densify="time",
        )
    )
    sums = bucket_sums(SALES, grain, start, end)
    buckets = calendar_buckets(start, end, grain)
    want = []
    for b in buckets:
        s, n = sums.get(b, (None, 0))
        want.append((_iso(b), s, n, s if s is not None else 0))
    assert len(res["rows"]) == len(buckets)
    assert_rows_equal(result_rows(res), want)


def test_without_densify_empty_buckets_are_no_rows(run: Callable[..., Any]) -> None:
    res = run(_q(["revenue"], "metric_time:month", time_range=H1))
    assert [r["metric_time__month"] for r in res["rows"]] == ["2024-01-01", "2024-03-01", "2024-06-01"]


def test_no_range_spans_the_data_first_to_last_bucket(run: Callable[..., Any]) -> None:
    res = run(_q(["revenue", "sales_count"], "metric_time:month", densify="time"))
    assert_rows_equal(result_rows(res), _month_rows(D(2024, 1, 1), D(2024, 7, 1)))


def test_true_is_time_and_false_is_none(run: Callable[..., Any]) -> None:
    q = _q(["revenue", "sales_count"], "metric_time:month", time_range=H1)
    assert result_rows(run({**q, "densify": True})) == result_rows(run({**q, "densify": "time"}))
    assert len(run({**q, "densify": False})["rows"]) == 3


def test_all_crosses_the_grouped_values(run: Callable[..., Any]) -> None:
    """`all`: every bucket times every observed region, empty cells filled."""
    res = run(
        _q(["revenue", "sales_count"], "metric_time:month", "sales.region", time_range=H1, densify="all")
    )
    sums = bucket_sums(SALES, "month", by_region=True)
    want = []
    for b in calendar_buckets(D(2024, 1, 1), D(2024, 7, 1), "month"):
        for region in ("east", "west"):
            s, n = sums.get((b, region), (None, 0))
            want.append((_iso(b), region, s, n))
    assert_rows_equal(result_rows(res), want)


def test_time_fills_buckets_alone_beside_a_category(run: Callable[..., Any]) -> None:
    """`time` with a category: rows with data as they are, an empty bucket one row whose
    other dims are NULL (as a join to MetricFlow's time spine)."""
    res = run(
        _q(["revenue", "sales_count"], "metric_time:month", "sales.region", time_range=H1, densify="time")
    )
    sums = bucket_sums(SALES, "month", by_region=True)
    want: list[tuple[Any, ...]] = [(_iso(b), r, s, n) for (b, r), (s, n) in sums.items()]
    for b in (D(2024, 2, 1), D(2024, 4, 1), D(2024, 5, 1)):
        want.append((_iso(b), None, None, 0))
    assert_rows_equal(result_rows(res), want)


def test_a_concrete_time_field_is_densified_too(run: Callable[..., Any]) -> None:
    res = run(_q(["sales_count"], "sales.sale_date:month", time_range=H1, densify="time"))
    assert [r["sales_count"] for r in res["rows"]] == [2, 0, 1, 0, 0, 2]


def test_a_where_filter_leaves_more_buckets_empty(run: Callable[..., Any]) -> None:
    res = run(
        _q(["sales_count"], "metric_time:month", time_range=H1, densify="time", where_sql="sales.region = 'west'")
    )
    assert [r["sales_count"] for r in res["rows"]] == [1, 0, 0, 0, 0, 1]


def test_explain_shows_the_spine(engines: Callable[..., Engine]) -> None:
    text = engines().explain(_q(["revenue"], "metric_time:month", time_range=H1, densify="time"))
    assert "Densify" in text and "spine [metric_time__month] in [2024-01-01, 2024-07-01)" in text


# ------------------------------------------------------------------------------ windows


def _dense_month_sums(start: dt.date, end: dt.date) -> list[tuple[dt.date, float | None, int]]:
    sums = bucket_sums(SALES, "month")
    return [(b, *sums.get(b, (None, 0))) for b in calendar_buckets(start, end, "month")]


def _sum(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def test_rolling_frame_spans_calendar_months(run: Callable[..., Any]) -> None:
    """A rolling 3-month sum labelled March spans January to March, widening the scan below
    the range start; a count's empty months are 0 in its frame."""
    res = run(
        _q(
            ["revenue", "rev_roll3", "count_roll3"],
            "metric_time:month",
            time_range={"start": "2024-03-01", "end": "2024-09-01"},
            densify="time",
        )
    )
    series = _dense_month_sums(D(2023, 11, 1), D(2024, 9, 1))
    want = []
    for i, (b, s, _) in enumerate(series):
        if b < D(2024, 3, 1):
            continue
        frame = series[i - 2 : i + 1]
        want.append((_iso(b), s, _sum([x[1] for x in frame]), sum(x[2] for x in frame)))
    assert_rows_equal(result_rows(res), want)


def test_without_densify_the_frame_counts_existing_rows(run: Callable[..., Any]) -> None:
    """WIN-FRM-15 unchanged: the frame reads the rows that exist (June's covers March)."""
    res = run(_q(["rev_roll3"], "metric_time:month", time_range=H1))
    assert [r["rev_roll3"] for r in res["rows"]] == [15.0, 22.0, 26.0]


def test_offset_reads_the_calendar_month_before(run: Callable[..., Any]) -> None:
    """A one-month offset after an empty month reads the empty month (NULL), never the
    month two back."""
    res = run(_q(["revenue", "rev_mom"], "metric_time:month", time_range=H1, densify="time"))
    series = _dense_month_sums(D(2023, 12, 1), D(2024, 7, 1))
    want = [(_iso(b), s, series[i][1]) for i, (b, s, _) in enumerate(series[1:])]
    assert_rows_equal(result_rows(res), want)


def test_running_totals_see_the_empty_buckets(run: Callable[..., Any]) -> None:
    res = run(_q(["rev_run", "count_run"], "metric_time:month", time_range=H1, densify="time"))
    series = _dense_month_sums(D(2024, 1, 1), D(2024, 7, 1))
    want, total, count = [], 0.0, 0
    for b, s, n in series:
        total += s or 0.0
        count += n
        want.append((_iso(b), total, count))
    assert_rows_equal(result_rows(res), want)
    # a year-to-date from mid-year: the scan widens to January, the empty months carry it
    ytd = run(
        _q(["rev_ytd"], "metric_time:month", densify="time", time_range={"start": "2024-04-01", "end": "2024-07-01"})
    )
    assert result_rows(ytd) == [("2024-04-01", 22.0), ("2024-05-01", 22.0), ("2024-06-01", 26.0)]


def test_windows_mode_returns_the_rows_with_data(run: Callable[..., Any]) -> None:
    """`windows`: the frames are computed over the dense series, the empty rows dropped."""
    res = run(_q(["revenue", "rev_roll3"], "metric_time:month", time_range=H1, densify="windows"))
    assert result_rows(res) == [("2024-01-01", 15.0, 15.0), ("2024-03-01", 7.0, 22.0), ("2024-06-01", 4.0, 4.0)]


def test_window_partitions_are_densified_per_region(run: Callable[..., Any]) -> None:
    res = run(
        _q(["revenue", "rev_roll3"], "metric_time:month", "sales.region", time_range=H1, densify="all")
    )
    sums = bucket_sums(SALES, "month", by_region=True)
    months = calendar_buckets(D(2024, 1, 1), D(2024, 7, 1), "month")
    want = []
    for region in ("east", "west"):
        vals = [sums.get((b, region), (None, 0))[0] for b in months]
        for i, b in enumerate(months):
            want.append((_iso(b), region, vals[i], _sum(vals[max(0, i - 2) : i + 1])))
    assert_rows_equal(result_rows(res), want)


# ------------------------------------------------------------------------------ the model


def test_model_default_and_query_override(run: Callable[..., Any]) -> None:
    settings = {"densify": "time"}
    q = _q(["sales_count"], "metric_time:month", time_range=H1)
    assert len(run(q, settings)["rows"]) == 6
    assert len(run({**q, "densify": False}, settings)["rows"]) == 3
    # the default applies only where it can: a query grouped by no time bucket is unchanged
    assert result_rows(run(_q(["sales_count"], "sales.region"), settings)) == result_rows(
        run(_q(["sales_count"], "sales.region"))
    )


def test_a_declared_time_spine_table_gives_the_same_rows(
    run: Callable[..., Any], engines: Callable[..., Engine]
) -> None:
    settings = {"time_spine": {"dataset": "cal", "field": "d"}}
    for q in (
        _q(["revenue", "sales_count"], "metric_time:week", time_range=H1, densify="time"),
        _q(["revenue", "rev_roll3"], "metric_time:month", time_range=H1, densify="all"),
    ):
        assert result_rows(run(q, settings)) == result_rows(run(q))
    assert "from rows of cal.d" in engines(settings).explain(
        _q(["revenue"], "metric_time:month", time_range=H1, densify="time")
    )


@pytest.mark.parametrize(
    "settings, fragment",
    [
        ({"densify": "sometimes"}, "`densify` must be"),
        ({"time_spine": {"dataset": "calendar", "field": "d"}}, "not a dataset of the model"),
        ({"time_spine": {"dataset": "cal", "field": "x"}}, "is not a field of `cal`"),
        ({"time_spine": {"dataset": "sales", "field": "region"}}, "is not a time field"),
    ],
)
def test_bad_settings_fail_the_model(settings: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ModelError) as err:
        Engine(model_text=model_text(settings))
    assert any(
        d.code == "invalid_dosi_setting" and fragment in d.message for d in err.value.issues
    ), err.value.issues


# ------------------------------------------------------------------------------ errors


def test_densify_without_a_time_grain_is_structured(engines: Callable[..., Engine]) -> None:
    with pytest.raises(QueryError) as err:
        engines().compile(_q(["revenue"], "sales.region", densify="time"))
    assert err.value.code == "densify_needs_time_grain"
    assert "metric_time:month" in err.value.suggested_retry["group_by"]


def test_a_bad_densify_value_is_invalid_query(engines: Callable[..., Engine]) -> None:
    with pytest.raises(QueryError) as err:
        engines().compile(_q(["revenue"], "metric_time:month", densify="alll"))
    assert err.value.code == "invalid_query" and "all" in err.value.candidates


def test_too_many_buckets_is_structured(engines: Callable[..., Engine]) -> None:
    with pytest.raises(QueryError) as err:
        engines().compile(
            _q(["revenue"], "metric_time:day", densify="time", time_range={"start": "0100-01-01", "end": "9000-01-01"})
        )
    assert err.value.code == "densify_too_many_buckets"


def test_a_dialect_without_a_series_is_refused_before_sql(engines: Callable[..., Engine]) -> None:
    """T-SQL: no series function dosi writes (a structured error, never SQL that fails)."""
    q = _q(["revenue"], "metric_time:month", time_range=H1, densify="time")
    with pytest.raises(QueryError) as err:
        engines().compile(q, dialect="tsql")
    assert err.value.code == "dialect_unsupported_densify"
    # a declared time-spine table needs no series: it compiles there
    sql = engines({"time_spine": {"dataset": "cal", "field": "d"}}).compile(q, dialect="tsql")["sql"]
    assert "cal" in sql


@pytest.mark.parametrize(
    "dialect", ["duckdb", "postgres", "sqlite", "clickhouse", "datafusion", "spark", "mysql", "trino", "bigquery", "snowflake"]
)
def test_every_series_dialect_compiles(engines: Callable[..., Engine], dialect: str) -> None:
    q = _q(["revenue", "rev_roll3"], "metric_time:month", "sales.region", time_range=H1, densify="all")
    assert engines().compile(q, dialect=dialect)["sql"]
