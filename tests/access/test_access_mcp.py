"""Access policies over MCP streamable HTTP (issue 29 item 4, issue 30 items 1, 3, 5): a
bearer token is required (the shared DOSI_TOKEN or an access-file token), each tool answers
as the token's user, hidden metrics are unlisted and `access_denied`."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from accesskit import ACCESS, MODEL
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from servekit import free_port

from dosi import Engine
from dosi.access.policy import AccessSource
from dosi.errors import ArgumentError
from dosi.frontends.mcp.auth import McpGuard
from dosi.frontends.mcp.server import build_server, http_app

PLAIN = Engine(str(MODEL))


@pytest.fixture(scope="module")
def mcp_url(acl_db: Path) -> Iterator[str]:
    source = AccessSource(ACCESS)
    server = build_server(MODEL, db_path=str(acl_db), access=source)
    port = free_port()
    config = uvicorn.Config(
        http_app(server, "127.0.0.1", "shared-secret-1", source),
        host="127.0.0.1",
        port=port,
        log_level="warning",
    )
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while not running.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield url
    running.should_exit = True
    thread.join(10)


def _client(url: str, token: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http))


async def _call(url: str, token: str, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    async with _client(url, token) as client:
        r = await client.call_tool(tool, args)
        return r.is_error, json.loads(r.content[0].text)


def test_issue29_mcp_http_requires_a_token(mcp_url: str) -> None:
    assert httpx.post(mcp_url, json={}).status_code == 401
    bad = httpx.post(mcp_url, json={}, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.json()["code"] == "unauthorized"


def test_issue30_mcp_answers_as_the_tokens_user(
    mcp_url: str, only_rows: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    q = {"metrics": ["revenue"], "group_by": ["orders.region"]}
    with caplog.at_level(logging.INFO, logger="dosi.audit"):
        err, got = asyncio.run(_call(mcp_url, "ana-token", "query", {"query": q}))
        assert not err
        want = PLAIN.execute(q, db_path=only_rows["ana"])
        assert [r["region"] for r in got["rows"]] == ["EMEA"]
        assert got["row_count"] == want["row_count"] == 1
        err, listed = asyncio.run(_call(mcp_url, "ana-token", "list_metrics", {}))
        assert "total_cost" not in {m["name"] for m in listed["metrics"]}
        err, denied = asyncio.run(
            _call(mcp_url, "ana-token", "query", {"query": {"metrics": ["total_cost"]}})
        )
        assert err and denied["code"] == "access_denied"
        err, tom = asyncio.run(_call(mcp_url, "tom-token", "query", {"query": q}))
        assert {r["region"] for r in tom["rows"]} == {"EMEA", "APAC", "AMER"}
        err, shared = asyncio.run(_call(mcp_url, "shared-secret-1", "list_metrics", {}))
        assert shared["metrics"] == []  # the shared token's user has no policy
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "dosi.audit"]
    mcp = [(x["user"], x["action"], x["outcome"]) for x in lines if x["surface"] == "mcp"]
    assert ("ana", "query", "ok") in mcp and ("ana", "query", "access_denied") in mcp
    assert ("tom", "query", "ok") in mcp


async def _plain_app(scope: Any, receive: Any, send: Any) -> None:
    user = scope.get("state", {}).get("dosi_user")
    body = json.dumps({"user": user.name if user is not None else None}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def test_issue29_mcp_guard_shared_token_only_utf8() -> None:
    """issue 29 item 4: DOSI_TOKEN alone protects MCP over HTTP; a UTF-8 token works."""
    guard = McpGuard(_plain_app, "pässwörd-1", None)

    async def go() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=guard)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            return [
                await c.post("/mcp"),
                await c.post("/mcp", headers={"Authorization": "Bearer wrong"}),
                await c.post("/mcp", headers={"Authorization": "Bearer pässwörd-1".encode()}),
            ]

    missing, wrong, ok = asyncio.run(go())
    assert missing.status_code == wrong.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert ok.status_code == 200 and ok.json() == {"user": "token"}
    with pytest.raises(ArgumentError):
        McpGuard(_plain_app, None, None)
