"""D-SEMI properties over random balances (issue 23 item 7): at the day grain of a DATE
snapshot, a semi-additive balance equals the plain sum (a day holds one snapshot per account);
at the month grain it equals plain Python's each-account's-last-snapshot sum."""

from __future__ import annotations

import datetime as dt
import itertools
import tempfile
from pathlib import Path

import duckdb
import semikit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dosi

FIRST = dt.date(2024, 1, 25)
row_st = st.tuples(
    st.integers(0, 45), st.integers(1, 3), st.one_of(st.none(), st.integers(-50, 500))
)
_counter = itertools.count()


def _engine(rows: list[tuple[str, int, int | None]], root: Path) -> dosi.Engine:
    db = root / f"semi{next(_counter)}.duckdb"
    con = duckdb.connect(str(db))
    try:
        con.execute("CREATE TABLE sa_accounts (account_id INTEGER, region VARCHAR, kind VARCHAR)")
        con.executemany("INSERT INTO sa_accounts VALUES (?, ?, ?)", semikit.ACCOUNTS)
        con.execute(
            "CREATE TABLE sa_balances (snapshot_date DATE, account_id INTEGER, balance BIGINT)"
        )
        if rows:
            con.executemany("INSERT INTO sa_balances VALUES (CAST(? AS DATE), ?, ?)", rows)
        con.execute("CREATE TABLE sa_stock (snap_ts TIMESTAMP, sku VARCHAR, qty INTEGER)")
    finally:
        con.close()
    return dosi.Engine(
        model_text=semikit.semi_model_text(),
        connections={"db": {"type": "duckdb", "uri": str(db)}},
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(row_st, min_size=1, max_size=25))
def test_day_grain_is_the_plain_sum_and_month_grain_the_last_snapshots(raw) -> None:
    rows = [((FIRST + dt.timedelta(days=d)).isoformat(), a, b) for d, a, b in raw]
    with tempfile.TemporaryDirectory() as tmp:
        engine = _engine(rows, Path(tmp))
        day = engine.execute(
            {
                "metrics": ["balance_by_account", "balance_all_snapshots"],
                "group_by": ["metric_time:day"],
            }
        )["rows"]
        for r in day:
            assert r["balance_by_account"] == r["balance_all_snapshots"]
        month = engine.execute(
            {"metrics": ["balance_by_account"], "group_by": ["metric_time:month"]}
        )
        got = {str(r["metric_time__month"])[:10]: r["balance_by_account"] for r in month["rows"]}
        expect = {
            m + "-01": semikit.last_per([r for r in rows if r[0][:7] == m], key=lambda r: r[1])
            for m in {r[0][:7] for r in rows}
        }
        assert got == expect
        engine.close()
