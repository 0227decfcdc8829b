"""PostgreSQL (14+): DATE_TRUNC on a DATE picks the timestamptz overload, FULL JOIN accepts only
merge- or hash-joinable conditions (no IS NOT DISTINCT FROM), and epochs go through
EXTRACT(EPOCH ...) (exact numeric since 14)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering

_TIMESTAMP = exp.DataType.build("TIMESTAMP")
_BIGINT = exp.DataType.build("BIGINT")


@dataclass(frozen=True)
class Postgres(Dialect):
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
    null_ordering=sqlglot_null_ordering("postgres"),
    null_safe_full_join=False,
    streaming=True,
)
