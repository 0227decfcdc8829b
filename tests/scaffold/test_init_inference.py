"""`dosi init` guesses: keys inferred from names and data (`--match-ids`), the type table,
which columns are measures, the primary time axis, and names that need quoting."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from dosi.engine import Engine
from dosi.errors import ExecuteError
from dosi.execute.connections import Profile
from dosi.scaffold.connect import profile_for_uri
from dosi.scaffold.run import scaffold_model
from dosi.scaffold.types import measure_like, ossie_datatype


def _undeclared(path: Path) -> None:
    """Tables as a CSV or Parquet load leaves them: no key declared anywhere."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE stores AS SELECT * FROM (VALUES (1, 'east'), (2, 'west')) t(id, area)"
    )
    con.execute(
        "CREATE TABLE sales AS SELECT * FROM (VALUES (100, 1, 3.5), (101, 1, 1.5), (102, 2, 4.0), "
        "(103, 9, 2.0)) t(sale_id, store_id, net_amount)"
    )
    con.close()


def test_match_ids_infers_keys_and_joins(tmp_path: Path) -> None:
    path = tmp_path / "loose.duckdb"
    _undeclared(path)
    plain = scaffold_model(Profile("db", "duckdb", str(path)))
    assert "relationships" not in plain.plain()["semantic_model"][0]
    guessed = scaffold_model(Profile("db", "duckdb", str(path)), match_ids=True)
    assert guessed.check() == []
    doc = guessed.plain()["semantic_model"][0]
    ds = {d["name"]: d for d in doc["datasets"]}
    assert ds["stores"]["primary_key"] == ["id"]
    assert ds["sales"]["primary_key"] == ["sale_id"]
    assert doc["relationships"] == [
        {
            "name": "sales_to_stores",
            "from": "sales",
            "to": "stores",
            "from_columns": ["store_id"],
            "to_columns": ["id"],
        }
    ]
    assert "inferred" in guessed.yaml()
    engine = Engine(model_text=guessed.yaml())
    rows = engine.execute(
        {"metrics": ["sales_net_amount_sum", "sales_count"], "group_by": ["stores.area"]},
        db_path=path,
    )["rows"]
    got = {r["area"]: (float(r["sales_net_amount_sum"]), r["sales_count"]) for r in rows}
    # the orphan sale (store 9) lands in the NULL group of the default LEFT join
    assert got == {"east": (5.0, 2), "west": (4.0, 1), None: (2.0, 1)}


def test_match_ids_needs_unique_values(tmp_path: Path) -> None:
    path = tmp_path / "dup.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE things AS SELECT * FROM (VALUES (1), (1), (2)) t(id)")
    con.close()
    doc = scaffold_model(Profile("db", "duckdb", str(path)), match_ids=True).plain()
    assert "primary_key" not in doc["semantic_model"][0]["datasets"][0]


def test_quoted_names_and_primary_time(tmp_path: Path) -> None:
    path = tmp_path / "odd.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        'CREATE TABLE "Web Events" ("Event Id" INTEGER PRIMARY KEY, "order" VARCHAR, '
        "created_at TIMESTAMP, updated_at TIMESTAMP, amount DOUBLE)"
    )
    con.execute(
        "INSERT INTO \"Web Events\" VALUES (1, 'a', TIMESTAMP '2024-01-02 10:00:00', NULL, 2), "
        "(2, 'b', TIMESTAMP '2024-02-03 11:00:00', NULL, 3)"
    )
    con.close()
    converted = scaffold_model(profile_for_uri(str(path)))
    assert converted.check() == []
    doc = converted.plain()["semantic_model"][0]
    ds = doc["datasets"][0]
    assert ds["name"] == "Web_Events"
    assert ds["source"] == 'main."Web Events"'
    exprs = {f["name"]: f["expression"]["dialects"][0]["expression"] for f in ds["fields"]}
    assert exprs["Event_Id"] == '"Event Id"' and exprs["order"] == "order"
    assert '"time_dimension": "created_at"' in ds["custom_extensions"][0]["data"]
    engine = Engine(model_text=converted.yaml())
    rows = engine.execute(
        {
            "metrics": ["Web_Events_amount_sum"],
            "group_by": ["metric_time:month", "Web_Events.order"],
        },
        db_path=path,
    )["rows"]
    assert [(r["order"], r["Web_Events_amount_sum"]) for r in rows] == [("a", 2.0), ("b", 3.0)]


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("INTEGER", "Integer"),
        ("Nullable(UInt64)", "Integer"),
        ("bigint unsigned", "Integer"),
        ("numeric(12,2)", "Decimal"),
        ("LowCardinality(Nullable(String))", "String"),
        ("character varying(20)", "String"),
        ("double precision", "Float"),
        ("timestamp with time zone", "DateTimeTz"),
        ("TIMESTAMP_NS", "DateTime"),
        ("DateTime64(3)", "DateTime"),
        ("date", "Date"),
        ("time without time zone", "Time"),
        ("boolean", "Boolean"),
        ("enum('a','b')", "String"),
        ("VARCHAR2(10)", "String"),
        ("INTEGER[]", "Opaque"),
        ("STRUCT(a INTEGER)", "Opaque"),
        ("", None),
    ],
)
def test_type_table(raw: str, want: str | None) -> None:
    assert ossie_datatype(raw) == want


@pytest.mark.parametrize(
    ("column", "datatype", "want"),
    [
        ("amount", "Decimal", True),
        ("unit_price", "Float", True),
        ("quantity", "Integer", True),
        ("age", "Integer", False),
        ("customer_id", "Integer", False),
        ("zip_code", "Integer", False),
        ("order_year", "Integer", False),
        ("latitude", "Float", False),
        ("status", "String", False),
    ],
)
def test_measure_guess(column: str, datatype: str, want: bool) -> None:
    assert measure_like(column, datatype) is want


def test_uri_forms(tmp_path: Path) -> None:
    assert profile_for_uri("postgresql://u@h:5432/db").type == "postgres"
    assert profile_for_uri("host=127.0.0.1 port=5432 dbname=x").type == "postgres"
    assert profile_for_uri("mysql://root@h:3306/db").type == "mysql"
    assert profile_for_uri("mariadb://root@h:3306/db").type == "mariadb"
    assert profile_for_uri("clickhouse://h:8123/db").type == "clickhouse"
    assert profile_for_uri("sc://h:15002").type == "spark"
    lite = tmp_path / "x.db"
    lite.write_bytes(b"SQLite format 3\x00" + bytes(84))
    assert profile_for_uri(str(lite)).type == "sqlite"
    duck = tmp_path / "y.db"
    duckdb.connect(str(duck)).close()
    assert profile_for_uri(str(duck)).type == "duckdb"
    assert profile_for_uri(f"duckdb:///{duck}").uri == str(duck)


def test_an_empty_default_schema_scaffolds_the_schemas_with_tables(tmp_path: Path) -> None:
    path = tmp_path / "multi.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA a; CREATE SCHEMA b")
    con.execute("CREATE TABLE a.t (id INTEGER); INSERT INTO a.t VALUES (1), (2)")
    con.execute("CREATE TABLE b.t (id INTEGER PRIMARY KEY); INSERT INTO b.t VALUES (7)")
    con.execute("CREATE TABLE b.u (v DOUBLE, t_id INTEGER REFERENCES b.t(id))")
    con.close()
    converted = scaffold_model(Profile("db", "duckdb", str(path)))
    assert converted.check() == []
    doc = converted.plain()["semantic_model"][0]
    assert [(d["name"], d["source"]) for d in doc["datasets"]] == [
        ("a_t", "a.t"),
        ("b_t", "b.t"),
        ("u", "b.u"),
    ]
    assert [(r["from"], r["to"]) for r in doc["relationships"]] == [("u", "b_t")]
    rows = Engine(model_text=converted.yaml()).execute(
        {"metrics": ["a_t_count", "b_t_count", "u_count"]}, db_path=path
    )["rows"]
    assert rows == [{"a_t_count": 2, "b_t_count": 1, "u_count": 0}]


def test_no_tables_is_a_structured_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(ExecuteError) as err:
        scaffold_model(Profile("db", "duckdb", str(path)))
    assert err.value.code == "init_no_tables"
    _undeclared(tmp_path / "loose.duckdb")
    with pytest.raises(ExecuteError) as err:
        scaffold_model(Profile("db", "duckdb", str(tmp_path / "loose.duckdb")), schema="nope")
    assert err.value.code == "init_no_tables" and err.value.candidates == ["main"]
    with pytest.raises(ExecuteError) as err:
        scaffold_model(
            Profile("db", "duckdb", str(tmp_path / "loose.duckdb")), tables=["stores", "stors"]
        )
    assert err.value.code == "unknown_table" and "stores" in err.value.candidates
