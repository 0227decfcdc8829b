"""Run by test_spark_connect.py in its own process: starts a local Spark Connect server
(`SparkSession.builder.remote("local[2]")`), loads the shop, and runs a few matrix queries
through dosi with the profile `{"type": "spark", "uri": "sc://localhost:15002"}`, comparing
with DuckDB. Prints `connect ok N of M`."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import conformkit as k
from pyspark.sql import SparkSession

import dosi

NAMES = ("plain-channel", "grain-day", "merge-month-fill", "win-shop-pop", "stream-hop")


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="dosi-connect-"))
    db, parquet = k.build_shop(folder)
    server = (
        SparkSession.builder.remote("local[2]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(folder / "warehouse"))  # not ./spark-warehouse
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    server.sql("CREATE DATABASE IF NOT EXISTS main")
    for t in k.TABLES:
        d = folder / "spark" / t
        d.mkdir(parents=True)
        shutil.copy(parquet / f"{t}.parquet", d / f"{t}.parquet")
        server.sql(f"CREATE TABLE main.{t} USING parquet LOCATION '{d.as_posix()}'")
    model = k.conformance_model_text()
    ref = dosi.Engine(model_text=model, connections={"duck": str(db)})
    eng = dosi.Engine(
        model_text=model,
        connections={"cluster": {"type": "spark", "uri": "sc://localhost:15002"}},
    )
    ok = 0
    for name in NAMES:
        want = ref.execute(k.QUERIES[name])
        got = eng.execute(k.QUERIES[name])
        k.compare(got["rows"], want["rows"], want["columns"], name)
        ok += 1
    eng.close()
    server.stop()
    print(f"connect ok {ok} of {len(NAMES)}")


if __name__ == "__main__":
    main()
