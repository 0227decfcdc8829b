"""The seven functions on DuckDB and on DataFusion, with the same expectations for both
(window-udf.md; UDF-GEN-01..04, UDF-TUM/HOP/SES/CUM, decided UDF-GAP-01..05).

Expected values come from `udf_expected` (plain integer math), never from dosi.udf."""

from __future__ import annotations

from datetime import date
from typing import Any

import pyarrow as pa
import pytest
import udf_expected as expected
from udf_expected import DAY, HOUR, MINUTE
from udfkit import Engine, ms_interval, to_us

from dosi.udf import error_from_engine

# epoch microseconds: the epoch, just before it (sub-millisecond), 1899, 1969, 2020, 2100
TS_US = [
    0,
    -1,
    -999,
    -1_000,
    -1_001,
    -60_000_000,
    -60_000_001,
    -2_208_988_800_000_001,
    -86_400_000_000 + 123_456,
    1_577_836_830_123_456,
    1_577_836_799_999_999,
    4_102_444_800_000_000,
]

# function -> (window-length argument values in ms, offset or None)
CASES: list[tuple[str, list[int], int | None]] = [
    ("tumble", [MINUTE], None),
    ("tumble", [15 * MINUTE], 5 * MINUTE),
    ("tumble", [15 * MINUTE], -5 * MINUTE),
    ("tumble", [7], None),
    ("tumble", [DAY], -3 * HOUR),
    ("tumble_end", [MINUTE], None),
    ("tumble_end", [HOUR], 90 * MINUTE),
    ("tumble_end", [HOUR], -90 * MINUTE),
    ("hop", [MINUTE, 5 * MINUTE], None),
    ("hop", [MINUTE, 5 * MINUTE], 10_000),
    ("hop", [2 * MINUTE, 5 * MINUTE], -10_000),
    ("hop", [HOUR, HOUR], None),
    ("hop_end", [MINUTE, 5 * MINUTE], None),
    ("hop_end", [3, 10], -4),
    ("cumulate", [HOUR, DAY], None),
    ("cumulate", [1, 1], None),
    ("cumulate_end", [HOUR, DAY], None),
    ("cumulate_end", [5 * MINUTE, HOUR], None),
]


def ts_table(values_us: list[int | None], unit_type: pa.DataType | None = None) -> pa.Table:
    return pa.table(
        {
            "i": pa.array(range(len(values_us)), pa.int64()),
            "ts": pa.array(values_us, unit_type or pa.timestamp("us")),
        }
    )


def call_sql(engine: Engine, function: str, ts: str, lengths: list[int], offset: int | None) -> str:
    args = [ms_interval(v) for v in lengths]
    if offset is not None:
        args.append(ms_interval(offset))
    return engine.call(function, ts, *args)


def expected_us(function: str, ts_us: int, lengths: list[int], offset: int | None) -> int:
    extra = [] if offset is None else [offset]
    return expected.EXPECTED_MS[function](expected.ms_of_us(ts_us), *lengths, *extra) * 1000


def column(engine: Engine, call: str, table: pa.Table) -> list[Any]:
    return [to_us(v) for v in engine.run(f"SELECT {call} AS r FROM t ORDER BY i", table)]


@pytest.mark.parametrize(("function", "lengths", "offset"), CASES)
def test_boundaries_incl_pre_1970_and_offsets(
    engine: Engine, function: str, lengths: list[int], offset: int | None
) -> None:
    """UDF-TUM-02/03, UDF-HOP-02/03, UDF-CUM-01/02, UDF-GAP-05 (floor toward minus infinity)."""
    got = column(engine, call_sql(engine, function, "ts", lengths, offset), ts_table(TS_US))
    assert got == [expected_us(function, ts, lengths, offset) for ts in TS_US]


def test_session_is_a_microsecond_passthrough_UDF_SES_01(engine: Engine) -> None:
    got = column(engine, engine.call("session", "ts", ms_interval(5 * MINUTE)), ts_table(TS_US))
    assert got == TS_US


def test_pairs_group_together_UDF_GEN_04(engine: Engine) -> None:
    values = [0, 30_000_000, 59_999_999, 60_000_000, -1]
    start = engine.call("tumble", "ts", ms_interval(MINUTE))
    end = engine.call("tumble_end", "ts", ms_interval(MINUTE))
    sql = (
        f"SELECT {start} AS s, {end} AS e, count(*) AS n FROM t GROUP BY {start}, {end} ORDER BY s"
    )
    rows = engine.run(f"SELECT n FROM ({sql}) q ORDER BY s", ts_table(values))
    assert rows == [1, 3, 1]


@pytest.mark.parametrize(("function", "lengths", "offset"), CASES[::3])
def test_null_timestamp_gives_null_UDF_GAP_01(
    engine: Engine, function: str, lengths: list[int], offset: int | None
) -> None:
    got = column(engine, call_sql(engine, function, "ts", lengths, offset), ts_table([None, 0]))
    assert got[0] is None and got[1] is not None


NULL_ARG_CASES = [
    ("tumble", 2),
    ("tumble", 3),
    ("tumble_end", 2),
    ("tumble_end", 3),
    ("hop", 3),
    ("hop", 4),
    ("hop_end", 3),
    ("hop_end", 4),
    ("session", 2),
    ("cumulate", 3),
    ("cumulate_end", 3),
]


@pytest.mark.parametrize(("function", "arity"), NULL_ARG_CASES)
def test_null_interval_arguments_give_null_UDF_GAP_01(
    engine: Engine, function: str, arity: int
) -> None:
    valid = {2: [HOUR], 3: [HOUR, DAY], 4: [HOUR, DAY, 0]}
    if function.startswith("tumble"):
        valid[3] = [HOUR, 0]
    for position in range(arity - 1):
        args = [ms_interval(v) for v in valid[arity]]
        args[position] = "NULL"
        got = engine.run(f"SELECT {engine.call(function, 'ts', *args)} FROM t", ts_table([0]))
        assert got == [None], (function, position)


def test_integer_epoch_ms_input(engine: Engine) -> None:
    """An integer timestamp argument means epoch milliseconds (DataFusion: to_timestamp_millis)."""
    values = [0, -1, -60_001, 1_577_836_830_123, None]
    table = pa.table({"i": pa.array(range(5), pa.int64()), "ms": pa.array(values, pa.int64())})
    ts = engine.epoch_ms("ms")
    for function, lengths, offset in CASES:
        got = column(engine, call_sql(engine, function, ts, lengths, offset), table)
        want = [
            None if v is None else expected_us(function, v * 1000, lengths, offset) for v in values
        ]
        assert got == want, function
    got = column(engine, engine.call("session", ts, ms_interval(MINUTE)), table)
    assert got == [None if v is None else v * 1000 for v in values]


def test_timestamptz_counts_as_its_utc_instant(engine: Engine) -> None:
    """A zoned timestamp is windowed on its UTC instant; results are naive UTC timestamps."""
    table = ts_table(TS_US, pa.timestamp("us", tz="Asia/Kolkata"))
    for function, lengths, offset in CASES:
        got = column(engine, call_sql(engine, function, "ts", lengths, offset), table)
        assert got == [expected_us(function, ts, lengths, offset) for ts in TS_US], function
    got = column(engine, engine.call("session", "ts", ms_interval(MINUTE)), table)
    assert got == TS_US


def test_date_input_is_midnight_utc(engine: Engine) -> None:
    days = [date(1969, 12, 31), date(1900, 3, 1), date(2024, 2, 29)]
    table = pa.table({"i": pa.array(range(3), pa.int64()), "ts": pa.array(days, pa.date32())})
    midnights = [(d - date(1970, 1, 1)).days * DAY * 1000 for d in days]
    got = column(engine, engine.call("tumble", "ts", ms_interval(7 * DAY)), table)
    assert got == [expected.tumble(m // 1000, 7 * DAY) * 1000 for m in midnights]


# (function, argument values as SQL, argument named in the error, phrase)
INVALID = [
    ("tumble", ["INTERVAL '1 month'"], "interval", "must be a fixed-length interval"),
    ("tumble", ["INTERVAL '1 year'"], "interval", "must be a fixed-length interval"),
    ("tumble", ["INTERVAL '1 month 1 day'"], "interval", "must be a fixed-length interval"),
    ("tumble", ["INTERVAL '1' MINUTE", "INTERVAL '1 month'"], "offset", "fixed-length"),
    ("tumble_end", ["INTERVAL '2 years'"], "interval", "must be a fixed-length interval"),
    ("hop", ["INTERVAL '1 month'", "INTERVAL '2 months'"], "slide", "fixed-length"),
    ("hop", ["INTERVAL '1' DAY", "INTERVAL '1 year'"], "size", "fixed-length"),
    ("hop_end", ["INTERVAL '1' DAY", "INTERVAL '2' DAY", "INTERVAL '1 month'"], "offset", "fixed"),
    ("session", ["INTERVAL '1 month'"], "gap", "must be a fixed-length interval"),
    ("cumulate", ["INTERVAL '1' DAY", "INTERVAL '1 month'"], "size", "fixed-length"),
    ("cumulate_end", ["INTERVAL '1 month'", "INTERVAL '1 year'"], "step", "fixed-length"),
    ("tumble", ["INTERVAL '1500 microseconds'"], "interval", "whole number of milliseconds"),
    ("tumble", ["INTERVAL '0' MINUTE"], "interval", "must be a positive interval"),
    ("tumble", ["INTERVAL '-1' MINUTE"], "interval", "must be a positive interval"),
    ("tumble_end", ["INTERVAL '0' SECOND"], "interval", "must be a positive interval"),
    ("hop", ["INTERVAL '0' MINUTE", "INTERVAL '5' MINUTE"], "slide", "positive"),
    ("hop", ["INTERVAL '1' MINUTE", "INTERVAL '-5' MINUTE"], "size", "positive"),
    ("hop", ["INTERVAL '10' MINUTE", "INTERVAL '5' MINUTE"], "slide", "not be larger than"),
    ("hop_end", ["INTERVAL '10' MINUTE", "INTERVAL '5' MINUTE"], "slide", "not be larger"),
    ("session", ["INTERVAL '0' MINUTE"], "gap", "must be a positive interval"),
    ("cumulate", ["INTERVAL '0' MINUTE", "INTERVAL '1' HOUR"], "step", "positive"),
    ("cumulate", ["INTERVAL '2' HOUR", "INTERVAL '1' HOUR"], "step", "not be larger than"),
    ("cumulate", ["INTERVAL '7' MINUTE", "INTERVAL '1' HOUR"], "size", "multiple of argument"),
    ("cumulate_end", ["INTERVAL '7' MINUTE", "INTERVAL '1' HOUR"], "size", "multiple of"),
]


@pytest.mark.parametrize(("function", "args", "argument", "phrase"), INVALID)
def test_invalid_arguments_are_rejected_UDF_GAP_02_03_04(
    engine: Engine, function: str, args: list[str], argument: str, phrase: str
) -> None:
    sql = f"SELECT {engine.call(function, 'ts', *args)} FROM t"
    with pytest.raises(Exception) as info:
        engine.run(sql, ts_table([0, 1]))
    text = str(info.value)
    assert f"[invalid_window_argument] {function}: argument '{argument}' " in text
    assert phrase in text
    error = error_from_engine(info.value)
    assert error is not None
    assert error.code == "invalid_window_argument"
    assert error.detail == {"function": function, "argument": argument}
    assert phrase in error.message


def test_invalid_interval_rejected_even_for_null_timestamp(engine: Engine) -> None:
    call = engine.call("tumble", "ts", "INTERVAL '1 month'")
    sql = f"SELECT {call} FROM t"
    with pytest.raises(Exception, match="tumble: argument 'interval'"):
        engine.run(sql, ts_table([None]))
