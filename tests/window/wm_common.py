"""Shared data, model builder and plain-Python reference semantics for the D-WINDOW tests.

Expected values are always computed here from the inserted rows (`SALES`), never from the
engine: `series()` is the base aggregate per (dims..., bucket), and the helpers below replay
the window semantics of window-metrics-extension.md (calendar-exact offsets, ROWS frames over
the existing buckets, resets as extra partition keys, ranking, navigation) in plain Python.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

import dosi

D = dt.date.fromisoformat
GRAINS = ("day", "week", "month", "quarter", "year")


@dataclass(frozen=True)
class Sale:
    sale_id: int
    sale_date: dt.date
    region: str | None
    amount: int | None

    @property
    def ship_date(self) -> dt.date:
        return self.sale_date + dt.timedelta(days=2)


def _s(i: int, day: str, region: str | None, amount: int | None) -> Sale:
    return Sale(i, D(day), region, amount)


# Calendar gaps (no 2023-05, 2023-07..09 overall, no 2024-05; east has no 2024-02,
# west no 2023-12), a NULL region, ties (east 2024-01 == 2024-03 == 150; west 2023-11 ==
# 2024-01 == 50), a zero-sum bucket (west 2023-10: +30 / -30), an all-NULL bucket (west 2023-06),
# a leap day (2024-02-29 - 1 year = 2023-02-28), and day-level rows on both sides of the 2023/2024 boundary for week grains.
SALES: tuple[Sale, ...] = (
    _s(0, "2022-12-15", "east", 40),
    _s(14, "2023-01-09", "east", 70),
    _s(22, "2023-02-28", "west", 11),
    _s(15, "2023-03-20", "east", 90),
    _s(16, "2023-04-02", "west", 40),
    _s(20, "2023-06-30", "west", None),
    _s(17, "2023-10-05", "west", 30),
    _s(18, "2023-10-25", "west", -30),
    _s(1, "2023-11-10", "east", 100),
    _s(7, "2023-11-11", "west", 50),
    _s(2, "2023-12-05", "east", 120),
    _s(3, "2023-12-20", "east", 80),
    _s(11, "2023-12-31", None, 10),
    _s(19, "2024-01-01", None, 25),
    _s(8, "2024-01-02", "west", 50),
    _s(4, "2024-01-15", "east", 150),
    _s(9, "2024-02-14", "west", 80),
    _s(21, "2024-02-29", "west", 15),
    _s(5, "2024-03-01", "east", 150),
    _s(12, "2024-03-15", None, 30),
    _s(6, "2024-04-10", "east", 300),
    _s(10, "2024-04-30", "west", 20),
    _s(13, "2024-06-03", "east", 60),
)

# A second fact dataset (a window metric beside its metrics: the window reads the merge).
RETURNS: tuple[tuple[int, str, str | None, int], ...] = (
    (1, "2023-12-07", "east", 5),
    (2, "2024-01-20", "west", 7),
    (3, "2024-03-02", "east", 9),
)


def build_db(path: Path, sales: Iterable[Sale] = SALES) -> str:
    con = duckdb.connect(str(path))
    try:
        con.execute(
            "CREATE TABLE sales(sale_id INTEGER, sale_date DATE, region VARCHAR, "
            "amount INTEGER, ship_date DATE)"
        )
        rows = [(s.sale_id, s.sale_date, s.region, s.amount, s.ship_date) for s in sales]
        if rows:
            con.executemany("INSERT INTO sales VALUES (?, ?, ?, ?, ?)", rows)
        con.execute(
            "CREATE TABLE returns(return_id INTEGER, return_date DATE, region VARCHAR, "
            "refund INTEGER)"
        )
        con.executemany(
            "INSERT INTO returns VALUES (?, ?, ?, ?)",
            [(i, D(d), r, a) for i, d, r, a in RETURNS],
        )
    finally:
        con.close()
    return str(path)


# ---------------------------------------------------------------------------------------------
# model


def _field(name: str, **kw: Any) -> dict[str, Any]:
    f: dict[str, Any] = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": name}]},
    }
    f.update(kw)
    return f


def _metric(name: str, expr: str, ext: dict[str, Any] | None) -> dict[str, Any]:
    m: dict[str, Any] = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expr}]},
    }
    if ext is not None:
        m["custom_extensions"] = [{"vendor_name": "DATUS", "data": json.dumps(ext)}]
    return m


REVENUE = "SUM(sales.amount)"
_PAYLOAD_KEYS = {"v", "window", "fill_nulls_with", "time_dimension", "derive", "params"}
CNT = "COUNT(sales.sale_id)"


def model_yaml(
    windows: dict[str, Any], *, with_returns: bool = False, primary_time: bool = True
) -> str:
    """A one-dataset model: `revenue` = SUM(amount), `cnt` = COUNT(sale_id), plus one metric per
    entry of `windows`: name -> window payload (over SUM(amount)), or name -> (expr, payload).
    A payload whose keys are all DATUS metric keys (`window`, `fill_nulls_with`, ...) is used as
    the whole DATUS payload; anything else is wrapped as `{"window": payload}`."""
    metrics = [_metric("revenue", REVENUE, None), _metric("cnt", CNT, None)]
    for name, spec in windows.items():
        expr, payload = spec if isinstance(spec, tuple) else (REVENUE, spec)
        full = isinstance(payload, dict) and set(payload) <= _PAYLOAD_KEYS
        metrics.append(_metric(name, expr, payload if full else {"window": payload}))
    sales = {
        "name": "sales",
        "source": "sales",
        "primary_key": ["sale_id"],
        "fields": [
            _field("sale_id"),
            _field("sale_date", datatype="Date", dimension={"is_time": True}),
            _field("region"),
            _field("amount"),
            _field("ship_date", datatype="Date"),
        ],
        # two time-typed fields: D-TIME names the primary one (WIN-QRY-01)
        "custom_extensions": [
            {"vendor_name": "DATUS", "data": json.dumps({"time_dimension": "sales.sale_date"})}
        ],
    }
    if not primary_time:  # two time-typed fields and no D-TIME: no resolvable axis
        del sales["custom_extensions"]
    datasets = [sales]
    if with_returns:
        datasets.append(
            {
                "name": "returns",
                "source": "returns",
                "primary_key": ["return_id"],
                "fields": [
                    _field("return_id"),
                    _field("return_date", datatype="Date", dimension={"is_time": True}),
                    _field("region"),
                    _field("refund"),
                ],
            }
        )
        metrics.append(_metric("refunds", "SUM(returns.refund)", None))
    doc = {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {"name": "w", "datasets": datasets, "relationships": [], "metrics": metrics}
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


def make_engine(windows: dict[str, Any], mode: str = "datus", **kw: Any) -> dosi.Engine:
    return dosi.Engine(model_text=model_yaml(windows, **kw), mode=mode)


# ---------------------------------------------------------------------------------------------
# calendar


def bucket(d: dt.date, grain: str) -> dt.date:
    if grain == "day":
        return d
    if grain == "week":  # ISO Monday, DuckDB's DATE_TRUNC('week', ...)
        return d - dt.timedelta(days=d.weekday())
    if grain == "month":
        return d.replace(day=1)
    if grain == "quarter":
        return d.replace(month=(d.month - 1) // 3 * 3 + 1, day=1)
    if grain == "year":
        return d.replace(month=1, day=1)
    raise ValueError(grain)


def shift(d: dt.date, count: int, granularity: str) -> dt.date:
    """`d` moved by count x granularity (negative = back), end-of-month clamped."""
    if granularity == "day":
        return d + dt.timedelta(days=count)
    if granularity == "week":
        return d + dt.timedelta(days=7 * count)
    months = {"month": 1, "quarter": 3, "year": 12}[granularity] * count
    total = d.year * 12 + d.month - 1 + months
    year, month0 = divmod(total, 12)
    day = min(d.day, calendar.monthrange(year, month0 + 1)[1])
    return dt.date(year, month0 + 1, day)


def ts(d: dt.date) -> str:
    """How the engine returns a grained bucket."""
    return d.isoformat()


# ---------------------------------------------------------------------------------------------
# SQL-semantics aggregates over per-bucket values (NULLs ignored like SQL aggregates)


def _nn(values: Sequence[Any]) -> list[float]:
    return [v for v in values if v is not None]


def sql_sum(values: Sequence[Any]) -> Any:
    vals = _nn(values)
    return sum(vals) if vals else None


def agg(fn: str, values: Sequence[Any], seconds: Sequence[Any] | None = None) -> Any:
    """A SQL aggregate over a frame's values; `seconds` pairs with values for W3."""
    if fn == "count":
        return len(values)
    if fn in ("covar_pop", "covar_samp", "corr"):
        assert seconds is not None
        pairs = [
            (y, x) for y, x in zip(seconds, values, strict=True) if x is not None and y is not None
        ]
        n = len(pairs)
        if (fn == "covar_samp" and n < 2) or n == 0:
            return None
        my = sum(p[0] for p in pairs) / n
        mx = sum(p[1] for p in pairs) / n
        cov = sum((p[0] - my) * (p[1] - mx) for p in pairs)
        if fn == "covar_pop":
            return cov / n
        if fn == "covar_samp":
            return cov / (n - 1)
        sy = math.sqrt(sum((p[0] - my) ** 2 for p in pairs))
        sx = math.sqrt(sum((p[1] - mx) ** 2 for p in pairs))
        if sy == 0 or sx == 0:
            return None  # undefined without variance: NULL (SQL standard), never NaN
        return cov / (sx * sy)
    vals = _nn(values)
    if fn == "sum":
        return sum(vals) if vals else None
    if fn == "avg":
        return sum(vals) / len(vals) if vals else None
    if fn == "min":
        return min(vals) if vals else None
    if fn == "max":
        return max(vals) if vals else None
    if fn == "stddev_pop":
        return statistics.pstdev(vals) if vals else None
    if fn == "var_pop":
        return statistics.pvariance(vals) if vals else None
    if fn == "stddev_samp":
        return statistics.stdev(vals) if len(vals) > 1 else None
    if fn == "var_samp":
        return statistics.variance(vals) if len(vals) > 1 else None
    raise ValueError(fn)


# ---------------------------------------------------------------------------------------------
# the base series


Key = tuple[Any, ...]


def series(
    grain: str | None,
    dims: Sequence[str] = (),
    *,
    measure: str = "sum",
    rows: Iterable[Sale] = SALES,
    start: dt.date | None = None,
    end: dt.date | None = None,
    where: Callable[[Sale], bool] | None = None,
) -> dict[Key, Any]:
    """Base aggregate per (dims..., bucket): SUM(amount) or COUNT(sale_id).
    Keys hold the engine's spelling of the bucket (`ts`)."""
    groups: dict[Key, list[Sale]] = {}
    for s in rows:
        if start is not None and s.sale_date < start:
            continue
        if end is not None and s.sale_date >= end:
            continue
        if where is not None and not where(s):
            continue
        key = tuple(getattr(s, d) for d in dims)
        if grain is not None:
            key += (ts(bucket(s.sale_date, grain)),)
        groups.setdefault(key, []).append(s)
    out: dict[Key, Any] = {}
    for key, members in groups.items():
        if measure == "sum":
            out[key] = sql_sum([m.amount for m in members])
        else:
            out[key] = sum(1 for m in members if m.sale_id is not None)
    return out


def key_date(k: Key) -> dt.date:
    return D(k[-1][:10])


def with_date(k: Key, d: dt.date) -> Key:
    return (*k[:-1], ts(d))


def offset_ref(
    base: dict[Key, Any], count: int, granularity: str, direction: str = "back"
) -> dict[Key, Any]:
    """Value at exactly the shifted calendar key (NULL partitions never match), else None."""
    sign = -1 if direction == "back" else 1
    out: dict[Key, Any] = {}
    for k in base:
        if any(x is None for x in k[:-1]):
            out[k] = None
            continue
        out[k] = base.get(with_date(k, shift(key_date(k), sign * count, granularity)))
    return out


def calc(calculation: str, cur: Any, prev: Any) -> Any:
    if calculation == "value":
        return prev
    if cur is None or prev is None:
        return None
    if calculation == "delta":
        return cur - prev
    if prev == 0:
        return None
    if calculation == "ratio":
        return cur / prev
    return (cur - prev) / prev


def offset_expected(
    base: dict[Key, Any],
    count: int,
    granularity: str,
    calculation: str,
    direction: str = "back",
) -> dict[Key, Any]:
    ref = offset_ref(base, count, granularity, direction)
    return {k: calc(calculation, base[k], ref[k]) for k in base}


def _null_first_sort(v: Any) -> tuple[int, Any]:
    # DuckDB sorts NULLs last in both directions by default; Python None sorts after here
    return (1, "") if v is None else (0, v)


def frame_expected(
    base: dict[Key, Any],
    fn: str,
    preceding: int | None,
    *,
    reset: str | None = None,
    partition: Callable[[Key], Any] = lambda k: k[:-1],
    order_desc: bool = False,
    require_full: bool = False,
    second: dict[Key, Any] | None = None,
) -> dict[Key, Any]:
    """A time-ordered ROWS frame over the existing buckets of each partition."""
    parts: dict[Any, list[Key]] = {}
    for k in base:
        pk = partition(k)
        if reset is not None:
            pk = (pk, bucket(key_date(k), reset))
        parts.setdefault(pk, []).append(k)
    out: dict[Key, Any] = {}
    for keys in parts.values():
        keys.sort(key=key_date, reverse=order_desc)
        for i, k in enumerate(keys):
            lo = 0 if preceding is None else max(0, i - preceding)
            frame = keys[lo : i + 1]
            vals = [base[f] for f in frame]
            secs = [second[f] for f in frame] if second is not None else None
            if require_full and preceding is not None and len(frame) < preceding + 1:
                out[k] = None
            else:
                out[k] = agg(fn, vals, secs)
    return out


def close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


# ---------------------------------------------------------------------------------------------
# running queries


def keyed(rows: list[dict[str, Any]], keycols: Sequence[str], metric: str) -> dict[Key, Any]:
    out: dict[Key, Any] = {}
    for r in rows:
        k = tuple(r[c] for c in keycols)
        assert k not in out, f"duplicate output row for {k}"
        out[k] = r[metric]
    return out


def assert_series(actual: dict[Key, Any], expected: dict[Key, Any], label: str = "") -> None:
    assert set(actual) == set(expected), (
        f"{label}: row keys differ: extra={sorted(set(actual) - set(expected), key=str)} "
        f"missing={sorted(set(expected) - set(actual), key=str)}"
    )
    bad = {k: (actual[k], expected[k]) for k in expected if not close(actual[k], expected[k])}
    assert not bad, f"{label}: (actual, expected) differ at {bad}"


def run(
    engine: dosi.Engine,
    db: str,
    metrics: Sequence[str],
    group_by: Sequence[Any],
    **extra: Any,
) -> list[dict[str, Any]]:
    q: dict[str, Any] = {"metrics": list(metrics), "group_by": list(group_by), **extra}
    return engine.execute(q, db_path=db)["rows"]


def check(
    engine: dosi.Engine,
    db: str,
    group_by: Sequence[Any],
    keycols: Sequence[str],
    expected: dict[str, dict[Key, Any]],
    **extra: Any,
) -> list[dict[str, Any]]:
    """Run every metric in `expected` in one query and compare each column."""
    rows = run(engine, db, list(expected), group_by, **extra)
    for metric, exp_series in expected.items():
        assert_series(keyed(rows, keycols, metric), exp_series, metric)
    return rows


def query_error(engine: dosi.Engine, db: str, query: dict[str, Any]) -> dosi.QueryError:
    with pytest.raises(dosi.QueryError) as info:
        engine.execute(query, db_path=db)
    return info.value
