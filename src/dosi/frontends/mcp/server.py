"""MCP server over the Engine (the official `mcp` SDK): `dosi mcp -m MODEL`.

Tools: list_metrics, describe_metric, list_dimensions, query, sql, compile, explain, select,
attribute, validate. Each answers JSON (text content plus structured content); a failure is an
`is_error` result whose JSON is the same error contract as REST (`code`, `message`,
`candidates`, `hint`, `suggested_retry`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from dosi.frontends.contract import EngineHolder, sql_request, validate_body
from dosi.frontends.mcp.arguments import (
    drop_none,
    optional_string,
    param_schema,
    query_argument,
    required,
)
from dosi.frontends.mcp.results import guarded

INSTRUCTIONS = (
    "A semantic layer: call list_metrics and list_dimensions first, then query with metric "
    "names and dataset.field group-bys (metric_time:month for the time axis). Errors carry "
    "`candidates` and `suggested_retry`: retry with them instead of guessing."
)


def _leased(holder: EngineHolder, method: str, *args: Any, **kw: Any) -> Any:
    """Run an Engine method on a leased Engine, so concurrent calls (HTTP transport) run on
    separate connections."""
    with holder.lease() as engine:
        return getattr(engine, method)(*args, **kw)


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
        return guarded(lambda: {"metrics": holder.current().metrics()})

    @server.tool()
    def describe_metric(name: Any = None, metric: Any = None) -> CallToolResult:
        """One metric in full, with `param_schema` (the JSON Schema of its params)."""

        def run() -> dict[str, Any]:
            m = holder.current().metric(required(name if name is not None else metric, "name", str))
            if m.get("param_schema") is None:  # no params: the schema of an empty map
                m["param_schema"] = param_schema(m)
            return m

        return guarded(run)

    @server.tool()
    def list_dimensions(metric: Any = None) -> CallToolResult:
        """Fields with `is_dimension` and its `source`; with `metric`, only what it reaches."""
        return guarded(
            lambda: {"dimensions": holder.current().dimensions(optional_string(metric, "metric"))}
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
        densify: Any = None,
        week_start: Any = None,
    ) -> CallToolResult:
        """Run a metric query and answer rows, columns and outputs. Pass the query object as
        `query` ({"metrics", "group_by", "where_sql", "time_range", "order_by", "limit",
        "params", "time_ranges", "context_filter", "densify", "week_start"}), or its keys as
        arguments (metrics=["revenue"], group_by=["metric_time:month"], ...)."""
        q = query_argument(locals())
        return guarded(
            lambda: dict(
                _leased(
                    holder,
                    "execute",
                    required(q, "query"),
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
        return guarded(
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
        densify: Any = None,
        week_start: Any = None,
    ) -> CallToolResult:
        """The SQL of a metric query (as for `query`) for a dialect (duckdb, postgres,
        snowflake, bigquery, ...)."""
        q = query_argument(locals())
        return guarded(
            lambda: holder.current().compile(
                required(q, "query"), optional_string(dialect, "dialect")
            )
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
        densify: Any = None,
        week_start: Any = None,
    ) -> CallToolResult:
        """The logical plan of a metric query (as for `query`), with its outputs."""
        q = query_argument(locals())

        def run() -> dict[str, Any]:
            e = holder.current()
            compiled = e.compile(required(q, "query"))
            return {"plan": e.explain(q), "outputs": compiled["outputs"], "sql": compiled["sql"]}

        return guarded(run)

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
            q = drop_none(
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
        return guarded(
            lambda: dict(
                _leased(
                    holder,
                    "select",
                    required(q, "query"),
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
            r = drop_none(
                {
                    "metric": metric,
                    "current": current,
                    "baseline": baseline,
                    "dimensions": dimensions,
                    "where_sql": where_sql,
                }
            )
        return guarded(
            lambda: _leased(
                holder,
                "attribute",
                required(r, "request"),
                db_path=holder.db_path,
                timeout_secs=timeout,
            )
        )

    @server.tool()
    def validate(model: Any = None, mode: Any = "datus", model_text: Any = None) -> CallToolResult:
        """Validate model text (YAML or JSON) given as `model`: valid, issues,
        compile_errors, warnings."""
        text = model if model is not None else model_text
        return guarded(lambda: validate_body({"model": text, "mode": mode}))

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
