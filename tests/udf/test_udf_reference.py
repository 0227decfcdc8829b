"""dosi.udf.reference: the millisecond formulas (UDF-TUM-02/03, UDF-HOP-02/03, UDF-SES-01,
UDF-CUM-01..03) and the argument rules (UDF-GAP-02, UDF-GAP-04), against plain integer math."""

from __future__ import annotations

import pytest
import udf_expected as expected
from hypothesis import given
from hypothesis import strategies as st

from dosi.errors import QueryError
from dosi.udf import reference

TS = st.integers(min_value=-(10**13), max_value=10**13)  # about 1653..2286, pre-1970 included
LENGTH = st.integers(min_value=1, max_value=10 * expected.DAY)
OFFSET = st.integers(min_value=-3 * expected.DAY, max_value=3 * expected.DAY)


@given(ts=TS, interval=LENGTH, offset=OFFSET)
def test_tumble_contains_ts_UDF_TUM_02(ts: int, interval: int, offset: int) -> None:
    start = reference.tumble(ts, interval, offset)
    assert start <= ts < start + interval
    assert (start - offset) % interval == 0
    assert start == expected.tumble(ts, interval, offset)


@given(ts=TS, interval=LENGTH, offset=OFFSET)
def test_tumble_end_is_start_plus_interval_UDF_TUM_03(ts: int, interval: int, offset: int) -> None:
    assert (
        reference.tumble_end(ts, interval, offset)
        == expected.tumble(ts, interval, offset) + interval
    )


@given(
    ts=TS,
    slide=st.integers(min_value=1, max_value=expected.HOUR),
    ratio=st.integers(min_value=1, max_value=40),
    extra=st.integers(min_value=0, max_value=expected.HOUR),
    offset=OFFSET,
)
def test_hop_earliest_window_UDF_HOP_02(
    ts: int, slide: int, ratio: int, extra: int, offset: int
) -> None:
    size = slide * ratio + min(extra, slide - 1)
    start = reference.hop(ts, slide, size, offset)
    assert start == expected.hop(ts, slide, size, offset)
    assert start <= ts < start + size
    assert start - slide + size <= ts  # the window one slide earlier no longer holds ts
    assert reference.hop_end(ts, slide, size, offset) == start + size  # UDF-HOP-03


@given(
    ts=TS,
    step=st.integers(min_value=1, max_value=expected.HOUR),
    factor=st.integers(min_value=1, max_value=100),
)
def test_cumulate_size_aligned_epoch_UDF_CUM_01_02_03(ts: int, step: int, factor: int) -> None:
    size = step * factor
    start = reference.cumulate(ts, step, size)
    assert start == ts - ts % size
    assert reference.cumulate_end(ts, step, size) == start + size
    # UDF-CUM-03: the result depends on ts and size only, not on step
    assert start == reference.cumulate(ts, size, size)


@given(ts=TS, gap=LENGTH)
def test_session_passthrough_UDF_SES_01(ts: int, gap: int) -> None:
    assert reference.session(ts, gap) == ts


def test_pre_1970_examples_UDF_GAP_05() -> None:
    # -1 ms is 1969-12-31 23:59:59.999: its minute starts at -60000, not 0
    assert reference.tumble(-1, expected.MINUTE) == -60_000
    assert reference.tumble_end(-1, expected.MINUTE) == 0
    assert reference.tumble(-60_000, expected.MINUTE) == -60_000
    assert reference.tumble(-60_001, expected.MINUTE) == -120_000
    assert reference.hop(-1, expected.MINUTE, 5 * expected.MINUTE) == -300_000
    assert reference.cumulate(-1, expected.HOUR, expected.DAY) == -expected.DAY


def test_offsets_positive_and_negative() -> None:
    # 10:07 with 15-minute windows shifted by +5 minutes -> 10:05; by -5 minutes -> 09:55
    ts = 10 * expected.HOUR + 7 * expected.MINUTE
    q = 15 * expected.MINUTE
    assert reference.tumble(ts, q, 5 * expected.MINUTE) == 10 * expected.HOUR + 5 * expected.MINUTE
    assert reference.tumble(ts, q, -5 * expected.MINUTE) == 9 * expected.HOUR + 55 * expected.MINUTE
    # an offset larger than the interval means the same grid
    assert reference.tumble(ts, q, 5 * expected.MINUTE + 3 * q) == reference.tumble(
        ts, q, 5 * expected.MINUTE
    )


@pytest.mark.parametrize(
    ("call", "function", "argument", "phrase"),
    [
        (lambda: reference.tumble(0, 0), "tumble", "interval", "must be a positive interval"),
        (lambda: reference.tumble_end(0, -5), "tumble_end", "interval", "must be a positive"),
        (lambda: reference.hop(0, 0, 10), "hop", "slide", "must be a positive interval"),
        (lambda: reference.hop_end(0, 10, 0), "hop_end", "size", "must be a positive interval"),
        (
            lambda: reference.hop(0, 20, 10),
            "hop",
            "slide",
            "must not be larger than argument 'size'",
        ),
        (lambda: reference.session(0, 0), "session", "gap", "must be a positive interval"),
        (lambda: reference.cumulate(0, 0, 10), "cumulate", "step", "must be a positive interval"),
        (
            lambda: reference.cumulate(0, 20, 10),
            "cumulate",
            "step",
            "must not be larger than argument 'size'",
        ),
        (
            lambda: reference.cumulate_end(0, 3, 10),
            "cumulate_end",
            "size",
            "must be a multiple of argument 'step'",
        ),
        (lambda: reference.tumble(0, 1.5), "tumble", "interval", "whole number of milliseconds"),  # type: ignore[arg-type]
        (lambda: reference.tumble(0, 10, 0.5), "tumble", "offset", "whole number of milliseconds"),  # type: ignore[arg-type]
    ],
)
def test_invalid_arguments_name_function_and_argument_UDF_GAP_02_04(
    call: object, function: str, argument: str, phrase: str
) -> None:
    with pytest.raises(QueryError) as info:
        call()  # type: ignore[operator]
    assert info.value.code == "invalid_window_argument"
    assert info.value.message.startswith(f"{function}: argument '{argument}' ")
    assert phrase in info.value.message
    assert info.value.detail == {"function": function, "argument": argument}


def test_error_from_engine_only_reads_window_errors() -> None:
    from dosi.udf import error_from_engine

    assert error_from_engine(RuntimeError("Binder Error: column x not found")) is None
    text = "Invalid Input Error: [invalid_window_argument] hop: argument 'slide' must be a positive interval"
    error = error_from_engine(RuntimeError(text))
    assert error is not None
    assert str(error).startswith("[invalid_window_argument] hop: argument 'slide' must be")
    assert error.detail == {"function": "hop", "argument": "slide"}
