"""DataFusion specifics of the window UDFs: registration, one signature per name (offset forms
and `rewrite_for_datafusion`), arity errors, result type, input coercions (UDF-GEN-01, UDF-GEN-03,
UDF-TUM-01, UDF-HOP-01, UDF-SES-01/02, UDF-CUM-01/02)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
import sqlglot
from udfkit import to_us

import dosi.udf
from dosi.udf.datafusion_udfs import OFFSET_VARIANTS

datafusion = pytest.importorskip("datafusion")

SEVEN = {"tumble", "tumble_end", "hop", "hop_end", "session", "cumulate", "cumulate_end"}


def one(ctx: Any, sql: str) -> Any:
    return ctx.sql(sql).to_arrow_table().column(0)


def test_registers_the_seven_functions_and_offset_forms_UDF_GEN_01_SES_02(dfctx: Any) -> None:
    names = set(dfctx.udfs())
    assert SEVEN | set(OFFSET_VARIANTS.values()) <= names
    assert "session_end" not in names


def test_result_type_is_timestamp_microseconds_no_zone_UDF_GEN_03(dfctx: Any) -> None:
    calls = [
        "tumble(TIMESTAMP '2020-01-01', INTERVAL '1' MINUTE)",
        "tumble_end_offset(TIMESTAMP '2020-01-01', INTERVAL '1' MINUTE, INTERVAL '1' SECOND)",
        "hop(DATE '2020-01-01', INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)",
        "session(arrow_cast(TIMESTAMP '2020-01-01', 'Timestamp(Second, Some(\"UTC\"))'), "
        "INTERVAL '1' MINUTE)",
        "cumulate_end(TIMESTAMP '2020-01-01', INTERVAL '1' HOUR, INTERVAL '1' DAY)",
    ]
    for call in calls:
        assert one(dfctx, f"SELECT {call} AS r").type == pa.timestamp("us"), call


@pytest.mark.parametrize(
    ("call", "function"),
    [
        ("tumble(TIMESTAMP '2020-01-01')", "tumble"),
        (
            "tumble_end(TIMESTAMP '2020-01-01', INTERVAL '1' MINUTE, INTERVAL '1' MINUTE, INTERVAL '1' MINUTE)",
            "tumble_end",
        ),
        ("hop(TIMESTAMP '2020-01-01', INTERVAL '1' MINUTE)", "hop"),
        ("session(TIMESTAMP '2020-01-01')", "session"),
        ("cumulate(TIMESTAMP '2020-01-01', INTERVAL '1' MINUTE)", "cumulate"),
        ("tumble(TIMESTAMP '2020-01-01', 60000)", "tumble"),
    ],
)
def test_wrong_arity_or_type_names_the_function(dfctx: Any, call: str, function: str) -> None:
    with pytest.raises(Exception, match=f"call to '{function}' function"):
        dfctx.sql(f"SELECT {call}").collect()


def test_offset_forms_via_rewrite_for_datafusion_UDF_TUM_01_HOP_01(dfctx: Any) -> None:
    sql = (
        "SELECT tumble(ts, INTERVAL '15' MINUTE, INTERVAL '5' MINUTE) AS a, "
        "tumble_end(ts, INTERVAL '15' MINUTE, INTERVAL '-5' MINUTE) AS b, "
        "hop(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE, INTERVAL '10' SECOND) AS c, "
        "hop_end(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE, INTERVAL '10' SECOND) AS d, "
        "tumble(ts, INTERVAL '15' MINUTE) AS e "
        "FROM (SELECT TIMESTAMP '2020-01-01 10:07:00' AS ts) s"
    )
    rewritten = dosi.udf.rewrite_for_datafusion(sqlglot.parse_one(sql)).sql()
    assert "TUMBLE_OFFSET(" in rewritten and "HOP_END_OFFSET(" in rewritten
    row = dfctx.sql(rewritten).to_pylist()[0]
    base = 1_577_872_800_000  # 2020-01-01 10:00 in epoch ms
    minute = 60_000
    assert to_us(row["a"]) == (base + 5 * minute) * 1000
    assert to_us(row["b"]) == (base - 5 * minute + 15 * minute) * 1000
    # earliest 5-minute window on the 1-minute grid shifted by 10 s that holds 10:07:00
    assert to_us(row["c"]) == (base + 2 * minute + 10_000) * 1000
    assert to_us(row["d"]) == (base + 7 * minute + 10_000) * 1000
    assert to_us(row["e"]) == base * 1000


def test_integer_column_needs_to_timestamp_millis(dfctx: Any) -> None:
    """Int64 cannot be coerced into the timestamp parameter; the planning error names tumble."""
    dfctx.register_record_batches("m", [[pa.record_batch({"ms": pa.array([-1], pa.int64())})]])
    with pytest.raises(Exception, match="call to 'tumble' function"):
        dfctx.sql("SELECT tumble(ms, INTERVAL '1' SECOND) FROM m").collect()
    got = one(dfctx, "SELECT tumble(to_timestamp_millis(ms), INTERVAL '1' SECOND) FROM m")
    assert [to_us(v) for v in got.to_pylist()] == [-1_000_000]


def test_text_arguments_are_coerced_by_datafusion(dfctx: Any) -> None:
    got = one(dfctx, "SELECT tumble('2020-01-01 00:00:30', '1 minute')").to_pylist()
    assert [to_us(v) for v in got] == [1_577_836_800_000_000]


def test_nanosecond_input_is_cast_to_microseconds_first(dfctx: Any) -> None:
    """DataFusion's coercion casts nanoseconds to microseconds by truncation toward zero before
    the UDF runs: a floor for any instant from 1970 on (earlier ones can differ by 1 µs)."""
    got = one(
        dfctx,
        "SELECT session(TIMESTAMP '2020-01-01 00:00:00.123456789', INTERVAL '1' MINUTE)",
    ).to_pylist()
    assert [to_us(v) for v in got] == [1_577_836_800_123_456]


def test_many_batches_and_mixed_nulls_are_vectorized(dfctx: Any) -> None:
    values = [None if i % 7 == 0 else (i - 500) * 37_001 for i in range(1000)]
    batches = [
        pa.record_batch(
            {
                "i": pa.array(range(i, i + 100), pa.int64()),
                "ts": pa.array(values[i : i + 100], pa.timestamp("us")),
            }
        )
        for i in range(0, 1000, 100)
    ]
    dfctx.register_record_batches("b", [batches])
    got = one(dfctx, "SELECT tumble(ts, INTERVAL '3' MILLISECOND) FROM b ORDER BY i").to_pylist()
    want = [None if v is None else ((v // 1000) // 3 * 3) * 1000 for v in values]
    assert [to_us(v) for v in got] == want
