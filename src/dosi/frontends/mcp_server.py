"""MCP server over the Engine (the official `mcp` SDK): `dosi mcp -m MODEL`.

Tools: list_metrics, describe_metric, list_dimensions, query, compile, explain, select,
attribute, validate. Each answers JSON (text content plus structured content); a failure is an
`is_error` result whose JSON is the same error contract as REST (`code`, `message`,
`candidates`, `hint`, `suggested_retry`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from dosi.errors import OsiError
from dosi.frontends.contract import (
    EngineHolder,
    error_body,
    json_safe,
    osi_error_body,
    sql_request,
)
from dosi.frontends.rest import OsiErrorBody, validate_body
from dosi.query.spec import QUERY_KEYS

INSTRUCTIONS = (
    "A semantic layer: call list_metrics and list_dimensions first, then query with metric "
    "names and dataset.field group-bys (metric_time:month for the time axis). Errors carry "
    "`candidates` and `suggested_retry`: retry with them instead of guessing."
)


def _ok(value: Any) -> CallToolResult:
    data = json_safe(value)
    structured = data if isinstance(data, dict) else {"result": data}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
        structured_content=structured,
    )


def _fail(body: dict[str, Any]) -> CallToolResult:
    body = json_safe(body)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def _guard(fn: Any) -> CallToolResult:
    try:
        return _ok(fn())
    except OsiErrorBody as err:
        return _fail(err.body)
    except OsiError as err:
        return _fail(osi_error_body(err))
    except Exception as exc:  # the contract holds for bugs too
        return _fail(
            error_body(
                "internal",
                f"the engine failed ({type(exc).__name__}: {exc})",
                hint="this is a bug in dosi; please report it",
                kind="internal_error",
            )
        )


def _required(value: Any, name: str, kind: type | None = None) -> Any:
    """Arguments are checked here, not by the SDK, so a bad one gets the error contract."""
    if value is None:
        raise OsiErrorBody(
            400, error_body("invalid_arguments", f"the tool needs the argument `{name}`")
        )
    if kind is not None and not isinstance(value, kind):
        raise OsiErrorBody(
            400,
            error_body("invalid_arguments", f"`{name}` must be a {kind.__name__}"),
        )
    return value


def _optional(value: Any, name: str) -> Any:
    if value is not None and not isinstance(value, str):
        raise OsiErrorBody(400, error_body("invalid_arguments", f"`{name}` must be a string"))
    return value


def _leased(holder: EngineHolder, method: str, *args: Any, **kw: Any) -> Any:
    """Run an Engine method on a leased Engine, so concurrent calls (HTTP transport) run on
    separate connections."""
    with holder.lease() as engine:
        return getattr(engine, method)(*args, **kw)


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _query(query: Any, metrics: Any, *rest: Any) -> Any:
    """The query object, or one built from the query's keys given as tool arguments."""
    if query is not None or metrics is None:
        return query
    keys = QUERY_KEYS[1:]  # the tool arguments after `metrics`, in the query's key order
    return _drop_none({"metrics": metrics, **dict(zip(keys, rest, strict=True))})


def param_schema(metric: dict[str, Any]) -> dict[str, Any]:
    """PARAM-CAT-02: the JSON Schema of the metric's `params` map (empty: no params yet)."""
    props: dict[str, Any] = {}
    for p in metric.get("params") or []:
        schema: dict[str, Any] = {}
        if p.get("allowed") is not None:
            schema["enum"] = p["allowed"]
        if p.get("min") is not None:
            schema["minimum"] = p["min"]
        if p.get("max") is not None:
            schema["maximum"] = p["max"]
        props[p["name"]] = schema
    return {"type": "object", "properties": props, "additionalProperties": False}


def build_server(
    model_path: str | Path,
    *,
    connections: Any = None,
    db_path: str | None = None,
    mode: str = "datus",
    timeout: float | None = 30.0,
) -> MCPServer:
    holder = EngineHolder(model_path, connections, db_path, mode)
    server = MCPServer("dosi", instructions=INSTRUCTIONS)

    @server.tool()
    def list_metrics() -> CallToolResult:
        """Every metric: name, kind, datasets, description, window, params, attributable."""
        return _guard(lambda: {"metrics": holder.current().metrics()})

    @server.tool()
    def describe_metric(name: Any = None, metric: Any = None) -> CallToolResult:
        """One metric in full, with `param_schema` (the JSON Schema of its params)."""

        def run() -> dict[str, Any]:
            m = holder.current().metric(
                _required(name if name is not None else metric, "name", str)
            )
            if m.get("param_schema") is None:  # no params: the schema of an empty map
                m["param_schema"] = param_schema(m)
            return m

        return _guard(run)

    @server.tool()
    def list_dimensions(metric: Any = None) -> CallToolResult:
        """Fields with `is_dimension` and its `source`; with `metric`, only what it reaches."""
        return _guard(
            lambda: {"dimensions": holder.current().dimensions(_optional(metric, "metric"))}
        )

    @server.tool()
    def query(
        query: Any = None,
        metrics: Any = None,
        group_by: Any = None,
        where_sql: Any = None,
        time_range: Any = None,
        order_by: Any = None,
        limit: Any = None,
        params: Any = None,
        time_ranges: Any = None,
        context_filter: Any = None,
    ) -> CallToolResult:
        """Run a metric query and answer rows, columns and outputs. Pass the query object as
        `query` ({"metrics", "group_by", "where_sql", "time_range", "order_by", "limit",
        "params", "time_ranges", "context_filter"}), or its keys as arguments (metrics=["revenue"], group_by=["metric_time:month"], ...)."""
        q = _query(
            query,
            metrics,
            group_by,
            where_sql,
            time_range,
            order_by,
            limit,
            params,
            time_ranges,
            context_filter,
        )
        return _guard(
            lambda: dict(
                _leased(
                    holder,
                    "execute",
                    _required(q, "query"),
                    db_path=holder.db_path,
                    timeout_secs=timeout,
                )
            )
        )

    @server.tool()
    def sql(sql: Any = None, params: Any = None) -> CallToolResult:
        """Answer a SQL SELECT over the model's virtual table (one table named after the
        model; columns: dimensions such as orders__channel, metric_time__month, and metrics):
        "SELECT orders__channel, MEASURE(revenue) FROM shop GROUP BY 1"."""
        body = {"sql": sql, **({"params": params} if params is not None else {})}
        return _guard(
            lambda: dict(
                _leased(
                    holder,
                    "sql",
                    *sql_request(body),
                    db_path=holder.db_path,
                    timeout_secs=timeout,
                )
            )
        )

    @server.tool()
    def compile(
        query: Any = None,
        dialect: Any = "duckdb",
        metrics: Any = None,
        group_by: Any = None,
        where_sql: Any = None,
        time_range: Any = None,
        order_by: Any = None,
        limit: Any = None,
        params: Any = None,
        time_ranges: Any = None,
        context_filter: Any = None,
    ) -> CallToolResult:
        """The SQL of a metric query (as for `query`) for a dialect (duckdb, postgres,
        snowflake, bigquery, ...)."""
        q = _query(
            query,
            metrics,
            group_by,
            where_sql,
            time_range,
            order_by,
            limit,
            params,
            time_ranges,
            context_filter,
        )
        return _guard(
            lambda: holder.current().compile(_required(q, "query"), _optional(dialect, "dialect"))
        )

    @server.tool()
    def explain(
        query: Any = None,
        metrics: Any = None,
        group_by: Any = None,
        where_sql: Any = None,
        time_range: Any = None,
        order_by: Any = None,
        limit: Any = None,
        params: Any = None,
        time_ranges: Any = None,
        context_filter: Any = None,
    ) -> CallToolResult:
        """The logical plan of a metric query (as for `query`), with its outputs."""
        q = _query(
            query,
            metrics,
            group_by,
            where_sql,
            time_range,
            order_by,
            limit,
            params,
            time_ranges,
            context_filter,
        )

        def run() -> dict[str, Any]:
            e = holder.current()
            compiled = e.compile(_required(q, "query"))
            return {"plan": e.explain(q), "outputs": compiled["outputs"], "sql": compiled["sql"]}

        return _guard(run)

    @server.tool()
    def select(
        query: Any = None,
        dataset: Any = None,
        fields: Any = None,
        where_sql: Any = None,
        time_range: Any = None,
        order_by: Any = None,
        limit: Any = None,
        distinct: Any = None,
    ) -> CallToolResult:
        """Detail rows, no rollup. Pass {"from", "fields", "where_sql", "order_by", "limit"} as
        `query`, or the keys as arguments with `dataset` for "from"."""
        q = query
        if q is None and dataset is not None:
            q = _drop_none(
                {
                    "from": dataset,
                    "fields": fields,
                    "where_sql": where_sql,
                    "time_range": time_range,
                    "order_by": order_by,
                    "limit": limit,
                    "distinct": distinct,
                }
            )
        return _guard(
            lambda: dict(
                _leased(
                    holder,
                    "select",
                    _required(q, "query"),
                    db_path=holder.db_path,
                    timeout_secs=timeout,
                )
            )
        )

    @server.tool()
    def attribute(
        request: Any = None,
        metric: Any = None,
        current: Any = None,
        baseline: Any = None,
        dimensions: Any = None,
        where_sql: Any = None,
    ) -> CallToolResult:
        """Why a metric changed between two windows, by dimension: metric, current {start,
        end}, baseline {start, end}, dimensions [...] (or all of it as `request`). Answers
        total_change and per-dimension contributions."""
        r = request
        if r is None and metric is not None:
            r = _drop_none(
                {
                    "metric": metric,
                    "current": current,
                    "baseline": baseline,
                    "dimensions": dimensions,
                    "where_sql": where_sql,
                }
            )
        return _guard(
            lambda: _leased(
                holder,
                "attribute",
                _required(r, "request"),
                db_path=holder.db_path,
                timeout_secs=timeout,
            )
        )

    @server.tool()
    def validate(model: Any = None, mode: Any = "datus", model_text: Any = None) -> CallToolResult:
        """Validate model text (YAML or JSON) given as `model`: valid, issues,
        compile_errors, warnings."""
        text = model if model is not None else model_text
        return _guard(lambda: validate_body({"model": text, "mode": mode}))

    return server


def run_mcp(
    model_path: str | Path,
    *,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    connections: Any = None,
    db_path: str | None = None,
    mode: str = "datus",
    timeout: float | None = 30.0,
) -> None:
    server = build_server(
        model_path, connections=connections, db_path=db_path, mode=mode, timeout=timeout
    )
    if transport == "http":
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")
