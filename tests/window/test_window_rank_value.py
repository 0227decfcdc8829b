"""D-WINDOW rank and value families (1.3) and `order.nulls` (1.9), executed on DuckDB
(WIN-RNK-*, WIN-VAL-*, WIN-MOD-*, WIN-19-03/04). Expected values are computed in plain Python
from `wm_common.SALES`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from wm_common import Key, check, key_date, keyed, make_engine, query_error, run, series

import dosi


def rank(function: str, **kw: Any) -> dict[str, Any]:
    return {"rank": {"function": function, **kw}}


def value(function: str, **kw: Any) -> dict[str, Any]:
    return {"value": {"function": function, **kw}}


WINDOWS = {
    "rn": rank("row_number"),
    "rk": rank("rank"),
    "drk": rank("dense_rank"),
    "nt2": rank("ntile", buckets=2),
    "nt4": rank("ntile", buckets=4),
    "nt5": rank("ntile", buckets=5),
    "pr": rank("percent_rank"),
    "cd": rank("cume_dist"),
    "rk_asc": rank("rank", order={"by": "value", "direction": "asc"}),
    "rn_asc": rank("row_number", order={"by": "value", "direction": "asc"}),
    "rk_qd": rank("rank", partition={"mode": "query_dimensions"}),
    "rk_tb": rank("rank", partition={"mode": "time_bucket"}),
    "rn_tb": rank("row_number", partition={"mode": "time_bucket"}),
    "rk_except": rank(
        "dense_rank", partition={"mode": "query_dimensions_except", "exclude": ["sales.region"]}
    ),
    "rn_time": rank("row_number", order={"by": "time"}),
    "rn_time_reg": rank("row_number", order={"by": "time"}, partition={"mode": "query_dimensions"}),
    "rk_nulls_first": rank("rank", order={"by": "value", "direction": "desc", "nulls": "first"}),
    "rk_nulls_last": rank("rank", order={"by": "value", "direction": "desc", "nulls": "last"}),
    "rk_asc_nulls_first": rank("rank", order={"by": "value", "direction": "asc", "nulls": "first"}),
    "fv": value("first_value"),
    "lv": value("last_value"),
    "nv2": value("nth_value", n=2),
    "nv3": value("nth_value", n=3),
    "nv5": value("nth_value", n=5),
    "fv_none": value("first_value", partition={"mode": "none"}),
    "lv_none": value("last_value", partition={"mode": "none"}),
    "lv_desc": value("last_value", order={"by": "time", "direction": "desc"}),
    "fv_byval": value("first_value", order={"by": "value"}),
    "fv_byval_none": value("first_value", order={"by": "value"}, partition={"mode": "none"}),
    "lv_byval_none": value("last_value", order={"by": "value"}, partition={"mode": "none"}),
}

MONTH = ["metric_time:month"]
REGION_MONTH = ["sales.region", "metric_time:month"]
RT = ("region", "metric_time__month")


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(WINDOWS)


# -- plain-Python ranking ----------------------------------------------------------------------


def _nl(v: Any) -> tuple[int, Any]:
    """Ascending key with NULLs last (DuckDB's default in both directions)."""
    return (1, 0) if v is None else (0, v)


def _order_key(v: Any, desc: bool, nulls_first: bool | None = None) -> tuple[int, Any]:
    null_first = False if nulls_first is None else nulls_first
    if v is None:
        return (0 if null_first else 2, 0)
    return (1, -v if desc else v)


def _tiebreak(k: Key) -> tuple[Any, ...]:
    return tuple(_nl(x) for x in k)


def ranked(
    base: dict[Key, Any],
    function: str,
    *,
    desc: bool = True,
    nulls_first: bool | None = None,
    part: Callable[[Key], Any] = lambda k: (),
    buckets: int | None = None,
) -> dict[Key, Any]:
    """SQL:2003 ranking over the value; row_number / ntile break ties by the dims ascending
    (NULLs last) then the time bucket — every key column that is not in the partition."""
    out: dict[Key, Any] = {}
    groups: dict[Any, list[Key]] = {}
    for k in base:
        groups.setdefault(part(k), []).append(k)
    for keys in groups.values():
        okey = {k: _order_key(base[k], desc, nulls_first) for k in keys}
        keys.sort(key=lambda k: (okey[k], _tiebreak(k)))
        n = len(keys)
        for i, k in enumerate(keys):
            before = sum(1 for x in keys if okey[x] < okey[k])
            upto = sum(1 for x in keys if okey[x] <= okey[k])
            distinct_before = len({okey[x] for x in keys if okey[x] < okey[k]})
            if function == "row_number":
                out[k] = i + 1
            elif function == "rank":
                out[k] = before + 1
            elif function == "dense_rank":
                out[k] = distinct_before + 1
            elif function == "percent_rank":
                out[k] = 0.0 if n == 1 else before / (n - 1)
            elif function == "cume_dist":
                out[k] = upto / n
            elif function == "ntile":
                assert buckets is not None
                out[k] = ntile(i, n, buckets)
            else:
                raise ValueError(function)
    return out


def ntile(i: int, n: int, b: int) -> int:
    per, extra = divmod(n, b)
    if per == 0:
        return i + 1
    boundary = extra * (per + 1)
    if i < boundary:
        return i // (per + 1) + 1
    return (i - boundary) // per + extra + 1


def navigated(
    base: dict[Key, Any],
    function: str,
    *,
    n: int = 1,
    part: Callable[[Key], Any] = lambda k: k[:-1],
    order: Callable[[Key], Any] = lambda k: (key_date(k), _tiebreak(k)),
    reverse: bool = False,
) -> dict[Key, Any]:
    """first / last / nth over the whole ordered partition, RESPECT NULLS."""
    out: dict[Key, Any] = {}
    groups: dict[Any, list[Key]] = {}
    for k in base:
        groups.setdefault(part(k), []).append(k)
    for keys in groups.values():
        keys.sort(key=order, reverse=reverse)
        vals = [base[k] for k in keys]
        pick = {"first_value": vals[0], "last_value": vals[-1]}.get(
            function, vals[n - 1] if len(vals) >= n else None
        )
        out.update(dict.fromkeys(keys, pick))
    return out


# -- rank family ---------------------------------------------------------------------------------


def test_win_rnk_01_all_functions_by_region(eng: dosi.Engine, db: str) -> None:
    """WIN-RNK-01/04/05/08: all six functions, default order value desc, default partition none,
    axis-free (region only); the NULL region ranks like any other row."""
    base = series(None, ("region",))
    rows = check(
        eng,
        db,
        ["sales.region"],
        ("region",),
        {
            "rn": ranked(base, "row_number"),
            "rk": ranked(base, "rank"),
            "drk": ranked(base, "dense_rank"),
            "nt2": ranked(base, "ntile", buckets=2),
            "pr": ranked(base, "percent_rank"),
            "cd": ranked(base, "cume_dist"),
            "rk_asc": ranked(base, "rank", desc=False),
        },
    )
    got = keyed(rows, ("region",), "rk")
    assert got == {("east",): 1, ("west",): 2, (None,): 3}


def test_win_rnk_all_functions_with_ties(eng: dosi.Engine, db: str) -> None:
    """WIN-RNK-01/06/07: region x month with tied values (east 150/150, west 50/50) and a NULL
    value (west 2023-06, sorted last): rank/dense_rank/percent_rank/cume_dist keep peers equal;
    row_number/ntile break ties by region then the time bucket, ascending."""
    base = series("month", ("region",))
    rows = check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "rn": ranked(base, "row_number"),
            "rk": ranked(base, "rank"),
            "drk": ranked(base, "dense_rank"),
            "nt2": ranked(base, "ntile", buckets=2),
            "nt4": ranked(base, "ntile", buckets=4),
            "nt5": ranked(base, "ntile", buckets=5),
            "pr": ranked(base, "percent_rank"),
            "cd": ranked(base, "cume_dist"),
            "rk_asc": ranked(base, "rank", desc=False),
            "rn_asc": ranked(base, "row_number", desc=False),
        },
    )
    rk = keyed(rows, RT, "rk")
    rn = keyed(rows, RT, "rn")
    e1, e3 = ("east", "2024-01-01"), ("east", "2024-03-01")
    assert rk[e1] == rk[e3]
    assert rn[e3] == rn[e1] + 1  # tie broken by the time bucket, ascending
    assert rk[("west", "2023-06-01")] == len(base)  # NULL value sorts last


@pytest.mark.parametrize("buckets,metric", [(2, "nt2"), (4, "nt4"), (5, "nt5")])
def test_win_rnk_02_ntile_bucket_sizes(
    eng: dosi.Engine, db: str, buckets: int, metric: str
) -> None:
    """WIN-RNK-02: NTILE(b) splits the ordered rows into b buckets whose sizes differ by at most
    one, the larger ones first."""
    n = len(series("month", ("region",)))
    got = keyed(run(eng, db, [metric], REGION_MONTH), RT, metric)
    sizes = [sum(1 for v in got.values() if v == b) for b in range(1, buckets + 1)]
    assert sum(sizes) == n
    assert sizes == sorted(sizes, reverse=True) and sizes[0] - sizes[-1] <= 1


def test_win_rnk_no_group_by_single_row(eng: dosi.Engine, db: str) -> None:
    """WIN-RNK-08: no group_by at all -> one row; every rank is the first."""
    rows = run(eng, db, ["rn", "rk", "drk", "nt4", "pr", "cd"], [])
    assert rows == [{"rn": 1, "rk": 1, "drk": 1, "nt4": 1, "pr": 0.0, "cd": 1.0}]


def test_win_rnk_partition_modes(eng: dosi.Engine, db: str) -> None:
    """WIN-MOD-02 (reference: rank partitions keep the time bucket): `query_dimensions`
    partitions by every query dim incl. the bucket (all ranks 1); `time_bucket` ranks regions
    within each month; `query_dimensions_except [region]` likewise partitions by month."""
    base = series("month", ("region",))
    by_month: Callable[[Key], Any] = lambda k: k[1]  # noqa: E731
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "rk_qd": dict.fromkeys(base, 1),
            "rk_tb": ranked(base, "rank", part=by_month),
            "rn_tb": ranked(base, "row_number", part=by_month),
            "rk_except": ranked(base, "dense_rank", part=by_month),
        },
    )


def test_win_rnk_08_time_order_needs_axis(eng: dosi.Engine, db: str) -> None:
    """WIN-RNK-08: `order.by: time` turns the axis requirement back on; grouped, it numbers the
    rows in time order with the region tie-breaker (globally, or per region)."""
    err = query_error(eng, db, {"metrics": ["rn_time"], "group_by": ["sales.region"]})
    assert err.code == "time_axis_not_grouped"
    assert err.missing_dimensions == ["sales.sale_date"]
    base = series("month", ("region",))
    order = sorted(base, key=lambda k: (key_date(k), _nl(k[0])))
    per_region: dict[Key, int] = {}
    for k in order:
        per_region[k] = sum(1 for x in order[: order.index(k) + 1] if x[0] == k[0])
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "rn_time": {k: i + 1 for i, k in enumerate(order)},
            "rn_time_reg": per_region,
        },
    )


def test_win_rnk_06_07_tiebreakers_in_sql(eng: dosi.Engine) -> None:
    """WIN-RNK-03/06/07: no frame clause; row_number/ntile append the non-partition dims (incl.
    the time bucket) ascending; the peer-aware functions get none."""

    def over(metric: str) -> str:
        sql = eng.compile({"metrics": [metric], "group_by": REGION_MONTH})["sql"]
        return sql.split(" OVER (", 1)[1].split(f") AS {metric}", 1)[0]

    for metric in ("rn", "nt2"):
        assert over(metric) == (
            "ORDER BY c.sales_amount_sum DESC, c.region ASC, c.metric_time__month ASC"
        )
    for metric in ("rk", "drk", "pr", "cd"):
        assert over(metric) == "ORDER BY c.sales_amount_sum DESC"
    assert over("rn_tb") == (
        "PARTITION BY c.metric_time__month ORDER BY c.sales_amount_sum DESC, c.region ASC"
    )


def test_win_res_05_rank_alone_under_time_range(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-05: a partition-global metric alone under a time_range ranks the in-range rows
    only ("within the queried window")."""
    start, end = "2024-01-01", "2024-05-01"
    base = series("month", ("region",))
    inr = {k: v for k, v in base.items() if start <= k[1][:10] < end}
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {"rk": ranked(inr, "rank"), "rn": ranked(inr, "row_number")},
        time_range={"start": start, "end": end},
    )


# -- value family --------------------------------------------------------------------------------


def test_win_val_first_last_nth_over_full_partition(eng: dosi.Engine, db: str) -> None:
    """WIN-VAL-01..05: navigation spans the WHOLE time-ordered partition (last_value is the
    region's last bucket on every row, not the current row); nth_value past the partition end is
    NULL; NULL values are respected (west's 3rd bucket is the all-NULL 2023-06)."""
    base = series("month", ("region",))
    rows = check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "fv": navigated(base, "first_value"),
            "lv": navigated(base, "last_value"),
            "nv2": navigated(base, "nth_value", n=2),
            "nv3": navigated(base, "nth_value", n=3),
            "nv5": navigated(base, "nth_value", n=5),
            "lv_desc": navigated(base, "last_value", reverse=True),
        },
    )
    nv3 = keyed(rows, RT, "nv3")
    assert nv3[("west", "2024-04-01")] is None  # RESPECT NULLS: west 2023-06
    lv = keyed(rows, RT, "lv")
    assert lv[("east", "2022-12-01")] == 60  # east 2024-06, not the current row
    sql = eng.compile({"metrics": ["lv"], "group_by": REGION_MONTH})["sql"]
    assert "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING" in sql


def test_win_val_06_partition_none_with_tiebreakers(eng: dosi.Engine, db: str) -> None:
    """WIN-VAL-04/06: partition none -> one series ordered by time then region (tie-breakers);
    first = east 2022-12, last = the only 2024-06 row."""
    base = series("month", ("region",))
    everything: Callable[[Key], Any] = lambda k: ()  # noqa: E731
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "fv_none": navigated(base, "first_value", part=everything),
            "lv_none": navigated(base, "last_value", part=everything),
        },
    )


def test_win_val_value_order(eng: dosi.Engine, db: str) -> None:
    """WIN-VAL-04 (reference: value-ordered partitions include the time bucket): by value with
    the default partition -> the row's own value; partition none -> the largest / the smallest
    (NULLs last) value overall; axis-free by region."""
    base = series("month", ("region",))
    nonnull = [v for v in base.values() if v is not None]
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "fv_byval": base,
            "fv_byval_none": dict.fromkeys(base, max(nonnull)),
            "lv_byval_none": dict.fromkeys(base, None),  # desc NULLS LAST: the NULL bucket is last
        },
    )
    reg = series(None, ("region",))
    check(
        eng,
        db,
        ["sales.region"],
        ("region",),
        {
            "fv_byval": reg,
            "fv_byval_none": dict.fromkeys(reg, max(reg.values())),
            "lv_byval_none": dict.fromkeys(reg, min(reg.values())),
        },
    )


def test_win_val_07_time_order_needs_axis(eng: dosi.Engine, db: str) -> None:
    """WIN-VAL-07: a time-ordered value metric without the axis -> time_axis_not_grouped."""
    err = query_error(eng, db, {"metrics": ["fv"], "group_by": ["sales.region"]})
    assert err.code == "time_axis_not_grouped"
    assert err.missing_dimensions == ["sales.sale_date"]


def test_win_val_alone_under_time_range(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-05: a value metric alone under a time_range navigates within the range."""
    start = "2024-01-01"
    base = {k: v for k, v in series("month", ("region",)).items() if k[1][:10] >= start}
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {"fv": navigated(base, "first_value"), "lv": navigated(base, "last_value")},
        time_range={"start": start},
    )


# -- order.nulls (1.9) ---------------------------------------------------------------------------


def test_win_19_03_nulls_placement_values(eng: dosi.Engine, db: str) -> None:
    """WIN-19-03: `order.nulls` pins where the NULL value (west 2023-06) ranks."""
    base = series("month", ("region",))
    rows = check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "rk_nulls_first": ranked(base, "rank", nulls_first=True),
            "rk_nulls_last": ranked(base, "rank", nulls_first=False),
            "rk_asc_nulls_first": ranked(base, "rank", desc=False, nulls_first=True),
        },
    )
    null_key = ("west", "2023-06-01")
    assert keyed(rows, RT, "rk_nulls_first")[null_key] == 1
    assert keyed(rows, RT, "rk_nulls_last")[null_key] == len(base)
    assert keyed(rows, RT, "rk_asc_nulls_first")[null_key] == 1


def _order_clause(eng: dosi.Engine, metric: str, dialect: str) -> str:
    sql = eng.compile({"metrics": [metric], "group_by": ["sales.region"]}, dialect=dialect)["sql"]
    return sql.split(" OVER (", 1)[1].split(")", 1)[0]


@pytest.mark.parametrize(
    "metric,dialect,expected",
    [
        # DuckDB: NULLs last in both directions
        ("rk", "duckdb", "ORDER BY c.sales_amount_sum DESC"),
        ("rk_nulls_last", "duckdb", "ORDER BY c.sales_amount_sum DESC"),
        ("rk_nulls_first", "duckdb", "ORDER BY c.sales_amount_sum DESC NULLS FIRST"),
        ("rk_asc_nulls_first", "duckdb", "ORDER BY c.sales_amount_sum ASC NULLS FIRST"),
        # PostgreSQL: NULLs sort large (last ascending, first descending)
        ("rk", "postgres", "ORDER BY c.sales_amount_sum DESC"),
        ("rk_nulls_first", "postgres", "ORDER BY c.sales_amount_sum DESC"),
        ("rk_nulls_last", "postgres", "ORDER BY c.sales_amount_sum DESC NULLS LAST"),
        ("rk_asc_nulls_first", "postgres", "ORDER BY c.sales_amount_sum ASC NULLS FIRST"),
    ],
)
def test_win_19_04_nulls_clause_only_where_it_differs(
    eng: dosi.Engine, metric: str, dialect: str, expected: str
) -> None:
    """WIN-19-04 (snapshot): the NULLS clause is rendered only where the declared placement
    differs from the dialect's default."""
    assert _order_clause(eng, metric, dialect) == expected


def test_win_19_05_mysql_leading_case_key(eng: dosi.Engine) -> None:
    """WIN-19-05: MySQL has no NULLS clause and sorts NULLs small (first ascending, last
    descending): `desc` + `nulls: first` differs from that default and becomes a leading
    CASE WHEN ... IS NULL sort key; `desc` + `nulls: last` is the default and renders nothing."""
    assert _order_clause(eng, "rk_nulls_first", "mysql") == (
        "ORDER BY CASE WHEN c.sales_amount_sum IS NULL THEN 0 ELSE 1 END ASC, "
        "c.sales_amount_sum DESC"
    )
    assert _order_clause(eng, "rk_nulls_last", "mysql") == "ORDER BY c.sales_amount_sum DESC"
