"""PostgreSQL (14+): DATE_TRUNC on a DATE picks the timestamptz overload, FULL JOIN accepts only
merge- or hash-joinable conditions (no IS NOT DISTINCT FROM), and epochs go through
EXTRACT(EPOCH ...) (exact numeric since 14)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import ORACLE_TOKENS, TimeParser
from dosi.sql.dialects.window_support import POSTGRES_LACKS

# D-FORMAT: TO_DATE / TO_TIMESTAMP with template patterns (TO_TIMESTAMP is zoned: cast back)
PARSER = TimeParser(date_fn="TO_DATE", ts_fn="TO_TIMESTAMP", tokens=ORACLE_TOKENS, ts_cast=True)

_TIMESTAMP = exp.DataType.build("TIMESTAMP")
_BIGINT = exp.DataType.build("BIGINT")
_DATE = exp.DataType.build("DATE")
_INT = exp.DataType.build("INT")


@dataclass(frozen=True)
class Postgres(Dialect):
    def bucket(
        self,
        expr: exp.Expression,
        grain: str,
        datatype: str | None = None,
        week_start: int = 0,
    ) -> exp.Expression:
        """A Date field's bucket stays in DATE arithmetic and never passes through TIMESTAMP
        (bucket values keep their type): MAKE_DATE of the date's parts, a week being the date
        less the days since its week start (Monday unless `week_start` says otherwise)."""
        if datatype != "Date" or grain not in ("week", "month", "quarter", "year"):
            return super().bucket(expr, grain, datatype, week_start)
        day = exp.Cast(this=expr, to=_DATE.copy())

        def part(unit: str) -> exp.Expression:
            return exp.Cast(
                this=exp.Extract(this=exp.var(unit), expression=day.copy()), to=_INT.copy()
            )

        one = exp.Literal.number(1)
        if grain == "week":
            back: exp.Expression = exp.Sub(this=part("ISODOW"), expression=one.copy())
            if week_start:  # (ISODOW + 6 - start) % 7 days since the week's first day
                since = exp.Add(this=part("ISODOW"), expression=exp.Literal.number(6 - week_start))
                back = exp.Mod(this=exp.Paren(this=since), expression=exp.Literal.number(7))
            return exp.Sub(this=day, expression=exp.Paren(this=back))
        month: exp.Expression = one.copy()
        if grain == "month":
            month = part("MONTH")
        elif grain == "quarter":
            start = exp.Mul(
                this=exp.Paren(this=exp.Sub(this=part("QUARTER"), expression=one.copy())),
                expression=exp.Literal.number(3),
            )
            month = exp.Add(this=start, expression=one.copy())
        return exp.Anonymous(this="MAKE_DATE", expressions=[part("YEAR"), month, one.copy()])

    def truncate(self, expr: exp.Expression, grain: str) -> exp.Expression:
        """DATE_TRUNC of a DATE resolves to the timestamptz overload on PostgreSQL: the bucket
        is midnight in the session TimeZone (01:00 where DST starts at midnight, e.g.
        America/Santiago) and typed timestamptz. Truncating a plain TIMESTAMP keeps the
        wall-clock bucket every other dialect returns (a Date field's bucket is then cast
        back to DATE by `bucket`)."""
        return super().truncate(exp.Cast(this=expr, to=_TIMESTAMP.copy()), grain)

    def epoch_us(self, ts: exp.Expression) -> exp.Expression:
        seconds = exp.Extract(this=exp.Var(this="EPOCH"), expression=ts)
        micros = exp.Floor(this=exp.Mul(this=seconds, expression=exp.Literal.number(1_000_000)))
        return exp.Cast(this=micros, to=_BIGINT.copy())

    def from_epoch(self, units: exp.Expression, per_ms: int) -> exp.Expression:
        unit = "MICROSECOND" if per_ms == 1000 else "MILLISECOND"
        epoch = exp.Cast(this=exp.Literal.string("1970-01-01 00:00:00"), to=_TIMESTAMP.copy())
        step = exp.Interval(this=exp.Literal.string("1"), unit=exp.Var(this=unit))
        return exp.Add(this=epoch, expression=exp.Mul(this=exp.Paren(this=units), expression=step))


POSTGRES = Postgres(
    "postgres",
    column_catalog="current_schema",
    unsupported_window_functions=POSTGRES_LACKS,
    null_ordering=sqlglot_null_ordering("postgres"),
    null_safe_full_join=False,
    streaming=True,
    time_parser=PARSER,
    spine_series="generate_series",
    transactional_ddl=True,
)
