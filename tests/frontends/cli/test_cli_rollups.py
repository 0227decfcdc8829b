"""Issue 28 item 3 on the command line: `dosi rollups build | refresh | status | drop` with the
rollup file beside the model, `dosi explain --db` naming the serving rollup, and
`dosi query --no-cache` answering as the cached query does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from enginekit import SHOP_MODEL

DECL = {
    "rollups": [
        {
            "name": "orders_monthly",
            "dataset": "orders",
            "time": "order_date",
            "grain": "month",
            "dimensions": ["channel"],
            "measures": ["revenue", "order_count"],
        }
    ]
}


def test_issue28_3_rollups_commands(run: Any, tmp_path: Path, shop_db: Path) -> None:
    model = Path(shutil.copy(SHOP_MODEL, tmp_path / "model.yaml"))
    (tmp_path / "model.rollups.yaml").write_text(yaml.safe_dump(DECL))
    base = ["-m", model, "--db", shop_db, "-f", "json"]
    status = json.loads(run("rollups", "status", *base).stdout)
    assert [(r["name"], r["state"]) for r in status["rollups"]] == [("orders_monthly", "missing")]
    built = json.loads(run("rollups", "build", *base).stdout)
    assert built["built"] == ["orders_monthly"] and built["rollups"][0]["state"] == "fresh"
    assert (tmp_path / "model.rollups.duckdb").is_file()
    assert json.loads(run("rollups", "refresh", *base).stdout)["built"] == []
    plan = run("explain", "-m", model, "--db", shop_db, "-M", "revenue", "-g", "metric_time:year")
    assert "m0 over orders: rollup orders_monthly" in plan.stdout
    q = ["query", "-m", model, "--db", shop_db, "-M", "revenue", "-g", "metric_time:year"]
    cached = json.loads(run(*q, "-f", "json").stdout)
    fresh = json.loads(run(*q, "--no-cache", "-f", "json").stdout)
    assert "dosi_rollups" in cached["sql"] and cached["rows"] == fresh["rows"]
    bad = run("rollups", "refresh", "--since", "2024-03-15", *base)
    assert bad.exit_code == 2 and "month bucket" in bad.stdout + bad.stderr
    dropped = json.loads(run("rollups", "drop", "orders_monthly", *base).stdout)
    assert dropped["rollups"][0]["state"] == "missing"
    plan = run("explain", "-m", model, "--db", shop_db, "-M", "revenue", "-g", "metric_time:year")
    assert "m0 over orders: fact table" in plan.stdout
