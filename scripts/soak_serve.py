"""Soak and fault run of `dosi serve` on loopback (issue 29, item 6). Not a CI test: minutes,
not seconds.

Two servers are started: one on a DuckDB file, one on a PostgreSQL server of this script's own
(initdb in a temporary folder, a free port; the PostgreSQL binaries must be installed, see
scripts/postgres.sh). Each load phase (8, 64, 256 clients by default) sends a mix of valid
queries (whose answers are known), caller mistakes, slow queries, oversized answers and health
checks to both. During the middle phase PostgreSQL is killed and restarted and the DuckDB file
is swapped for another one; half-open connections (slowloris) are held open throughout.

Printed: per phase and class p50 / p99 latency, the answers by status and error code, caller
mistakes answered 5xx (must be 0), wrong answers (must be 0), the recovery time after the
PostgreSQL restart, and each server's RSS (now and peak).

    python scripts/soak_serve.py [--seconds 8] [--clients 8,64,256]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import duckdb
import httpx
import psycopg
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "kit"))
from pgserverkit import remove_pg, server_binaries, start_pg
from servekit import free_port

MODEL: dict[str, Any] = {
    "version": "0.2.0.dev0",
    "semantic_model": [
        {
            "name": "soak",
            "datasets": [
                {
                    "name": "sales",
                    "source": "sales",
                    "fields": [
                        {
                            "name": "id",
                            "expression": {
                                "dialects": [{"dialect": "ANSI_SQL", "expression": "id"}]
                            },
                        },
                        {
                            "name": "amount",
                            "datatype": "Integer",
                            "expression": {
                                "dialects": [{"dialect": "ANSI_SQL", "expression": "amount"}]
                            },
                        },
                    ],
                },
                {
                    "name": "big",
                    "source": "big",
                    "fields": [
                        {
                            "name": "x",
                            "datatype": "Integer",
                            "expression": {
                                "dialects": [{"dialect": "ANSI_SQL", "expression": "x"}]
                            },
                            "custom_extensions": [
                                {
                                    "vendor_name": "DATUS",
                                    "data": '{"v": "1.7", "is_dimension": true}',
                                }
                            ],
                        },
                    ],
                },
            ],
            "metrics": [
                {
                    "name": "total",
                    "expression": {
                        "dialects": [{"dialect": "ANSI_SQL", "expression": "SUM(sales.amount)"}]
                    },
                },
                {
                    "name": "spread",
                    "expression": {
                        "dialects": [
                            {"dialect": "ANSI_SQL", "expression": "SUM(big.x * big.x % 13)"}
                        ]
                    },
                },
            ],
        }
    ],
}
BIG_ROWS = 2_000_000
VALID = {"metrics": ["total"]}
INVALID = [
    {"metrics": ["totl"]},
    {"metrics": ["total"], "where_sql": "nope.col = 1"},
    {"metrics": ["total"], "limit": -1},
]
RAW_INVALID = [b'{"metrics": [', b"[" * 2000, b'{"metrics": ["\\ud800"]}']
SLOW = {"metrics": ["spread"], "group_by": ["big.x"], "limit": 5}
OVERSIZED = {"from": "big", "fields": ["big.x"], "limit": BIG_ROWS}


# -- the servers ---------------------------------------------------------------------------------
def make_duckdb(path: Path, factor: int) -> None:
    con = duckdb.connect(str(path))
    con.execute(
        f"CREATE TABLE sales AS SELECT i AS id, i * {factor} AS amount FROM range(1, 11) t(i)"
    )
    con.execute(f"CREATE TABLE big AS SELECT range AS x FROM range({BIG_ROWS})")
    con.close()


def start_serve(model: Path, tmp: Path, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = (tmp / f"serve-{port}.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dosi",
            "serve",
            "-m",
            str(model),
            "--port",
            str(port),
            "--timeout",
            "5",
            "--max-connections",
            "1024",
            *args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/healthz", timeout=1)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    sys.exit(f"soak: dosi serve did not start ({' '.join(args)})")


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    kb = lambda k: float(fields.get(k, "0 kB").split()[0]) / 1024  # noqa: E731
    return kb("VmRSS"), kb("VmHWM")


# -- the load -----------------------------------------------------------------------------------
class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.outcomes: Counter[tuple[str, str]] = Counter()
        self.mistake_5xx = 0
        self.wrong = 0
        self.pg_down_at: float | None = None
        self.pg_back_at: float | None = None
        self.pg_first_ok: float | None = None

    def add(self, kind: str, seconds: float, outcome: str) -> None:
        with self.lock:
            self.latency[kind].append(seconds)
            self.outcomes[(kind, outcome)] += 1


def one_request(c: httpx.Client, target: str, stats: Stats, allowed: set[int]) -> None:
    roll = random.random()
    started = time.monotonic()
    if roll < 0.55:
        kind, r = "valid", c.post("/v1/query", json=VALID)
    elif roll < 0.70:
        kind = "mistake"
        if random.random() < 0.5:
            r = c.post("/v1/query", json=random.choice(INVALID))
        else:
            r = c.post(
                "/v1/query",
                content=random.choice(RAW_INVALID),
                headers={"content-type": "application/json"},
            )
    elif roll < 0.80:
        kind, r = "slow", c.post("/v1/query", json=SLOW)
    elif roll < 0.90:
        kind, r = "oversized", c.post("/v1/select", json=OVERSIZED)
    else:
        kind, r = "health", c.get("/healthz")
    took = time.monotonic() - started
    code = ""
    if r.headers.get("content-type", "").startswith("application/json"):
        with contextlib.suppress(ValueError):
            body = r.json()
            code = body.get("code", "") if isinstance(body, dict) else ""
            if kind == "valid" and r.status_code == 200 and body["rows"][0]["total"] not in allowed:
                with stats.lock:
                    stats.wrong += 1
    if kind == "mistake" and r.status_code >= 500 and r.status_code not in (503, 504):
        with stats.lock:
            stats.mistake_5xx += 1
    stats.add(f"{target}:{kind}", took, f"{r.status_code} {code}".strip())


def client_loop(url: str, target: str, stop_at: float, stats: Stats, allowed: set[int]) -> None:
    with httpx.Client(base_url=url, timeout=30) as c:
        while time.monotonic() < stop_at:
            try:
                one_request(c, target, stats, allowed)
            except httpx.HTTPError as exc:
                stats.add(f"{target}:transport", 0.0, type(exc).__name__)


def slowloris(url: str, n: int, stop: threading.Event) -> None:
    """`n` connections that send half a request head and then nothing."""
    host, port = url.rsplit(":", 1)[0].split("//")[1], int(url.rsplit(":", 1)[1])
    socks = []
    for _ in range(n):
        with contextlib.suppress(OSError):
            s = socket.create_connection((host, port), timeout=2)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
            socks.append(s)
    stop.wait()
    for s in socks:
        s.close()


def outage_probe(url: str, seconds: float) -> Counter[str]:
    """The answers of a query and of /healthz while the warehouse is down."""
    seen: Counter[str] = Counter()
    stop_at = time.monotonic() + seconds
    with httpx.Client(base_url=url, timeout=30) as c:
        for i in range(100):
            if i >= 2 and time.monotonic() > stop_at:
                break
            r = c.post("/v1/query", json=VALID)
            seen[f"query {r.status_code} {r.json().get('code', '')}".strip()] += 1
            seen[f"healthz {c.get('/healthz').status_code}"] += 1
    return seen


def first_ok(url: str, give_up: float) -> float | None:
    """When the query first answers again (polled, beside the load)."""
    with httpx.Client(base_url=url, timeout=30) as c:
        while time.monotonic() < give_up:
            if c.post("/v1/query", json=VALID).status_code == 200:
                return time.monotonic()
            time.sleep(0.05)
    return None


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=15.0, help="length of each load phase")
    ap.add_argument("--clients", default="8,64,256")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dosi-soak-"))
    if server_binaries() is None:
        sys.exit("soak: no PostgreSQL server binaries (bash scripts/postgres.sh)")
    pg = start_pg()  # a throwaway server of this run's own (tests/kit/pgserverkit.py)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with psycopg.connect(pg.dsn, autocommit=True) as con:
            con.execute("CREATE TABLE sales (id integer, amount integer)")
            con.execute("INSERT INTO sales SELECT i, i FROM generate_series(1, 10) i")
            con.execute(
                f"CREATE TABLE big AS SELECT generate_series(0, {BIG_ROWS - 1})::bigint AS x"
            )
        model = tmp / "model.yaml"
        model.write_text(yaml.safe_dump(MODEL, sort_keys=False))
        live, other = tmp / "live.duckdb", tmp / "other.duckdb"
        make_duckdb(live, 1)
        make_duckdb(other, 10)
        conns = tmp / "connections.yml"
        conns.write_text(f'w:\n  type: postgres\n  uri: "{pg.dsn}"\n  default: true\n')
        duck, duck_url = start_serve(model, tmp, "--db", str(live))
        wh, wh_url = start_serve(model, tmp, "--connections", str(conns))
        procs = [duck, wh]
        duck_allowed = {55}
        stop_loris = threading.Event()
        loris = threading.Thread(target=slowloris, args=(duck_url, 200, stop_loris))
        loris.start()
        print(f"{'phase':>7} {'class':<16} {'n':>6} {'p50 ms':>9} {'p99 ms':>9}  outcomes")
        for i, n in enumerate(int(x) for x in args.clients.split(",")):
            stats = Stats()
            stop_at = time.monotonic() + args.seconds
            faults = i == 1
            workers = [
                threading.Thread(
                    target=client_loop,
                    args=(
                        duck_url if k % 2 == 0 else wh_url,
                        "duck" if k % 2 == 0 else "pg",
                        stop_at,
                        stats,
                        duck_allowed if k % 2 == 0 else {55},
                    ),
                )
                for k in range(n)
            ]
            for w in workers:
                w.start()
            if faults:
                duck_allowed.add(550)  # the swap: answers from either file, never a mix
                time.sleep(args.seconds / 4)
                pg.stop()
                stats.pg_down_at = time.monotonic()
                during = outage_probe(wh_url, 1.0)
                pg.start()
                stats.pg_back_at = time.monotonic()
                stats.pg_first_ok = first_ok(wh_url, stats.pg_back_at + 60)
                print(f"{n:>7} while PostgreSQL was down: {dict(during)}")
                staged = tmp / "staged.duckdb"
                shutil.copy(other, staged)
                os.replace(staged, live)
            for w in workers:
                w.join()
            for kind in sorted(stats.latency):
                outcomes = {o: c for (k, o), c in stats.outcomes.items() if k == kind}
                lat = stats.latency[kind]
                print(
                    f"{n:>7} {kind:<16} {len(lat):>6} {pct(lat, 0.5):>9.1f} "
                    f"{pct(lat, 0.99):>9.1f}  {dict(sorted(outcomes.items()))}"
                )
            print(
                f"{n:>7} caller mistakes answered 500: {stats.mistake_5xx} (503 / 504 are "
                f"overload: the whole-request timeout); wrong answers: {stats.wrong}"
            )
            if faults:
                back = (stats.pg_first_ok - stats.pg_back_at) if stats.pg_first_ok else None
                print(
                    f"{n:>7} PostgreSQL killed for 1 s; first good answer "
                    f"{'never' if back is None else f'{back:.2f} s'} after it was back"
                )
                with httpx.Client(base_url=duck_url) as c:
                    after = {
                        c.post("/v1/query", json=VALID).json()["rows"][0]["total"]
                        for _ in range(16)
                    }
                print(f"{n:>7} DuckDB file swapped: answers after the swap {sorted(after)}")
                duck_allowed.discard(55)
            for name, p in (("duckdb server", duck), ("postgres server", wh)):
                now, peak = rss_mb(p.pid)
                print(f"{n:>7} {name} RSS {now:.0f} MB (peak {peak:.0f} MB)")
        stop_loris.set()
        loris.join()
        with httpx.Client(base_url=wh_url) as c:
            print("health:", c.get("/healthz").json())
    finally:
        for p in procs:
            p.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(10)
        remove_pg(pg)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
