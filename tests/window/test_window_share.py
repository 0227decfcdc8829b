"""D-WINDOW `share` family (DATUS 1.13; WM "Family roadmap", issue 23 item 2), executed on
DuckDB. Expected values are plain Python over `wm_common.SALES`: a zero-sum bucket (west
2023-10: +30 / -30, and alone in its month, so the month's total is 0), an all-NULL bucket
(west 2023-06), a NULL region, calendar gaps and tied values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from wm_common import D, Key, assert_series, check, keyed, make_engine, query_error, run, series

import dosi

WINDOWS: dict[str, Any] = {
    "sh": {"share": {}},
    "sh_type": {"type": "share"},
    "sh_none": {"share": {"partition": {"mode": "none"}}},
    "sh_none_type": {"type": "share", "partition": {"mode": "none"}},
    "sh_tb": {"share": {"partition": {"mode": "time_bucket"}}},
    "sh_in_region": {
        "share": {"partition": {"mode": "query_dimensions_except", "exclude": ["sales.sale_date"]}}
    },
    "sh_of_month": {
        "share": {"partition": {"mode": "query_dimensions_except", "exclude": ["sales.region"]}}
    },
    "cnt_share": ("COUNT(sales.sale_id)", {"window": {"share": {}}}),
    "mom": {"type": "pop", "offset": "1 month", "calculation": "value"},
    "avg_amt": ("SUM(sales.amount) / COUNT(sales.sale_id)", None),
    "net": (
        "SUM(sales.amount) - COUNT(sales.sale_id)",
        {"derive": {"type": "compose", "expr": "revenue - cnt"}},
    ),
    "sh_net": {"base": "net", "share": {}},
    "sh_avg": {"base": "avg_amt", "share": {"partition": {"mode": "none"}}},
}

REGION_MONTH = ["sales.region", "metric_time:month"]
RT = ("region", "metric_time__month")


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(WINDOWS)


def shared(base: dict[Key, Any], part: Callable[[Key], Any]) -> dict[Key, Any]:
    """v / SUM(v) over the partition; SQL SUM ignores NULLs and is NULL when all are; a zero or
    NULL total gives NULL."""
    totals: dict[Any, Any] = {}
    for k, v in base.items():
        if v is not None:
            p = part(k)
            totals[p] = (totals.get(p) or 0) + v
    out: dict[Key, Any] = {}
    for k, v in base.items():
        total = totals.get(part(k))
        out[k] = None if v is None or not total else v / total
    return out


def by_month(k: Key) -> Any:
    return k[-1]


def test_share_default_is_per_time_bucket(eng: dosi.Engine, db: str) -> None:
    """The default partition is the time bucket: each region's share of its month. West
    2023-10 is alone in its month with a total of 0: NULL, never a division error or 0; the
    all-NULL west 2023-06 is NULL; the NULL region is a group like any other."""
    base = series("month", ("region",))
    want = shared(base, by_month)
    assert want[("west", "2023-10-01")] is None and want[("west", "2023-06-01")] is None
    assert want[("east", "2023-12-01")] == pytest.approx(200 / 210)
    rows = check(eng, db, REGION_MONTH, RT, {"sh": want, "sh_type": want, "sh_tb": want})
    assert keyed(rows, RT, "sh")[(None, "2023-12-01")] == pytest.approx(10 / 210)


def test_share_without_a_time_bucket_is_of_the_whole_range(eng: dosi.Engine, db: str) -> None:
    """No time bucket grouped: the default partition is the whole queried range (a grand
    total), so the regions' shares sum to 1; no time axis is needed."""
    base = series(None, ("region",))
    want = shared(base, lambda k: ())
    rows = check(eng, db, ["sales.region"], ("region",), {"sh": want, "sh_none": want})
    assert sum(r["sh"] for r in rows) == pytest.approx(1.0)


def test_share_none_is_of_the_grand_total(eng: dosi.Engine, db: str) -> None:
    """partition none: each (region, month) row's share of everything queried."""
    base = series("month", ("region",))
    want = shared(base, lambda k: ())
    check(eng, db, REGION_MONTH, RT, {"sh_none": want, "sh_none_type": want})


def test_share_except_declared_dimensions(eng: dosi.Engine, db: str) -> None:
    """query_dimensions_except: the total runs across the excluded dimensions within the rest.
    Excluding the month gives each month's share of its region's whole range; excluding the
    region is the per-month share again."""
    base = series("month", ("region",))
    keys = ("region", "sale_date__month")
    check(
        eng,
        db,
        ["sales.region", "sales.sale_date:month"],
        keys,
        {
            "sh_in_region": shared(base, lambda k: k[0]),
            "sh_of_month": shared(base, by_month),
        },
    )


def test_share_of_a_count(eng: dosi.Engine, db: str) -> None:
    """A share reads the metric's own base aggregate (here a count, integer division avoided)."""
    base = series("quarter", ("region",), measure="count")
    check(
        eng,
        db,
        ["sales.region", "metric_time:quarter"],
        ("region", "metric_time__quarter"),
        {"cnt_share": shared(base, by_month)},
    )


def test_share_metric_filter_and_limit_never_change_it(eng: dosi.Engine, db: str) -> None:
    """A where_sql metric filter keeps rows after the window stage (HAVING semantics) and
    limit cuts the ordered rows: the surviving shares are the unfiltered ones."""
    full = keyed(run(eng, db, ["revenue", "sh"], REGION_MONTH), RT, "sh")
    filtered = run(eng, db, ["revenue", "sh"], REGION_MONTH, where_sql="revenue > 60")
    assert filtered and all(r["revenue"] > 60 for r in filtered)
    assert_series(keyed(filtered, RT, "sh"), {k: full[k] for k in keyed(filtered, RT, "sh")})
    on_share = run(eng, db, ["sh"], REGION_MONTH, where_sql="sh < 0.5")
    assert {k for k, v in full.items() if v is not None and v < 0.5} == set(
        keyed(on_share, RT, "sh")
    )
    limited = run(
        eng,
        db,
        ["sh_none"],
        REGION_MONTH,
        order_by=[{"key": "sh_none", "desc": True}],
        limit=3,
    )
    whole = keyed(run(eng, db, ["sh_none"], REGION_MONTH), RT, "sh_none")
    assert len(limited) == 3
    assert_series(
        keyed(limited, RT, "sh_none"), {k: whole[k] for k in keyed(limited, RT, "sh_none")}
    )
    assert [r["sh_none"] for r in limited] == sorted(
        (v for v in whole.values() if v is not None), reverse=True
    )[:3]


def test_share_time_range_is_the_population(eng: dosi.Engine, db: str) -> None:
    """time_range is the share's context (as in D-LOD): the grand total covers the queried
    range only, also beside a month-over-month metric whose lookback widens the scan (the
    buckets loaded for the lookback never join the total)."""
    start, end = D("2024-01-01"), D("2024-04-01")
    base = series("month", ("region",), start=start, end=end)
    want = shared(base, lambda k: ())
    tr = {"start": start.isoformat(), "end": end.isoformat()}
    check(eng, db, REGION_MONTH, RT, {"sh_none": want}, time_range=tr)
    rows = check(
        eng, db, REGION_MONTH, RT, {"sh_none": want, "sh": shared(base, by_month)}, time_range=tr
    )
    assert sum(r["sh_none"] for r in rows if r["sh_none"] is not None) == pytest.approx(1.0)
    mixed = run(eng, db, ["sh_none", "mom"], REGION_MONTH, time_range=tr)
    assert_series(keyed(mixed, RT, "sh_none"), want, "beside an offset")
    assert keyed(mixed, RT, "mom")[("east", "2024-01-01")] == 200  # the lookback was loaded


def test_share_of_a_derive_series(eng: dosi.Engine, db: str) -> None:
    """`window.base` names a D-DERIVE compose (revenue - cnt) or a ratio: the share divides
    that series by its partition total."""
    rev = series("quarter", ("region",))
    cnt = series("quarter", ("region",), measure="count")
    net = {k: None if rev[k] is None else rev[k] - cnt[k] for k in rev}
    avg = {k: None if rev[k] is None or not cnt[k] else rev[k] / cnt[k] for k in rev}
    check(
        eng,
        db,
        ["sales.region", "metric_time:quarter"],
        ("region", "metric_time__quarter"),
        {"net": net, "sh_net": shared(net, by_month), "sh_avg": shared(avg, lambda k: ())},
    )


def test_share_grouped_dimension_filter_keeps_it_context_filter_narrows_it(
    eng: dosi.Engine, db: str
) -> None:
    """Beside a window metric a where_sql condition on a grouped dimension filters the result
    rows after the window stage: the surviving shares are unchanged. context_filter is what
    narrows the population (the D-LOD context layer): the shares are then of the filtered
    total."""
    full = keyed(run(eng, db, ["sh"], REGION_MONTH), RT, "sh")
    rows = run(eng, db, ["sh"], REGION_MONTH, where_sql="sales.region = 'east'")
    got = keyed(rows, RT, "sh")
    assert got and {k[0] for k in got} == {"east"}
    assert_series(got, {k: full[k] for k in got})
    base = series("month", ("region",), where=lambda s: s.region == "west")
    ctx = run(eng, db, ["sh"], REGION_MONTH, context_filter="sales.region = 'west'")
    assert_series(keyed(ctx, RT, "sh"), shared(base, by_month))


def test_share_row_filter_on_an_ungrouped_field_narrows_the_population(
    eng: dosi.Engine, db: str
) -> None:
    """A where_sql condition on a field the query does not group by filters rows before
    aggregation: the share is of what is left."""
    base = series("month", ("region",), where=lambda s: s.amount is not None and s.amount > 20)
    rows = run(eng, db, ["sh"], REGION_MONTH, where_sql="sales.amount > 20")
    assert_series(keyed(rows, RT, "sh"), shared(base, by_month))


def test_share_recomputes_at_each_grain(eng: dosi.Engine, db: str) -> None:
    """Rollup recomputes: the yearly share is the year's values over the year's total, never
    a sum of monthly shares."""
    base = series("year", ("region",))
    check(
        eng,
        db,
        ["sales.region", "metric_time:year"],
        ("region", "metric_time__year"),
        {"sh": shared(base, by_month)},
    )


def test_share_basic_mode_is_the_plain_aggregate(db: str) -> None:
    """--osi-basic: the DATUS envelope is inert; the metric is its base aggregate."""
    eng = make_engine({"sh": {"share": {}}}, mode="basic")
    rows = run(eng, db, ["sh"], ["sales.region"])
    assert keyed(rows, ("region",), "sh") == series(None, ("region",))


def test_share_query_dimensions_mode_is_rejected_at_compile() -> None:
    """partition query_dimensions would make every row its own total: a structured model
    error naming the modes that work."""
    with pytest.raises(dosi.ModelError) as info:
        make_engine({"bad": {"share": {"partition": {"mode": "query_dimensions"}}}})
    d = info.value.issues[0]
    assert d.code == "invalid_datus_extension"
    assert "window.share.partition.mode" in d.message
    assert set(d.candidates) == {"time_bucket", "none", "query_dimensions_except"}


def test_share_exclude_not_grouped_is_a_query_error(eng: dosi.Engine, db: str) -> None:
    err = query_error(eng, db, {"metrics": ["sh_of_month"], "group_by": ["metric_time:month"]})
    assert err.code == "window_exclude_not_grouped"


def test_share_rows_of_the_day_grain(eng: dosi.Engine, db: str) -> None:
    """Day buckets: each region's share of its day (most days hold one region: share 1)."""
    start, end = D("2023-12-01"), D("2024-02-01")
    base = series("day", ("region",), start=start, end=end)
    check(
        eng,
        db,
        ["sales.region", "metric_time:day"],
        ("region", "metric_time__day"),
        {"sh": shared(base, by_month)},
        time_range={"start": start.isoformat(), "end": end.isoformat()},
    )
