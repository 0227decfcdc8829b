"""Grain spellings (issue 21 item 3): `metric_time__month` and `dataset.field__grain`, the
output names dosi writes, are accepted wherever `metric_time:month` / `dataset.field:grain`
are (group_by, order_by, the time_range dimension, dimension-only queries), on the Python API,
the CLI, REST and MCP; the output column keeps its canonical name; a field whose own name holds
`__` is that field; a near miss's suggested_retry keeps the grain. Expected rows come from
hand-written SQL over the mini shop.

Requirement IDs: CORE-Q-02 (group_by spellings), CORE-Q-04 (output names), CORE-Q-05
(metric_time), CORE-Q-06 (time_range).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from enginekit import field, mini_doc, mini_yaml, norm, result_rows, to_yaml
from fastapi.testclient import TestClient
from mcp import Client

from dosi.engine import Engine
from dosi.errors import QueryError
from dosi.frontends.cli import cli
from dosi.frontends.mcp.server import build_server
from dosi.frontends.rest.app import create_app

Make = Callable[..., Any]


def same_rows(got: dict[str, Any], want: list[tuple[Any, ...]]) -> bool:
    """Row for row, in order, dates and decimals in one comparable form."""
    return [tuple(map(norm, r)) for r in result_rows(got)] == [tuple(map(norm, r)) for r in want]


MONTHLY = (
    "SELECT CAST(date_trunc('month', order_date) AS DATE) AS m, SUM(amount) FROM orders "
    "GROUP BY 1 ORDER BY 1"
)


@pytest.mark.parametrize("spelling", ["metric_time__month", "orders.order_date__month"])
def test_double_underscore_grain_groups_like_the_colon(
    mini_run: Callable[..., Any], mini_ref: Any, spelling: str
) -> None:
    colon = spelling.replace("__", ":")
    a = mini_run({"metrics": ["revenue"], "group_by": [spelling]})
    b = mini_run({"metrics": ["revenue"], "group_by": [colon]})
    assert a["columns"] == b["columns"] == [spelling.split(".")[-1], "revenue"]
    assert a["rows"] == b["rows"]
    assert same_rows(a, mini_ref.exact(MONTHLY))


def test_order_by_accepts_either_spelling(mini_run: Callable[..., Any], mini_ref: Any) -> None:
    want = list(reversed(mini_ref.exact(MONTHLY)))
    for group, key in [
        ("metric_time__month", "metric_time:month"),
        ("metric_time:month", "metric_time__month"),
        ("orders.order_date__month", "orders.order_date:month"),
        ("orders.order_date:month", "orders.order_date__month"),
    ]:
        res = mini_run(
            {"metrics": ["revenue"], "group_by": [group], "order_by": [{"key": key, "desc": True}]}
        )
        assert same_rows(res, want), (group, key)


def test_time_range_dimension_with_a_grain(mini_run: Callable[..., Any], mini_ref: Any) -> None:
    """CORE-Q-06: the range bounds the raw value; a grain on its dimension names the column."""
    want = mini_ref.exact(
        "SELECT SUM(amount) FROM orders WHERE order_date >= DATE '2024-01-01' "
        "AND order_date < DATE '2024-03-01'"
    )
    for dim in ("orders.order_date__day", "orders.order_date:day", "orders.order_date"):
        res = mini_run(
            {
                "metrics": ["revenue"],
                "time_range": {"start": "2024-01-01", "end": "2024-03-01", "dimension": dim},
            }
        )
        assert same_rows(res, want), dim


def test_dimension_only_query_takes_the_spelling(
    mini_run: Callable[..., Any], mini_ref: Any
) -> None:
    res = mini_run(
        {"metrics": [], "group_by": ["orders.order_date__month"], "order_by": ["order_date__month"]}
    )
    assert res["columns"] == ["order_date__month"]
    assert same_rows(
        res,
        mini_ref.exact(
            "SELECT DISTINCT CAST(date_trunc('month', order_date) AS DATE) FROM orders ORDER BY 1"
        ),
    )


def test_an_exact_field_name_with_double_underscores_wins(mini_db: Path, mini_ref: Any) -> None:
    """A field literally named `order_date__month` is that field, not a month of order_date."""
    doc = mini_doc()
    fields = doc["semantic_model"][0]["datasets"][0]["fields"]
    fields.append(field("order_date__month", "status", datatype="String"))
    eng = Engine(model_text=to_yaml(doc))
    res = eng.execute(
        {"metrics": ["revenue"], "group_by": ["orders.order_date__month"]}, db_path=mini_db
    )
    assert res["columns"] == ["order_date__month", "revenue"]
    assert sorted(result_rows(res)) == sorted(
        mini_ref.exact("SELECT status, SUM(amount) FROM orders GROUP BY 1")
    )


def test_near_misses_keep_the_grain(mini: Engine) -> None:
    with pytest.raises(QueryError) as info:
        mini.compile({"metrics": ["revenue"], "group_by": ["orders.order_dat__month"]})
    err = info.value
    assert err.code == "unknown_dimension"
    assert err.candidates[0] == "orders.order_date__month"
    assert err.suggested_retry["group_by"] == ["orders.order_date__month"]
    with pytest.raises(QueryError) as info:
        mini.compile({"metrics": ["revenue"], "group_by": ["metric_tim__month"]})
    assert info.value.suggested_retry["group_by"] == ["metric_time__month"]
    with pytest.raises(QueryError) as info:
        mini.compile({"metrics": ["revenue"], "group_by": ["metric_time__mnth"]})
    assert info.value.code == "unknown_grain" and "month" in info.value.candidates


def test_every_surface_accepts_the_spelling(mini: Engine, mini_db: Path, tmp_path: Path) -> None:
    q = {"metrics": ["revenue"], "group_by": ["metric_time__month"]}
    want = json.loads(json.dumps(mini.execute(q, db_path=mini_db)["rows"], default=str))
    model = tmp_path / "mini.yaml"
    model.write_text(mini_yaml())
    r = CliRunner().invoke(
        cli,
        [
            "query",
            "-m",
            str(model),
            "--db",
            str(mini_db),
            "-M",
            "revenue",
            "-g",
            "metric_time__month",
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    assert [row["metric_time__month"] for row in json.loads(r.output)["rows"]] == [
        row["metric_time__month"] for row in want
    ]
    with TestClient(create_app(model, db_path=str(mini_db))) as c:
        body = c.post("/v1/query", json=q).json()
    assert [row["metric_time__month"] for row in body["rows"]] == [
        row["metric_time__month"] for row in want
    ]

    async def mcp() -> Any:
        async with Client(build_server(model, db_path=str(mini_db))) as client:
            out = await client.call_tool("query", q)
            assert not out.is_error, out.content
            return json.loads(out.content[0].text)["rows"]

    assert [row["metric_time__month"] for row in asyncio.run(mcp())] == [
        row["metric_time__month"] for row in want
    ]
