"""A model without metrics loads (Ossie's `metrics` is optional): its catalog is empty of
metrics, dimension-only queries answer, and a metric query names what is missing. Requirement
IDs: CORE-MOD-01 (a schema-valid model loads)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import dosi

MODEL = """
version: "0.2.0.dev0"
semantic_model:
  - name: bare
    datasets:
      - name: t
        source: main.t
        primary_key: [id]
        fields:
          - name: id
            expression:
              dialects:
                - dialect: ANSI_SQL
                  expression: id
"""


def test_core_mod_01_a_model_without_metrics_loads_and_answers(tmp_path: Path) -> None:
    db = tmp_path / "bare.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT range AS id FROM range(3)")
    con.close()
    engine = dosi.Engine(model_text=MODEL)
    assert engine.metrics() == []
    got = engine.execute({"group_by": ["t.id"], "order_by": ["t.id"]}, db_path=db)
    assert [r["id"] for r in got["rows"]] == [0, 1, 2]
    with pytest.raises(dosi.OsiError) as err:
        engine.execute({"metrics": ["revenue"]}, db_path=db)
    assert err.value.code == "unknown_metric"
