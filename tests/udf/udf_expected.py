"""Expected window boundaries computed independently of dosi.udf (plain integer math).

Everything is in epoch milliseconds unless the name says microseconds (`_us`). Python's `//`
floors toward minus infinity, which is the behaviour the UDFs must have for pre-1970 input.
"""

from __future__ import annotations

from datetime import datetime, timedelta

EPOCH = datetime(1970, 1, 1)
MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR


def ms_of_us(ts_us: int) -> int:
    """Floor microseconds to milliseconds."""
    return ts_us // 1000


def us_of_datetime(value: datetime) -> int:
    """A naive datetime (as engines return TIMESTAMP) as epoch microseconds."""
    return (value - EPOCH) // timedelta(microseconds=1)


def datetime_of_ms(ms: int) -> datetime:
    return EPOCH + timedelta(milliseconds=ms)


def tumble(ts: int, interval: int, offset: int = 0) -> int:
    """Grid point `offset + k * interval` at or before ts."""
    return offset + ((ts - offset) // interval) * interval


def tumble_end(ts: int, interval: int, offset: int = 0) -> int:
    return tumble(ts, interval, offset) + interval


def hop(ts: int, slide: int, size: int, offset: int = 0) -> int:
    """Brute force: walk back from the latest grid start <= ts while the window still holds ts."""
    start = offset + ((ts - offset) // slide) * slide
    assert start <= ts < start + size
    while start - slide + size > ts:
        start -= slide
    return start


def hop_end(ts: int, slide: int, size: int, offset: int = 0) -> int:
    return hop(ts, slide, size, offset) + size


def cumulate(ts: int, step: int, size: int) -> int:
    assert size % step == 0
    return ts - ts % size


def cumulate_end(ts: int, step: int, size: int) -> int:
    return cumulate(ts, step, size) + size


EXPECTED_MS = {
    "tumble": tumble,
    "tumble_end": tumble_end,
    "hop": hop,
    "hop_end": hop_end,
    "cumulate": cumulate,
    "cumulate_end": cumulate_end,
}
