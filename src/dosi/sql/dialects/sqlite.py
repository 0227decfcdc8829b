"""SQLite (3.39+, the standard library's): dates and timestamps are ISO-8601 text, so buckets
and shifts are `datetime()` modifiers and `strftime`, never DuckDB functions. Every temporal value
dosi produces is `YYYY-MM-DD HH:MM:SS` text (ISO text sorts and compares chronologically);
bounds stay plain ISO literals so DATE text ('2024-01-01') compares as a DATE would.

SQLite has no statistical aggregates (stddev, variance, covariance, correlation), so those
window functions are refused before any SQL runs; VALUES cannot name its columns, so the
streaming-window offsets are a UNION ALL."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from dosi.ext.time_format import TimeFormat
from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import canonical_text, encoded_text
from dosi.sql.dialects.window_support import SQLITE_LACKS

_TEMPORAL_TS = {"DateTime", "DateTimeTz"}
_INT = exp.DataType.build("BIGINT")
_FORMATS = {
    "second": "%Y-%m-%d %H:%M:%S",
    "minute": "%Y-%m-%d %H:%M:00",
    "hour": "%Y-%m-%d %H:00:00",
}
_MODIFIERS: dict[str, tuple[str, ...]] = {
    "day": ("start of day",),
    "week": ("start of day", "-6 days", "weekday 1"),  # the Monday on or before (ISO weeks)
    "month": ("start of month",),
    "year": ("start of year",),
}
_UNITS = {"DAY": "days", "MONTH": "months", "YEAR": "years", "HOUR": "hours", "MINUTE": "minutes"}
_UNITS["SECOND"] = "seconds"
STATISTICAL = frozenset(
    {"stddev_pop", "stddev_samp", "var_pop", "var_samp", "covar_pop", "covar_samp", "corr"}
)


def _fn(name: str, *args: exp.Expression | str) -> exp.Expression:
    values = [exp.Literal.string(a) if isinstance(a, str) else a for a in args]
    return exp.Anonymous(this=name, expressions=values)


def union_values(values: Sequence[int], alias: str, column: str) -> exp.Expression:
    """`(SELECT v0 AS column UNION ALL SELECT v1 ...) AS alias`: VALUES without column names."""
    body: exp.Expression | None = None
    for v in values:
        part = exp.Select().select(exp.alias_(exp.Literal.number(v), exp.to_identifier(column)))
        body = part if body is None else exp.Union(this=body, expression=part, distinct=False)
    assert body is not None
    return exp.alias_(exp.Subquery(this=body), exp.to_identifier(alias), table=True)


_PARTS = {"hour": "%H", "minute": "%M", "day": "%d", "doy": "%j", "month": "%m", "year": "%Y"}
_JULIAN_EPOCH = "2440587.5"  # julianday('1970-01-01')


@dataclass(frozen=True)
class SQLite(Dialect):
    def bucket(
        self,
        expr: exp.Expression,
        grain: str,
        datatype: str | None = None,
        week_start: int = 0,
    ) -> exp.Expression:
        """Timestamp text ('2024-01-01 00:00:00') whatever the field's type: SQLite compares
        text, so a DATE bucket of one branch would never meet the TIMESTAMP bucket of another
        in a merge (DuckDB casts one to the other). The runner hands a Date field's bucket
        back as a DATE (dosi.execute.shape)."""
        if grain == "week" and week_start:
            return self.week_bucket(expr, week_start, datatype)
        return self.truncate(expr, grain)

    def week_bucket(
        self, expr: exp.Expression, week_start: int, datatype: str | None
    ) -> exp.Expression:
        """`weekday N` moves forward to the next weekday N (0 = Sunday): six days back first
        lands on the week's first day on or before the value."""
        return _fn("datetime", expr, "start of day", "-6 days", f"weekday {(week_start + 1) % 7}")

    def date_part(self, expr: exp.Expression, part: str) -> exp.Expression:
        """strftime parts as integers; %w counts from Sunday = 0; the ISO week is the week of
        the year of the week's Thursday (SQLite before 3.46 has no %V)."""
        if part in _PARTS:
            return exp.Cast(this=_fn("strftime", _PARTS[part], expr), to=_INT.copy())
        if part == "quarter":
            month = self.date_part(expr, "month")
            back = exp.IntDiv(
                this=exp.Paren(this=exp.Sub(this=month, expression=exp.Literal.number(1))),
                expression=exp.Literal.number(3),
            )
            return exp.Add(this=back, expression=exp.Literal.number(1))
        sunday0 = exp.Cast(this=_fn("strftime", "%w", expr), to=_INT.copy())
        isodow = exp.Add(
            this=exp.Mod(
                this=exp.Paren(this=exp.Add(this=sunday0, expression=exp.Literal.number(6))),
                expression=exp.Literal.number(7),
            ),
            expression=exp.Literal.number(1),
        )
        if part == "isodow":
            return isodow
        assert part == "isoweek"
        to_thursday = exp.Sub(this=exp.Literal.number(4), expression=exp.Paren(this=isodow))
        moved = _fn("strftime", "%j", expr.copy(), _fn("printf", "%+d days", to_thursday))
        day = exp.Sub(this=exp.Cast(this=moved, to=_INT.copy()), expression=exp.Literal.number(1))
        week = exp.IntDiv(this=exp.Paren(this=day), expression=exp.Literal.number(7))
        return exp.Add(this=week, expression=exp.Literal.number(1))

    def day_number(self, expr: exp.Expression, datatype: str | None) -> exp.Expression:
        julian = _fn("julianday", _fn("date", expr))
        days = exp.Sub(this=julian, expression=exp.Literal.number(_JULIAN_EPOCH))
        return exp.Cast(this=days, to=_INT.copy())

    def from_day_number(self, days: exp.Expression, datatype: str | None) -> exp.Expression:
        seconds = exp.Mul(this=exp.Paren(this=days), expression=exp.Literal.number(86_400))
        return _fn("datetime", seconds, "unixepoch")

    def truncate(self, expr: exp.Expression, grain: str) -> exp.Expression:
        if grain in _FORMATS:
            return _fn("strftime", _FORMATS[grain], expr)
        if grain == "quarter":
            month = exp.Cast(this=_fn("strftime", "%m", expr.copy()), to=_INT.copy())
            back = exp.Mod(
                this=exp.Paren(this=exp.Sub(this=month, expression=exp.Literal.number(1))),
                expression=exp.Literal.number(3),
            )
            return _fn("datetime", expr, "start of month", _fn("printf", "-%d months", back))
        return _fn("datetime", expr, *_MODIFIERS[grain])

    def time_literal(self, value: dt.date | dt.datetime, datatype: str | None) -> exp.Expression:
        if isinstance(value, dt.datetime):
            return exp.Literal.string(value.replace(tzinfo=None).isoformat(sep=" "))
        if datatype in _TEMPORAL_TS:
            return exp.Literal.string(f"{value.isoformat()} 00:00:00")
        return exp.Literal.string(value.isoformat())

    def bucket_datatype(self, datatype: str | None, grain: str | None) -> str | None:
        """A bucket is timestamp text whatever the field's type (`bucket`)."""
        return datatype if grain is None else "DateTime"

    def time_operand(self, expr: exp.Expression, datatype: str | None) -> exp.Expression:
        """ISO text in one spelling before comparing: `date()` for DATE columns (also when
        stored with a midnight time), `datetime()` for timestamps ('T' or ' ' separator,
        with or without fractions)."""
        if datatype in _TEMPORAL_TS:
            return _fn("datetime", expr)
        if datatype == "Date":
            return _fn("date", expr)
        return expr

    def shift(self, expr: exp.Expression, count: int, grain: str) -> exp.Expression:
        """`datetime(expr, '+N unit')` cut back to the input's length, so DATE text stays DATE
        text and timestamp text stays timestamp text (an offset join compares equal
        spellings)."""
        unit, n = self.shift_units(count, grain)
        moved = _fn("datetime", expr, f"{n:+d} {_UNITS[unit]}")
        length = exp.Length(this=expr.copy())
        return exp.Substring(this=moved, start=exp.Literal.number(1), length=length)

    def trunc_date(self, value: exp.Expression, grain: str) -> exp.Expression:
        return _fn("date", self.bucket(value, grain))

    def as_timestamp(self, expr: exp.Expression) -> exp.Expression:
        """Timestamp text ('2024-01-01 00:00:00'), the spelling every bucket has here."""
        return _fn("datetime", expr)

    def epoch_us(self, ts: exp.Expression) -> exp.Expression:
        """Whole seconds from strftime('%s') plus the milliseconds of '%f' (SQLite keeps
        millisecond precision)."""
        seconds = exp.Cast(this=_fn("strftime", "%s", ts), to=_INT.copy())
        frac = exp.Mul(this=_fn("strftime", "%f", ts.copy()), expression=exp.Literal.number(1000))
        millis = exp.Mod(
            this=exp.Cast(this=exp.Round(this=frac), to=_INT.copy()),
            expression=exp.Literal.number(1000),
        )
        return exp.Add(
            this=exp.Mul(this=seconds, expression=exp.Literal.number(1_000_000)),
            expression=exp.Mul(this=exp.Paren(this=millis), expression=exp.Literal.number(1000)),
        )

    def from_epoch(self, units: exp.Expression, per_ms: int) -> exp.Expression:
        seconds = exp.Div(
            this=exp.Paren(this=units), expression=exp.Literal.number(f"{per_ms * 1000}.0")
        )
        return _fn("strftime", "%Y-%m-%d %H:%M:%f", seconds, "unixepoch")

    def values_table(self, values: Sequence[int], alias: str, column: str) -> exp.Expression:
        return union_values(values, alias, column)

    def decode_time(self, raw: exp.Expression, fmt: TimeFormat) -> exp.Expression:
        """D-FORMAT without a parse function: the parts cut out with substr and joined into ISO
        text, read by `date()` / `datetime()` (NULL for text that is not a date)."""
        text = canonical_text(encoded_text(raw, fmt), fmt, self.text_part)
        return _fn("datetime" if fmt.has_time else "date", text)


SQLITE = SQLite(
    "sqlite",
    column_catalog="pragma",
    temporal_as_text=True,
    null_ordering=sqlglot_null_ordering("sqlite"),
    unsupported_window_functions=STATISTICAL | SQLITE_LACKS,
    null_safe_full_join=False,
    streaming=True,
    percentile_style=None,
)
