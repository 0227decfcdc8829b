"""Issue 28 item 4: the result cache. Hits answer the warehouse's numbers (hand SQL on
DuckDB), a rewritten DuckDB or Parquet file invalidates, a TTL expires, the byte and entry
bounds evict, `cache: false` bypasses, a refresh key invalidates, threads share one cache
safely, and a server shares one cache across its engines and clears it on reload."""

from __future__ import annotations

import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from enginekit import SHOP_MODEL, Ref, dataset, field, metric, model_doc, result_rows, to_yaml

from dosi import Engine
from dosi.errors import ArgumentError, ExecuteError, QueryError
from dosi.execute.connections import Profile
from dosi.execute.data_version import cache_policy, files_version, settled, source_files
from dosi.execute.result_cache import ResultCache
from dosi.frontends.contract import EngineHolder

MONTHLY = {"metrics": ["revenue"], "group_by": ["metric_time:month"]}
REF_MONTHLY = (
    "SELECT date_trunc('month', order_date)::DATE AS m, SUM(amount) FROM main.orders "
    "GROUP BY 1 ORDER BY 1"
)


def _settle(path: Path) -> None:
    """Date the file's mtime 10 s back: an answer read from a file written within the
    clock's granularity is never stored (test_issue28_4_a_file_written_just_now_...)."""
    past = time.time_ns() - 10_000_000_000
    os.utime(path, ns=(past, past))


def _copy(shop_db: Path, tmp_path: Path) -> Path:
    db = tmp_path / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    _settle(db)
    return db


def _rewrite(db: Path, statement: str) -> None:
    """Change the data the way a loader does: write a new file, swap it in (os.replace)."""
    work = db.with_suffix(".next.duckdb")
    shutil.copyfile(db, work)
    con = duckdb.connect(str(work))
    con.execute(statement)
    con.close()
    _settle(work)
    os.replace(work, db)


def _monthly(result: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (str(m), float(v)) for m, v in result_rows(result, ["metric_time__month", "revenue"])
    )


def _ref(db: Path) -> list[tuple[Any, ...]]:
    ref = Ref(db)
    try:
        return sorted((str(m), float(v)) for m, v in ref.rows(REF_MONTHLY))
    finally:
        ref.con.close()


def test_issue28_4_hit_answers_the_same_rows(shop_db: Path, tmp_path: Path) -> None:
    db = _copy(shop_db, tmp_path)
    engine = Engine(SHOP_MODEL)
    try:
        first = engine.execute(MONTHLY, db_path=db)
        second = engine.execute(MONTHLY, db_path=db)
        assert _monthly(first) == _monthly(second) == _ref(db)
        assert second.arrow.equals(first.arrow)
        stats = engine.cache_stats()
        assert stats is not None and (stats["hits"], stats["misses"]) == (1, 1)
        # the rows are fresh lists each time: a caller editing them cannot poison the cache
        second["rows"].clear()
        assert _monthly(engine.execute(MONTHLY, db_path=db)) == _ref(db)
        # Arrow results, the semantic SQL and dimension-only queries share the cache
        engine.execute_arrow(MONTHLY, db_path=db)
        sql = "SELECT metric_time__month, MEASURE(revenue) FROM shop GROUP BY 1"
        a = engine.sql(sql, db_path=db)
        b = engine.sql(sql, db_path=db)
        assert a["rows"] == b["rows"]
        dims = {"metrics": [], "group_by": ["orders.channel"]}
        assert engine.execute(dims, db_path=db)["rows"] == engine.execute(dims, db_path=db)["rows"]
        # the SQL statement compiles to MONTHLY's SQL: both of its runs are hits
        assert engine.cache_stats()["hits"] == 6  # type: ignore[index]
    finally:
        engine.close()


def test_issue28_4_rewritten_duckdb_file_invalidates(shop_db: Path, tmp_path: Path) -> None:
    db = _copy(shop_db, tmp_path)
    engine = Engine(SHOP_MODEL)
    try:
        before = _monthly(engine.execute(MONTHLY, db_path=db))
        _rewrite(db, "UPDATE main.orders SET amount = amount * 2")
        after = _monthly(engine.execute(MONTHLY, db_path=db))
        assert after == _ref(db) != before
        assert [float(r[1]) for r in after] == pytest.approx([2 * float(r[1]) for r in before])
        stats = engine.cache_stats()
        assert stats is not None and stats["invalidations"] == 1 and stats["hits"] == 0
    finally:
        engine.close()


def test_issue28_4_rewritten_parquet_invalidates(shop_db: Path, tmp_path: Path) -> None:
    pq = tmp_path / "sales.parquet"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT 1 AS id, 10.0 AS amount) TO '{pq.as_posix()}' (FORMAT parquet)")
    _settle(pq)
    doc = model_doc(
        [
            dataset(
                "sales",
                ["id", field("amount", datatype="Decimal")],
                source=f"'{pq.as_posix()}'",
                primary_key=["id"],
            )
        ],
        metrics=[metric("total", "SUM(sales.amount)")],
    )
    engine = Engine(model_text=to_yaml(doc), trust_sql=True, allow_extensions=True)
    try:
        q = {"metrics": ["total"]}
        assert float(engine.execute(q)["rows"][0]["total"]) == 10.0
        assert float(engine.execute(q)["rows"][0]["total"]) == 10.0
        nxt = tmp_path / "next.parquet"
        con.execute(
            "COPY (SELECT * FROM (VALUES (1, 10.0), (2, 5.0)) t(id, amount)) "
            f"TO '{nxt.as_posix()}' (FORMAT parquet)"
        )
        _settle(nxt)
        os.replace(nxt, pq)
        assert float(engine.execute(q)["rows"][0]["total"]) == 15.0
        stats = engine.cache_stats()
        assert stats is not None and (stats["hits"], stats["invalidations"]) == (1, 1)
    finally:
        engine.close()
        con.close()


def _client_engine(**kw: Any) -> tuple[Engine, duckdb.DuckDBPyConnection]:
    """An engine on a DuckDB client object the application owns: dosi cannot see its data
    change, so it caches only with a declared TTL or refresh key."""
    con = duckdb.connect()
    con.execute("CREATE TABLE sales AS SELECT 1 AS id, 10 AS amount")
    doc = model_doc(
        [dataset("sales", ["id", field("amount", datatype="Integer")], primary_key=["id"])],
        metrics=[metric("total", "SUM(sales.amount)")],
    )
    profile = {"type": "duckdb", "client": con, **kw.pop("options", {})}
    return Engine(model_text=to_yaml(doc), connections={"app": profile}, **kw), con


def _total(engine: Engine, **kw: Any) -> int:
    return int(engine.execute({"metrics": ["total"], **kw})["rows"][0]["total"])


def test_issue28_4_client_object_is_not_cached_without_a_version() -> None:
    engine, con = _client_engine()
    try:
        assert _total(engine) == 10
        con.execute("INSERT INTO sales VALUES (2, 5)")
        assert _total(engine) == 15
        assert engine.cache_stats()["hits"] == 0  # type: ignore[index]
    finally:
        engine.close()


def test_issue28_4_ttl_expiry_and_cache_false_bypass() -> None:
    engine, con = _client_engine(options={"cache_ttl": 0.3})
    try:
        assert _total(engine) == 10
        con.execute("INSERT INTO sales VALUES (2, 5)")
        assert _total(engine) == 10  # within the TTL: the stored answer, as declared
        assert _total(engine, cache=False) == 15  # the bypass reads the warehouse
        assert int(engine.execute({"metrics": ["total"]}, cache=False)["rows"][0]["total"]) == 15
        stats = engine.cache_stats()
        assert stats is not None and (stats["hits"], stats["bypasses"]) == (1, 2)
        time.sleep(0.35)
        assert _total(engine) == 15  # expired: read again
        assert engine.cache_stats()["invalidations"] == 1  # type: ignore[index]
    finally:
        engine.close()


def test_issue28_4_refresh_key_invalidates() -> None:
    engine, con = _client_engine(options={"cache_refresh_key": "SELECT count(*) FROM sales"})
    try:
        assert _total(engine) == 10
        assert _total(engine) == 10
        con.execute("INSERT INTO sales VALUES (2, 5)")
        assert _total(engine) == 15
        stats = engine.cache_stats()
        assert stats is not None and (stats["hits"], stats["invalidations"]) == (1, 1)
    finally:
        engine.close()


def test_issue28_4_bad_options_are_structured_errors() -> None:
    engine, _ = _client_engine(options={"cache_refresh_key": "DELETE FROM sales"})
    try:
        with pytest.raises(ExecuteError) as err:
            _total(engine)
        assert err.value.code == "config" and "SELECT" in err.value.message
    finally:
        engine.close()
    engine, _ = _client_engine()
    try:
        with pytest.raises(QueryError) as qerr:
            engine.execute({"metrics": ["total"], "cache": "no"})
        assert qerr.value.code == "invalid_query"
        # compile and explain take the key and ignore it: it changes where, not what
        assert (
            engine.compile({"metrics": ["total"], "cache": False})["sql"]
            == engine.compile({"metrics": ["total"]})["sql"]
        )
    finally:
        engine.close()
    with pytest.raises(ArgumentError):
        ResultCache(max_entries=0)
    with pytest.raises(ArgumentError):
        Engine(SHOP_MODEL, cache_ttl=-1)


def test_issue28_4_bounds_evict_least_recently_used(shop_db: Path, tmp_path: Path) -> None:
    db = _copy(shop_db, tmp_path)
    queries = [{**MONTHLY, "time_range": {"start": f"{y}-01-01"}} for y in (2023, 2024, 2025)]
    plain = Engine(SHOP_MODEL, result_cache=False)
    sizes = [plain.execute_arrow(q, db_path=db).nbytes for q in queries]
    plain.close()
    cache = ResultCache(max_entries=100, max_bytes=sum(sizes) - 1)  # all three do not fit
    engine = Engine(SHOP_MODEL, result_cache=cache)
    try:
        for q in queries:
            engine.execute(q, db_path=db)
        stats = cache.stats()
        assert stats["evictions"] >= 1 and stats["bytes"] <= cache.max_bytes
        engine.execute(queries[-1], db_path=db)  # the newest stays
        assert cache.stats()["hits"] == 1
        engine.execute(queries[0], db_path=db)  # the oldest went first
        assert cache.stats()["misses"] == 4
    finally:
        engine.close()
    by_count = ResultCache(max_entries=2)
    for i in range(5):
        by_count.put(i, 0, pa.table({"x": [i]}))
    assert len(by_count) == 2 and by_count.get(4, 0) is not None and by_count.get(0, 0) is None
    assert by_count.stats()["evictions"] == 3
    tiny = ResultCache(max_bytes=8)
    assert not tiny.put("big", 0, pa.table({"x": list(range(100))})) and len(tiny) == 0


def test_issue28_4_threads_share_one_cache(shop_db: Path, tmp_path: Path) -> None:
    db = _copy(shop_db, tmp_path)
    queries = [
        {"metrics": ["revenue", "order_count"], "group_by": [f"metric_time:{g}"]}
        for g in ("day", "week", "month", "quarter", "year")
    ]
    plain = Engine(SHOP_MODEL, result_cache=False)
    expected = [plain.execute(q, db_path=db)["rows"] for q in queries]
    plain.close()
    cache = ResultCache()
    engines = [Engine(SHOP_MODEL, result_cache=cache) for _ in range(3)]
    barrier = threading.Barrier(6)

    def work(i: int) -> bool:
        barrier.wait()
        engine = engines[i % 3]
        return all(
            engine.execute(queries[(i + k) % 5], db_path=db)["rows"] == expected[(i + k) % 5]
            for k in range(20)
        )

    try:
        with ThreadPoolExecutor(6) as pool:
            assert all(pool.map(work, range(6)))
        stats = cache.stats()
        assert stats["hits"] + stats["misses"] == 120 and stats["entries"] == 5
        assert stats["hits"] >= 100
    finally:
        for e in engines:
            e.close()


def test_issue28_4_server_cache_is_shared_and_cleared_on_reload(
    shop_db: Path, tmp_path: Path
) -> None:
    model = tmp_path / "model.yaml"
    model.write_text(SHOP_MODEL.read_text())
    holder = EngineHolder(model, db_path=str(shop_db), check_interval=0)
    with holder.lease() as a, holder.lease() as b:
        assert a is not b and a.results is b.results is holder.results
        a.execute(MONTHLY, db_path=shop_db)
        b.execute(MONTHLY, db_path=shop_db)
    assert holder.results.stats()["hits"] == 1
    time.sleep(0.01)
    model.write_text(SHOP_MODEL.read_text() + "\n# touched\n")
    time.sleep(0.3)  # the watcher reads a model file once it has settled (frontends.holder)
    holder.refresh()  # what the watcher thread does (check_interval=0 starts none)
    with holder.lease() as c:
        assert holder.reloads == 1 and len(holder.results) == 0
        c.execute(MONTHLY, db_path=shop_db)
    stats = holder.results.stats()
    assert (stats["hits"], stats["misses"], stats["clears"]) == (1, 2, 1)


def test_issue28_4_remote_sources_are_not_cached_without_a_version() -> None:
    """A model reading a file dosi cannot stat (`s3://`, `https://`) has no data version:
    answers are not cached unless a TTL is declared."""
    doc = model_doc(
        [dataset("sales", ["id"], source="'s3://bucket/sales.parquet'", primary_key=["id"])],
        metrics=[metric("n", "COUNT(*)")],
    )
    engine = Engine(model_text=to_yaml(doc), trust_sql=True)
    try:
        files = source_files(ds.source for ds in engine.model.datasets.values())
        assert files == ("s3://bucket/sales.parquet",)
        local = Profile(":memory:", "duckdb", ":memory:")
        assert not cache_policy(local, None, remote_sources=True).cacheable
        assert cache_policy(local, 60.0, remote_sources=True).cacheable
        assert cache_policy(local, None).cacheable
    finally:
        engine.close()


def test_issue28_4_a_file_written_just_now_is_not_cached(tmp_path: Path) -> None:
    """An answer read from a file modified within the clock's granularity is not stored: a
    second write in the same tick would leave size, mtime and inode unchanged."""
    path = tmp_path / "f.parquet"
    path.write_bytes(b"x")
    stamps = files_version([str(path)])
    mtime = path.stat().st_mtime_ns
    assert not settled(stamps, mtime + 1_000_000)
    assert settled(stamps, mtime + 1_000_000_000)
    assert settled(files_version([str(tmp_path / "missing.parquet")]))
