"""Percentile and median metric aggregates on DuckDB (issue 21 item 5).

Expected values never come from the engine: the raw values come from hand-written SQL over the
mini shop's rows, and the percentile is computed in plain Python. The continuous rule is
`statistics.quantiles(values, n=100, method="inclusive")` (linear interpolation between the
two nearest ranks, h = (n - 1) * p, as PERCENTILE_CONT); the discrete rule is the value at rank
max(1, ceil(n * p)) of the ascending non-NULL values (as PERCENTILE_DISC), in exact fractions.
NULL values are ignored; a group without values is NULL.

Requirement IDs: CORE-MEAS-01 (one named measure per aggregate, p50 and p90 distinct),
CORE-MEAS-02 (one measure per signature), CORE-FAN-02 (merged with another dataset's metric),
CORE-FAN-05 (no count fill: a percentile stays NULL), FILL-03 (an explicit fill applies),
WIN-OFF-01 (a period-over-period window over a percentile base).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import pytest
from enginekit import assert_rows_equal, metric, result_rows

from dosi.errors import ModelError, QueryError

Make = Callable[..., Any]

CONT = "PERCENTILE_CONT({p}) WITHIN GROUP (ORDER BY orders.amount)"
METRICS = [
    metric("amount_p30", CONT.format(p=0.3)),
    metric("amount_p90", CONT.format(p=0.9)),
    metric("amount_p70_desc", "PERCENTILE_CONT(0.3) WITHIN GROUP (ORDER BY orders.amount DESC)"),
    metric("amount_disc_p30", "PERCENTILE_DISC(0.3) WITHIN GROUP (ORDER BY orders.amount)"),
    metric("amount_median", "MEDIAN(orders.amount)"),
    metric("amount_approx", "APPROX_QUANTILE(orders.amount, 0.5)"),
    metric("qty_p50_approx", "APPROX_PERCENTILE(order_items.qty, 0.5)"),
    metric(
        "qty_p90",
        "PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY order_items.qty)",
        {"time_dimension": "orders.order_date"},
    ),
    metric("amount_p90_twin", CONT.format(p=0.9)),
    metric("amount_median_filled", "MEDIAN(orders.amount)", {"fill_nulls_with": 0}),
    metric(
        "amount_median_mom",
        "MEDIAN(orders.amount)",
        {"window": {"type": "pop", "offset": "1 month", "calculation": "delta"}},
    ),
]


def cont(values: Sequence[float], p: float) -> float | None:
    """PERCENTILE_CONT by Python's statistics module (the `inclusive` method)."""
    vals = sorted(float(v) for v in values if v is not None)
    if not vals:
        return None
    if len(vals) == 1:
        return vals[0]
    k = round(p * 100)
    assert 0 < k < 100 and math.isclose(k / 100, p)
    return statistics.quantiles(vals, n=100, method="inclusive")[k - 1]


def disc(values: Sequence[Any], p: float) -> Any:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    rank = max(1, math.ceil(Fraction(str(p)) * len(vals)))
    return vals[rank - 1]


def grouped(rows: Sequence[tuple[Any, Any]]) -> dict[Any, list[Any]]:
    out: dict[Any, list[Any]] = defaultdict(list)
    for key, value in rows:
        out[key].append(value)
    return out


@pytest.fixture
def pct(mini_engine: Make) -> tuple[Any, Callable[[dict[str, Any]], dict[str, Any]]]:
    return mini_engine(extra_metrics=METRICS)


BY_REGION = "SELECT c.region, o.amount FROM orders o LEFT JOIN customers c ON o.customer_id = c.id"
BY_MONTH = "SELECT CAST(date_trunc('month', order_date) AS DATE), amount FROM orders"


def test_percentiles_by_a_joined_dimension(pct: Any, mini_ref: Any) -> None:
    """Each percentile per region, from the region's order rows (NULL amounts ignored)."""
    _, run = pct
    names = ["amount_p30", "amount_p90", "amount_p70_desc", "amount_disc_p30", "amount_median"]
    res = run({"metrics": names, "group_by": ["customers.region"]})
    want = [
        (k, cont(v, 0.3), cont(v, 0.9), cont(v, 0.7), disc(v, 0.3), cont(v, 0.5))
        for k, v in grouped(mini_ref.exact(BY_REGION)).items()
    ]
    assert_rows_equal(result_rows(res), want)


def test_percentiles_at_a_month_grain_come_from_rows(pct: Any, mini_ref: Any) -> None:
    """A month of a DATE axis is never rolled up from day partials for a percentile: each
    month's value is the percentile of that month's rows."""
    eng, run = pct
    q = {
        "metrics": ["amount_p90", "amount_disc_p30", "amount_median"],
        "group_by": ["metric_time:month"],
    }
    assert "PreAggregate" not in eng.explain(q)
    res = run(q)
    want = [
        (k, cont(v, 0.9), disc(v, 0.3), cont(v, 0.5))
        for k, v in grouped(mini_ref.exact(BY_MONTH)).items()
    ]
    assert_rows_equal(result_rows(res), want)


def test_whole_total_and_discrete_keeps_the_column_type(pct: Any, mini_ref: Any) -> None:
    _, run = pct
    res = run({"metrics": ["amount_p30", "amount_disc_p30", "amount_approx"]})
    values = [r[0] for r in mini_ref.exact("SELECT amount FROM orders")]
    (row,) = res["rows"]
    assert math.isclose(row["amount_p30"], cont(values, 0.3))
    assert row["amount_disc_p30"] == disc(values, 0.3)  # an exact Decimal of the column
    known = sorted(v for v in values if v is not None)
    assert known[0] <= row["amount_approx"] <= known[-1]


def test_merged_with_another_datasets_metrics(pct: Any, mini_ref: Any) -> None:
    """CORE-FAN-02: a percentile of orders beside one of order_items and a SUM of refunds,
    per month; each branch computes its own rows, the merge keeps every month."""
    _, run = pct
    res = run(
        {
            "metrics": ["amount_median", "qty_p90", "refund_total"],
            "group_by": ["metric_time:month"],
        }
    )
    orders = grouped(mini_ref.exact(BY_MONTH))
    items = grouped(
        mini_ref.exact(
            "SELECT CAST(date_trunc('month', o.order_date) AS DATE), i.qty FROM order_items i "
            "JOIN orders o ON i.order_id = o.order_id"
        )
    )
    refunds = dict(
        mini_ref.exact(
            "SELECT CAST(date_trunc('month', refund_date) AS DATE), SUM(refund_amount) "
            "FROM refunds GROUP BY 1"
        )
    )
    months = set(orders) | set(items) | set(refunds)
    want = [
        (m, cont(orders.get(m, []), 0.5), cont(items.get(m, []), 0.9), refunds.get(m))
        for m in months
    ]
    assert_rows_equal(result_rows(res), want)


def test_fill_and_no_count_fill(pct: Any, mini_ref: Any) -> None:
    """CORE-FAN-05 / FILL-03: beside refunds by month, a month without orders is NULL for the
    plain median and 0 for the one that declares fill_nulls_with."""
    _, run = pct
    res = run(
        {
            "metrics": ["amount_median", "amount_median_filled", "refund_count"],
            "group_by": ["metric_time:month"],
        }
    )
    rows = {r["metric_time__month"]: r for r in res["rows"]}
    may = next(k for k in rows if str(k).startswith("2024-05"))  # refunds only
    assert rows[may]["amount_median"] is None
    assert rows[may]["amount_median_filled"] == 0


def test_window_over_a_percentile_base(pct: Any, mini_ref: Any) -> None:
    """WIN-OFF-01: month-over-month delta of the monthly median."""
    _, run = pct
    res = run({"metrics": ["amount_median_mom"], "group_by": ["metric_time:month"]})
    months = sorted(grouped(mini_ref.exact(BY_MONTH)).items())
    medians = [cont(v, 0.5) for _, v in months]
    want = [(months[0][0], None)] + [
        (months[i][0], medians[i] - medians[i - 1]) for i in range(1, len(months))
    ]
    assert_rows_equal(result_rows(res), want)


def test_measures_are_named_by_fraction_and_shared_by_signature(pct: Any) -> None:
    """CORE-MEAS-01/02: p30 and p90 of one column are two measures; a textual twin shares."""
    eng, _ = pct
    p90 = eng.metric("amount_p90")["measures"]
    assert eng.metric("amount_p90_twin")["measures"] == p90
    assert eng.metric("amount_p30")["measures"] != p90
    assert p90 == ["orders_amount_p90_percentile_cont"]


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("PERCENTILE_CONT(1.5) WITHIN GROUP (ORDER BY orders.amount)", "from 0 to 1"),
        ("PERCENTILE_CONT(orders.discount) WITHIN GROUP (ORDER BY orders.amount)", "from 0 to 1"),
        ("PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY orders.amount DESC)", "ascending"),
        ("APPROX_PERCENTILE(orders.amount)", "two arguments"),
    ],
)
def test_unreadable_percentiles_are_structured(
    mini_engine: Make, expression: str, fragment: str
) -> None:
    with pytest.raises(ModelError) as info:
        mini_engine(extra_metrics=[metric("bad", expression)])
    (issue,) = [d for d in info.value.issues if d.path == "metrics[bad]"]
    assert issue.code == "invalid_percentile" and fragment in issue.message


@pytest.mark.parametrize("dialect", ["sqlite", "mysql", "mariadb", "bigquery"])
def test_engines_without_percentiles_refuse_before_sql(pct: Any, dialect: str) -> None:
    eng, _ = pct
    with pytest.raises(QueryError) as info:
        eng.compile({"metrics": ["amount_median"]}, dialect=dialect)
    assert info.value.code == "dialect_unsupported_percentile"
    assert "MEDIAN(orders.amount)" in str(info.value)


LOD = [
    metric("amount_median", "MEDIAN(orders.amount)"),
    metric(
        "median_per_customer",
        "AVG(MEDIAN(orders.amount))",
        {
            "v": "1.10",
            "requires": ["lod"],
            "derive": {"type": "lod", "expr": "avg(include(amount_median, orders.customer_id))"},
        },
    ),
    metric(
        "median_fixed_channel",
        "SUM(MEDIAN(orders.amount))",
        {
            "v": "1.10",
            "requires": ["lod"],
            "derive": {"type": "lod", "expr": "fixed(amount_median, orders.channel)"},
        },
    ),
]


def test_lod_over_a_percentile_base(mini_engine: Make, mini_ref: Any) -> None:
    """D-LOD include (LOD-PLAN) and fixed (LOD-FXM-01) over a median base: each customer's
    median from that customer's rows, averaged per region; each channel's median."""
    _, run = mini_engine(extra_metrics=LOD)
    res = run({"metrics": ["median_per_customer"], "group_by": ["customers.region"]})
    per = grouped(
        mini_ref.exact(
            "SELECT coalesce(c.region, '~') || '|' || o.customer_id, o.amount FROM orders o "
            "LEFT JOIN customers c ON o.customer_id = c.id"
        )
    )
    by_region: dict[Any, list[float]] = defaultdict(list)
    for key, values in per.items():
        m = cont(values, 0.5)
        if m is not None:
            region = key.split("|")[0]
            by_region[None if region == "~" else region].append(m)
    want = [(k, statistics.fmean(v)) for k, v in by_region.items()]
    assert_rows_equal(result_rows(res), want)
    res = run({"metrics": ["median_fixed_channel"], "group_by": ["orders.channel"]})
    by_channel = grouped(mini_ref.exact("SELECT channel, amount FROM orders"))
    assert_rows_equal(result_rows(res), [(k, cont(v, 0.5)) for k, v in by_channel.items()])


DERIVED = [
    metric("p90", CONT.format(p=0.9)),
    metric("med", "MEDIAN(orders.amount)"),
    metric(
        "p90_web",
        "PERCENTILE_CONT(0.9) WITHIN GROUP "
        "(ORDER BY CASE WHEN orders.channel = 'web' THEN orders.amount END)",
        {"v": "1.4", "derive": {"type": "filter", "base": "p90", "where": "channel = 'web'"}},
    ),
    metric(
        "spread",
        "PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY orders.amount) - MEDIAN(orders.amount)",
        {"v": "1.4", "derive": {"type": "compose", "expr": "p90 - med"}},
    ),
]


def test_filter_and_compose_over_percentiles(mini_engine: Make, mini_ref: Any) -> None:
    """DRV-FIL-02 / DRV-CMP-01: a filtered percentile ranks only the selected rows; a compose
    subtracts two percentiles of the same rows, per region."""
    _, run = mini_engine(extra_metrics=DERIVED)
    res = run({"metrics": ["p90_web", "spread"], "group_by": ["customers.region"]})
    web = grouped(
        mini_ref.exact(
            "SELECT c.region, CASE WHEN o.channel = 'web' THEN o.amount END FROM orders o "
            "LEFT JOIN customers c ON o.customer_id = c.id"
        )
    )
    every = grouped(mini_ref.exact(BY_REGION))
    want = []
    for k, v in every.items():
        hi, mid = cont(v, 0.9), cont(v, 0.5)
        want.append((k, cont(web[k], 0.9), None if hi is None else hi - mid))  # type: ignore[operator]
    assert_rows_equal(result_rows(res), want)
