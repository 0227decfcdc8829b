"""What each column of a query result is, for a chart: the metrics (values), the keys, which
key is the time axis and at what grain, and the number format a metric's type asks for. Read
from the result dict and, where the result carries it, its Arrow schema (the model's datatype
of each metric: an integer count, a decimal of scale 2, a double)."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

GRAINS = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")
#: d3 time formats per grain, for the time axis and tooltips (quarters as "2024 Q1")
TIME_FORMATS = {
    "second": "%Y-%m-%d %H:%M:%S",
    "minute": "%Y-%m-%d %H:%M",
    "hour": "%Y-%m-%d %H:00",
    "day": "%Y-%m-%d",
    "week": "%Y-%m-%d",
    "month": "%b %Y",
    "quarter": "%Y Q%q",
    "year": "%Y",
}
#: Vega-Lite time units per grain, in UTC: the values are UTC (`time_iso`), so every machine
#: draws the same buckets whatever its time zone
TIME_UNITS = {
    "second": "utcyearmonthdatehoursminutesseconds",
    "minute": "utcyearmonthdatehoursminutes",
    "hour": "utcyearmonthdatehours",
    "day": "utcyearmonthdate",
    "week": "utcyearmonthdate",
    "month": "utcyearmonth",
    "quarter": "utcyearquarter",
    "year": "utcyear",
}
NULL_LABEL = "NULL"  # the one NULL spelling of the CLI table (cli.output.NULL_TEXT)


def number(v: Any) -> float | None:
    """A chart draws doubles (the rows stay exact): None for non-numbers and non-finite values."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float, decimal.Decimal)):
        f = float(v)
        return f if math.isfinite(f) else None
    return None


def _is_time_value(v: Any) -> bool:
    if isinstance(v, (dt.date, dt.datetime)):
        return True
    if isinstance(v, str):
        try:
            dt.datetime.fromisoformat(v)
            return True
        except ValueError:
            return False
    return False


def grain_of(name: str) -> str | None:
    """The grain a time-bucket column names (`metric_time__quarter` -> quarter)."""
    for g in GRAINS:
        if name.endswith(f"__{g}"):
            return g
    return None


def is_time_column(name: str, rows: Sequence[Mapping[str, Any]]) -> bool:
    if name in ("metric_time", "window_start") or grain_of(name) is not None:
        return True
    values = [r.get(name) for r in rows if r.get(name) is not None]
    return bool(values) and all(_is_time_value(v) for v in values)


def time_iso(v: Any) -> str | None:
    """A time value as an ISO string in UTC (`...Z`), so Vega parses it the same on every
    machine whatever its time zone (a naive value is read as UTC, as the warehouse wrote it)."""
    if isinstance(v, str):
        try:
            v = dt.datetime.fromisoformat(v)
        except ValueError:
            return v
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        return v.isoformat(timespec="seconds") + "Z"
    if isinstance(v, dt.date):
        return f"{v.isoformat()}T00:00:00Z"
    return None


def label(row: Mapping[str, Any], cols: Sequence[str]) -> str:
    """The text of a category: the key values joined by " / "."""
    return " / ".join(NULL_LABEL if row.get(c) is None else str(row.get(c)) for c in cols)


@dataclass(frozen=True)
class Columns:
    metrics: list[str]
    keys: list[str]
    time: str | None  # the time-axis key, wherever it stands in the group-by
    formats: dict[str, str]  # metric -> d3 number format for tooltips (its exact type)


def _format(t: pa.DataType | None, values: Sequence[float]) -> str:
    if t is not None and pa.types.is_integer(t):
        return ",d"
    if t is not None and pa.types.is_decimal(t):
        return f",.{min(max(t.scale, 0), 6)}f"
    if values and all(float(v).is_integer() for v in values) and t is None:
        return ",~f"
    return ",.6~r"  # a double: six significant digits, never -0.32430827914865223


def columns_of(result: Mapping[str, Any]) -> Columns:
    """Metrics are the `outputs` columns (else the numeric columns of detail rows); keys the
    rest; the time key is the first key that is a time bucket."""
    cols: list[str] = list(result["columns"])
    rows: list[Mapping[str, Any]] = list(result["rows"])
    metrics = [o["column"] for o in result.get("outputs") or [] if o["column"] in cols]
    if not metrics:
        metrics = [c for c in cols if any(number(r.get(c)) is not None for r in rows)]
        metrics = [c for c in metrics if not is_time_column(c, rows)]
    keys = [c for c in cols if c not in metrics]
    time = next((k for k in keys if is_time_column(k, rows)), None)
    table = getattr(result, "arrow", None)
    schema = table.schema if isinstance(table, pa.Table) else None
    formats = {}
    for m in metrics:
        t = schema.field(m).type if schema is not None and m in schema.names else None
        values = [x for x in (number(r.get(m)) for r in rows) if x is not None]
        formats[m] = _format(t, values)
    return Columns(metrics, keys, time, formats)


def magnitude(rows: Sequence[Mapping[str, Any]], column: str) -> float:
    """The largest absolute value of a column (0 when it has none)."""
    return max((abs(x) for x in (number(r.get(column)) for r in rows) if x is not None), default=0)
