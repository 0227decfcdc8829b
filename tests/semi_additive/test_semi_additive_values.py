"""D-SEMI values (datus-extensions roadmap `semi_additive`, CHECKLIST ENV-ROAD-01): a balance
adds up across accounts and regions but takes one snapshot per period along its snapshot date.

The data (tests/kit/semikit.py) breaks naive versions: an account that skips the month's last
snapshot date, two rows of one account on one date (a tie: both count), an account that opens
late, a NULL balance on a last snapshot, several snapshots a day on a TIMESTAMP. Expected values
come from hand-written SQL over the raw tables, or plain Python over semikit.BALANCES."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import duckdb
import semikit

import dosi

MONTH = ["metric_time:month"]


def _rows(engine: dosi.Engine, query: dict[str, Any]) -> list[tuple[Any, ...]]:
    res = engine.execute(query)
    return sorted((tuple(_plain(v) for v in r.values()) for r in res["rows"]), key=repr)


def _plain(v: Any) -> Any:
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()[:10]
    if isinstance(v, str) and len(v) >= 10 and v[4] == "-" and v[7] == "-":
        return v[:10]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return v


def _sql(db: Path, text: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return sorted((tuple(_plain(v) for v in r) for r in con.execute(text).fetchall()), key=repr)
    finally:
        con.close()


# each account's last snapshot in each month, summed over accounts (window grouping)
LAST_PER_ACCOUNT = """
WITH b AS (SELECT CAST(date_trunc('month', snapshot_date) AS DATE) AS m, * FROM sa_balances),
pick AS (SELECT m, account_id, MAX(snapshot_date) AS d FROM b GROUP BY 1, 2)
SELECT b.m, SUM(b.balance) FROM b JOIN pick ON b.m = pick.m AND b.account_id = pick.account_id
  AND b.snapshot_date = pick.d GROUP BY 1
"""

# the month's last snapshot date (any account), every row on it
LAST_OF_MONTH = """
WITH b AS (SELECT CAST(date_trunc('month', snapshot_date) AS DATE) AS m, * FROM sa_balances),
pick AS (SELECT m, MAX(snapshot_date) AS d FROM b GROUP BY 1)
SELECT b.m, SUM(b.balance) FROM b JOIN pick ON b.m = pick.m AND b.snapshot_date = pick.d
GROUP BY 1
"""

FIRST_OF_MONTH = LAST_OF_MONTH.replace("MAX(snapshot_date)", "MIN(snapshot_date)")


def test_last_snapshot_per_account_by_month(semi_engine, semi_db) -> None:
    """Account 3 skips the last date of February and March: its own last snapshot counts."""
    got = _rows(semi_engine, {"metrics": ["balance_by_account"], "group_by": MONTH})
    assert got == _sql(semi_db, LAST_PER_ACCOUNT)
    assert got == [
        ("2024-01-01", 610.0),
        ("2024-02-01", 650.0),
        ("2024-03-01", 690.0),
        ("2024-04-01", 560.0),
    ]


def test_last_snapshot_date_of_the_period_without_groupings(semi_engine, semi_db) -> None:
    """No window grouping: the period's one last snapshot date, every row on it (account 2's
    two rows on 2024-01-31 both count); the plain sum adds every snapshot."""
    got = _rows(semi_engine, {"metrics": ["balance", "balance_all_snapshots"], "group_by": MONTH})
    last = dict(_sql(semi_db, LAST_OF_MONTH))
    plain = dict(
        _sql(
            semi_db,
            "SELECT CAST(date_trunc('month', snapshot_date) AS DATE), SUM(balance) "
            "FROM sa_balances GROUP BY 1",
        )
    )
    assert got == sorted((m, last[m], plain[m]) for m in last)
    assert got[0] == ("2024-01-01", 610.0, 910.0)


def test_first_snapshot(semi_engine, semi_db) -> None:
    got = _rows(semi_engine, {"metrics": ["opening_balance"], "group_by": MONTH})
    assert got == _sql(semi_db, FIRST_OF_MONTH)
    assert got[0] == ("2024-01-01", 300.0)


def test_min_and_max_pick_the_snapshot_by_its_value(semi_engine) -> None:
    """`min` / `max`: the snapshot date whose total is lowest / highest in the period; per
    account with a window grouping (account 2's January tie 200 vs 150 + 50: either is 200)."""
    got = _rows(
        semi_engine,
        {"metrics": ["lowest_balance", "peak_balance", "lowest_by_account"], "group_by": MONTH},
    )
    expect = []
    for m in ("2024-01", "2024-02", "2024-03", "2024-04"):
        rows = [r for r in semikit.BALANCES if r[0].startswith(m)]
        totals: dict[str, float] = {}
        for d, _, b in rows:
            if b is not None:
                totals[d] = totals.get(d, 0) + b
        per_account: dict[int, dict[str, float]] = {}
        for d, a, b in rows:
            if b is not None:
                per_account.setdefault(a, {})
                per_account[a][d] = per_account[a].get(d, 0) + b
        lowest_by_account = sum(min(v.values()) for v in per_account.values())
        expect.append(
            (f"{m}-01", min(totals.values()), max(totals.values()), float(lowest_by_account))
        )
    assert got == expect


def test_whole_range_without_a_time_grain(semi_engine) -> None:
    """Not grouped by the snapshot date: the whole range is one period (each account's latest
    snapshot: account 2's is a NULL balance, account 3's is in March)."""
    got = _rows(semi_engine, {"metrics": ["balance_by_account", "balance"]})
    by_account = semikit.last_per(semikit.BALANCES, key=lambda r: r[1])
    last = semikit.last_per(semikit.BALANCES, key=lambda r: 0)
    assert got == [(by_account, last)] == [(880.0, 160.0)]


def test_time_range_takes_the_last_snapshot_inside_it(semi_engine) -> None:
    q = {
        "metrics": ["balance_by_account"],
        "time_range": {"start": "2024-01-01", "end": "2024-02-29"},
    }
    inside = [r for r in semikit.BALANCES if "2024-01-01" <= r[0] < "2024-02-29"]  # end exclusive
    assert _rows(semi_engine, q) == [(semikit.last_per(inside, key=lambda r: r[1]),)]
    assert _rows(semi_engine, q) == [(630.0,)]  # account 1 at 02-15, not its 02-29 snapshot


def test_additive_across_a_joined_dimension(semi_engine, semi_db) -> None:
    """Grouped by region (through the accounts relationship): each region adds its accounts'
    snapshots, and the regions add up to the month's total."""
    got = _rows(
        semi_engine,
        {"metrics": ["balance_by_account"], "group_by": [*MONTH, "accounts.region"]},
    )
    expect = _sql(
        semi_db,
        """
        WITH b AS (SELECT CAST(date_trunc('month', snapshot_date) AS DATE) AS m, * FROM sa_balances),
        pick AS (SELECT m, account_id, MAX(snapshot_date) AS d FROM b GROUP BY 1, 2)
        SELECT b.m, a.region, SUM(b.balance) FROM b
        JOIN pick ON b.m = pick.m AND b.account_id = pick.account_id AND b.snapshot_date = pick.d
        JOIN sa_accounts a ON a.account_id = b.account_id GROUP BY 1, 2
        """,
    )
    assert got == expect
    totals: dict[str, float] = {}
    for m, _, v in got:
        totals[m] = totals.get(m, 0) + v
    assert sorted(totals.items()) == _sql(semi_db, LAST_PER_ACCOUNT)


def test_the_where_filter_applies_before_the_choice(semi_engine) -> None:
    """`where_sql` keeps rows first: west's last snapshot in February is 02-15 (account 3),
    although the month's last date (02-29) has no west row."""
    got = _rows(
        semi_engine,
        {"metrics": ["balance"], "group_by": MONTH, "where_sql": "accounts.region = 'west'"},
    )
    west = [r for r in semikit.BALANCES if r[1] in (3, 4)]
    expect = sorted(
        (m + "-01", semikit.last_per([r for r in west if r[0].startswith(m)], key=lambda r: 0))
        for m in ("2024-01", "2024-02", "2024-03", "2024-04")
    )
    assert got == expect
    assert got[1] == ("2024-02-01", 310.0)


def test_week_grain(semi_engine) -> None:
    got = _rows(semi_engine, {"metrics": ["balance"], "group_by": ["metric_time:week"]})
    weeks: dict[str, list[tuple[str, int, float | None]]] = {}
    for r in semikit.BALANCES:
        d = semikit.as_date(r[0])
        weeks.setdefault((d - dt.timedelta(days=d.weekday())).isoformat(), []).append(r)
    assert got == sorted((w, semikit.last_per(rs, key=lambda r: 0)) for w, rs in weeks.items())


def test_grouped_by_the_window_grouping_itself(semi_engine) -> None:
    got = _rows(
        semi_engine, {"metrics": ["balance_by_account"], "group_by": ["balances.account_id"]}
    )
    assert got == [(1.0, 160.0), (2.0, None), (3.0, 320.0), (4.0, 400.0)]


def test_timestamp_snapshots_at_the_day_grain(semi_engine, semi_db) -> None:
    """Several snapshots a day: the day grain still keeps each sku's last one."""
    got = _rows(semi_engine, {"metrics": ["stock", "stock_all"], "group_by": ["metric_time:day"]})
    expect = _sql(
        semi_db,
        """
        WITH s AS (SELECT CAST(snap_ts AS DATE) AS d, * FROM sa_stock),
        pick AS (SELECT d, sku, MAX(snap_ts) AS t FROM s GROUP BY 1, 2)
        SELECT s.d, SUM(s.qty) FILTER (WHERE s.snap_ts = pick.t), SUM(s.qty) FROM s
        JOIN pick ON s.d = pick.d AND s.sku = pick.sku GROUP BY 1
        """,
    )
    assert got == expect == [("2024-05-01", 12.0, 22.0), ("2024-05-02", 11.0, 15.0)]


def test_count_distinct_fill_window_and_derive_over_it(semi_engine) -> None:
    """D-FILL, a month-over-month D-WINDOW delta, a D-DERIVE filter and compose over the
    balance all read the snapshot rows."""
    got = _rows(
        semi_engine,
        {
            "metrics": [
                "accounts_held",
                "balance_filled",
                "balance_mom",
                "balance_without_2",
                "avg_balance_per_account",
            ],
            "group_by": MONTH,
        },
    )
    months = ("2024-01", "2024-02", "2024-03", "2024-04")
    balance = [
        semikit.last_per([r for r in semikit.BALANCES if r[0].startswith(m)], key=lambda r: r[1])
        for m in months
    ]
    without_2 = [
        semikit.last_per(
            [r for r in semikit.BALANCES if r[0].startswith(m) and r[1] != 2], key=lambda r: r[1]
        )
        for m in months
    ]
    held = [len({r[1] for r in semikit.BALANCES if r[0].startswith(m)}) for m in months]
    expect = []
    for i, m in enumerate(months):
        assert balance[i] is not None
        mom = None if i == 0 else balance[i] - balance[i - 1]  # type: ignore[operator]
        expect.append(
            (f"{m}-01", float(held[i]), balance[i], mom, without_2[i], balance[i] / held[i])
        )

    def rounded(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows]

    assert rounded(got) == rounded(expect)


def test_explain_shows_the_snapshot_join(semi_engine) -> None:
    text = semi_engine.explain(
        {"metrics": ["lowest_by_account"], "group_by": [*MONTH, "accounts.region"]}
    )
    assert "SemiAdditiveJoin keep the lowest-valued snapshot of balances.snapshot_date per " in text
    assert "window groupings balances.account_id" in text


def test_catalog_metadata(semi_engine) -> None:
    m = semi_engine.metric("balance_by_account")
    assert m["semi_additive"] == {
        "dimension": "balances.snapshot_date",
        "snapshot": "last",
        "window_groupings": ["balances.account_id"],
    }
    assert semi_engine.metric("balance_all_snapshots")["semi_additive"] is None


def test_attribution_by_region_adds_up(semi_engine) -> None:
    """Attribution classifies a SUM balance term-wise and exact: February -> March by region
    is each region's own last snapshots per account (segments add up to the change)."""
    assert semi_engine.metric("balance_by_account")["attribution_strategy"] == "term_wise"
    r = semi_engine.attribute(
        {
            "metric": "balance_by_account",
            "baseline": {"start": "2024-02-01", "end": "2024-03-01"},
            "current": {"start": "2024-03-01", "end": "2024-04-01"},
            "dimensions": ["accounts.region"],
        }
    )
    feb = [x for x in semikit.BALANCES if x[0].startswith("2024-02")]
    mar = [x for x in semikit.BALANCES if x[0].startswith("2024-03")]
    assert r["total_change"]["baseline_value"] == semikit.last_per(feb, key=lambda x: x[1])
    assert r["total_change"]["current_value"] == semikit.last_per(mar, key=lambda x: x[1])
    east = {1, 2}
    values = {
        v["value"]: (v["baseline_value"], v["current_value"]) for v in r["top_dimension_values"]
    }
    assert values == {
        "east": (
            semikit.last_per([x for x in feb if x[1] in east], key=lambda x: x[1]),
            semikit.last_per([x for x in mar if x[1] in east], key=lambda x: x[1]),
        ),
        "west": (
            semikit.last_per([x for x in feb if x[1] not in east], key=lambda x: x[1]),
            semikit.last_per([x for x in mar if x[1] not in east], key=lambda x: x[1]),
        ),
    }


def test_grouped_by_the_dimension_itself_and_a_quarter(semi_engine) -> None:
    """The period is the query's bucket of the dimension whichever spelling names it: the
    field at a grain, the raw field (each date), or metric_time at the quarter."""
    by_field = _rows(
        semi_engine,
        {"metrics": ["balance_by_account"], "group_by": ["balances.snapshot_date:month"]},
    )
    by_axis = _rows(semi_engine, {"metrics": ["balance_by_account"], "group_by": MONTH})
    assert by_field == by_axis
    raw = _rows(semi_engine, {"metrics": ["balance"], "group_by": ["balances.snapshot_date"]})
    dates = sorted({r[0] for r in semikit.BALANCES})
    assert raw == [
        (d, semikit.last_per([r for r in semikit.BALANCES if r[0] == d], key=lambda r: 0))
        for d in dates
    ]
    quarter = _rows(semi_engine, {"metrics": ["balance"], "group_by": ["metric_time:quarter"]})
    q1 = [r for r in semikit.BALANCES if r[0] < "2024-04-01"]
    q2 = [r for r in semikit.BALANCES if r[0] >= "2024-04-01"]
    assert quarter == [
        ("2024-01-01", semikit.last_per(q1, key=lambda r: 0)),
        ("2024-04-01", semikit.last_per(q2, key=lambda r: 0)),
    ]
