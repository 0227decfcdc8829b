"""Expression dialects outside the Ossie enumeration (CORE-MOD-06): public converters write
`dialect: DUCKDB`. Such a model loads with one structured `unknown_expression_dialect` warning
per name; an entry written for the engine the model runs on wins over ANSI_SQL; ANSI_SQL is
used otherwise; an expression with no entry dosi can run there is `no_usable_expression` on that
field or metric alone; every other schema rule stays. Expected rows come from hand-written SQL
run directly on DuckDB over the same table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

import dosi
from dosi.errors import ModelError

DATA = """
CREATE TABLE main.orders (order_id INTEGER, order_date DATE, channel VARCHAR, amount DECIMAL(10,2));
INSERT INTO main.orders VALUES
 (1, DATE '2025-01-05', 'web', 10.00), (2, DATE '2025-01-20', NULL, 20.50),
 (3, DATE '2025-03-02', 'store', 5.00), (4, DATE '2025-03-02', 'web', NULL),
 (5, DATE '2025-04-30', NULL, 7.25);
"""


def entries(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"dialects": [{"dialect": d, "expression": e} for d, e in pairs]}


def model(fields: list[dict[str, Any]], metrics: list[dict[str, Any]]) -> str:
    doc = {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "converted",
                "datasets": [
                    {
                        "name": "orders",
                        "source": "main.orders",
                        "primary_key": ["order_id"],
                        "fields": [
                            {"name": "order_id", "expression": entries(("DUCKDB", "order_id"))},
                            {"name": "order_date", "expression": entries(("DUCKDB", "order_date"))},
                            {"name": "amount", "expression": entries(("DUCKDB", "amount"))},
                            *fields,
                        ],
                    }
                ],
                "metrics": [
                    {"name": "revenue", "expression": entries(("DUCKDB", "SUM(orders.amount)"))},
                    {
                        "name": "orders_n",
                        "expression": entries(("ANSI_SQL", "COUNT(orders.order_id)")),
                    },
                    *metrics,
                ],
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


CHANNEL_BOTH = {
    "name": "channel",
    "expression": entries(
        ("ANSI_SQL", "COALESCE(channel, 'ansi')"), ("DUCKDB", "coalesce(channel, 'duck')")
    ),
}
MONTH_DUCK = {
    "name": "month_name",
    "expression": entries(("DUCKDB", "strftime(order_date, '%Y-%m')")),
}
CHANNEL_PG = {
    "name": "channel_pg",
    "expression": entries(("POSTGRESQL", "'pg'"), ("ANSI_SQL", "COALESCE(channel, 'ansi')")),
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dialects") / "orders.duckdb"
    con = duckdb.connect(str(path))
    con.execute(DATA)
    con.close()
    return path


def truth(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    return sorted(
        (tuple(float(v) if hasattr(v, "as_tuple") else v for v in r) for r in rows), key=repr
    )


def rows(res: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r[c] for c in res["columns"]) for r in res["rows"]), key=repr)


def test_converter_dialect_loads_with_one_warning_per_name(db: Path) -> None:
    """CORE-MOD-06: DUCKDB entries load; one structured warning names the dialect, the first
    entry's path and line, and the count of the others."""
    eng = dosi.Engine(model_text=model([MONTH_DUCK], []))
    warns = [w for w in eng.warnings if w["code"] == "unknown_expression_dialect"]
    assert len(warns) == 1
    w = warns[0]
    assert "`DUCKDB`" in w["message"] and "4 more entries" in w["message"]
    assert w["path"] == "datasets[orders].fields[order_id].expression.dialects[0].dialect"
    assert w["line"] is not None and w["severity"] == "warning"
    res = eng.execute(
        {"metrics": ["revenue", "orders_n"], "group_by": ["orders.month_name"]}, db_path=db
    )
    assert rows(res) == truth(
        db,
        "SELECT strftime(order_date, '%Y-%m'), SUM(amount), COUNT(order_id) "
        "FROM main.orders GROUP BY 1",
    )


def test_the_execution_dialects_entry_wins_over_ansi(db: Path) -> None:
    """A field with ANSI_SQL and DUCKDB entries runs its DUCKDB text on DuckDB."""
    eng = dosi.Engine(model_text=model([CHANNEL_BOTH], []))
    res = eng.execute({"metrics": ["revenue"], "group_by": ["orders.channel"]}, db_path=db)
    assert rows(res) == truth(
        db, "SELECT coalesce(channel, 'duck'), SUM(amount) FROM main.orders GROUP BY 1"
    )


def test_ansi_is_used_when_no_entry_matches(db: Path) -> None:
    """ANSI_SQL otherwise: a POSTGRESQL entry is not DuckDB's."""
    eng = dosi.Engine(model_text=model([CHANNEL_PG], []))
    res = eng.execute({"metrics": ["orders_n"], "group_by": ["orders.channel_pg"]}, db_path=db)
    assert rows(res) == truth(
        db, "SELECT COALESCE(channel, 'ansi'), COUNT(order_id) FROM main.orders GROUP BY 1"
    )


def test_an_entry_for_the_default_connection_is_chosen() -> None:
    """The engine the model runs on is its default connection's: a POSTGRESQL entry wins there
    (compiled only: no server is needed to render SQL)."""
    eng = dosi.Engine(
        model_text=model([CHANNEL_PG], []),
        connections={
            "pg": {"type": "postgres", "uri": "postgresql://127.0.0.1:9/x", "default": True}
        },
    )
    sql = eng.compile(
        {"metrics": ["orders_n"], "group_by": ["orders.channel_pg"]}, dialect="postgres"
    )
    assert "'pg' AS channel_pg" in sql["sql"]


@pytest.mark.parametrize(
    ("extra_fields", "extra_metrics", "where"),
    [
        (
            [{"name": "ch_year", "expression": entries(("CLICKHOUSE", "toYear(order_date)"))}],
            [],
            "datasets[orders].fields[ch_year]",
        ),
        (
            [{"name": "mdx_only", "expression": entries(("MDX", "[Orders].[Channel]"))}],
            [],
            "datasets[orders].fields[mdx_only]",
        ),
        (
            [],
            [{"name": "tableau_rev", "expression": entries(("TABLEAU", "SUM([amount])"))}],
            "metrics[tableau_rev]",
        ),
        (
            [{"name": "foo", "expression": entries(("FOO", "channel"))}],
            [],
            "datasets[orders].fields[foo]",
        ),
    ],
)
def test_no_usable_expression_is_an_error_for_that_object_only(
    extra_fields: list[dict[str, Any]], extra_metrics: list[dict[str, Any]], where: str
) -> None:
    """A CLICKHOUSE-only field on a DuckDB engine (it would render SQL DuckDB cannot run), a
    non-SQL dialect, an unknown name: one `no_usable_expression` on that object, nothing else."""
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=model(extra_fields, extra_metrics))
    issues = err.value.issues
    assert [(i.code, i.path) for i in issues] == [("no_usable_expression", where)]
    assert issues[0].hint


@pytest.mark.parametrize(
    ("dialect", "code"),
    [(3, "invalid_model_value"), ("", "invalid_model_value"), ("duck db", "invalid_model_value")],
)
def test_other_schema_rules_stay(dialect: Any, code: str) -> None:
    """Only word-like names are admitted; a number, an empty or free-text name stays invalid."""
    text = model(
        [{"name": "bad", "expression": {"dialects": [{"dialect": dialect, "expression": "x"}]}}], []
    )
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    assert [i.code for i in err.value.issues] == [code]


def test_entry_keys_stay_strict() -> None:
    text = model(
        [
            {
                "name": "bad",
                "expression": {"dialects": [{"dialect": "DUCKDB", "expression": "x", "note": 1}]},
            }
        ],
        [],
    )
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    assert [i.code for i in err.value.issues] == ["unknown_model_key"]


def test_validate_reports_the_warning() -> None:
    out = dosi.validate(model([MONTH_DUCK], []))
    assert out["valid"] is True
    assert [w["code"] for w in out["warnings"]] == ["unknown_expression_dialect"]


def converter_output(catalog: str) -> str:
    """A model in the shape the Ossie DuckDB converter writes: one semantic model's keys at the
    top level, `source: <database>.<schema>.<table>`, every expression a DUCKDB entry."""
    doc = {
        "version": "0.2.0.dev0",
        "name": f"{catalog}_main",
        "datasets": [
            {
                "name": "orders",
                "source": f"{catalog}.main.orders",
                "primary_key": ["order_id"],
                "fields": [
                    {"name": c, "expression": entries(("DUCKDB", c))}
                    for c in ("order_id", "order_date", "channel", "amount")
                ],
            }
        ],
        "metrics": [
            {"name": "revenue", "expression": entries(("DUCKDB", "SUM(orders.amount)"))},
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


def test_converter_output_loads_and_runs(db: Path) -> None:
    """The flat document is read as `semantic_model: [...]` with a `model_document_wrapped`
    warning (and the dialect warning); its three-part sources name the database file."""
    eng = dosi.Engine(model_text=converter_output(db.stem))
    assert [w["code"] for w in eng.warnings] == [
        "model_document_wrapped",
        "unknown_expression_dialect",
    ]
    res = eng.execute({"metrics": ["revenue"], "group_by": ["orders.channel"]}, db_path=db)
    assert rows(res) == truth(db, "SELECT channel, SUM(amount) FROM main.orders GROUP BY 1")


def test_a_flat_document_keeps_the_schema_rules() -> None:
    """Only the nesting is supplied: an unknown key still fails, at its own line."""
    text = converter_output("x").replace("primary_key:", "owner: bi\n  primary_key:", 1)
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    assert [(i.code, i.path) for i in err.value.issues] == [
        ("unknown_model_key", "datasets[orders].owner")
    ]
    assert err.value.issues[0].line == text.splitlines().index("  owner: bi") + 1


def test_engine_names_match_case_insensitively(db: Path) -> None:
    """`duckdb` is read as DUCKDB (the warning still names it as written)."""
    text = model([], []).replace("dialect: DUCKDB", "dialect: duckdb")
    eng = dosi.Engine(model_text=text)
    assert "`duckdb`" in eng.warnings[0]["message"]
    res = eng.execute({"metrics": ["revenue"]}, db_path=db)
    assert rows(res) == truth(db, "SELECT SUM(amount) FROM main.orders")
