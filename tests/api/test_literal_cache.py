"""The parameterised plan cache (issue 27 item 1): a query that differs from compiled ones only
in literals (limit, time_range bounds, where_sql values) is answered from a template, and
the answer is the SQL a full compile writes, character for character.

The property compiles random literal variants of many shapes (windows, derives, week and
quarter grains, D-LOD fields, densify, several dialects) through one engine whose cache fills
as it goes, and compiles each again in full with the cache off; the SQL text (or the error
code) must be the same. Dates are drawn so that many share a template's class (a shift by 28
years) and many do not (any day, Feb 29, mid-week, mid-month); limits include 0, 1 and
None; strings include words an engine reads as booleans, dates and numbers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dosi.engine import Engine
from dosi.errors import OsiError
from dosi.pipeline import compile_query
from dosi.query.literal_cache import LiteralCache, build_template, shape_of

MODEL = Path(__file__).resolve().parents[2] / "examples" / "shop" / "model.yaml"

SHAPES: list[dict[str, Any]] = [
    {"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]},
    {"metrics": ["revenue"], "group_by": ["metric_time:month"]},
    {"metrics": ["revenue", "revenue_mom"], "group_by": ["orders.channel", "metric_time:month"]},
    {"metrics": ["revenue_yoy"], "group_by": ["metric_time:quarter"]},
    {"metrics": ["revenue_rolling_3m", "revenue_ytd"], "group_by": ["metric_time:month"]},
    {"metrics": ["revenue_running"], "group_by": ["metric_time:week"]},
    {"metrics": ["revenue_rank"], "group_by": ["customers.segment"]},
    {"metrics": ["completed_revenue", "net_revenue"], "group_by": ["metric_time:day"]},
    {"metrics": ["revenue_net_of_refunds"], "group_by": ["metric_time:month"]},
    {"metrics": ["close_rate"], "group_by": ["regions.region_name", "metric_time:year"]},
    {"metrics": ["order_count"], "group_by": ["orders.cohort_month"]},
    {"metrics": ["revenue"], "group_by": ["metric_time:month"], "densify": "time"},
    {"metrics": ["revenue_next_month"], "group_by": ["metric_time:month"]},
]
WHERES = [
    None,
    "orders.status = {s}",
    "orders.amount > {n}",
    "orders.status = {s} AND orders.amount >= {n}",
    "orders.channel IN ({s}, 'web') OR orders.amount < {n}",
]
_BASES = [dt.date(2024, 1, 1), dt.date(2024, 3, 1), dt.date(2023, 7, 15), dt.date(2024, 2, 29)]


def _shifted(base: dt.date, k: int) -> str:
    try:
        return base.replace(year=base.year + 28 * k).isoformat()
    except ValueError:  # Feb 29 of a year that has none
        return base.isoformat()


_dates = st.one_of(
    st.builds(_shifted, st.sampled_from(_BASES), st.integers(-2, 2)),
    st.dates(dt.date(1990, 1, 1), dt.date(2060, 12, 31)).map(dt.date.isoformat),
)
_words = st.text("abcXYZ", min_size=2, max_size=6)
_strings = st.one_of(
    st.text("abcXYZ", min_size=1, max_size=6),
    st.sampled_from(["completed", "returned", "true", "NULL", "2024-01-01", "12", "it's", "x"]),
)
_ints = st.one_of(st.integers(100, 999), st.sampled_from([0, 1, 7, 10, 1900, 2024, 10**19]))
_limit_slots = st.integers(1, 10**9)
_limits = st.one_of(
    st.integers(1, 10**9), st.none(), st.sampled_from([0, 1, 2, 10, 2024, 10**9 + 1])
)


@st.composite
def families(draw: Any) -> tuple[list[dict[str, Any]], str]:
    """One shape and dialect, then several queries that differ only in their literals."""
    shape = draw(st.sampled_from(SHAPES))
    span = draw(st.sampled_from(["none", "start", "end", "both"]))
    where = draw(st.sampled_from(WHERES))
    dialect = draw(st.sampled_from(["duckdb", "duckdb", "postgres", "mysql", "sqlite"]))
    with_limit = draw(st.booleans())
    # the family's dates: mostly 28-year shifts of one date per bound (one calendar class,
    # so templates form), sometimes any other date (another class: a full compile)
    bases = {k: draw(st.dates(dt.date(1990, 1, 1), dt.date(2060, 12, 31))) for k in ("s", "e")}

    def date(k: str) -> str:
        if draw(st.integers(0, 9)) == 0:
            return draw(_dates)
        return _shifted(bases[k], shift)

    out = []
    for _ in range(draw(st.integers(3, 8))):
        shift = draw(st.integers(-1, 1))  # both bounds by the same years: the same span
        q = dict(shape)
        if with_limit:
            q["limit"] = draw(_limits) if draw(st.integers(0, 4)) == 0 else draw(_limit_slots)
        if span != "none":
            tr: dict[str, str] = {}
            if span in ("start", "both"):
                tr["start"] = date("s")
            if span in ("end", "both"):
                tr["end"] = date("e")
            q["time_range"] = tr
        if where is not None:
            pick = _strings if draw(st.integers(0, 4)) == 0 else _words
            text = draw(pick).replace("'", "''")
            n = draw(_ints) if draw(st.integers(0, 4)) == 0 else draw(st.integers(100, 999))
            q["where_sql"] = where.format(s=f"'{text}'", n=n)
        out.append(q)
    return out, dialect


@pytest.fixture(scope="module")
def engine() -> Any:
    eng = Engine(model_path=MODEL)
    yield eng
    eng.close()


def _full(engine: Engine, q: dict[str, Any], dialect: str) -> tuple[str, str]:
    try:
        return "sql", compile_query(engine.model, engine.graph, q, dialect).sql
    except OsiError as err:
        return "error", err.code


def _cached(engine: Engine, q: dict[str, Any], dialect: str) -> tuple[str, str]:
    try:
        return "sql", engine.compile(q, dialect)["sql"]
    except OsiError as err:
        return "error", err.code


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(family=families())
def test_literal_variants_compile_to_the_full_compiles_sql(
    engine: Engine, family: tuple[list[dict[str, Any]], str]
) -> None:
    """Issue 27 item 1: cache on and cache off give the same SQL text or the same error."""
    queries, dialect = family
    for q in queries:
        assert _cached(engine, q, dialect) == _full(engine, q, dialect), q


def test_a_third_variant_is_answered_from_the_template() -> None:
    """Issue 27 item 1: after two compiles of a shape that differ in the limit and a filter
    value, the third variant comes from the template (no compile), with the full compile's
    SQL; explain still shows the third query's own limit."""
    eng = Engine(model_path=MODEL)

    def q(limit: int, status: str) -> dict[str, Any]:
        return {
            "metrics": ["revenue", "revenue_mom"],
            "group_by": ["orders.channel", "metric_time:month"],
            "where_sql": f"orders.status = '{status}'",
            "time_range": {"start": "2024-03-01", "end": "2024-09-01"},
            "limit": limit,
        }

    eng.compile(q(10, "completed"))
    eng.compile(q(20, "returned"))
    third = q(35, "cancelled")
    shape = shape_of(third, "duckdb", False)
    assert shape is not None
    assert eng._literals.lookup(shape) is not None
    sql = eng.compile(third)["sql"]
    assert sql == compile_query(eng.model, eng.graph, third, "duckdb").sql
    assert sql.endswith("LIMIT 35") and "'cancelled'" in sql
    assert "Limit 35" in eng.explain(third)
    eng.close()


def test_shape_classes_keep_plan_changing_literals_apart() -> None:
    """Issue 27 item 1: limit 0 and NULL are keyed as written; dates of different calendar
    classes (another weekday layout, another day of the month) never share a key; words an
    engine reads as booleans or dates are not string slots."""
    base = {"metrics": ["revenue"], "group_by": ["metric_time:week"]}

    def key(**kw: Any) -> str | None:
        s = shape_of({**base, **kw}, "duckdb", False)
        return None if s is None else s.key

    assert key(limit=0) is None and key(limit=None) is None
    assert key(limit=5) == key(limit=6)
    a = key(time_range={"start": "2024-03-01"})
    assert a == key(time_range={"start": "2052-03-01"})  # 28 years: the same calendar
    assert a != key(time_range={"start": "2025-03-01"})
    assert a != key(time_range={"start": "2024-03-02"})
    assert key(where_sql="orders.status = 'true'") is None
    assert key(where_sql="orders.status = '2024-01-01'") is None
    assert key(where_sql="orders.status = 'done'") == key(where_sql="orders.status = 'open'")
    assert key(where_sql="\"orders\".status = 'done'") is None  # quoted names: not split
    assert key(limit=5, where_sql="orders.status = '\x000\x00'") is None  # posing marker


def test_a_template_needs_identical_text_between_the_literals() -> None:
    """Issue 27 item 1: two compiles whose SQL differs anywhere but at the literal (a scan
    expanded by the bound, a constant that happens to equal the value) give no template."""
    cache: LiteralCache[str] = LiteralCache()
    a = shape_of({"metrics": ["m"], "limit": 10}, None, False)
    b = shape_of({"metrics": ["m"], "limit": 20}, None, False)
    assert a is not None and b is not None
    assert build_template((a.slots, "x LIMIT 10", ()), (b.slots, "x LIMIT 20", ()), "c")
    assert (
        build_template((a.slots, "y=10 LIMIT 10", ()), (b.slots, "y=10 LIMIT 20", ()), "c") is None
    )
    assert build_template((a.slots, "x LIMIT 10", ("w",)), (b.slots, "x LIMIT 20", ()), "c") is None
    assert build_template((a.slots, "x", ()), (b.slots, "x", ()), "c") is None  # no hole
    cache.remember(a, "x LIMIT 10", (), "first")
    cache.remember(b, "x LIMIT 20", (), "second")
    c = shape_of({"metrics": ["m"], "limit": 30}, None, False)
    assert c is not None
    t = cache.lookup(c)
    assert t is not None and t.fill(c.slots) == "x LIMIT 30"
