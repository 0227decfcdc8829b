"""Issue 9's minimal repros, each now a structured error (or a correct answer).

Every case once escaped as an unstructured exception, ran injected SQL, or silently changed the
query; each test names the error code it must produce now.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from enginekit import SHOP_MODEL

from dosi import Engine
from dosi.errors import ExecuteError, ModelError, OsiError, QueryError

SHOP_TEXT = SHOP_MODEL.read_text(encoding="utf-8")


def _q(where: str, **kw: Any) -> dict[str, Any]:
    return {"metrics": ["revenue"], "where_sql": where, **kw}


def _code(call: Any) -> str:
    with pytest.raises(OsiError) as info:
        call()
    return info.value.code


# -- where_sql: statements and functions the old block-list missed ------------------------------
@pytest.mark.parametrize(
    "statement",
    [
        "USE memory",
        "DESCRIBE orders",
        "TRUNCATE orders",
        "ALTER TABLE orders ADD COLUMN x INT",
        "COPY orders TO 'x.csv'",
    ],
)
def test_statements_in_where_sql_are_unsupported_filter(shop: Engine, statement: str) -> None:
    with pytest.raises(QueryError) as info:
        shop.compile(_q(statement))
    assert info.value.code == "unsupported_filter"
    assert "statement" in info.value.message


@pytest.mark.parametrize(
    ("predicate", "name"),
    [
        ("current_setting('home_directory') = 'x'", "current_setting"),
        ("getvariable('x') = 1", "getvariable"),
        ("setseed(0.5) IS NULL", "setseed"),
        ("write_log('x') IS NULL", "write_log"),
        ("sqlite_scan('x', 'y') IS NULL", "sqlite_scan"),
        ("excel_text(1, 'x') = 'x'", "excel_text"),
        ("sleep_ms(1000) IS NULL", "sleep_ms"),
        ("pg_read_file('/etc/passwd') = 'x'", "pg_read_file"),
        ("pg_sleep(1) IS NULL", "pg_sleep"),
        ("set_config('a', 'b', false) = 'b'", "set_config"),
        ("load_file('/etc/passwd') = 'x'", "load_file"),
        ("benchmark(1000, 1) = 0", "benchmark"),
        ("sleep(1) = 0", "sleep"),
        ("len(range(100000000)) > 0", "range"),
    ],
)
def test_unlisted_functions_never_reach_sql(shop: Engine, predicate: str, name: str) -> None:
    """The rejection names the function, for every dialect (nothing is rendered)."""
    for dialect in ("duckdb", "postgres", "mysql"):
        with pytest.raises(QueryError) as info:
            shop.compile(_q(predicate), dialect=dialect)
        assert info.value.code == "unsupported_filter"
        assert f"`{name}`" in info.value.message


def test_a_huge_where_sql_is_rejected_fast(shop: Engine) -> None:
    big = " AND ".join(["orders.channel = 'web'"] * 50_000)  # ~1 MB
    t0 = time.perf_counter()
    with pytest.raises(QueryError) as info:
        shop.compile(_q(big))
    assert time.perf_counter() - t0 < 1.0
    assert info.value.code in ("filter_too_complex", "invalid_query")


@pytest.mark.parametrize(
    "predicate",
    [
        "(" * 1000 + "orders.channel = 'web'" + ")" * 1000,
        "NOT " * 1000 + "orders.channel = 'web'",
        "(" * 1000 + "1 = 1" + ")" * 1000,
        "CASE WHEN " * 200 + "true" + " THEN true END" * 200,
        "abs(" * 500 + "orders.amount" + ")" * 500 + " > 0",
        " + ".join(["orders.amount"] * 1500) + " > 0",
    ],
)
def test_deep_where_sql_is_filter_too_complex(shop: Engine, predicate: str) -> None:
    assert _code(lambda: shop.compile(_q(predicate))) == "filter_too_complex"


# -- RecursionError sources ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "expression",
    [
        "(" * 1000 + "amount" + ")" * 1000,
        "NOT " * 1000 + "amount",
        "- " * 1000 + "amount",
    ],
)
def test_deep_field_expressions_are_model_errors(expression: str) -> None:
    text = SHOP_TEXT.replace("expression: amount", f"expression: '{expression}'", 1)
    assert text != SHOP_TEXT
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert "expression_too_complex" in {d.code for d in info.value.issues}


def test_a_long_metric_sum_is_a_model_error() -> None:
    long_sum = "SUM(" + " + ".join(["orders.amount"] * 1000) + ")"
    text = SHOP_TEXT.replace("SUM(orders.amount)", long_sum, 1)
    assert text != SHOP_TEXT
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert "expression_too_complex" in {d.code for d in info.value.issues}


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        "a: " + "[" * 100_000 + "]" * 100_000,
        "version: 0.2.0.dev0\nx: " + "[" * 200 + "]" * 200,
    ],
)
def test_deep_documents_are_invalid_yaml(text: str) -> None:
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert "invalid_yaml" in {d.code for d in info.value.issues}


def test_a_deeply_nested_query_dict_is_invalid_query(shop: Engine) -> None:
    deep: dict[str, Any] = {"metrics": ["revenue"]}
    for _ in range(5000):
        deep = {"x": deep}
    with pytest.raises(QueryError) as info:
        shop.compile({"metrics": ["revenue"], "group_by": [deep]})
    assert info.value.code == "invalid_query"
    text = '{"metrics": ["revenue"], "group_by": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert _code(lambda: shop.compile(text)) == "invalid_query"


# -- ValueError / UnicodeDecodeError sources -----------------------------------------------------
def test_huge_numbers_are_structured(shop: Engine) -> None:
    assert _code(lambda: shop.compile({"metrics": ["revenue"], "limit": 10**5000})) == (
        "invalid_query"
    )
    text = '{"metrics": ["revenue"], "limit": ' + "9" * 5000 + "}"
    assert _code(lambda: shop.compile(text)) == "invalid_query"
    version = SHOP_TEXT.replace("version: 0.2.0.dev0", "version: " + "9" * 5000, 1)
    assert version != SHOP_TEXT
    with pytest.raises(ModelError) as info:
        Engine(model_text=version)
    assert len(info.value.message) < 2100


def test_a_huge_window_length_is_a_model_error() -> None:
    text = SHOP_TEXT.replace('"periods": 3', '"periods": ' + "9" * 5000, 1)
    assert text != SHOP_TEXT
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert "invalid_datus_extension" in {d.code for d in info.value.issues}


def test_non_utf8_and_nul_paths_are_model_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"version: \xff\xfe\n")
    with pytest.raises(ModelError) as info:
        Engine(model_path=bad)
    assert "invalid_yaml" in {d.code for d in info.value.issues}
    with pytest.raises(ModelError) as info:
        Engine(model_path="/tmp/a\x00b")
    assert "model_not_found" in {d.code for d in info.value.issues}


def test_a_nul_db_path_is_structured(shop: Engine) -> None:
    with pytest.raises(OsiError) as info:
        shop.execute({"metrics": ["revenue"]}, db_path="/tmp/a\x00b")
    assert info.value.code == "invalid_argument"


# -- calendar and interval ranges ------------------------------------------------------------------
def test_calendar_overflow_is_structured(shop: Engine) -> None:
    start = {"metrics": ["revenue_mom"], "group_by": ["metric_time:month"]}
    start["time_range"] = {"start": "0001-01-01"}
    assert _code(lambda: shop.compile(start)) == "unsupported_filter"
    end = {"metrics": ["revenue_next_month"], "group_by": ["metric_time:month"]}
    end["time_range"] = {"end": "9999-12-01"}
    assert _code(lambda: shop.compile(end)) == "unsupported_filter"


def test_limit_and_window_lengths_are_range_checked(shop: Engine, shop_db: Path) -> None:
    assert _code(lambda: shop.compile({"metrics": ["revenue"], "limit": 2**63})) == (
        "invalid_query"
    )
    top = shop.execute({"metrics": ["revenue"], "limit": 2**63 - 1}, db_path=shop_db)
    assert top["row_count"] == 1
    tumble = {"metrics": ["revenue"], "group_by": ["metric_time:tumble(99999999999 days)"]}
    assert _code(lambda: shop.compile(tumble)) == "invalid_window_argument"


def test_a_non_string_query_key_is_invalid_query(shop: Engine) -> None:
    assert _code(lambda: shop.compile({1: 2, "metrics": ["revenue"]})) == "invalid_query"


# -- YAML alias bombs ---------------------------------------------------------------------------
def _bomb(levels: int, width: int = 9) -> str:
    lines = ["a: &a [" + ",".join(["x"] * width) + "]"]
    for i in range(1, levels):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * width) + "]")
    lines.append(f"version: *{chr(96 + levels)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [3, 8, 9])
def test_alias_bombs_are_invalid_yaml_before_expanding(levels: int) -> None:
    t0 = time.perf_counter()
    with pytest.raises(ModelError) as info:
        Engine(model_text=_bomb(levels))
    assert time.perf_counter() - t0 < 1.0
    assert "invalid_yaml" in {d.code for d in info.value.issues}
    assert len(info.value.message) < 500


def test_plain_yaml_anchors_still_load() -> None:
    """One level of anchors (a shared block reused) is fine; only nesting and count are bounded."""
    text = SHOP_TEXT.replace(
        "version: 0.2.0.dev0", "version: &v 0.2.0.dev0\nx-shared: &shared [1, 2]", 1
    )
    assert text != SHOP_TEXT
    # the extra top-level key is an Ossie schema error, not a YAML error: aliases were accepted
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert "unknown_model_key" in {d.code for d in info.value.issues}
    too_many = "version: &v 0.2.0.dev0\nrefs: [" + ", ".join(["*v"] * 10_001) + "]\n"
    with pytest.raises(ModelError) as info:
        Engine(model_text=too_many)
    assert "invalid_yaml" in {d.code for d in info.value.issues}


def test_wide_alias_expansion_is_bounded() -> None:
    """Few aliases of one large block still expand past the node budget: invalid_yaml, fast."""
    block = "[" + ", ".join(["x"] * 20_000) + "]"
    text = f"big: &b {block}\nrefs: [" + ", ".join(["*b"] * 60) + "]\n"
    t0 = time.perf_counter()
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert time.perf_counter() - t0 < 2.0
    assert "invalid_yaml" in {d.code for d in info.value.issues}


def test_generated_yaml_with_many_flat_aliases_loads() -> None:
    """PyYAML's dump of a model whose metrics share nested objects writes an anchor per shared
    object and an alias per reuse (hundreds for a large model): it loads like the plain text."""
    doc = yaml.safe_load(SHOP_TEXT)
    sm = doc["semantic_model"][0]
    plain = [m for m in sm["metrics"] if not m.get("custom_extensions")]
    # the plain metrics stay too: a D-LOD field names one as its base (orders.first_order_day)
    sm["metrics"] = [*plain, *({**plain[i % len(plain)], "name": f"m{i}"} for i in range(300))]
    text = yaml.safe_dump(doc)
    assert text.count("*id") > 100
    eng = Engine(model_text=text)
    assert len(eng.metrics()) == 300 + len(plain)


# -- time bounds with a UTC offset ----------------------------------------------------------------
@pytest.mark.parametrize(
    "bound", ["2024-02-29T19:00:00+02:00", "2024-02-29T19:00:00Z", "2024-02-29 19:00:00-05:30"]
)
def test_time_bounds_with_an_offset_are_rejected(shop: Engine, bound: str) -> None:
    """As the reference engine does: never silently dropped (docs/query.md)."""
    q = {"metrics": ["revenue"], "time_range": {"start": bound}}
    with pytest.raises(QueryError) as info:
        shop.compile(q)
    assert info.value.code == "unsupported_filter"
    assert "offset" in info.value.message


def test_a_naive_timestamp_bound_is_kept_exactly(shop: Engine) -> None:
    sql = shop.compile({"metrics": ["revenue"], "time_range": {"start": "2024-02-29T19:00:00"}})
    assert "2024-02-29 19:00:00" in sql["sql"]


# -- execution errors stay structured --------------------------------------------------------------
def test_execution_errors_carry_the_duckdb_error_kind(shop: Engine, tmp_path: Path) -> None:
    with pytest.raises(ExecuteError) as info:
        shop.execute({"metrics": ["revenue"]}, db_path=tmp_path / "missing.duckdb")
    assert info.value.code == "config"


# -- more numbers found while fixing the above -----------------------------------------------------
BIG = "9" * 5000


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"v": "1.1"', f'"v": "1.{BIG}"'),
        ('"v": "1.3"', f'"v": 1.{BIG}'),
        ('"v": "1.1"', f'"v": {BIG}'),
        ('"offset": "1 month"', '"offset": "999999999999 month"'),
        ('"offset": "1 month"', f'"offset": "{BIG} month"'),
        ('"count": 1, "granularity": "month"', '"count": 99999999999999, "granularity": "month"'),
    ],
)
def test_out_of_range_payload_numbers_are_model_errors(old: str, new: str) -> None:
    text = SHOP_TEXT.replace(old, new, 1)
    assert text != SHOP_TEXT
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert "invalid_datus_extension" in {d.code for d in info.value.issues}


@pytest.mark.parametrize(
    "item",
    [
        f"metric_time:tumble({BIG} seconds)",
        f"metric_time:tumble(PT{BIG}S)",
        f"metric_time:hop(1 day, 0.{BIG} seconds)",
        {"field": "metric_time", "window": {"type": "tumble", "size": f"{BIG} seconds"}},
    ],
)
def test_out_of_range_window_lengths_are_query_errors(shop: Engine, item: Any) -> None:
    assert _code(lambda: shop.compile({"metrics": ["revenue"], "group_by": [item]})) == (
        "invalid_window_argument"
    )


def test_numbers_past_38_digits_are_unsupported_filter(shop: Engine) -> None:
    """Found by the fuzz suite: DuckDB reads such a literal as BIGNUM, which no column compares
    with; the filter is refused at compile time instead."""
    q = {"metrics": ["revenue"], "where_sql": "orders.amount > " + "9" * 39}
    assert _code(lambda: shop.compile(q)) == "unsupported_filter"


def test_query_size_bounds(shop: Engine) -> None:
    """docs/limits.md: items, characters and nesting of a raw query."""
    many = {"metrics": ["revenue"], "group_by": ["orders.channel"] * 10_001}
    assert _code(lambda: shop.compile(many)) == "invalid_query"
    wide = {"metrics": ["revenue"], "where_sql": "orders.channel = '" + "x" * 1_000_001 + "'"}
    assert _code(lambda: shop.compile(wide)) == "invalid_query"
    nested: Any = "orders.channel"
    for _ in range(20):
        nested = [nested]
    assert _code(lambda: shop.compile({"metrics": ["revenue"], "group_by": nested})) == (
        "invalid_query"
    )
    ok = shop.compile({"metrics": ["revenue"], "where_sql": "orders.channel = '" + "x" * 100 + "'"})
    assert "xxxx" in ok["sql"]


@pytest.mark.parametrize(
    "text",
    [
        '{"from": ' + "9" * 5000 + "}",
        "[" * 5000 + "]" * 5000,
        '{"from": "orders"',
    ],
)
def test_detail_and_attribution_requests_are_bounded_like_queries(text: str) -> None:
    """select() and attribute() read their JSON through the same bounded reader as queries:
    a 5,000-digit number, deep nesting or broken JSON is `invalid_query`, never a ValueError."""
    eng = Engine(model_path=SHOP_MODEL)
    for call in (eng.compile_select, eng.attribute):
        with pytest.raises(QueryError) as info:
            call(text)
        assert info.value.code == "invalid_query"
