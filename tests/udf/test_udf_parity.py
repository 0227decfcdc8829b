"""Property tests: DuckDB macros, DataFusion UDFs and the portable SQL (run on DuckDB) give the
same boundaries as plain integer math, for random timestamps (pre-1970 included), lengths and
offsets (UDF-GEN-02, UDF-TUM-02/03, UDF-HOP-02/03, UDF-SES-01, UDF-CUM-01..03, UDF-GAP-01/05)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import udf_expected as expected
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp
from udfkit import Engine, duckdb_column, ms_interval, to_us

from dosi.sql import stream_window_bounds as portable_sql

TS_US = st.one_of(
    st.none(),
    st.integers(min_value=-2_208_988_800_000_000, max_value=4_102_444_800_000_000),  # 1900..2100
    st.integers(min_value=-(10**7), max_value=10**7),  # around the epoch
)
LENGTH_MS = st.one_of(
    st.sampled_from([1, 7, 1000, 60_000, 3_600_000, 86_400_000, 604_800_000]),
    st.integers(min_value=1, max_value=30 * expected.DAY),
)
OFFSET_MS = st.integers(min_value=-2 * expected.DAY, max_value=2 * expected.DAY)


@dataclass(frozen=True)
class Params:
    interval: int
    offset: int
    slide: int
    size: int
    step: int
    epoch: int
    gap: int


@st.composite
def params(draw: st.DrawFn) -> Params:
    slide = draw(st.integers(min_value=1, max_value=expected.DAY))
    size = slide * draw(st.integers(min_value=1, max_value=20))
    size += draw(st.integers(min_value=0, max_value=slide - 1))
    step = draw(st.integers(min_value=1, max_value=expected.DAY))
    epoch = step * draw(st.integers(min_value=1, max_value=50))
    return Params(
        interval=draw(LENGTH_MS),
        offset=draw(OFFSET_MS),
        slide=slide,
        size=size,
        step=step,
        epoch=epoch,
        gap=draw(LENGTH_MS),
    )


# (label, function, argument names from Params)
COLUMNS = [
    ("tumble", "tumble", ("interval",)),
    ("tumble_o", "tumble", ("interval", "offset")),
    ("tumble_end", "tumble_end", ("interval",)),
    ("tumble_end_o", "tumble_end", ("interval", "offset")),
    ("hop", "hop", ("slide", "size")),
    ("hop_o", "hop", ("slide", "size", "offset")),
    ("hop_end", "hop_end", ("slide", "size")),
    ("hop_end_o", "hop_end", ("slide", "size", "offset")),
    ("session", "session", ("gap",)),
    ("cumulate", "cumulate", ("step", "epoch")),
    ("cumulate_end", "cumulate_end", ("step", "epoch")),
]


def expected_columns(ts_ms: list[int | None], p: Params) -> list[list[int | None]]:
    out = []
    for _, function, names in COLUMNS:
        args = [getattr(p, n) for n in names]
        if function == "session":
            out.append([None if t is None else t for t in ts_ms])
        else:
            fn = expected.EXPECTED_MS[function]
            out.append([None if t is None else fn(t, *args) for t in ts_ms])
    return out


def engine_sql(engine: Engine, ts: str, p: Params) -> str:
    items = [
        engine.call(fn, ts, *(ms_interval(getattr(p, n)) for n in names)) + f" AS {label}"
        for label, fn, names in COLUMNS
    ]
    return f"SELECT {', '.join(items)} FROM t ORDER BY i"


_BUILDERS = {
    "tumble": portable_sql.tumble_start_expr,
    "tumble_end": portable_sql.tumble_end_expr,
    "hop": portable_sql.hop_start_expr,
    "hop_end": portable_sql.hop_end_expr,
    "cumulate": portable_sql.cumulate_start_expr,
    "cumulate_end": portable_sql.cumulate_end_expr,
    "session": portable_sql.session_expr,
}


def portable_sql_text(p: Params, ts_kind: portable_sql.TsKind, output: portable_sql.Output) -> str:
    items = []
    for label, function, names in COLUMNS:
        args = [getattr(p, n) for n in names]
        if function in ("tumble", "tumble_end", "hop", "hop_end") and "offset" not in names:
            args.append(0)
        node = _BUILDERS[function](
            exp.column("ts"), *args, dialect="duckdb", ts_kind=ts_kind, output=output
        )
        items.append(exp.alias_(node, label))
    return exp.select(*items).from_("t").order_by("i").sql("duckdb")


def rows_to_columns(engine: Engine, sql: str, table: pa.Table) -> list[list[Any]]:
    if engine.name == "duckdb":
        engine.handle.register("t", table)
        try:
            rows = engine.handle.execute(sql).fetchall()
        finally:
            engine.handle.unregister("t")
        return [[to_us(r[c]) for r in rows] for c in range(len(COLUMNS))]
    if engine.handle.table_exist("t"):
        engine.handle.deregister_table("t")
    engine.handle.register_record_batches("t", [table.to_batches()])
    result = engine.handle.sql(sql).to_arrow_table()
    return [[to_us(v) for v in result.column(c).to_pylist()] for c in range(len(COLUMNS))]


def as_us(columns: list[list[int | None]]) -> list[list[int | None]]:
    return [[None if v is None else v * 1000 for v in col] for col in columns]


SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(ts_us=st.lists(TS_US, min_size=1, max_size=25), p=params())
def test_timestamp_input_same_on_all_engines(
    duck: Any, dfctx: Any, ts_us: list[int | None], p: Params
) -> None:
    table = pa.table(
        {"i": pa.array(range(len(ts_us)), pa.int64()), "ts": pa.array(ts_us, pa.timestamp("us"))}
    )
    ts_ms = [None if v is None else expected.ms_of_us(v) for v in ts_us]
    want = as_us(expected_columns(ts_ms, p))
    want[COLUMNS.index(("session", "session", ("gap",)))] = list(ts_us)  # µs passthrough
    for engine in (Engine("duckdb", duck), Engine("datafusion", dfctx)):
        assert rows_to_columns(engine, engine_sql(engine, "ts", p), table) == want, engine.name
    portable = rows_to_columns(
        Engine("duckdb", duck), portable_sql_text(p, "timestamp", "timestamp"), table
    )
    assert portable == want
    # the epoch-millisecond output of the portable expressions is the same instant, floored
    duck.register("t", table)
    try:
        rows = duck.execute(portable_sql_text(p, "timestamp", "epoch_ms")).fetchall()
    finally:
        duck.unregister("t")
    assert [list(col) for col in zip(*rows, strict=True)] == expected_columns(ts_ms, p)


@SETTINGS
@given(
    ts_ms=st.lists(
        st.one_of(
            st.none(), st.integers(min_value=-2_208_988_800_000, max_value=4_102_444_800_000)
        ),
        min_size=1,
        max_size=25,
    ),
    p=params(),
)
def test_integer_epoch_ms_input_same_on_all_engines(
    duck: Any, dfctx: Any, ts_ms: list[int | None], p: Params
) -> None:
    table = pa.table(
        {"i": pa.array(range(len(ts_ms)), pa.int64()), "ts": pa.array(ts_ms, pa.int64())}
    )
    want = as_us(expected_columns(ts_ms, p))
    for engine in (Engine("duckdb", duck), Engine("datafusion", dfctx)):
        got = rows_to_columns(engine, engine_sql(engine, engine.epoch_ms("ts"), p), table)
        assert got == want, engine.name
    portable = rows_to_columns(
        Engine("duckdb", duck), portable_sql_text(p, "epoch_ms", "timestamp"), table
    )
    assert portable == want
    rows = duckdb_column(duck, portable_sql_text(p, "epoch_ms", "epoch_ms"), table)
    assert rows == expected_columns(ts_ms, p)[0]
