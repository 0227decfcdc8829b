"""Property-based hostile-input suite (hypothesis): random and mutated queries and models built
from the shop model, with injection strings, unicode, wrong types, deep nesting and huge sizes.

Invariants, for every example:
- every call returns or raises one of the project's structured errors (`OsiError`);
- a compile that succeeds produces SQL that runs on DuckDB (a data-dependent error such as a
  failing CAST is the only accepted execution error, and it is structured too);
- the database is unchanged (a checksum of every table and the catalog, before and after).

CI runs a bounded number of examples with a fixed seed (under ~60 s in all); set
`DOSI_FUZZ_EXAMPLES=5000` to run longer with a fresh seed (`DOSI_FUZZ_SEED=N` picks one).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml
from enginekit import SHOP_MODEL
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from dosi import Engine
from dosi.errors import ExecuteError, OsiError

EXAMPLES = int(os.environ.get("DOSI_FUZZ_EXAMPLES", "0") or 0)
# CI: a fixed seed; a long run: a fresh seed each time unless DOSI_FUZZ_SEED names one
SEED = int(os.environ.get("DOSI_FUZZ_SEED") or (random.randrange(2**32) if EXAMPLES else 9))
SHOP_TEXT = SHOP_MODEL.read_text(encoding="utf-8")
SHOP_DOC = yaml.safe_load(SHOP_TEXT)

# DuckDB errors a correct SQL text can still raise on some data (a CAST of a value that does not
# convert, an overflow); anything else after a successful compile is a bug.
DATA_ERRORS = {"ConversionException", "OutOfRangeException", "InvalidInputException"}


def _settings(ci_examples: int) -> Any:
    return settings(
        max_examples=EXAMPLES or ci_examples,
        deadline=None,
        database=None,
        derandomize=not EXAMPLES,
        suppress_health_check=list(HealthCheck),
    )


# ------------------------------------------------------------------------------ the database
def _checksum(db: Path) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        out: list[tuple[Any, ...]] = con.execute(
            "SELECT database_name, schema_name, table_name, estimated_size, column_count "
            "FROM duckdb_tables() ORDER BY ALL"
        ).fetchall()
        out += con.execute(
            "SELECT function_name FROM duckdb_functions() WHERE NOT internal ORDER BY ALL"
        ).fetchall()
        for (table,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY 1"
        ).fetchall():
            ident = '"' + table.replace('"', '""') + '"'
            out += con.execute(f"SELECT count(*), sum(hash(t)) FROM main.{ident} AS t").fetchall()
        return out
    finally:
        con.close()


@pytest.fixture(scope="module")
def guarded_db(shop_db: Path) -> Iterator[Path]:
    """The shop database, checked unchanged after the module's examples."""
    before = _checksum(shop_db)
    yield shop_db
    assert _checksum(shop_db) == before
    assert not Path("x.csv").exists()


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    e = Engine(model_path=SHOP_MODEL, query_timeout=20)
    yield e
    e.close()


# ------------------------------------------------------------------------------ strategies
METRICS = [m["name"] for m in Engine(model_path=SHOP_MODEL).metrics()]
FIELDS = [
    f"{ds['name']}.{f['name']}"
    for ds in SHOP_DOC["semantic_model"][0]["datasets"]
    for f in ds["fields"]
]
GRAINS = ["day", "week", "month", "quarter", "year", "hour", "nope", ""]
INJECTIONS = [
    "'; DROP TABLE orders; --",
    "1=1; DELETE FROM orders",
    "orders.channel = 'web' UNION SELECT * FROM customers",
    "current_setting('home_directory') = ''",
    "(SELECT count(*) FROM orders) > 0",
    "read_csv('/etc/passwd') IS NULL",
    "sleep_ms(5000) IS NULL",
    "pg_sleep(5) IS NULL",
    "getvariable('x') IS NULL",
    "orders.channel = $1",
    "orders.channel = ?",
    "COPY orders TO 'x.csv'",
    "ATTACH 'x.db'",
    "INSTALL httpfs",
    "SET memory_limit = '1KB'",
    "PRAGMA version",
    "CALL dbgen(sf=1)",
    "orders.channel = 'web' /* comment */ -- tail",
    "orders.channel = '\x00'",
    "\u202eorders.channel = 'web'",
    "orders.channel = '🦆' OR orders.status = 'ünïcödé'",
    "repeat('x', 2000000000) = ''",
    "len(range(100000000)) > 0",
    "orders.amount > 1e400",
    "orders.amount > " + "9" * 500,
    "CAST(orders.channel AS INTEGER) = 1",
    "NOT " * 300 + "true",
    "(" * 300 + "true" + ")" * 300,
    "CASE WHEN " * 100 + "true" + " THEN true END" * 100,
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(INJECTIONS),
)
JUNK = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _literal() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(min_value=-(10**6), max_value=10**6).map(str),
        st.sampled_from(["'web'", "'completed'", "NULL", "true", "DATE '2024-03-01'", "1.5"]),
        st.text(max_size=12).map(lambda s: "'" + s.replace("'", "''") + "'"),
    )


def _predicate() -> st.SearchStrategy[str]:
    column = st.sampled_from([*FIELDS, "orders.nope", "metric_time", "revenue", "x.y.z"])
    atom = st.one_of(
        st.tuples(column, st.sampled_from(["=", "<>", "<", ">=", "LIKE", "ILIKE"]), _literal()).map(
            " ".join
        ),
        st.tuples(column, st.lists(_literal(), min_size=1, max_size=4)).map(
            lambda t: f"{t[0]} IN ({', '.join(t[1])})"
        ),
        column.map(lambda c: f"{c} IS NOT NULL"),
        st.tuples(
            st.sampled_from(["lower", "upper", "length", "abs", "year", "coalesce", "md5", "now"]),
            column,
            _literal(),
        ).map(lambda t: f"{t[0]}({t[1]}) = {t[2]}"),
        st.tuples(column, _literal(), _literal()).map(
            lambda t: f"{t[0]} BETWEEN {t[1]} AND {t[2]}"
        ),
        st.sampled_from(INJECTIONS),
    )
    return st.recursive(
        atom,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(" ".join),
            inner.map(lambda p: f"NOT ({p})"),
            inner.map(lambda p: f"CASE WHEN {p} THEN true ELSE false END"),
        ),
        max_leaves=6,
    )


def _date() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.dates().map(lambda d: d.isoformat()),
        st.sampled_from(
            ["0001-01-15", "9999-12-31", "2024-02-29T19:00:00+02:00", "2024-13-01", "", "now"]
        ),
        SCALARS,
    )


def _group_item() -> st.SearchStrategy[Any]:
    name = st.sampled_from([*FIELDS, "metric_time", "orders.nope", "🦆"])
    return st.one_of(
        st.tuples(name, st.sampled_from(GRAINS)).map(lambda t: f"{t[0]}:{t[1]}" if t[1] else t[0]),
        st.sampled_from(
            [
                "metric_time:tumble(1 day)",
                "metric_time:hop(7 days, 1 day)",
                "metric_time:tumble(99999999999 days)",
                "metric_time:session(-1 minutes)",
            ]
        ),
        st.fixed_dictionaries({"field": name, "grain": st.sampled_from([*GRAINS, None])}),
        JUNK,
    )


def _query() -> st.SearchStrategy[Any]:
    good = st.fixed_dictionaries(
        {"metrics": st.lists(st.sampled_from(METRICS), min_size=1, max_size=3)},
        optional={
            "group_by": st.lists(_group_item(), max_size=3),
            "where_sql": _predicate(),
            "time_range": st.fixed_dictionaries({}, optional={"start": _date(), "end": _date()}),
            "order_by": st.lists(
                st.fixed_dictionaries(
                    {"key": st.sampled_from([*METRICS, "metric_time__month", "x"])},
                    optional={"desc": st.booleans()},
                ),
                max_size=2,
            ),
            "limit": st.one_of(st.integers(min_value=-5, max_value=2**64), SCALARS),
        },
    )
    return st.one_of(
        good,
        good.map(lambda q: json.dumps(q)),
        st.dictionaries(
            st.sampled_from(["metrics", "group_by", "where_sql", "params", "nope"]), JUNK
        ),
        JUNK,
    )


# ------------------------------------------------------------------------------ checks
def _run(engine: Engine, query: Any, db: Path) -> None:
    try:
        compiled = engine.compile(query)
    except OsiError:
        return
    assert isinstance(compiled["sql"], str) and compiled["sql"]
    try:
        engine.execute(query, db_path=db)
    except ExecuteError as err:
        kind = (err.detail or {}).get("duckdb_error")
        assert err.code == "value_rejected" and kind in DATA_ERRORS, (err.code, kind, err.message)
    for dialect in ("postgres", "mysql"):
        with contextlib.suppress(OsiError):
            engine.compile(query, dialect=dialect)


@seed(SEED)
@_settings(600)
@given(query=_query())
def test_random_queries_fail_structured_or_run(
    engine: Engine, guarded_db: Path, query: Any
) -> None:
    """R-HOSTILE: a query of any shape returns rows or a structured error, never more."""
    _run(engine, query, guarded_db)


@seed(SEED)
@_settings(400)
@given(where=_predicate())
def test_random_filters_fail_structured_or_run(
    engine: Engine, guarded_db: Path, where: str
) -> None:
    _run(engine, {"metrics": ["revenue", "order_count"], "where_sql": where}, guarded_db)


# ------------------------------------------------------------------------------ models
def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


MODEL_PATHS = [p for p in _paths(SHOP_DOC) if p]
SQL_VALUES = [
    "DELETE FROM orders",
    "(WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d)",
    "(SELECT * FROM read_csv('/etc/passwd'))",
    "'/etc/passwd'",
    "current_setting('home_directory')",
    "SUM(" + " + ".join(["orders.amount"] * 400) + ")",
    "(" * 400 + "amount" + ")" * 400,
    "{'a': 1}",
    "amount; DROP TABLE orders",
]


def _mutate(doc: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


def _model_text() -> st.SearchStrategy[str]:
    mutated = st.tuples(
        st.sampled_from(MODEL_PATHS),
        st.one_of(JUNK, st.sampled_from(SQL_VALUES)),
        st.booleans(),
        st.sampled_from(["yaml", "json"]),
    ).map(
        lambda t: (yaml.safe_dump if t[3] == "yaml" else json.dumps)(
            _mutate(SHOP_DOC, t[0], t[1], t[2])
        )
    )
    text_level = st.tuples(
        st.integers(min_value=0, max_value=len(SHOP_TEXT)), st.text(max_size=20)
    ).map(lambda t: SHOP_TEXT[: t[0]] + t[1] + SHOP_TEXT[t[0] :])
    return st.one_of(mutated, text_level, st.text(max_size=200), st.sampled_from(SQL_VALUES))


@seed(SEED)
@_settings(150)
@given(text=_model_text())
def test_mutated_models_fail_structured_or_answer(guarded_db: Path, text: str) -> None:
    """R-HOSTILE: a mutated model loads or is a ModelError; a loaded one still answers."""
    try:
        engine = Engine(model_text=text, query_timeout=20)
    except OsiError:
        return
    try:
        for m in [m["name"] for m in engine.metrics()][:3]:
            try:
                engine.compile({"metrics": [m]})
            except OsiError:
                continue
            # a mutated source may name a table the database lacks: still structured
            with contextlib.suppress(ExecuteError):
                engine.execute({"metrics": [m]}, db_path=guarded_db)
    finally:
        engine.close()
