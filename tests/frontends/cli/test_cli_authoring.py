"""The authoring commands end to end through `dosi` (click's runner): `init`, `import cube`,
`import lookml`, `export ossie` and `schema` write models that `dosi validate` accepts and
`dosi query` answers, warnings go to stderr (or into the JSON), and failures are the
structured errors with their exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner

from dosi.frontends.cli import cli

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "importers" / "data"


def dosi(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def shop_db(tmp_path: Path) -> Path:
    path = tmp_path / "store.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, city VARCHAR)")
    con.execute(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), "
        "amount DECIMAL(9,2), ordered_on DATE)"
    )
    con.execute("INSERT INTO customers VALUES (1, 'Oslo'), (2, 'Lima')")
    con.execute(
        "INSERT INTO orders VALUES (1, 1, 10.5, '2024-01-02'), (2, 2, 4.5, '2024-01-09'), "
        "(3, 1, 5.0, '2024-02-01')"
    )
    con.close()
    return path


def test_init_writes_a_model_that_answers_its_first_query(shop_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "model.yaml"
    code, _stdout, stderr = dosi("init", "--db", str(shop_db), "-o", str(out))
    assert code == 0, stderr
    assert f"next: dosi query -m {out} --db {shop_db} -M customers_count" in stderr
    assert dosi("validate", "-m", str(out))[0] == 0
    code, stdout, _ = dosi(
        "query", "-m", str(out), "--db", str(shop_db), "-M", "orders_count,orders_amount_sum",
        "-g", "customers.city", "-f", "json",
    )  # fmt: skip
    assert code == 0
    rows = {
        r["city"]: (r["orders_count"], float(r["orders_amount_sum"]))
        for r in json.loads(stdout)["rows"]
    }
    assert rows == {"Oslo": (2, 15.5), "Lima": (1, 4.5)}
    assert yaml.safe_load(out.read_text())["semantic_model"][0]["name"] == "store"
    # an existing file is never overwritten silently
    code, _, stderr = dosi("init", "--db", str(shop_db), "-o", str(out))
    assert code == 2 and "--force" in stderr


def test_init_from_a_connections_file_and_table_list(shop_db: Path, tmp_path: Path) -> None:
    conns = tmp_path / "connections.yml"
    conns.write_text(f"shop:\n  type: duckdb\n  uri: {shop_db.name}\n")
    code, stdout, stderr = dosi(
        "init", "--connections", str(conns), "--tables", "orders", "-f", "json"
    )
    assert code == 0, stderr
    body = json.loads(stdout)
    datasets = body["model"]["semantic_model"][0]["datasets"]
    assert [d["name"] for d in datasets] == ["orders"]
    # the foreign key points outside the scaffolded tables: a warning, not a broken edge
    assert [w["code"] for w in body["warnings"]] == ["init_relationship_outside_scope"]


def test_init_errors_are_structured(tmp_path: Path) -> None:
    code, _, stderr = dosi("init")
    assert code == 2 and "--db URI or --connections FILE" in stderr
    code, _, stderr = dosi("init", "--db", str(tmp_path / "missing.duckdb"))
    assert code == 4 and "does not exist" in stderr
    code, _, stderr = dosi("init", "--db", "oracle://x")
    assert code == 2 and "names no engine" in stderr


def test_import_cube_and_view(tmp_path: Path) -> None:
    out = tmp_path / "cube.yaml"
    code, _, stderr = dosi("import", "cube", str(DATA / "cube_shop"), "-o", str(out))
    assert code == 0
    assert "warning: [cube_geo_dimension] customers.location" in stderr
    assert dosi("validate", "-m", str(out))[0] == 0
    code, stdout, _ = dosi(
        "import", "cube", str(DATA / "cube_shop"), "--view", "sales", "-f", "json"
    )
    assert code == 0
    body = json.loads(stdout)
    assert sorted(m["name"] for m in body["model"]["semantic_model"][0]["metrics"]) == [
        "orders_count", "revenue", "total_quantity",
    ]  # fmt: skip
    assert {w["code"] for w in body["warnings"]} >= {"cube_geo_dimension"}
    code, _, stderr = dosi("import", "cube", str(DATA / "cube_shop"), "--view", "nope")
    assert code == 2 and "no view `nope`" in stderr


def test_import_lookml(tmp_path: Path) -> None:
    out = tmp_path / "lookml.yaml"
    code, _, stderr = dosi(
        "import", "lookml", str(DATA / "lookml_thelook"), "--dialect", "bigquery", "-o", str(out)
    )
    assert code == 0
    assert "warning: [lookml_liquid] users.ssn_last_4" in stderr
    assert dosi("validate", "-m", str(out))[0] == 0


def test_export_ossie(tmp_path: Path) -> None:
    shop = str(REPO / "examples" / "shop" / "model.yaml")
    code, stdout, stderr = dosi("export", "ossie", "-m", shop)
    assert code == 3 and "export_drops_required_key" in stderr
    out = tmp_path / "plain.yaml"
    code, _, stderr = dosi("export", "ossie", "-m", shop, "--allow-silent", "-o", str(out))
    assert code == 0 and "datus_key_dropped" in stderr
    assert "vendor_name: DATUS" not in out.read_text()
    assert dosi("validate", "-m", str(out), "--osi-basic")[0] == 0
    code, stdout, _ = dosi("export", "ossie", "-m", shop, "--keep-datus", "-f", "json")
    assert code == 0 and json.loads(stdout)["warnings"] == []


def test_schema(tmp_path: Path) -> None:
    code, stdout, _ = dosi("schema")
    assert code == 0
    schema = json.loads(stdout)
    assert schema["$schema"].endswith("2020-12/schema") and "MetricPayload" in schema["$defs"]
    code, stdout, _ = dosi("schema", "--payload", "metric")
    assert code == 0 and json.loads(stdout)["$ref"] == "#/$defs/MetricPayload"
    out = tmp_path / "model.schema.json"
    assert dosi("schema", "-o", str(out))[0] == 0
    assert json.loads(out.read_text()) == schema
