"""D-LOD rollups keep the storage encoding (D-FORMAT): keys are projected raw, the view parses
and truncates once outside (datus-extensions §3 D-LOD "the rollup keeps the storage encoding";
CHECKLIST LOD-PLAN-13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml
from lodfieldkit import ext, field, hand, lod_field, metric, rows_of

import dosi

ROWS = [
    ("A", "20250101"),
    ("B", "20250101"),
    ("A", "20250102"),
    ("C", "20250215"),
    ("A", "20250215"),
]


@pytest.fixture(scope="module")
def enc(tmp_path_factory: pytest.TempPathFactory) -> tuple[dosi.Engine, Path]:
    db = tmp_path_factory.mktemp("lodenc") / "enc.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE ev (user_id VARCHAR, event_ymd VARCHAR)")
    con.executemany("INSERT INTO ev VALUES (?, ?)", ROWS)
    con.close()
    doc: dict[str, Any] = {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "enc",
                "datasets": [
                    {
                        "name": "ev",
                        "source": "main.ev",
                        "fields": [
                            field("user_id", datatype="String"),
                            field(
                                "event_ymd",
                                datatype="String",
                                dimension={"is_time": True},
                                custom_extensions=ext(
                                    {
                                        "v": "1.10",
                                        "requires": ["time"],
                                        "time": {"format": "%Y%m%d"},
                                    }
                                ),
                            ),
                            lod_field(
                                "daily_users",
                                "COUNT(DISTINCT user_id)",
                                "fixed(dau, ev.event_ymd)",
                                datatype="Integer",
                            ),
                        ],
                    }
                ],
                "metrics": [
                    metric("dau", "COUNT(DISTINCT ev.user_id)"),
                    metric("avg_dau", "AVG(ev.daily_users)"),
                ],
            }
        ],
    }
    e = dosi.Engine(
        model_text=yaml.safe_dump(doc, sort_keys=False),
        connections={"db": {"type": "duckdb", "uri": str(db)}},
    )
    return e, db


def test_encoded_key_is_parsed_once_outside_the_rollup(enc: tuple[dosi.Engine, Path]) -> None:
    e, db = enc
    q = {"metrics": ["avg_dau"], "group_by": ["metric_time:month"]}
    sql = e.compile(q)["sql"]
    inner = sql[sql.index("(SELECT") : sql.index(") AS f")]
    assert "STRPTIME" not in inner.upper() and "DATE_TRUNC" not in inner.upper(), sql
    assert "f.event_ymd" in sql
    got = rows_of(e.execute(q), ["metric_time__month", "avg_dau"])
    assert got == hand(
        db,
        "SELECT CAST(DATE_TRUNC('month', STRPTIME(d, '%Y%m%d'))::DATE AS VARCHAR), AVG(n)"
        " FROM (SELECT event_ymd AS d, COUNT(DISTINCT user_id) AS n FROM ev GROUP BY 1) GROUP BY 1",
    )
    assert "LodRollup" in e.explain(q)
