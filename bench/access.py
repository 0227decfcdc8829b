"""Access policies' cost (issue 30): building a user's scope, compiling as a user, and
running a row-filtered query beside the same query with the filter written in `where_sql`
by the owner (the two must answer the same rows). Prints figures; not a test.

    .venv/bin/python bench/access.py                  # the shop example at scale 1
    .venv/bin/python bench/access.py --scale 250 --runs 5
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import dosi  # noqa: E402
from dosi.access.policy import parse_access  # noqa: E402

MODEL = ROOT / "examples" / "shop" / "model.yaml"
POLICIES = {
    "policies": [
        {"name": "web_only", "groups": ["web"], "rows": ["orders.channel = {user.channel}"]},
        {
            "name": "by_customer_region",
            "groups": ["region"],
            "rows": [{"dataset": "orders", "filter": "customers.region_id = {user.region_id}"}],
        },
    ]
}
QUERY = {"metrics": ["revenue", "order_count"], "group_by": ["metric_time:month"]}


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "shop_generate", ROOT / "examples/shop/generate.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def median_ms(fn: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--db", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    db = args.db or Path(f"/tmp/dosi-bench/shop-{args.scale:g}.duckdb")
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        _generator().build(db, scale=args.scale)
    config = parse_access(POLICIES)
    assert config.policies is not None
    owner = dosi.Engine(MODEL, access=config.policies)
    web = dosi.UserContext("w", ("web",), {"channel": "web"})

    def scope() -> None:
        owner._scopes.clear()
        owner.as_user(web)

    print(f"scope build (new user): {median_ms(scope, 20):.2f} ms")
    user = owner.as_user(web)
    for name, eng in (("owner", owner), ("user", user)):

        def fresh(e: dosi.Engine = eng) -> None:
            e._cache.clear()
            e.compile(QUERY)

        print(f"compile, {name}: {median_ms(fresh, 20):.2f} ms")
    hand = dict(QUERY, where_sql="orders.channel = 'web'")
    a = owner.execute(hand, db_path=db)["rows"]
    b = user.execute(QUERY, db_path=db)["rows"]
    print("rows equal" if a == b else "ROWS DIFFER")
    t_hand = median_ms(lambda: owner.execute_arrow(hand, db_path=db), args.runs)
    t_user = median_ms(lambda: user.execute_arrow(QUERY, db_path=db), args.runs)
    print(f"run: where_sql {t_hand:.1f} ms, row filter {t_user:.1f} ms ({t_user / t_hand:.2f}x)")
    region = owner.as_user(dosi.UserContext("r", ("region",), {"region_id": 1}))
    t_path = median_ms(lambda: region.execute_arrow(QUERY, db_path=db), args.runs)
    print(f"run: filter through customers (EXISTS): {t_path:.1f} ms")


if __name__ == "__main__":
    main()
