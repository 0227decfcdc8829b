"""DuckDB specifics of the window macros: registration, arity/type errors, result type,
time-zone independence (UDF-GEN-01, UDF-GEN-03, UDF-TUM-01, UDF-HOP-01, UDF-SES-01/02,
UDF-CUM-01/02, UDF-GAP-02)."""

from __future__ import annotations

from typing import Any

import pytest
from udfkit import to_us

import dosi.udf

duckdb = pytest.importorskip("duckdb")

SEVEN = {"tumble", "tumble_end", "hop", "hop_end", "session", "cumulate", "cumulate_end"}


def macro_names(con: Any) -> set[str]:
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'macro' "
        "AND database_name = 'temp'"
    ).fetchall()
    return {r[0] for r in rows}


def test_registers_the_seven_functions_and_no_session_end_UDF_GEN_01_SES_02(duck: Any) -> None:
    assert macro_names(duck) >= SEVEN
    assert "session_end" not in macro_names(duck)
    with pytest.raises(duckdb.CatalogException, match="session_end"):
        duck.execute("SELECT session_end(TIMESTAMP '2020-01-01', INTERVAL 1 MINUTE)")


def test_registration_is_idempotent_and_per_connection(duck: Any) -> None:
    dosi.udf.register_duckdb(duck)
    assert macro_names(duck) >= SEVEN
    other = duckdb.connect()
    try:
        assert not SEVEN & macro_names(other)
        dosi.udf.register_duckdb(other)
        assert macro_names(other) >= SEVEN
    finally:
        other.close()


def test_result_type_is_timestamp_microseconds_UDF_GEN_03(duck: Any) -> None:
    calls = [
        "tumble(TIMESTAMP_NS '2020-01-01', INTERVAL 1 MINUTE)",
        "tumble_end(TIMESTAMPTZ '2020-01-01 00:00:00+00', INTERVAL 1 MINUTE, INTERVAL 1 SECOND)",
        "hop(DATE '2020-01-01', INTERVAL 1 MINUTE, INTERVAL 5 MINUTE)",
        "hop_end(1000, INTERVAL 1 MINUTE, INTERVAL 5 MINUTE, INTERVAL 1 SECOND)",
        "session(TIMESTAMP_MS '2020-01-01', INTERVAL 1 MINUTE)",
        "cumulate(TIMESTAMP_S '2020-01-01', INTERVAL 1 HOUR, INTERVAL 1 DAY)",
        "cumulate_end(CAST(5 AS INTEGER), INTERVAL 1 HOUR, INTERVAL 1 DAY)",
    ]
    for call in calls:
        assert duck.execute(f"SELECT typeof({call})").fetchone() == ("TIMESTAMP",), call


@pytest.mark.parametrize(
    ("call", "function"),
    [
        ("tumble(TIMESTAMP '2020-01-01')", "tumble"),
        (
            "tumble(TIMESTAMP '2020-01-01', INTERVAL 1 MINUTE, INTERVAL 1 SECOND, INTERVAL 1 SECOND)",
            "tumble",
        ),
        ("tumble_end(TIMESTAMP '2020-01-01')", "tumble_end"),
        ("hop(TIMESTAMP '2020-01-01', INTERVAL 1 MINUTE)", "hop"),
        (
            "hop_end(TIMESTAMP '2020-01-01', INTERVAL 1 MINUTE, INTERVAL 1 MINUTE, INTERVAL 1 MINUTE, INTERVAL 1 MINUTE)",
            "hop_end",
        ),
        ("session(TIMESTAMP '2020-01-01')", "session"),
        ("session(TIMESTAMP '2020-01-01', INTERVAL 1 MINUTE, INTERVAL 1 MINUTE)", "session"),
        ("cumulate(TIMESTAMP '2020-01-01', INTERVAL 1 MINUTE)", "cumulate"),
        (
            "cumulate_end(TIMESTAMP '2020-01-01', INTERVAL 1 MINUTE, INTERVAL 1 HOUR, INTERVAL 1 SECOND)",
            "cumulate_end",
        ),
    ],
)
def test_wrong_arity_names_the_function_UDF_TUM_01_HOP_01_SES_01_CUM_01(
    duck: Any, call: str, function: str
) -> None:
    with pytest.raises(duckdb.BinderException) as info:
        duck.execute(f"SELECT {call}")
    text = str(info.value).replace('"', "")  # DuckDB quotes keywords such as session
    assert f"Macro {function}()" in text
    # the candidate list names every argument
    assert f"{function}(ts TIMESTAMP, " in text


@pytest.mark.parametrize(
    "call",
    [
        "tumble(TIMESTAMP '2020-01-01', 60000)",  # a length must be an INTERVAL
        "tumble('2020-01-01', INTERVAL 1 MINUTE)",  # text is not a timestamp
        "tumble(1.5, INTERVAL 1 MINUTE)",
        "hop(TIMESTAMP '2020-01-01', INTERVAL 1 MINUTE, 'five')",
    ],
)
def test_wrong_argument_types_name_function_and_arguments_UDF_GAP_02(duck: Any, call: str) -> None:
    function = call.split("(", 1)[0]
    with pytest.raises(duckdb.BinderException) as info:
        duck.execute(f"SELECT {call}")
    text = str(info.value)
    assert f"Macro {function}()" in text
    assert "interval INTERVAL" in text or "slide INTERVAL" in text


def test_timestamptz_ignores_the_session_time_zone(duck: Any) -> None:
    """TIMESTAMPTZ is windowed on its UTC instant whatever the connection's TimeZone."""
    sql = "SELECT tumble(TIMESTAMPTZ '2020-01-01 03:30:00+05:30', INTERVAL 1 DAY)"
    duck.execute("SET TimeZone = 'UTC'")
    utc = duck.execute(sql).fetchone()[0]
    duck.execute("SET TimeZone = 'America/New_York'")
    assert duck.execute(sql).fetchone()[0] == utc
    # 03:30+05:30 is 2019-12-31 22:00 UTC, so its UTC day starts 2019-12-31
    assert to_us(utc) == (1_577_836_800_000 - 86_400_000) * 1000


def test_nanosecond_input_is_floored_UDF_GAP_05(duck: Any) -> None:
    """TIMESTAMP_NS is floored (DuckDB's own cast to TIMESTAMP would round)."""
    row = duck.execute(
        "SELECT tumble(TIMESTAMP_NS '2020-01-01 00:00:59.999999999', INTERVAL 1 MINUTE), "
        "session(TIMESTAMP_NS '2020-01-01 00:00:00.123456789', INTERVAL 1 MINUTE), "
        "session(TIMESTAMP_NS '1969-12-31 23:59:59.9999995', INTERVAL 1 MINUTE), "
        "tumble(TIMESTAMP_NS '1969-12-31 23:59:59.999999999', INTERVAL 1 MILLISECOND)"
    ).fetchone()
    assert [to_us(v) for v in row] == [1_577_836_800_000_000, 1_577_836_800_123_456, -1, -1000]


def test_integer_types_are_epoch_milliseconds(duck: Any) -> None:
    row = duck.execute(
        "SELECT tumble(CAST(-1 AS INTEGER), INTERVAL 1 SECOND), "
        "tumble(CAST(-1 AS SMALLINT), INTERVAL 1 SECOND), tumble(-1, INTERVAL 1 SECOND)"
    ).fetchone()
    assert [to_us(v) for v in row] == [-1_000_000] * 3


def test_macros_work_on_a_read_only_database(tmp_path: Any) -> None:
    path = str(tmp_path / "ro.duckdb")
    duckdb.connect(path).close()
    con = duckdb.connect(path, read_only=True)
    try:
        dosi.udf.register_duckdb(con)
        value = con.execute("SELECT tumble(-1, INTERVAL 1 MINUTE)").fetchone()[0]
        assert to_us(value) == -60_000_000
    finally:
        con.close()


def test_every_declared_arity_binds_UDF_TUM_01_HOP_01_SES_01_CUM_01_02(duck: Any) -> None:
    for function, arities in dosi.udf.WINDOW_FUNCTION_ARITIES.items():
        for arity in arities:
            args = ", ".join(["INTERVAL 1 HOUR"] * (arity - 1))
            value = duck.execute(f"SELECT {function}(TIMESTAMP '2020-01-01 00:30', {args})")
            assert value.fetchone()[0] is not None, (function, arity)
