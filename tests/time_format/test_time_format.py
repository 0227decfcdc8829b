"""D-FORMAT: encoded time columns (issue 12; datus-extensions §3 D-FORMAT).

Data stored the way warehouses store it (tests/kit/fmtkit.py: string and integer day
keys, a DECIMAL(8,0) key, integer month keys, `%Y-%m`, a year column, `%Y年%m月%d日`, an hour
key, ISO strings, a `%%` layout), every column derived from one timestamp `ts` per row, so the
expected values are hand-written SQL over `ts` (never the engine). Also Hive-style partitions
in Parquet. Requirement IDs: FMT-DEC-01..24, FMT-GRP-01..06, FMT-FLT-01..06, GRAIN-03/04/06.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot
from enginekit import Ref, assert_rows_equal, result_rows
from sqlglot import exp

from dosi.engine import Engine
from dosi.errors import ModelError, QueryError


def _fmtkit() -> Any:
    if "fmtkit" not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "kit" / "fmtkit.py"
        spec = importlib.util.spec_from_file_location("fmtkit", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules["fmtkit"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["fmtkit"]


fmtkit = _fmtkit()


@pytest.fixture(scope="module")
def fmt_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("fmt") / "fmt.duckdb"
    fmtkit.build_fmt(db, None)
    return db


@pytest.fixture(scope="module")
def ref(fmt_db: Path) -> Iterator[Ref]:
    r = Ref(fmt_db)
    yield r
    r.close()


@pytest.fixture(scope="module")
def eng(fmt_db: Path) -> Iterator[Engine]:
    e = Engine(
        model_text=fmtkit.fmt_model_text(),
        connections={"d": {"type": "duckdb", "uri": str(fmt_db)}},
    )
    yield e
    e.close()


# ------------------------------------------------------------------------------ grouping

_TIME_LAYOUTS = {"dh": "hour", "dts": "second"}  # layouts with a time of day decode to TIMESTAMP
_STORED = {c: fmt for c, (_t, _e, _d, fmt) in fmtkit.COLUMNS.items()}


def _bucket_sql(column: str, grain: str | None) -> str:
    """The expected group key over `ts`: the decoded value (the first instant of the stored
    period, FMT-DEC-20), truncated to `grain`."""
    if grain is None:
        if column in _TIME_LAYOUTS:
            return f"date_trunc('{_TIME_LAYOUTS[column]}', ts)"
        fmt = _STORED[column]
        stored = "day" if "%d" in fmt else "month" if "%m" in fmt else "year"
        return f"CAST(date_trunc('{stored}', ts) AS DATE)"
    if column in _TIME_LAYOUTS:
        return f"date_trunc('{grain}', ts)"
    return f"CAST(date_trunc('{grain}', ts) AS DATE)"


_GROUPINGS = [(c, None) for c in fmtkit.GRAINS] + [
    (c, g) for c, grains in fmtkit.GRAINS.items() for g in grains
]


@pytest.mark.parametrize(("column", "grain"), _GROUPINGS)
def test_fmt_grp_05_grouping_decodes_every_layout(
    eng: Engine, ref: Ref, column: str, grain: str | None
) -> None:
    """FMT-GRP-05/06, FMT-DEC-20: an encoded column groups as its decoded date (or timestamp
    for layouts with hours), truncated to a coarser grain; NULL stays one NULL group."""
    item = f"ev.{column}" + (f":{grain}" if grain else "")
    res = eng.execute({"metrics": ["revenue", "events"], "group_by": [item]})
    key = _bucket_sql(column, grain)
    want = ref.rows(f"SELECT {key}, SUM(amount), COUNT(*) FROM f_events GROUP BY 1")
    assert_rows_equal(result_rows(res), want)


def test_fmt_grp_05_groups_by_the_raw_column_and_parses_in_select(eng: Engine) -> None:
    """FMT-GRP-05: at the stored grain (or none) GROUP BY names the raw column, so the parse
    runs once per group; a coarser grain groups by the truncated decoded value."""
    sql = eng.compile({"metrics": ["users"], "group_by": ["ev.ds", "ev.dm:month"]})["sql"]
    tree = sqlglot.parse_one(sql, read="duckdb")
    groups = [g.sql("duckdb") for g in tree.args["group"].expressions]
    assert groups == ["ev.ds", "ev.dm"]
    assert "STRPTIME" in tree.selects[0].sql("duckdb")


def test_fmt_grouping_values_are_dates(eng: Engine) -> None:
    """CORE-Q-17: the selected time dimension is a parsed DATE, not the stored string."""
    res = eng.execute({"metrics": ["events"], "group_by": ["ev.dc"], "limit": 1})
    assert str(res.arrow.schema.field("dc").type) == "date32[day]"
    assert str(res["rows"][0]["dc"]) == "2024-01-05"


@pytest.mark.parametrize(
    ("item", "native"),
    [
        ("ev.dm:day", "month"),
        ("ev.dm:week", "month"),
        ("ev.dms:day", "month"),
        ("ev.dy:month", "year"),
        ("ev.dyi:quarter", "year"),
        ("ev.dy:day", "year"),
    ],
)
def test_fmt_grp_01_finer_than_the_layout_is_grain_too_fine(
    eng: Engine, item: str, native: str
) -> None:
    """FMT-GRP-01 / GRAIN-04: a `%Y%m` field groups by month, quarter or year only; `%Y` by
    year only."""
    with pytest.raises(QueryError) as info:
        eng.compile({"metrics": ["revenue"], "group_by": [item]})
    assert info.value.code == "grain_too_fine"
    assert native in str(info.value)


def test_fmt_metric_time_follows_the_encoded_axis(eng: Engine, ref: Ref) -> None:
    """GRAIN-04 through metric_time: the primary time is `ds` (%Y%m%d), grouped by month."""
    res = eng.execute({"metrics": ["revenue"], "group_by": ["metric_time:month"]})
    want = ref.rows(f"SELECT {_bucket_sql('ds', 'month')}, SUM(amount) FROM f_events GROUP BY 1")
    assert_rows_equal(result_rows(res), want)


def test_fmt_metric_time_on_a_month_axis_refuses_day(fmt_db: Path) -> None:
    """GRAIN-03: the layout derives the axis grain; metric_time:day on `%Y%m` is too fine."""
    e = Engine(model_text=fmtkit.fmt_model_text(axis="dm"))
    with pytest.raises(QueryError) as info:
        e.compile({"metrics": ["revenue"], "group_by": ["metric_time:day"]})
    assert info.value.code == "grain_too_fine"


# ------------------------------------------------------------------------------ filtering


@pytest.mark.parametrize(
    ("column", "start", "end", "lo", "hi"),
    [
        ("ds", "2024-01-31", "2025-01-01", "'20240131'", "'20250101'"),
        ("di", "2024-02-01", "2025-03-01", "20240201", "20250301"),
        ("dd", "2024-01-06", "2025-12-31", "20240106", "20251231"),
        ("dm", "2024-02-01", "2025-02-01", "202402", "202502"),
        ("dms", "2024-03-01", "2025-03-01", "'2024-03'", "'2025-03'"),
        ("dy", "2025-01-01", "2026-01-01", "'2025'", "'2026'"),
        ("dyi", "2024-01-01", "2025-01-01", "2024", "2025"),
        ("dc", "2024-01-31", "2024-12-31", "'2024年01月31日'", "'2024年12月31日'"),
        ("dh", "2024-02-02", "2025-01-01", "2024020200", "2025010100"),
        ("dts", "2024-02-02", "2025-12-31", "'2024-02-02 00:00:00'", "'2025-12-31 00:00:00'"),
        ("dpc", "2024-02-02", "2025-12-31", "'%20240202'", "'%20251231'"),
    ],
)
def test_fmt_flt_01_bounds_fold_into_the_stored_encoding(
    eng: Engine, ref: Ref, column: str, start: str, end: str, lo: str, hi: str
) -> None:
    """FMT-FLT-01: ISO bounds become constants in the stored encoding, compared with the raw
    column (never wrapped in a parse, so partitions prune); the numbers match the range on
    the true timestamp."""
    q = {
        "metrics": ["revenue"],
        "time_range": {"dimension": f"ev.{column}", "start": start, "end": end},
    }
    sql = eng.compile(q)["sql"]
    where = sqlglot.parse_one(sql, read="duckdb").args["where"].this
    assert where.sql("duckdb") == f"ev.{column} >= {lo} AND ev.{column} < {hi}"
    for cmp in where.find_all(exp.GTE, exp.LT):
        assert isinstance(cmp.this, exp.Column) and cmp.this.name == column
    res = eng.execute(q)
    want = ref.scalar(
        f"SELECT SUM(amount) FROM f_events WHERE ts >= DATE '{start}' AND ts < DATE '{end}'"
    )
    assert res["rows"][0]["revenue"] == pytest.approx(want)


def test_fmt_flt_01_metric_time_range_folds_on_the_axis(eng: Engine, ref: Ref) -> None:
    """A time_range without dimension filters each metric's own (encoded) axis."""
    q = {
        "metrics": ["revenue"],
        "group_by": ["metric_time:quarter"],
        "time_range": {"start": "2024-01-01", "end": "2025-07-01"},
    }
    assert "ev.ds >= '20240101' AND ev.ds < '20250701'" in eng.compile(q)["sql"]
    want = ref.rows(
        f"SELECT {_bucket_sql('ds', 'quarter')}, SUM(amount) FROM f_events "
        "WHERE ts >= DATE '2024-01-01' AND ts < DATE '2025-07-01' GROUP BY 1"
    )
    assert_rows_equal(result_rows(eng.execute(q)), want)


@pytest.mark.parametrize(
    ("column", "which", "bound", "before", "after"),
    [
        ("dm", "end", "2026-03-15", "2026-03-01", "2026-04-01"),
        ("dm", "start", "2024-01-15", "2024-01-01", "2024-02-01"),
        ("dms", "end", "2024-12-31", "2024-12-01", "2025-01-01"),
        ("dy", "start", "2024-02-01", "2024-01-01", "2025-01-01"),
        ("dyi", "end", "2025-07-01", "2025-01-01", "2026-01-01"),
    ],
)
def test_fmt_grp_02_unaligned_bound_offers_both_aligned_bounds(
    eng: Engine, column: str, which: str, bound: str, before: str, after: str
) -> None:
    """FMT-GRP-02/03: a bound inside a stored period is grain_too_fine; the message and the
    candidates offer the period start before and after it (the engine never picks)."""
    tr = {"dimension": f"ev.{column}", "start": "2024-01-01", "end": "2027-01-01", which: bound}
    with pytest.raises(QueryError) as info:
        eng.compile({"metrics": ["revenue"], "time_range": tr})
    assert info.value.code == "grain_too_fine"
    assert before in str(info.value) and after in str(info.value)
    assert list(info.value.candidates) == [before, after]


def test_fmt_grp_02_unaligned_bound_on_the_axis(fmt_db: Path) -> None:
    """The same check when the range names no dimension and the axis is encoded."""
    e = Engine(model_text=fmtkit.fmt_model_text(axis="dm"))
    with pytest.raises(QueryError) as info:
        e.compile({"metrics": ["revenue"], "time_range": {"start": "2024-01-10"}})
    assert info.value.code == "grain_too_fine"


def test_fmt_dec_19_bounds_are_dates_only(eng: Engine) -> None:
    """FMT-DEC-19: an hour layout still takes date bounds only."""
    tr = {"dimension": "ev.dh", "start": "2024-01-01T10:00:00", "end": "2025-01-01"}
    with pytest.raises(QueryError) as info:
        eng.compile({"metrics": ["revenue"], "time_range": tr})
    assert info.value.code == "unsupported_filter"


def test_fmt_grp_04_window_scan_expansion_is_folded_too(eng: Engine, ref: Ref) -> None:
    """FMT-GRP-04: a month-over-month window reads the month before the range; the engine's
    own expansion is exempt from alignment and folded into the encoding the same way."""
    q = {
        "metrics": ["revenue", "revenue_mom"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-02-01", "end": "2025-03-01"},
    }
    assert "ev.ds >= '20240101' AND ev.ds < '20250301'" in eng.compile(q)["sql"]
    res = eng.execute(q)
    months = ref.rows(
        "SELECT CAST(date_trunc('month', ts) AS DATE) AS m, SUM(amount) FROM f_events "
        "WHERE ts IS NOT NULL GROUP BY 1"
    )
    by_month = dict(months)
    got = {str(r["metric_time__month"]): r for r in res["rows"]}
    assert set(got) == {m for m in by_month if "2024-02-01" <= m < "2025-03-01"}
    for m, row in got.items():
        y, mo = int(m[:4]), int(m[5:7])
        prev = f"{y - (mo == 1)}-{12 if mo == 1 else mo - 1:02d}-01"
        assert row["revenue"] == pytest.approx(by_month[m])
        want = by_month[m] - by_month[prev] if prev in by_month else None
        assert row["revenue_mom"] == (pytest.approx(want) if want is not None else None)


@pytest.mark.parametrize(
    "where",
    [
        "ev.ds = '20240105'",
        "ev.ds IS NULL",
        "ev.ds IN ('20240105', '20240131')",
        "ev.dm BETWEEN 202401 AND 202403",
        "CAST(ev.di AS VARCHAR) = '20240105'",
        "substr(ev.dc, 1, 4) = '2024'",
        "ev.ds = ev.dx",
        "ev.user_id = 'a' AND ev.dy > '2024'",
        "ev.user_id = 'a' OR ev.dh IS NOT NULL",
    ],
)
def test_fmt_flt_02_where_sql_on_an_encoded_field_is_unsupported(eng: Engine, where: str) -> None:
    """FMT-FLT-02: any where_sql reference to an encoded field (comparison, IS NULL, IN,
    BETWEEN, CAST, a function, field to field), even with correctly encoded constants."""
    with pytest.raises(QueryError) as info:
        eng.compile({"metrics": ["revenue"], "where_sql": where})
    assert info.value.code == "unsupported_filter"
    assert "time_range" in (info.value.hint or "")


def test_fmt_flt_03_native_time_and_other_fields_stay_usable(eng: Engine, ref: Ref) -> None:
    """FMT-FLT-03: fields without an encoding remain usable in where_sql."""
    res = eng.execute({"metrics": ["revenue"], "where_sql": "ev.user_id = 'a'"})
    want = ref.scalar("SELECT SUM(amount) FROM f_events WHERE user_id = 'a'")
    assert res["rows"][0]["revenue"] == pytest.approx(want)


# ------------------------------------------------------------------------------ Hive partitions


def test_fmt_hive_partitions_prune_on_the_raw_partition_column(tmp_path: Path) -> None:
    """Hive-style `dt=20240105/` partitions in Parquet: the partition key is a `%Y%m%d` string;
    the folded filter compares the raw partition column, so DuckDB reads only the matching
    partitions (EXPLAIN ANALYZE's scan reports fewer files); numbers match hand-written SQL."""
    root = tmp_path / "events"
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE src AS SELECT i AS id, (DATE '2024-01-01' + CAST(i % 60 AS INTEGER)) AS d, i * 1.5 AS amount "
        "FROM range(600) AS t(i)"
    )
    con.execute(
        f"COPY (SELECT id, amount, strftime(d, '%Y%m%d') AS dt FROM src) TO '{root.as_posix()}' "
        "(FORMAT parquet, PARTITION_BY (dt))"
    )
    con.execute(
        "CREATE VIEW hive_events AS SELECT * FROM read_parquet("
        f"'{root.as_posix()}/*/*.parquet', hive_partitioning = true, hive_types_autocast = false)"
    )
    doc = fmtkit.fmt_model_doc()
    ds = doc["semantic_model"][0]["datasets"][0]
    ds["source"] = "hive_events"
    ds["fields"] = [
        {"name": "id", "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": "id"}]}},
        {
            "name": "amount",
            "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": "amount"}]},
        },
        {
            "name": "dt",
            "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": "dt"}]},
            "datatype": "String",
            "dimension": {"is_time": True},
            "custom_extensions": [
                {
                    "vendor_name": "DATUS",
                    "data": json.dumps(
                        {"v": "1.6", "requires": ["time"], "time": {"format": "%Y%m%d"}}
                    ),
                }
            ],
        },
    ]
    ds["custom_extensions"] = [
        {"vendor_name": "DATUS", "data": json.dumps({"v": "1.6", "time_dimension": "dt"})}
    ]
    doc["semantic_model"][0]["metrics"] = doc["semantic_model"][0]["metrics"][:2]
    import yaml

    e = Engine(
        model_text=yaml.safe_dump(doc, allow_unicode=True),
        connections={"h": {"type": "duckdb", "client": con}},
    )
    q = {
        "metrics": ["revenue", "events"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-02-01", "end": "2024-02-11"},
    }
    sql = e.compile(q)["sql"]
    assert "ev.dt >= '20240201' AND ev.dt < '20240211'" in sql
    res = e.execute(q)
    want = con.execute(
        "SELECT DATE '2024-02-01', SUM(amount), COUNT(*) FROM src "
        "WHERE d >= DATE '2024-02-01' AND d < DATE '2024-02-11'"
    ).fetchall()
    assert_rows_equal(result_rows(res), want)
    plan = "\n".join(r[1] for r in con.execute("EXPLAIN ANALYZE " + sql).fetchall())
    assert "Total Files Read: 10" in plan, plan
    e.close()
    con.close()


# ------------------------------------------------------------------------------ declarations


def _model(datatype: str | None, time: Any, *, is_time: bool = True, extra: Any = None) -> str:
    import yaml

    payload: dict[str, Any] = {"v": "1.6", "requires": ["time"], "time": time}
    if extra:
        payload.update(extra)
    field: dict[str, Any] = {
        "name": "x",
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": "x"}]},
        "dimension": {"is_time": is_time},
        "custom_extensions": [{"vendor_name": "DATUS", "data": json.dumps(payload)}],
    }
    if datatype is not None:
        field["datatype"] = datatype
    doc = {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "m",
                "datasets": [{"name": "t", "source": "t", "fields": [field]}],
                "metrics": [
                    {
                        "name": "n",
                        "expression": {
                            "dialects": [{"dialect": "ANSI_SQL", "expression": "COUNT(*)"}]
                        },
                    }
                ],
            }
        ],
    }
    return yaml.safe_dump(doc, allow_unicode=True)


def _dimension(datatype: str | None, time: Any, **kw: Any) -> dict[str, Any]:
    e = Engine(model_text=_model(datatype, time, **kw))
    return next(d for d in e.dimensions() if d["name"] == "t.x")


@pytest.mark.parametrize(
    ("datatype", "time", "fmt", "storage", "grain"),
    [
        ("String", {"format": "%Y%m%d"}, "%Y%m%d", "string", "day"),
        ("Integer", {"format": "%Y%m%d"}, "%Y%m%d", "int", "day"),
        (None, {"format": "%Y%m"}, "%Y%m", "string", "month"),
        (None, {"format": "%Y%m", "storage": "int"}, "%Y%m", "int", "month"),
        ("Integer", {"format": "%Y"}, "%Y", "int", "year"),
        ("String", {"format": "%Y-%m-%d"}, "%Y-%m-%d", "string", "day"),
        ("String", {"format": "%Y/%m/%d"}, "%Y/%m/%d", "string", "day"),
        ("String", {"format": "%Y-%m-%d %H:%M:%S"}, "%Y-%m-%d %H:%M:%S", "string", None),
        ("String", {"format": "%Y年%m月%d日"}, "%Y年%m月%d日", "string", "day"),
        ("String", {"format": "%Y.%m.%dT%H:%M"}, "%Y.%m.%dT%H:%M", "string", None),
        ("Integer", {"format": "%Y%m%d%H%M%S"}, "%Y%m%d%H%M%S", "int", None),
        ("String", {"format": "%%%Y%m"}, "%%%Y%m", "string", "month"),
        ("String", {"format": "%Y-%m"}, "%Y-%m", "string", "month"),
        ("Integer", {"format": "%Y%m", "granularity": "quarter"}, "%Y%m", "int", "quarter"),
        ("String", {"format": "%Y%m%d%H", "granularity": "day"}, "%Y%m%d%H", "string", "day"),
        ("Date", {"format": "date"}, "date", None, "day"),
        ("DateTime", {"format": "timestamp"}, "timestamp", None, None),
        ("DateTimeTz", {"format": "timestamp_tz"}, "timestamp_tz", None, None),
        ("String", {"granularity": "month"}, None, None, "month"),
    ],
)
def test_fmt_dec_accepted_declarations(
    datatype: str | None, time: Any, fmt: str | None, storage: str | None, grain: str | None
) -> None:
    """FMT-DEC-04/05/07/08/12/16/17/18, FMT-FLT-05: accepted layouts, storage inferred from
    the datatype (String -> string, Integer -> int, none -> string), the derived or declared
    grain, and `list dimensions` showing time_format / time_storage."""
    d = _dimension(datatype, time)
    assert (d["time_format"], d["time_storage"], d["time_granularity"]) == (fmt, storage, grain)


@pytest.mark.parametrize(
    ("datatype", "time", "key"),
    [
        ("String", {"format": "%Y%d"}, "time.format"),
        ("String", {"format": "%d/%m/%Y"}, "time.format"),
        ("String", {"format": "%Y%-m"}, "time.format"),
        ("String", {"format": "%Y%m%d%z"}, "time.format"),
        ("String", {"format": "%Y%m%d%H%M%S%f"}, "time.format"),
        ("Integer", {"format": "epoch_seconds"}, "time.format"),
        ("Integer", {"format": "epoch_millis"}, "time.format"),
        ("String", {"format": "%y%m%d"}, "time.format"),
        ("String", {"format": "%m%d"}, "time.format"),
        ("String", {"format": "%Y%Y"}, "time.format"),
        ("String", {"format": "%Y%m%H"}, "time.format"),
        ("String", {"format": 20240101}, "time.format"),
        ("String", {}, "time"),
        ("String", {"storage": "string"}, "time.storage"),
        ("String", {"format": "%Y%m%d", "storage": "varchar"}, "time.storage"),
        ("String", {"format": "%Y%m%d", "storage": "int"}, "time.storage"),
        ("Integer", {"format": "%Y-%m-%d"}, "time.storage"),
        ("Integer", {"format": "20%Y%m"}, "time.storage"),
        (None, {"format": "%Y-%m", "storage": "int"}, "time.storage"),
        ("Date", {"format": "%Y%m%d"}, "time.format"),
        ("Decimal", {"format": "%Y%m%d"}, "time.format"),
        ("Time", {"format": "%Y%m%d"}, "time.format"),
        ("Date", {"format": "date", "storage": "string"}, "time.storage"),
        ("DateTime", {"format": "date"}, "time.format"),
        ("Date", {"format": "timestamp"}, "time.format"),
        ("Integer", {"format": "%Y%m", "granularity": "day"}, "granularity"),
        ("String", {"format": "%Y", "granularity": "week"}, "granularity"),
        ("String", {"format": "%Y%m%d", "granularity": "hour"}, "granularity"),  # no hours stored
        ("String", {"format": "%Y%m%d", "zone": "UTC"}, "time.zone"),
    ],
)
def test_fmt_dec_rejected_declarations_name_the_key(
    datatype: str | None, time: Any, key: str
) -> None:
    """FMT-DEC-06/09/10/11/13/14/15/16/17/22: rejected layouts and combinations are
    invalid_datus_extension naming the key."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=_model(datatype, time))
    issues = [i for i in info.value.issues if i.code == "invalid_datus_extension"]
    assert issues, info.value.issues
    assert any(f"`{key}" in i.message or key in i.message for i in issues), issues


def test_fmt_dec_01_needs_a_time_field() -> None:
    """FMT-DEC-01: the field's is_time must be true."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=_model("String", {"format": "%Y%m%d"}, is_time=False))
    assert info.value.issues[0].code == "invalid_datus_extension"


def test_grain_06_both_granularity_spellings_must_agree() -> None:
    """GRAIN-06: time.granularity and time_granularity are equal spellings; they must agree."""
    same = _dimension(
        "String", {"format": "%Y%m%d", "granularity": "month"}, extra={"time_granularity": "month"}
    )
    assert same["time_granularity"] == "month"
    with pytest.raises(ModelError) as info:
        Engine(
            model_text=_model(
                "String",
                {"format": "%Y%m%d", "granularity": "month"},
                extra={"time_granularity": "year"},
            )
        )
    assert "time_granularity" in str(info.value)


def test_fmt_dec_24_requires_time_is_accepted() -> None:
    """FMT-DEC-24: `requires: ["time"]` no longer fails the version gate."""
    e = Engine(model_text=_model("Integer", {"format": "%Y%m%d"}))
    assert not [w for w in e.warnings if w["code"] == "datus_ext_key_required"]


def test_fmt_flt_06_basic_mode_ignores_the_block() -> None:
    """FMT-FLT-06: basic mode ignores the DATUS entry with one warning: no format applies."""
    e = Engine(model_text=_model("String", {"format": "%Y%m%d"}), mode="basic")
    assert [w["code"] for w in e.warnings] == ["ignored_vendor_extension"]
    d = next(d for d in e.dimensions() if d["name"] == "t.x")
    assert d["time_format"] is None


def test_fmt_streaming_window_reads_the_decoded_time(eng: Engine, ref: Ref) -> None:
    """window-udf.md over an encoded axis: an hour key is decoded before it is windowed."""
    res = eng.execute({"metrics": ["revenue"], "group_by": ["ev.dh:tumble(1 day)"]})
    want = ref.rows(
        "SELECT date_trunc('day', ts), date_trunc('day', ts) + INTERVAL 1 DAY, SUM(amount) "
        "FROM f_events WHERE ts IS NOT NULL GROUP BY 1, 2"
    )
    assert_rows_equal(result_rows(res), want)


def test_fmt_explain_shows_the_decode_time_node(eng: Engine) -> None:
    """The plan names the decode: a DecodeTime node over the aggregate that groups by the
    stored values, and the scan's range folded into the encoding."""
    text = eng.explain(
        {
            "metrics": ["revenue"],
            "group_by": ["metric_time:month", "ev.dm"],
            # two grouped time items: the range names its axis (time_range_needs_dimension)
            "time_range": {"start": "2024-01-01", "end": "2025-01-01", "dimension": "metric_time"},
        }
    )
    assert "DecodeTime per group [metric_time__month <- ev.ds (%Y%m%d) truncated to month" in text
    assert "dm <- ev.dm (%Y%m)" in text
    assert "folded to %Y%m%d" in text
    assert "DecodeTime" not in eng.explain({"metrics": ["revenue"], "group_by": ["ev.user_id"]})
