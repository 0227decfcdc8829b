"""parse_interval_ms: fixed-length intervals to milliseconds (UDF-GEN-02, UDF-GAP-03)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dosi.errors import QueryError
from dosi.udf import parse_interval_ms


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5 minutes", 5 * 60 * 1000),
        ("1 hour", 60 * 60 * 1000),
        ("90 seconds", 90 * 1000),
        ("1 day", 24 * 60 * 60 * 1000),
        ("2 weeks", 2 * 7 * 24 * 60 * 60 * 1000),
        ("500 milliseconds", 500),
        ("1 minute", 60 * 1000),
        ("1 Hour 30 Minutes", 90 * 60 * 1000),
        ("1.5 hours", 90 * 60 * 1000),
        ("10s", 10 * 1000),
        ("250ms", 250),
        ("3000 microseconds", 3),
        ("-5 minutes", -5 * 60 * 1000),
        ("INTERVAL '1' MINUTE", 60 * 1000),
        ("interval '2 hours'", 2 * 60 * 60 * 1000),
        ("PT1M", 60 * 1000),
        ("PT0.25S", 250),
        ("P1DT2H", 26 * 60 * 60 * 1000),
        ("P2W", 14 * 24 * 60 * 60 * 1000),
    ],
)
def test_parse_text(text: str, expected: int) -> None:
    assert parse_interval_ms(text) == expected


def test_parse_int_and_timedelta() -> None:
    assert parse_interval_ms(1234) == 1234
    assert parse_interval_ms(timedelta(minutes=2, milliseconds=5)) == 2 * 60 * 1000 + 5
    assert parse_interval_ms(timedelta(milliseconds=-3)) == -3


@pytest.mark.parametrize(
    "text", ["1 month", "2 months", "1 year", "1 mon", "1 quarter", "P1M", "P1Y"]
)
def test_month_and_year_rejected_UDF_GAP_03(text: str) -> None:
    with pytest.raises(QueryError) as info:
        parse_interval_ms(text, function="tumble", argument="interval")
    assert info.value.code == "invalid_window_argument"
    assert info.value.message.startswith("tumble: argument 'interval' must be a fixed-length")
    assert info.value.detail == {"function": "tumble", "argument": "interval"}
    assert info.value.hint


@pytest.mark.parametrize(
    "value", ["1500 microseconds", "0.5 ms", "PT0.0005S", timedelta(microseconds=1500)]
)
def test_sub_millisecond_rejected(value: object) -> None:
    with pytest.raises(QueryError, match="whole number of milliseconds"):
        parse_interval_ms(value)  # type: ignore[arg-type]


def test_unknown_unit_suggests_candidates() -> None:
    with pytest.raises(QueryError) as info:
        parse_interval_ms("5 minuts", function="hop", argument="slide")
    assert info.value.code == "invalid_window_argument"
    assert "hop: argument 'slide' is not an interval" in info.value.message
    assert "minutes" in info.value.candidates


@pytest.mark.parametrize("value", ["", "abc", "5", "P", "minutes", True, 1.5, None])
def test_not_an_interval(value: object) -> None:
    with pytest.raises(QueryError, match="is not an interval"):
        parse_interval_ms(value)  # type: ignore[arg-type]
