"""The serving limits in MCP (issue 29, item 1): a query, select or sql answer over the row or
byte limit is an `is_error` result `result_too_large` naming the limit, whose
`suggested_retry` carries a limit and succeeds as sent; within the limits the rows are the
Python API's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from enginekit import SHOP_MODEL, json_rows
from mcp import Client

from dosi import Engine
from dosi.frontends.limits import ServeLimits
from dosi.frontends.mcp.server import build_server


def _call(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def main() -> list[Any]:
        out = []
        async with Client(server) as client:
            for name, args in calls:
                r = await client.call_tool(name, args)
                out.append((r.is_error, json.loads(r.content[0].text)))
        return out

    return asyncio.run(main())


def test_issue29_item1_mcp_answers_within_the_limits(engine: Engine, shop_db: Path) -> None:
    server = build_server(SHOP_MODEL, db_path=str(shop_db), limits=ServeLimits(10, 4000, 30.0))
    select = {"from": "orders", "fields": ["orders.order_id"], "order_by": ["orders.order_id"]}
    q = {"metrics": ["order_count"], "group_by": ["metric_time:day"]}
    sql = "SELECT metric_time__day, MEASURE(order_count) FROM shop GROUP BY 1 ORDER BY 1"
    (e1, rows_err), (e2, q_err), (e3, sql_err) = _call(
        server,
        [
            ("select", {"query": {**select, "limit": 50}}),
            ("query", {"query": q}),
            ("sql", {"sql": sql}),
        ],
    )
    assert e1 and e2 and e3
    for body in (rows_err, q_err, sql_err):
        assert body["code"] == "result_too_large" and body["detail"]["max_rows"] == 10
    assert rows_err["suggested_retry"] == {**select, "limit": 10}
    assert q_err["suggested_retry"] == {**q, "limit": 10}
    assert "LIMIT 10" in sql_err["suggested_retry"]["sql"]
    (r1_err, r1), (r2_err, r2) = _call(
        server,
        [("select", {"query": rows_err["suggested_retry"]}), ("sql", sql_err["suggested_retry"])],
    )
    assert not r1_err and not r2_err
    assert r1["rows"] == json_rows(engine.select({**select, "limit": 10}, db_path=shop_db))
    assert r2["row_count"] == 10
    wide = {"from": "orders", "fields": ["orders.order_id", "customers.segment"], "limit": 10}
    ((big_err, big),) = _call(
        build_server(SHOP_MODEL, db_path=str(shop_db), limits=ServeLimits(10, 300, 30.0)),
        [("select", {"query": wide})],
    )
    assert big_err and big["code"] == "result_too_large" and big["detail"]["limit"] == "bytes"
    assert big["suggested_retry"]["limit"] < 10
