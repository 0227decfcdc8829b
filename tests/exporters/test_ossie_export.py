"""`dosi export ossie`: plain Ossie without DATUS keys, honoring the envelope (ENV-REQ-02/03,
ENV-IMP-01): silent or required keys are never dropped quietly, every dropped key says its
impact, what cannot exist without its extension goes (with its readers), D-DATASET is
written into plain Ossie, and `--keep-datus` completes `v` / `requires`."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dosi.engine import Engine
from dosi.errors import ModelError
from dosi.exporters.ossie import export_ossie
from dosi.importers.common import model_errors

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "examples" / "shop" / "model.yaml"


@pytest.fixture(scope="module")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = importlib.util.spec_from_file_location(
        "shop_generate", REPO / "examples/shop/generate.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return Path(gen.build(tmp_path_factory.mktemp("export") / "shop.duckdb"))


def _datus_entries(doc: Any) -> int:
    text = json.dumps(doc)
    return text.upper().count('"VENDOR_NAME": "DATUS"')


def test_required_and_silent_keys_are_refused_by_default() -> None:
    with pytest.raises(ModelError) as err:
        export_ossie(SHOP.read_text())
    issues = {(d.code, d.path) for d in err.value.issues}
    # first_order_day lists `lod` in `requires`
    assert ("export_drops_required_key", "datasets[orders].fields[first_order_day]") in issues
    assert all(d.hint and "--allow-silent" in d.hint for d in err.value.issues)


def test_plain_export_loads_without_datus_and_says_what_changed(shop_db: Path) -> None:
    out = export_ossie(SHOP.read_text(), allow_silent=True)
    doc = yaml.safe_load(out.yaml())
    assert _datus_entries(doc) == 0
    assert model_errors(out.yaml(), "basic") == [] and model_errors(out.yaml(), "datus") == []
    codes = {(w.code, w.path) for w in out.warnings}
    assert ("datus_key_dropped", "relationships[order_items_to_products]") in codes  # join_type
    assert ("datus_key_lowered", "metrics[order_line_count]") in codes
    # the D-LOD field is a bare aggregate without its extension; the fields reading it go too
    for gone in ("first_order_day", "cohort_month", "order_kind"):
        assert ("export_object_dropped", f"datasets[orders].fields[{gone}]") in codes
    dropped = [w for w in out.warnings if w.code == "datus_key_dropped"]
    assert all("impact" in w.message for w in dropped)
    join = next(w for w in dropped if w.path == "relationships[order_items_to_products]")
    assert "LEFT" in join.message  # the registered fallback
    # the lowered COUNT(*) and a plain metric answer as before
    before = Engine(model_path=SHOP).execute(
        {"metrics": ["order_line_count", "revenue"], "group_by": ["orders.status"]}, db_path=shop_db
    )["rows"]
    after = Engine(model_text=out.yaml(), mode="basic").execute(
        {"metrics": ["order_line_count", "revenue"], "group_by": ["orders.status"]}, db_path=shop_db
    )["rows"]
    assert after == before


def test_other_vendors_stay() -> None:
    text = SHOP.read_text().replace(
        "      - name: customers\n        source: main.customers\n",
        "      - name: customers\n        source: main.customers\n        custom_extensions:\n"
        "          - vendor_name: ACME\n            data: '{\"tier\": 1}'\n",
    )
    out = export_ossie(text, allow_silent=True).plain()
    ds = next(d for d in out["semantic_model"][0]["datasets"] if d["name"] == "customers")
    assert ds["custom_extensions"] == [{"vendor_name": "ACME", "data": '{"tier": 1}'}]


MINIMAL = """
version: 0.2.0.dev0
semantic_model:
  - name: m
    datasets:
      - name: sales
        source: main.sales
        primary_key: [id]
        fields:
          - name: id
            expression: {dialects: [{dialect: ANSI_SQL, expression: id}]}
          - name: day_key
            expression: {dialects: [{dialect: ANSI_SQL, expression: day_key}]}
            datatype: String
            dimension: {is_time: true}
            custom_extensions:
              - vendor_name: DATUS
                data: '{"v": "1.0", "time": {"format": "%Y%m%d"}}'
    metrics:
      - name: n
        expression: {dialects: [{dialect: ANSI_SQL, expression: COUNT(*)}]}
        custom_extensions:
          - vendor_name: datus
            data: '{"dataset": "sales", "fill_nulls_with": 0}'
"""


def test_keep_datus_completes_the_envelope() -> None:
    """ENV-REQ-03: a silent key is listed in `requires`; `v` names the newest key's version."""
    loaded = Engine(model_text=MINIMAL)
    assert any(w["code"] == "datus_ext_requires_missing" for w in loaded.warnings)
    out = export_ossie(MINIMAL, keep_datus=True)
    doc = out.plain()["semantic_model"][0]
    field = doc["datasets"][0]["fields"][1]
    data = json.loads(field["custom_extensions"][0]["data"])
    assert data["v"] == "1.6" and data["requires"] == ["time"]
    metric = json.loads(doc["metrics"][0]["custom_extensions"][0]["data"])
    assert metric["v"] == "1.1" and "requires" not in metric
    assert {w.code for w in out.warnings} == {"datus_envelope_completed"}
    after = Engine(model_text=out.yaml())
    assert not any(w["code"].startswith("datus_ext_") for w in after.warnings)


def test_an_invalid_model_is_not_exported() -> None:
    with pytest.raises(ModelError):
        export_ossie(MINIMAL.replace("COUNT(*)", "COUNT(nope.x)"))
