"""Issue 28 item 1 (refresh rule "on a schedule", incremental by partition; session 6 item 4):
`refresh: {every, partitions}` makes a rollup due once `every` seconds passed since its build
(unless it is known fresh); a due rollup with `partitions` recomputes only its last buckets;
`dosi serve`'s watcher thread (EngineHolder) runs the schedule, so after the data changes
the rollup serves the new numbers again without a command."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from pathlib import Path
from typing import Any

import duckdb
import yaml
from enginekit import SHOP_MODEL

from dosi import Engine
from dosi.execute.rollup_schedule import due, partition_start
from dosi.execute.rollup_store import BuiltRollup
from dosi.frontends.holder import EngineHolder
from dosi.ir.rollup import RefreshRule, RollupIr

MONTHLY: dict[str, Any] = {
    "name": "orders_monthly",
    "dataset": "orders",
    "time": "order_date",
    "grain": "month",
    "dimensions": ["channel"],
    "measures": ["revenue", "order_count"],
}
Q = {"metrics": ["revenue", "order_count"], "group_by": ["metric_time:month", "orders.channel"]}


def _rule(grain: str, every: float | None = 60, partitions: int | None = None) -> RollupIr:
    return RollupIr(
        "r", "orders", (), ("m",), "order_date", grain, "sig",
        refresh=RefreshRule(every=every, partitions=partitions),
    )  # fmt: skip


def test_issue28_1_due_and_partitions_by_hand() -> None:
    now = dt.datetime(2025, 12, 15, 10, 30)
    built = {"r": BuiltRollup("r", "sig", "v", "2025-12-15 10:00:00", 1)}
    assert not due(_rule("day", every=3600), built, False, now)  # 30 min of 60
    assert due(_rule("day", every=1200), built, False, now)  # 30 min of 20
    assert not due(_rule("day", every=1200), built, True, now)  # known fresh: left alone
    assert not due(_rule("day", every=None), built, False, now)  # no schedule
    assert due(_rule("day", every=3600), {}, False, now)  # never built
    other = {"r": BuiltRollup("r", "old", "v", "2025-12-15 10:29:00", 1)}
    assert due(_rule("day", every=3600), other, False, now)  # another declaration
    assert partition_start(_rule("day", partitions=3), now) == dt.date(2025, 12, 13)
    assert partition_start(_rule("month", partitions=2), now) == dt.date(2025, 11, 1)
    assert partition_start(_rule("month", partitions=13), now) == dt.date(2024, 12, 1)
    assert partition_start(_rule("quarter", partitions=2), now) == dt.date(2025, 7, 1)
    assert partition_start(_rule("year", partitions=1), now) == dt.date(2025, 1, 1)
    assert partition_start(_rule("week", partitions=2), now) is None  # whole: weeks
    assert partition_start(_rule("month"), now) is None  # no partitions: whole


def _rows(e: Engine, db: Path) -> tuple[bool, list[tuple[Any, ...]]]:
    r = e.execute(Q, db_path=db, cache=False)
    rows = sorted(tuple(str(v) for v in row.values()) for row in r["rows"])
    return "dosi_rollups" in r["sql"], rows


def _change(db: Path) -> None:
    """Rewrite `db` (a new file moved over it, as a loader would): old orders' amounts
    changed (before March 2023) and new orders dated today."""
    work = db.with_name("next.duckdb")
    shutil.copyfile(db, work)
    con = duckdb.connect(str(work))
    con.execute("UPDATE main.orders SET amount = amount + 1 WHERE order_date < DATE '2023-03-01'")
    con.execute(
        "INSERT INTO main.orders SELECT * REPLACE (order_id + 100000000 AS order_id, "
        "current_date AS order_date) FROM main.orders ORDER BY order_id LIMIT 50"
    )
    con.close()
    work.replace(db)


def test_issue28_1_scheduled_partitions_recompute_only_the_last_buckets(
    shop_db: Path, tmp_path: Path
) -> None:
    db = tmp_path / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    decl = {"rollups": [{**MONTHLY, "refresh": {"every": 1, "partitions": 2}}]}
    engine = Engine(SHOP_MODEL, rollups=decl, rollup_store=tmp_path / "s.duckdb")
    fact = Engine(SHOP_MODEL, result_cache=False)
    try:
        engine.rollups_build(db_path=db)
        assert engine.rollups_scheduled(db_path=db) == []  # fresh: left alone
        _change(db)
        assert not _rows(engine, db)[0]  # stale: the fact table answers
        now = dt.datetime.now(dt.UTC)
        assert engine.rollups_scheduled(db_path=db, now=now - dt.timedelta(hours=1)) == []
        assert engine.rollups_scheduled(db_path=db, now=now + dt.timedelta(seconds=5)) == [
            "orders_monthly"
        ]
        since = partition_start(engine.rollups[0], now)
        assert since is not None
        served, got = _rows(engine, db)
        want = _rows(fact, db)[1]
        assert served  # the partial refresh marks it fresh (the rule asserts the rest)
        recent = [r for r in want if r[0] >= since.isoformat()]
        assert recent and [r for r in got if r[0] >= since.isoformat()] == recent
        old = [r for r in got if r[0] < "2023-03-01"]
        assert old and old != [r for r in want if r[0] < "2023-03-01"]  # kept as built
        assert [r for r in got if "2023-03-01" <= r[0] < since.isoformat()] == [
            r for r in want if "2023-03-01" <= r[0] < since.isoformat()
        ]
    finally:
        engine.close()
        fact.close()


def test_issue28_1_serve_watcher_runs_the_schedule(shop_db: Path, tmp_path: Path) -> None:
    """The served holder's watcher thread refreshes a due rollup in the background: after
    the data changes, the rollup serves the fact table's new numbers again."""
    model = tmp_path / "model.yaml"
    shutil.copyfile(SHOP_MODEL, model)
    decl = {"rollups": [{**MONTHLY, "refresh": {"every": 0.2}}]}
    model.with_suffix(".rollups.yaml").write_text(yaml.safe_dump(decl))
    db = tmp_path / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    holder = EngineHolder(model, db_path=str(db), check_interval=0.05, rollup_interval=0.05)
    fact = Engine(SHOP_MODEL, result_cache=False)
    try:
        deadline = time.monotonic() + 30
        while not holder.rollup_refreshes and time.monotonic() < deadline:
            time.sleep(0.05)  # never built: due at once
        assert holder.rollup_refreshes >= 1, holder.last_rollup_error
        _change(db)
        want = _rows(fact, db)[1]
        while time.monotonic() < deadline:
            with holder.lease() as engine:
                served, got = _rows(engine, db)
            if served and got == want:
                break
            assert got == want  # the fact table meanwhile, never the old rollup
            time.sleep(0.05)
        assert served and got == want
        assert holder.health()["rollups"]["scheduled_refreshes"] >= 2
    finally:
        holder.close()
        fact.close()
