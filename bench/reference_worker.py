"""Child process for the benchmarks that compare dosi with the reference engine (issue 27).

The reference engine needs another Python, so the benchmark starts this file under that
interpreter and talks JSON lines over stdin/stdout. It uses only the reference engine's public
`Engine` API (a black box: its SQL is asked for at run time and never stored) and builds its
own DuckDB database from the Parquet files with its own DuckDB (a DuckDB file is never shared
between the two engines' versions). It never imports dosi.

    {"op": "build", "parquet": DIR, "db": FILE}        -> {"ok": true}
    {"op": "load", "model": FILE}                      -> {"ok": true}
    {"op": "execute", "query": Q, "runs": N}           -> {"times": [...], "rows": [...]}
    {"op": "compile", "query": Q}                      -> {"sql": "..."}
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any


def _build(parquet: str, db: str) -> None:
    import duckdb  # the reference interpreter's own DuckDB

    Path(db).unlink(missing_ok=True)
    con = duckdb.connect(db)
    for f in sorted(Path(parquet).glob("*.parquet")):
        con.execute(f"CREATE TABLE main.{f.stem} AS SELECT * FROM read_parquet(?)", [str(f)])
    con.close()


def main() -> None:
    from dosi_engine import Engine

    engine: Any = None
    db: str | None = None
    for line in sys.stdin:
        msg = json.loads(line)
        op = msg["op"]
        out: dict[str, Any]
        try:
            if op == "build":
                _build(msg["parquet"], msg["db"])
                db = msg["db"]
                out = {"ok": True}
            elif op == "load":
                engine = Engine(model_path=msg["model"])
                out = {"ok": True}
            elif op == "execute":
                times, cpu = [], []
                res: dict[str, Any] = {}
                for _ in range(int(msg["runs"])):
                    t0, c0 = time.perf_counter(), time.process_time()
                    res = engine.execute(msg["query"], db_path=db)
                    times.append(time.perf_counter() - t0)
                    cpu.append(time.process_time() - c0)
                out = {
                    "times": times,
                    "cpu": cpu,
                    "rows": res.get("rows", []),
                    "columns": res["columns"],
                }
            elif op == "compile":
                out = {"sql": engine.compile(msg["query"])["sql"]}
            else:
                out = {"error": f"unknown op {op}"}
        except Exception as exc:  # reported to the parent, which prints it
            out = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(out, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
