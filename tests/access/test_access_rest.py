"""Access policies over REST (issue 30 items 1, 3, 5, 6): bearer tokens of the access file,
answers equal to the user's own rows, hidden members 403 and unlisted, one audit line per
request, and a broken access file refusing every request (fail closed, reloaded whole)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from accesskit import ACCESS, MODEL
from fastapi.testclient import TestClient

from dosi import Engine
from dosi.frontends.contract import json_safe
from dosi.frontends.rest.app import create_app

PLAIN = Engine(str(MODEL))


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {name}-token"}


@pytest.fixture()
def client(acl_db: Path, tmp_path: Path) -> Any:
    access = tmp_path / "access.yaml"
    shutil.copy(ACCESS, access)
    app = create_app(MODEL, db_path=str(acl_db), access=access, token="shared-secret-1")
    with TestClient(app) as c:
        c.access_path = access  # type: ignore[attr-defined]
        yield c


QUERIES = [
    {"metrics": ["revenue"], "group_by": ["orders.channel"]},
    {"metrics": ["revenue_all_time"], "where_sql": "orders.region = 'AMER' OR 1 = 1"},
    {"metrics": ["revenue_rolling_3m"], "group_by": ["metric_time:month"]},
]


@pytest.mark.parametrize("name", ["ana", "tom", "eve", "boss"])
@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q["metrics"][0])
def test_issue30_rest_matrix(
    client: Any, name: str, query: dict[str, Any], only_rows: dict[str, Path]
) -> None:
    listed = {m["name"] for m in client.get("/v1/metrics", headers=bearer(name)).json()}
    r = client.post("/v1/query", json=query, headers=bearer(name))
    if query["metrics"][0] not in listed:
        assert r.status_code == 403 and r.json()["code"] == "access_denied"
        return
    assert r.status_code == 200, r.text
    want = json_safe(PLAIN.execute(query, db_path=only_rows[name])["rows"])
    assert _sorted(r.json()["rows"]) == _sorted(want)


def _sorted(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(row, sort_keys=True) for row in rows)


def test_issue30_rest_auth(client: Any) -> None:
    assert client.get("/v1/metrics").status_code == 401
    assert client.get("/v1/metrics", headers=bearer("mallory")).status_code == 401
    # the shared token is the user `token`, which no policy names: deny by default
    shared = client.get("/v1/metrics", headers={"Authorization": "Bearer shared-secret-1"})
    assert shared.status_code == 200 and shared.json() == []
    assert client.get("/healthz").status_code == 200


def test_issue30_rest_hidden_members(client: Any) -> None:
    ana = bearer("ana")
    assert "total_cost" not in {m["name"] for m in client.get("/v1/metrics", headers=ana).json()}
    assert client.get("/v1/metrics/total_cost", headers=ana).status_code == 403
    dims = {d["name"] for d in client.get("/v1/dimensions", headers=ana).json()}
    assert "customers.email" not in dims
    r = client.post("/v1/explain", json={"metrics": ["total_cost"]}, headers=ana)
    assert r.status_code == 403 and "emea_managers" in r.json()["message"]
    lineage = client.get("/v1/lineage", headers=ana).text
    assert "total_cost" not in lineage
    r = client.post(
        "/v1/sql", json={"sql": "SELECT MEASURE(total_cost) FROM acl_shop"}, headers=ana
    )
    assert r.status_code >= 400
    sel = client.post(
        "/v1/select",
        json={"from": "orders", "fields": ["orders.region"], "limit": 1000},
        headers=ana,
    )
    assert {row["region"] for row in sel.json()["rows"]} == {"EMEA"}


def test_issue30_rest_audit_line(client: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="dosi.audit"):
        client.post("/v1/query", json={"metrics": ["total_cost"]}, headers=bearer("ana"))
        client.post("/v1/query", json={"metrics": ["revenue"]}, headers=bearer("ana"))
        client.get("/v1/metrics", headers={"Authorization": "Bearer wrong"})
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "dosi.audit"]
    assert [(x["user"], x["metrics"], x["outcome"]) for x in lines] == [
        ("ana", ["total_cost"], "access_denied"),
        ("ana", ["revenue"], "ok"),
        (None, [], "unauthorized"),
    ]
    assert all(x["surface"] == "rest" for x in lines)
    assert "ana-token" not in caplog.text and "EMEA" not in caplog.text


def test_issue30_rest_broken_access_file_fails_closed(client: Any) -> None:
    path: Path = client.access_path
    assert client.get("/v1/metrics", headers=bearer("ana")).status_code == 200
    path.write_text("policies: [ {name: broken", encoding="utf-8")
    os.utime(path, (time.time() + 5, time.time() + 5))
    time.sleep(0.6)
    r = client.post("/v1/query", json={"metrics": ["revenue"]}, headers=bearer("ana"))
    assert r.status_code == 503 and r.json()["code"] == "access_config_invalid"
    shutil.copy(ACCESS, path)
    os.utime(path, (time.time() + 10, time.time() + 10))
    time.sleep(0.6)
    assert (
        client.post("/v1/query", json={"metrics": ["revenue"]}, headers=bearer("ana")).status_code
        == 200
    )
