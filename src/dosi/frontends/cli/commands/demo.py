"""`dosi demo`: build the shop example database (once) and run a few showcase queries."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from dosi.frontends.cli.output import CliError

SHOWCASE: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (
        "Revenue by region",
        "orders -> customers -> regions over LEFT joins; orphan orders and customers without "
        "a region land in the NULL group",
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["regions.region_name"],
            "order_by": [{"key": "revenue", "desc": True}],
        },
    ),
    (
        "Revenue month over month",
        "D-WINDOW pop: percent change against the previous calendar month (2025-08 is NULL: "
        "2025-07 had no orders)",
        {
            "metrics": ["revenue", "revenue_mom"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
        },
    ),
    (
        "3-month rolling average",
        "D-WINDOW rolling: the current and two previous buckets",
        {
            "metrics": ["revenue", "revenue_rolling_3m"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
        },
    ),
    (
        "Year to date",
        "D-WINDOW cumulative with a yearly reset; 2024-06 accumulates from 2024-01 although "
        "the range starts in June",
        {
            "metrics": ["revenue", "revenue_ytd"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-06-01", "end": "2025-03-01"},
        },
    ),
    (
        "Rank of channels",
        "D-WINDOW rank: dense rank by revenue, no time axis needed",
        {
            "metrics": ["revenue", "revenue_rank"],
            "group_by": ["orders.channel"],
            "order_by": [{"key": "revenue_rank", "desc": False}],
        },
    ),
    (
        "Two facts on one time axis: revenue and refunds",
        "orders by order_date merged with refunds by refund_date; 2024-02 has refunds but no "
        "orders, refund_total fills 0 (D-FILL)",
        {
            "metrics": ["revenue", "refund_total", "refund_count"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2024-12-01"},
        },
    ),
)


def _is_example_dir(path: Path) -> bool:
    return (path / "model.yaml").is_file() and (path / "generate.py").is_file()


def find_example_dir(explicit: str | None) -> Path:
    """The shop example: --example-dir, else next to the source tree, else under the cwd."""
    if explicit is not None:
        path = Path(explicit).expanduser()
        if not _is_example_dir(path):
            raise CliError(
                "example_not_found",
                f"{path} does not hold the shop example (model.yaml and generate.py)",
                hint="point --example-dir at examples/shop of a dosi checkout",
            )
        return path.resolve()
    here = Path(__file__).resolve()
    candidates = [p / "examples" / "shop" for p in here.parents]
    cwd = Path.cwd().resolve()
    candidates += [cwd / "examples" / "shop", cwd / "shop", cwd]
    for c in candidates:
        if _is_example_dir(c):
            return c
    raise CliError(
        "example_not_found",
        "cannot find the shop example (examples/shop with model.yaml and generate.py)",
        hint="run from a dosi checkout (pip install -e .), or pass --example-dir PATH",
    )


def load_generator(example_dir: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("dosi_shop_generate", example_dir / "generate.py")
    if spec is None or spec.loader is None:  # pragma: no cover - checked by _is_example_dir
        raise CliError("example_not_found", f"cannot import {example_dir / 'generate.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def default_db(example_dir: Path) -> Path:
    """examples/shop/data/shop.duckdb when writable, else a per-user temp location."""
    data = example_dir / "data"
    try:
        data.mkdir(parents=True, exist_ok=True)
        if os.access(data, os.W_OK) or (data / "shop.duckdb").exists():
            return data / "shop.duckdb"
    except OSError:
        pass
    return Path(tempfile.gettempdir()) / "dosi-demo" / "shop.duckdb"


def ensure_db(example_dir: Path, db: Path, rebuild: bool) -> bool:
    """Build the scale-1 database when it is missing (or on --rebuild); True when built."""
    if db.exists() and not rebuild:
        return False
    db.parent.mkdir(parents=True, exist_ok=True)
    load_generator(example_dir).build(db)
    return True
