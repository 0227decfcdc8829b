"""Benchmark (issue 27 item 5): `dosi serve` on loopback over the shop example, throughput and
p50 / p99 latency of `POST /v1/query` for cached and distinct queries at 8 and 32 concurrent
clients. Not a test: it prints figures.

    python bench/serve_throughput.py                       # this checkout's dosi
    python bench/serve_throughput.py --before ../main/src  # and another src, alternating
    python bench/serve_throughput.py --seconds 8 --clients 8,32,256 --serve-arg=--workers=64

- **cached**: ten dashboard queries sent over and over (warmed first): answered from the
  result cache;
- **distinct**: no query is sent twice (metrics x group-by x a time range whose start moves a
  day per request): every request compiles (or fills a literal template) and runs on DuckDB.

Each client is one keep-alive HTTP/1.1 connection sending its next request as soon as the
answer arrived (a closed loop), all clients in one asyncio process beside the server. With
`--before` the two servers take turns phase by phase (A/B, then B/A), so the machine's load
falls on both alike. Every answer must be 200 with rows; anything else is counted as an error.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.util
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "examples" / "shop" / "model.yaml"
T = "metric_time"

CACHED: list[dict[str, Any]] = [
    {"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]},
    {"metrics": ["revenue"], "group_by": [f"{T}:month"]},
    {"metrics": ["avg_order_value"], "group_by": ["customers.segment"]},
    {"metrics": ["revenue"], "group_by": ["regions.region_name"]},
    {"metrics": ["refund_total"], "group_by": [f"{T}:quarter"]},
    {"metrics": ["revenue", "revenue_mom"], "group_by": [f"{T}:month"]},
    {"metrics": ["customer_count"], "group_by": [f"{T}:year"]},
    {"metrics": ["revenue"], "group_by": ["orders.channel", f"{T}:year"]},
    {"metrics": ["completed_revenue"], "group_by": ["orders.status"]},
    {"metrics": ["order_count"], "group_by": [f"{T}:week"], "limit": 20},
]
_METRICS = (["revenue"], ["order_count"], ["revenue", "order_count"], ["avg_order_value"])
_GROUPS = ([f"{T}:month"], ["orders.channel"], ["customers.segment"], [f"{T}:quarter"])


def distinct_queries() -> itertools.count[Any] | Any:
    """An endless stream of queries, no two alike: the time range's start moves a day each
    time the metric and group-by combinations come round."""
    day0 = dt.date(2023, 1, 1)
    for i in itertools.count():
        combo, shift = divmod(i, len(_METRICS) * len(_GROUPS))
        m = _METRICS[combo % len(_METRICS)]
        g = _GROUPS[(combo // len(_METRICS)) % len(_GROUPS)]
        start = day0 + dt.timedelta(days=shift % 700, weeks=shift // 700)
        yield {
            "metrics": m,
            "group_by": g,
            "time_range": {"start": start.isoformat(), "end": "2026-01-01"},
        }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`dosi serve` in a child process, with dosi from `src`."""

    def __init__(self, name: str, src: Path, db: Path, extra: list[str]) -> None:
        self.name = name
        self.port = free_port()
        env = dict(os.environ, PYTHONPATH=str(src))
        argv = [sys.executable, "-m", "dosi", "serve", "-m", str(MODEL), "--db", str(db)]
        argv += ["--port", str(self.port), "--timeout", "60", *extra]
        self.proc = subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{name}: the server did not answer /healthz within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


async def _client(
    port: int, queries: Any, until: float, lat: list[float], errors: list[str]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.monotonic() < until:
            body = json.dumps(next(queries)).encode()
            head = (
                f"POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            t0 = time.perf_counter()
            writer.write(head + body)
            status_line = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            payload = await reader.readexactly(length)
            lat.append(time.perf_counter() - t0)
            if b" 200 " not in status_line or b'"rows"' not in payload:
                errors.append(status_line.decode("latin-1").strip() + " " + payload[:120].decode())
    finally:
        writer.close()


async def _phase(port: int, clients: int, seconds: float, queries: Any) -> dict[str, Any]:
    lat: list[float] = []
    errors: list[str] = []
    start = time.monotonic()
    until = start + seconds
    await asyncio.gather(*(_client(port, queries, until, lat, errors) for _ in range(clients)))
    took = time.monotonic() - start
    lat.sort()
    return {
        "n": len(lat),
        "rps": len(lat) / took,
        "p50": statistics.median(lat) * 1000 if lat else float("nan"),
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else float("nan"),
        "errors": len(errors),
        "first_error": errors[0] if errors else "",
    }


def build_db(workdir: Path) -> Path:
    spec = importlib.util.spec_from_file_location(
        "shop_generate", ROOT / "examples/shop/generate.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    db = workdir / "shop-1.duckdb"
    if not db.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        gen.build(db, scale=1)
    return db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--before", help="another dosi src directory, served and measured alongside")
    ap.add_argument("--clients", default="8,32", help="concurrent clients, comma separated")
    ap.add_argument("--seconds", type=float, default=6.0, help="length of each phase")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workdir", default="/tmp/dosi-bench-serve")
    ap.add_argument("--serve-arg", action="append", default=[], help="extra `dosi serve` argument")
    args = ap.parse_args()
    db = build_db(Path(args.workdir))
    servers = [Server("dosi", ROOT / "src", db, args.serve_arg)]
    if args.before:
        servers.append(Server("before", Path(args.before).resolve(), db, []))
    clients = [int(c) for c in args.clients.split(",")]
    results: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    try:
        for s in servers:  # warm: every cached query once (plan and result cache)
            asyncio.run(_phase(s.port, 1, 1.0, itertools.cycle(CACHED)))
        print(f"load average {os.getloadavg()[0]:.2f} at the start")
        for rnd in range(args.rounds):
            for kind in ("cached", "distinct"):
                for n in clients:
                    order = servers if rnd % 2 == 0 else list(reversed(servers))
                    for s in order:
                        queries = (
                            itertools.cycle(CACHED) if kind == "cached" else distinct_queries()
                        )
                        out = asyncio.run(_phase(s.port, n, args.seconds, queries))
                        results.setdefault((s.name, kind, n), []).append(out)
        load = os.getloadavg()[0]
    finally:
        for s in servers:
            s.stop()
    print(f"load average {load:.2f} at the end; {args.rounds} rounds of {args.seconds:g} s each\n")
    print("| server | queries | clients | requests/s | p50 ms | p99 ms | errors |")
    print("|---|---|---|---|---|---|---|")
    for (name, kind, n), runs in results.items():
        rps = statistics.median(r["rps"] for r in runs)
        p50 = statistics.median(r["p50"] for r in runs)
        p99 = statistics.median(r["p99"] for r in runs)
        errs = sum(r["errors"] for r in runs)
        print(f"| {name} | {kind} | {n} | {rps:.0f} | {p50:.1f} | {p99:.1f} | {errs} |")
        first = next((r["first_error"] for r in runs if r["first_error"]), "")
        if first:
            print(f"  first error: {first}")


if __name__ == "__main__":
    main()
