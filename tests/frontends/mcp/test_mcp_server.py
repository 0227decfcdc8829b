"""MCP server end to end with the official SDK client: stdio and streamable HTTP
(SURF-MCP-01..04): every tool against the Python API, and the error contract."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from enginekit import SHOP_MODEL, json_rows
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from servekit import free_port

import dosi
from dosi import Engine
from dosi.frontends.query_schema import QueryInput
from dosi.query.spec import QUERY_KEYS

TOOLS = {
    "list_metrics",
    "describe_metric",
    "list_dimensions",
    "query",
    "compile",
    "explain",
    "select",
    "attribute",
    "validate",
    "sql",
}
Q = {"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]}
SELECT = {"from": "orders", "fields": ["orders.order_id", "customers.segment"], "limit": 3}
ATTR = {
    "metric": "revenue",
    "current": {"start": "2024-03-01", "end": "2024-04-01"},
    "baseline": {"start": "2024-01-01", "end": "2024-02-01"},
    "dimensions": ["orders.channel"],
}


async def _exercise(client: Client, engine: Engine, db: Path) -> None:
    tools = await client.list_tools()
    assert {t.name for t in tools.tools} == TOOLS

    async def ok(name: str, args: dict[str, Any]) -> Any:
        r = await client.call_tool(name, args)
        assert not r.is_error, r.content
        data = json.loads(r.content[0].text)
        assert r.structured_content is not None
        return data

    async def err(name: str, args: dict[str, Any]) -> dict[str, Any]:
        r = await client.call_tool(name, args)
        assert r.is_error
        body = json.loads(r.content[0].text)
        for key in ("code", "message", "candidates", "hint", "suggested_retry"):
            assert key in body, body
        return body

    assert (await ok("list_metrics", {}))["metrics"] == engine.metrics()
    described = await ok("describe_metric", {"name": "revenue"})
    assert described["param_schema"]["type"] == "object"
    plain = {k: v for k, v in engine.metric("revenue").items() if k != "param_schema"}
    assert {k: v for k, v in described.items() if k != "param_schema"} == plain
    dims = (await ok("list_dimensions", {"metric": "revenue"}))["dimensions"]
    assert dims == engine.dimensions("revenue")
    assert any(d["is_dimension"] is False and d["source"] for d in dims)
    result = await ok("query", {"query": Q})
    assert result["rows"] == json_rows(engine.execute(Q, db_path=db))
    flat = await ok("query", Q)  # the query's keys as tool arguments
    assert flat["rows"] == result["rows"]
    ctx = {**Q, "context_filter": "orders.status = 'completed'"}  # CORE-Q-10 on MCP
    assert (await ok("query", ctx))["rows"] == json_rows(engine.execute(ctx, db_path=db))
    assert (await ok("query", {"query": ctx}))["rows"] != result["rows"]
    dense = {  # the query key `densify` as a tool argument (issue 22)
        "metrics": ["order_count"],
        "group_by": ["metric_time:day"],
        "where_sql": "orders.amount > 900",
        "time_range": {"start": "2025-01-01", "end": "2025-02-01"},
        "densify": "time",
    }
    assert len((await ok("query", dense))["rows"]) == 31
    flat_sel = await ok(
        "select",
        {"dataset": "orders", "fields": ["orders.order_id"], "order_by": ["order_id"], "limit": 2},
    )
    assert [r["order_id"] for r in flat_sel["rows"]] == [1, 2]
    flat_att = await ok("attribute", ATTR)
    assert flat_att["total_change"] == engine.attribute(ATTR, db_path=db)["total_change"]
    assert result["outputs"] == [
        {"column": "revenue", "metric": "revenue"},
        {"column": "order_count", "metric": "order_count"},
    ]
    assert (await ok("compile", {"query": Q, "dialect": "postgres"})) == engine.compile(
        Q, "postgres"
    )
    assert (await ok("explain", {"query": Q}))["plan"] == engine.explain(Q)
    assert (await ok("select", {"query": SELECT}))["rows"] == json_rows(
        engine.select(SELECT, db_path=db)
    )
    att = await ok("attribute", {"request": ATTR})
    assert att == json.loads(json.dumps(engine.attribute(ATTR, db_path=db)))
    assert (await ok("validate", {"model": SHOP_MODEL.read_text()}))["valid"] is True
    sql = "SELECT orders__channel, MEASURE(revenue), MEASURE(order_count) AS n FROM shop GROUP BY 1"
    assert (await ok("sql", {"sql": sql}))["rows"] == json_rows(engine.sql(sql, db_path=db))
    assert (await err("sql", {"sql": "SELECT AVG(revenue) FROM shop"}))["code"] == (
        "sql_aggregate_mismatch"
    )

    body = await err("query", {"query": {"metrics": ["revenu"]}})
    assert body["code"] == "unknown_metric" and body["suggested_retry"] == {"metrics": ["revenue"]}
    assert (await err("describe_metric", {"name": "nope"}))["code"] == "unknown_metric"
    assert (await err("describe_metric", {}))["code"] == "invalid_arguments"
    assert (await err("query", {"query": 42}))["code"] == "invalid_query"
    assert (await err("select", {"query": {"from": "orders", "fields": ["order_items.quantity"]}}))[
        "code"
    ] == "detail_fanout"


async def _typed(client: Client, engine: Engine) -> None:
    """Issue 26 item 6: typed inputs from the one query schema, the package version,
    resources (catalog, a metric with its lineage) and prompts, seen through the SDK client."""
    info = client.server_info
    assert info is not None and (info.name, info.version) == ("dosi", dosi.__version__)
    tools = {t.name: t for t in (await client.list_tools()).tools}
    query = tools["query"].input_schema["properties"]
    assert set(QUERY_KEYS) | {"query"} == set(query)
    for key in QUERY_KEYS:  # every argument typed and described, from QueryInput
        assert query[key]["description"] == QueryInput.model_fields[key].description
        assert "type" in query[key] or "anyOf" in query[key]
    assert query["metrics"]["type"] == "array" and query["metrics"]["items"] == {"type": "string"}
    assert query["limit"]["anyOf"][0] == {"minimum": 0, "type": "integer"}
    week = next(a for a in query["week_start"]["anyOf"] if "enum" in a)
    assert week["enum"] == ["monday", "sunday", "saturday"]
    densify = next(a for a in query["densify"]["anyOf"] if "enum" in a)
    assert densify["enum"] == ["time", "all", "windows", "covered", "none"]
    whole = query["query"]
    assert set(whole["properties"]) == set(QUERY_KEYS) and "$ref" not in json.dumps(whole)
    grain = whole["properties"]["group_by"]["anyOf"][0]["items"]["anyOf"][1]
    assert "month" in grain["properties"]["grain"]["anyOf"][0]["enum"]
    for name in ("compile", "explain"):
        props = tools[name].input_schema["properties"]
        assert all(props[k] == query[k] for k in QUERY_KEYS)
    assert tools["validate"].input_schema["properties"]["mode"]["enum"] == ["datus", "basic"]
    assert tools["describe_metric"].input_schema["properties"]["name"]["type"] == "string"
    # a wrong type still gets the engine's error contract, not a schema library's message
    r = await client.call_tool("query", {"metrics": "revenue", "group_by": 7})
    assert r.is_error and "code" in json.loads(r.content[0].text)

    resources = {str(x.uri) for x in (await client.list_resources()).resources}
    assert "dosi://catalog" in resources
    cat = json.loads((await client.read_resource("dosi://catalog")).contents[0].text)
    assert [m["name"] for m in cat["metrics"]] == [m["name"] for m in engine.metrics()]
    assert len(cat["dimensions"]) == len(engine.dimensions())
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["dosi://metrics/{name}"]
    one = json.loads((await client.read_resource("dosi://metrics/revenue")).contents[0].text)
    assert one["definition"]["name"] == "revenue"
    assert one["lineage"] == json.loads(json.dumps(engine.lineage("revenue"), default=str))

    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(prompts) == {"explain_metric", "compare_periods"}
    assert [a.name for a in prompts["compare_periods"].arguments or []] == [
        "metric", "current_start", "current_end", "baseline_start", "baseline_end",
    ]
    text = (await client.get_prompt("explain_metric", {"metric": "revenue"})).messages[0]
    assert "revenue" in text.content.text and "SUM(orders.amount)" in text.content.text
    cmp = await client.get_prompt(
        "compare_periods",
        {"metric": "revenue", "current_start": "2024-03-01", "current_end": "2024-04-01",
         "baseline_start": "2024-01-01", "baseline_end": "2024-02-01"},
    )
    body = cmp.messages[0].content.text
    assert '"start": "2024-03-01"' in body and "attribute" in body


def test_query_schema_covers_every_query_key() -> None:
    """The typed schema is the query's: one field per QUERY_KEYS entry, no more."""
    assert list(QueryInput.model_fields) == list(QUERY_KEYS)


def test_mcp_stdio_end_to_end(engine: Engine, shop_db: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dosi", "mcp", "-m", str(SHOP_MODEL), "--db", str(shop_db)],
        env=dict(os.environ),  # this tree's dosi (PYTHONPATH), not only the SDK's minimal set
    )

    async def main() -> None:
        async with Client(params) as client:
            await _exercise(client, engine, shop_db)
            await _typed(client, engine)

    asyncio.run(main())


def test_mcp_streamable_http_end_to_end(engine: Engine, shop_db: Path, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "mcp.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dosi",
            "mcp",
            "-m",
            str(SHOP_MODEL),
            "--db",
            str(shop_db),
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("dosi mcp --transport http did not start")

        async def main() -> None:
            async with Client(url) as client:
                await _exercise(client, engine, shop_db)
                await _typed(client, engine)

        asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(10)
