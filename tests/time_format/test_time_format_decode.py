"""D-FORMAT decoding as dialect facts (issue 12, Deliver item 4; FMT-GRP-05/06).

Each dialect states its `TimeParser`: the parse function, its format tokens, the argument
order. These tests pin the facts for every rendered dialect and check that the SQL re-parses in
that dialect; the engines available here execute it in
tests/engines/matrix/test_matrix_time_format.py (SQLite, chDB, DataFusion, Spark, PostgreSQL)
and tests/time_format/test_time_format.py (DuckDB, against hand-written SQL).
"""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from dosi.ext.time_format import TimeFormat, parse_layout
from dosi.sql.dialects import DIALECTS

# dialect -> (date-layout function, time-layout function, the rendered `%Y%m%d` format)
FACTS = {
    "duckdb": ("STRPTIME", "STRPTIME", "%Y%m%d"),
    "postgres": ("TO_DATE", "TO_TIMESTAMP", "YYYYMMDD"),
    "redshift": ("TO_DATE", "TO_TIMESTAMP", "YYYYMMDD"),
    "datafusion": ("TO_DATE", "TO_TIMESTAMP", "%Y%m%d"),
    "mysql": ("STR_TO_DATE", "STR_TO_DATE", "%Y%m%d"),
    "mariadb": ("STR_TO_DATE", "STR_TO_DATE", "%Y%m%d"),
    "tidb": ("STR_TO_DATE", "STR_TO_DATE", "%Y%m%d"),
    "doris": ("STR_TO_DATE", "STR_TO_DATE", "%Y%m%d"),
    "starrocks": ("STR_TO_DATE", "STR_TO_DATE", "%Y%m%d"),
    "clickhouse": ("parseDateTime", "parseDateTime", "%Y%m%d"),
    "spark": ("TO_DATE", "TO_TIMESTAMP", "yyyyMMdd"),
    "databricks": ("TO_DATE", "TO_TIMESTAMP", "yyyyMMdd"),
    "hive": ("TO_DATE", "TO_TIMESTAMP", "yyyyMMdd"),
    "snowflake": ("TO_DATE", "TO_TIMESTAMP_NTZ", "YYYYMMDD"),
    "bigquery": ("PARSE_DATE", "PARSE_DATETIME", "%Y%m%d"),
    "trino": ("DATE_PARSE", "DATE_PARSE", "%Y%m%d"),
    "presto": ("DATE_PARSE", "DATE_PARSE", "%Y%m%d"),
    "athena": ("DATE_PARSE", "DATE_PARSE", "%Y%m%d"),
    "oracle": ("TO_DATE", "TO_TIMESTAMP", "YYYYMMDD"),
    "sqlite": ("DATE", "DATETIME", None),
    "tsql": (None, None, None),  # CAST of the canonical text
}


def _layout(fmt: str, storage: str = "string") -> TimeFormat:
    return TimeFormat(fmt, storage, False, parse_layout(fmt))  # type: ignore[arg-type]


def _calls(tree: exp.Expression) -> list[str]:
    return [f.name.upper() for f in tree.find_all(exp.Anonymous)]


def test_every_rendered_dialect_states_its_facts() -> None:
    assert set(FACTS) == set(DIALECTS)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_date_layout_uses_the_dialect_parse_function(name: str) -> None:
    d = DIALECTS[name]
    date_fn, _ts, fmt_text = FACTS[name]
    out = d.decode_time(exp.column("ds", "ev"), _layout("%Y%m%d"))
    sql = out.sql(d.name)
    if date_fn is None:
        assert isinstance(out, exp.Case) or "CAST" in sql.upper()
    else:
        assert date_fn.upper() in _calls(out), sql
    if fmt_text is not None:
        assert f"'{fmt_text}'" in sql
    sqlglot.parse_one(f"SELECT {sql}", read=d.name)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_time_layout_and_literal_text_layout_render(name: str) -> None:
    """A layout with hours uses the timestamp function; fixed text outside the function's
    format language (`年`) is cut out by position into canonical text first."""
    d = DIALECTS[name]
    _date, ts_fn, _fmt = FACTS[name]
    hour = d.decode_time(exp.column("dh", "ev"), _layout("%Y%m%d%H", "int"))
    if ts_fn is not None:
        assert ts_fn.upper() in _calls(hour)
    cjk = d.decode_time(exp.column("dc", "ev"), _layout("%Y年%m月%d日"))
    assert "年" not in cjk.sql(d.name)  # parts taken by position, never a format with 年
    for tree in (hour, cjk):
        sqlglot.parse_one(f"SELECT {tree.sql(d.name)}", read=d.name)


def test_bigquery_takes_the_format_first() -> None:
    out = DIALECTS["bigquery"].decode_time(exp.column("ds"), _layout("%Y%m%d"))
    call = next(out.find_all(exp.Anonymous))
    assert call.expressions[0] == exp.Literal.string("%Y%m%d")


def test_clickhouse_counts_characters_and_guards_null_slots() -> None:
    """substringUTF8 (ClickHouse's substring counts bytes) and a parseable stand-in for the
    NULL slots parseDateTime also reads."""
    sql = (
        DIALECTS["clickhouse"]
        .decode_time(exp.column("dc"), _layout("%Y年%m月%d日"))
        .sql("clickhouse")
    )
    assert "substringUTF8(dc, 6, 2)" in sql and "'1970-01-01'" in sql


def test_oracle_concatenates_with_pipes() -> None:
    """Oracle's CONCAT takes two arguments: the canonical text is built with ||."""
    sql = DIALECTS["oracle"].decode_time(exp.column("dc"), _layout("%Y年%m月%d日")).sql("oracle")
    assert "CONCAT" not in sql and "||" in sql
