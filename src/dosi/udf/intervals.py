"""Parse window intervals written in a model or a query into whole epoch milliseconds.

Window math runs in milliseconds (window-udf.md, UDF-GEN-02), so only fixed-length units are
accepted: months and years are rejected (UDF-GAP-03 as decided). The sign is kept, because an
`offset` may be negative; the window functions check that lengths are positive.
"""

from __future__ import annotations

import re
from datetime import timedelta
from fractions import Fraction
from typing import Final

from dosi.errors import QueryError, closest
from dosi.udf.validation import (
    NOT_AN_INTERVAL,
    NOT_FIXED_LENGTH,
    NOT_WHOLE_MS,
    window_argument_error,
)

__all__ = ["parse_interval_ms"]

_MS_PER_UNIT: Final[dict[str, Fraction]] = {}
for _names, _ms in (
    (("us", "usec", "usecs", "microsecond", "microseconds"), Fraction(1, 1000)),
    (("ms", "msec", "msecs", "millisecond", "milliseconds"), Fraction(1)),
    (("s", "sec", "secs", "second", "seconds"), Fraction(1_000)),
    (("m", "min", "mins", "minute", "minutes"), Fraction(60_000)),
    (("h", "hr", "hrs", "hour", "hours"), Fraction(3_600_000)),
    (("d", "day", "days"), Fraction(86_400_000)),
    (("w", "week", "weeks"), Fraction(604_800_000)),
):
    for _name in _names:
        _MS_PER_UNIT[_name] = _ms

_CALENDAR_UNITS: Final = frozenset(
    [
        "mon",
        "mons",
        "month",
        "months",
        "y",
        "yr",
        "yrs",
        "year",
        "years",
        "quarter",
        "quarters",
        "decade",
        "decades",
        "century",
        "centuries",
        "millennium",
        "millennia",
        "millenniums",
    ]
)

_PART = re.compile(r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*([a-z]+)\s*,?")
_ISO = re.compile(
    r"p(?:(?P<y>\d+(?:\.\d+)?)y)?(?:(?P<mo>\d+(?:\.\d+)?)m)?(?:(?P<w>\d+(?:\.\d+)?)w)?"
    r"(?:(?P<d>\d+(?:\.\d+)?)d)?"
    r"(?:t(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<mi>\d+(?:\.\d+)?)m)?(?:(?P<s>\d+(?:\.\d+)?)s)?)?"
)
_SQL_LITERAL = re.compile(r"interval\s+(?P<body>.*)", re.DOTALL)


def parse_interval_ms(
    value: str | int | timedelta,
    *,
    function: str = "parse_interval_ms",
    argument: str = "value",
) -> int:
    """Return `value` as a whole number of milliseconds.

    Accepts an int (already milliseconds), a `timedelta`, or text such as ``"5 minutes"``,
    ``"1 hour 30 minutes"``, ``"90 seconds"``, ``"500 milliseconds"``, ``"2 weeks"``,
    ``"INTERVAL '1' MINUTE"``, ``"INTERVAL '1 minute'"`` or ISO 8601 ``"PT1M"``.
    Months and years, sub-millisecond remainders and unknown text raise `QueryError`
    (code ``invalid_window_argument``) naming `function` and `argument`.
    """
    if isinstance(value, bool):
        raise window_argument_error(function, argument, NOT_AN_INTERVAL)
    if isinstance(value, int):
        return value
    if isinstance(value, timedelta):
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        return _whole_ms(Fraction(micros, 1000), function, argument)
    if not isinstance(value, str):
        raise window_argument_error(function, argument, NOT_AN_INTERVAL)
    return _whole_ms(_parse_text(value, function, argument), function, argument)


def _whole_ms(total: Fraction, function: str, argument: str) -> int:
    if total.denominator != 1:
        raise window_argument_error(function, argument, NOT_WHOLE_MS)
    return int(total)


def _parse_text(text: str, function: str, argument: str) -> Fraction:
    if len(text) > 200 or any(len(run) > 30 for run in re.findall(r"\d+", text)):
        raise window_argument_error(function, argument, NOT_AN_INTERVAL)  # bounded input
    body = text.strip().lower()
    literal = _SQL_LITERAL.fullmatch(body)
    if literal is not None:
        body = literal["body"].replace("'", " ").strip()
    iso = _ISO.fullmatch(body) if body.startswith("p") else None
    if iso is not None and any(iso.groupdict().values()):
        return _from_iso(iso, function, argument)
    return _from_parts(body, text, function, argument)


def _from_iso(found: re.Match[str], function: str, argument: str) -> Fraction:
    if found["y"] or found["mo"]:
        raise window_argument_error(function, argument, NOT_FIXED_LENGTH)
    total = Fraction(0)
    for group, unit in (("w", "w"), ("d", "d"), ("h", "h"), ("mi", "m"), ("s", "s")):
        if found[group]:
            total += Fraction(found[group]) * _MS_PER_UNIT[unit]
    return total


def _from_parts(body: str, original: str, function: str, argument: str) -> Fraction:
    total = Fraction(0)
    position = 0
    while position < len(body):
        part = _PART.match(body, position)
        if part is None or part.end() == position:
            raise _not_an_interval(original, function, argument)
        number, unit = part.groups()
        if unit in _CALENDAR_UNITS:
            raise window_argument_error(function, argument, NOT_FIXED_LENGTH)
        if unit not in _MS_PER_UNIT:
            raise _not_an_interval(original, function, argument, unit)
        total += Fraction(number) * _MS_PER_UNIT[unit]
        position = part.end()
    if position == 0:
        raise _not_an_interval(original, function, argument)
    return total


def _not_an_interval(
    original: str, function: str, argument: str, unit: str | None = None
) -> QueryError:
    error = window_argument_error(function, argument, f"{NOT_AN_INTERVAL}: {original!r}")
    if unit is not None:
        error.candidates = closest(unit, _MS_PER_UNIT, n=3)
    error.hint = "write a number and a unit, e.g. '5 minutes', '1 hour', '500 milliseconds'"
    return error
