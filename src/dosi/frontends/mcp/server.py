"""MCP server over the Engine (the official `mcp` SDK): `dosi mcp -m MODEL`.

Tools: list_metrics, describe_metric, list_dimensions, query, sql, compile, explain, select,
attribute, validate; their inputs are typed from the one query schema
(`frontends.query_schema`: types, enums, a description per argument) while the engine still
checks every value. Resources: the catalog (`dosi://catalog`) and a metric's definition with
its lineage (`dosi://metrics/{name}`). Prompts: explain_metric, compare_periods. The server
reports the package version. Each answers JSON (text content plus structured content); a failure is an
`is_error` result whose JSON is the same error contract as REST (`code`, `message`,
`candidates`, `hint`, `suggested_retry`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult

import dosi
from dosi.access.audit import audit_to_stderr
from dosi.access.policy import AccessSource
from dosi.errors import OsiError
from dosi.frontends.contract import EngineHolder, json_safe, sql_request, validate_body
from dosi.frontends.encode import encode_json
from dosi.frontends.holder import default_memory_budget
from dosi.frontends.limits import ServeLimits, with_retry
from dosi.frontends.mcp.arguments import (
    drop_none,
    optional_string,
    param_schema,
    query_argument,
    required,
)
from dosi.frontends.mcp.auth import Caller, McpGuard
from dosi.frontends.mcp.results import guarded
from dosi.frontends.query_schema import QUERY_ARGUMENT, QUERY_ARGUMENTS, described_argument

#: typed tool parameters (issue 26): each query key advertised with the query schema's
#: field (types, enums, descriptions); the engine still checks every value, so a wrong one
#: gets the error contract
QueryArg = QUERY_ARGUMENT
ArgMetrics = QUERY_ARGUMENTS["metrics"]
ArgGroupBy = QUERY_ARGUMENTS["group_by"]
ArgWhereSql = QUERY_ARGUMENTS["where_sql"]
ArgTimeRange = QUERY_ARGUMENTS["time_range"]
ArgOrderBy = QUERY_ARGUMENTS["order_by"]
ArgLimit = QUERY_ARGUMENTS["limit"]
ArgParams = QUERY_ARGUMENTS["params"]
ArgTimeRanges = QUERY_ARGUMENTS["time_ranges"]
ArgContextFilter = QUERY_ARGUMENTS["context_filter"]
ArgDensify = QUERY_ARGUMENTS["densify"]
ArgWeekStart = QUERY_ARGUMENTS["week_start"]
ArgCache = QUERY_ARGUMENTS["cache"]
MetricName = described_argument(
    {"type": "string", "description": "A metric name, as list_metrics gives it."}
)
Dialect = described_argument(
    {
        "type": "string",
        "description": "SQL dialect: duckdb, postgres, mysql, clickhouse, sqlite, spark, "
        "snowflake, bigquery, trino, databricks, redshift, ...",
    }
)
_WINDOW = {
    "type": "object",
    "description": "A time window: {start, end}, start inclusive, end exclusive (YYYY-MM-DD).",
    "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
    "required": ["start", "end"],
}
SqlText = described_argument(
    {
        "type": "string",
        "description": "A SQL SELECT over the model's virtual table: "
        "SELECT orders__channel, MEASURE(revenue) FROM shop GROUP BY 1",
    }
)
SqlParams = described_argument(
    {"type": "array", "description": "Values for the statement's $1, $2, ... placeholders."}
)
DetailQuery = described_argument(
    {
        "type": "object",
        "description": "A detail query {from, fields, where_sql, time_range, order_by, limit, "
        "distinct} (instead of its keys as arguments).",
    }
)
DatasetName = described_argument(
    {"type": "string", "description": "The dataset whose rows are listed (the query's from)."}
)
FieldList = described_argument(
    {
        "type": "array",
        "items": {"type": "string"},
        "description": "dataset.field names (list_dimensions gives them).",
    }
)
Distinct = described_argument({"type": "boolean", "description": "Drop duplicate rows."})
AttributeRequest = described_argument(
    {
        "type": "object",
        "description": "The whole request {metric, current, baseline, dimensions, where_sql, "
        "top_n} (instead of its keys as arguments).",
    }
)
Window = described_argument(_WINDOW)
ModelText = described_argument(
    {"type": "string", "description": "The model file's text, YAML or JSON."}
)
Mode = described_argument(
    {
        "type": "string",
        "enum": ["datus", "basic"],
        "description": "datus reads the DATUS extensions; basic is plain Ossie.",
    }
)

CATALOG_URI = "dosi://catalog"
METRIC_URI = "dosi://metrics/{name}"

INSTRUCTIONS = (
    "A semantic layer: call list_metrics and list_dimensions first, then query with metric "
    "names and dataset.field group-bys (metric_time:month for the time axis). Errors carry "
    "`candidates` and `suggested_retry`: retry with them instead of guessing."
)


def _bounded(
    holder: EngineHolder,
    limits: ServeLimits,
    method: str,
    retry: tuple[str, Any] | None,
    args: Callable[[], tuple[Any, ...]],
) -> Callable[[dosi.Engine], Any]:
    """An Engine method run under the server's limits (issue 29, item 1): the whole call
    within the timeout, the answer within the row and byte limits (`result_too_large` with a
    `suggested_retry` carrying a limit)."""

    def run(engine: dosi.Engine) -> Any:
        budget = limits.budget()
        try:
            out = getattr(engine, method)(
                *args(),
                db_path=holder.db_path,
                timeout_secs=budget.remaining(),
                cancellation=budget,
            )
            value = dict(out)
            encode_json(value, budget)  # the byte limit on the answer as it will be sent
            return value
        except OsiError as err:
            if retry is not None:
                with_retry(err, retry[1], retry[0])
            raise
        finally:
            budget.close()

    return run


def build_server(
    model_path: str | Path,
    *,
    connections: Any = None,
    db_path: str | None = None,
    mode: str = "datus",
    timeout: float | None = 30.0,
    access: AccessSource | None = None,
    stdio_user: str | None = None,
    limits: ServeLimits | None = None,
    memory_budget: int | None = None,
) -> MCPServer:
    """Every tool runs on a leased Engine (concurrent HTTP calls use separate connections)
    answering as the caller (`dosi.frontends.mcp.auth.Caller`); `limits` bound every answer
    (default: the serving defaults with `timeout`), `memory_budget` the pool's DuckDB
    engines together."""
    limits = limits if limits is not None else ServeLimits(timeout=timeout)
    holder = EngineHolder(
        model_path,
        connections,
        db_path,
        mode,
        memory_budget=memory_budget if memory_budget is not None else default_memory_budget(),
    )
    caller = Caller(holder, access, stdio_user)
    server = MCPServer("dosi", version=dosi.__version__, instructions=INSTRUCTIONS)

    @server.tool()
    def list_metrics(ctx: Context | None = None) -> CallToolResult:
        """Every metric: name, kind, datasets, description, window, params, attributable."""
        return caller.run(ctx, "list_metrics", None, lambda e: {"metrics": e.metrics()})

    @server.tool()
    def describe_metric(
        name: MetricName = None, metric: MetricName = None, ctx: Context | None = None
    ) -> CallToolResult:
        """One metric in full, with `param_schema` (the JSON Schema of its params)."""
        wanted = name if name is not None else metric

        def run(e: dosi.Engine) -> dict[str, Any]:
            m = e.metric(required(wanted, "name", str))
            if m.get("param_schema") is None:  # no params: the schema of an empty map
                m["param_schema"] = param_schema(m)
            return m

        return caller.run(
            ctx, "describe_metric", None, run, [wanted] if isinstance(wanted, str) else []
        )

    @server.tool()
    def list_dimensions(metric: MetricName = None, ctx: Context | None = None) -> CallToolResult:
        """Fields with `is_dimension` and its `source`; with `metric`, only what it reaches."""
        return caller.run(
            ctx,
            "list_dimensions",
            {"metric": metric},
            lambda e: {"dimensions": e.dimensions(optional_string(metric, "metric"))},
        )

    @server.tool()
    def query(
        query: QueryArg = None,
        metrics: ArgMetrics = None,
        group_by: ArgGroupBy = None,
        where_sql: ArgWhereSql = None,
        time_range: ArgTimeRange = None,
        order_by: ArgOrderBy = None,
        limit: ArgLimit = None,
        params: ArgParams = None,
        time_ranges: ArgTimeRanges = None,
        context_filter: ArgContextFilter = None,
        densify: ArgDensify = None,
        week_start: ArgWeekStart = None,
        cache: ArgCache = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        """Run a metric query and answer rows, columns and outputs. Pass the query object as
        `query` ({"metrics", "group_by", "where_sql", "time_range", "order_by", "limit",
        "params", "time_ranges", "context_filter", "densify", "week_start", "cache"}), or its
        keys as arguments (metrics=["revenue"], group_by=["metric_time:month"], ...);
        cache=false reads the warehouse instead of the result cache."""
        q = query_argument(locals())
        return caller.run(
            ctx,
            "query",
            q,
            _bounded(holder, limits, "execute", ("query", q), lambda: (required(q, "query"),)),
        )

    @server.tool()
    def sql(
        sql: SqlText = None, params: SqlParams = None, ctx: Context | None = None
    ) -> CallToolResult:
        """Answer a SQL SELECT over the model's virtual table (one table named after the
        model; columns: dimensions such as orders__channel, metric_time__month, and metrics):
        "SELECT orders__channel, MEASURE(revenue) FROM shop GROUP BY 1"."""
        body = {"sql": sql, **({"params": params} if params is not None else {})}
        return caller.run(
            ctx,
            "sql",
            None,
            _bounded(holder, limits, "sql", ("sql", body), lambda: sql_request(body)),
        )

    @server.tool()
    def compile(
        query: QueryArg = None,
        dialect: Dialect = "duckdb",
        metrics: ArgMetrics = None,
        group_by: ArgGroupBy = None,
        where_sql: ArgWhereSql = None,
        time_range: ArgTimeRange = None,
        order_by: ArgOrderBy = None,
        limit: ArgLimit = None,
        params: ArgParams = None,
        time_ranges: ArgTimeRanges = None,
        context_filter: ArgContextFilter = None,
        densify: ArgDensify = None,
        week_start: ArgWeekStart = None,
        cache: ArgCache = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        """The SQL of a metric query (as for `query`) for a dialect (duckdb, postgres,
        snowflake, bigquery, ...)."""
        q = query_argument(locals())
        return caller.run(
            ctx,
            "compile",
            q,
            lambda e: e.compile(required(q, "query"), optional_string(dialect, "dialect")),
        )

    @server.tool()
    def explain(
        query: QueryArg = None,
        metrics: ArgMetrics = None,
        group_by: ArgGroupBy = None,
        where_sql: ArgWhereSql = None,
        time_range: ArgTimeRange = None,
        order_by: ArgOrderBy = None,
        limit: ArgLimit = None,
        params: ArgParams = None,
        time_ranges: ArgTimeRanges = None,
        context_filter: ArgContextFilter = None,
        densify: ArgDensify = None,
        week_start: ArgWeekStart = None,
        cache: ArgCache = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        """The logical plan of a metric query (as for `query`), with its outputs."""
        q = query_argument(locals())

        def run(e: dosi.Engine) -> dict[str, Any]:
            compiled = e.compile(required(q, "query"))
            return {"plan": e.explain(q), "outputs": compiled["outputs"], "sql": compiled["sql"]}

        return caller.run(ctx, "explain", q, run)

    @server.tool()
    def select(
        query: DetailQuery = None,
        dataset: DatasetName = None,
        fields: FieldList = None,
        where_sql: ArgWhereSql = None,
        time_range: ArgTimeRange = None,
        order_by: ArgOrderBy = None,
        limit: ArgLimit = None,
        distinct: Distinct = None,
        ctx: Context | None = None,
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
        return caller.run(
            ctx,
            "select",
            q,
            _bounded(holder, limits, "select", ("query", q), lambda: (required(q, "query"),)),
        )

    @server.tool()
    def attribute(
        request: AttributeRequest = None,
        metric: MetricName = None,
        current: Window = None,
        baseline: Window = None,
        dimensions: FieldList = None,
        where_sql: ArgWhereSql = None,
        ctx: Context | None = None,
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
        return caller.run(
            ctx,
            "attribute",
            r,
            _bounded(holder, limits, "attribute", None, lambda: (required(r, "request"),)),
        )

    @server.tool()
    def validate(
        model: ModelText = None, mode: Mode = "datus", model_text: ModelText = None
    ) -> CallToolResult:
        """Validate model text (YAML or JSON) given as `model`: valid, issues,
        compile_errors, warnings."""
        text = model if model is not None else model_text
        return guarded(lambda: validate_body({"model": text, "mode": mode}))

    _add_resources(server, holder, caller)
    _add_prompts(server, caller)
    return server


def _json(value: Any) -> str:
    return json.dumps(json_safe(value), indent=2, ensure_ascii=False)


def _add_resources(server: MCPServer, holder: EngineHolder, caller: Caller) -> None:
    """The model catalog, and one metric's definition with its lineage, as JSON resources an
    agent can read (or attach) without a tool call."""

    @server.resource(
        CATALOG_URI,
        name="catalog",
        description="The model's catalog: every metric, dimension and dataset.",
        mime_type="application/json",
    )
    def catalog() -> str:
        # a static resource gets no request context: under policies over HTTP it is refused
        # (fail closed) and list_metrics / list_dimensions answer per user
        return _json(
            caller.value(
                None,
                lambda e: {
                    "model": holder.model_path.name,
                    "metrics": e.metrics(),
                    "dimensions": e.dimensions(),
                    "datasets": e.datasets(),
                },
            )
        )

    @server.resource(
        METRIC_URI,
        name="metric",
        description="One metric: its definition (as describe_metric) and its lineage "
        "(measures, datasets, joins).",
        mime_type="application/json",
    )
    def metric(name: str, ctx: Context | None = None) -> str:
        return _json(
            caller.value(ctx, lambda e: {"definition": e.metric(name), "lineage": e.lineage(name)})
        )


def _add_prompts(server: MCPServer, caller: Caller) -> None:
    """Prompts that start the two common conversations: what a metric means, and why it
    moved between two periods."""

    @server.prompt(
        name="explain_metric",
        description="Explain what a metric measures, how it is computed and what it can be "
        "grouped by.",
    )
    def explain_metric(metric: str, ctx: Context | None = None) -> str:
        definition, lineage = caller.value(
            ctx, lambda e: (e.metric(metric), e.lineage_text(metric))
        )
        return (
            f"Explain the metric `{metric}` to a business user: what it measures, how it is "
            "computed (aggregation, filters, windows), which datasets it reads, and which "
            "dimensions and time grains it can be grouped by. Use only the definition and "
            "lineage below; call list_dimensions with this metric for what it can be grouped "
            "by.\n\nDefinition:\n" + _json(definition) + "\n\nLineage:\n" + lineage
        )

    @server.prompt(
        name="compare_periods",
        description="Compare a metric between two periods and explain what drove the change.",
    )
    def compare_periods(
        metric: str,
        current_start: str,
        current_end: str,
        baseline_start: str,
        baseline_end: str,
        ctx: Context | None = None,
    ) -> str:
        caller.value(ctx, lambda e: e.metric(metric))  # an unknown name fails, with candidates
        request = {
            "metric": metric,
            "current": {"start": current_start, "end": current_end},
            "baseline": {"start": baseline_start, "end": baseline_end},
        }
        return (
            f"Compare `{metric}` between the current period {current_start} .. {current_end} "
            f"and the baseline {baseline_start} .. {baseline_end} (start inclusive, end "
            "exclusive). First call the query tool for the metric over each period; then "
            "call the attribute tool with this request, adding the dimensions to explain by "
            "(list_dimensions with this metric gives them):\n"
            + _json(request)
            + "\nReport the total change in absolute and percent terms, then the segments "
            "that contributed most, with their contribution_pct. Quote numbers as the tools "
            "return them."
        )


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
    token: str | None = None,
    access: str | Path | None = None,
    user: str | None = None,
    limits: ServeLimits | None = None,
    memory_budget: int | None = None,
) -> None:
    """Serve over stdio or streamable HTTP. Over HTTP, `token` (DOSI_TOKEN) and / or an
    access file make every request authenticate (`McpGuard`); over stdio, `user` names the
    access file's user the local agent answers as."""
    source = AccessSource(access) if access is not None else None
    if source is not None or token is not None:
        audit_to_stderr()
    server = build_server(
        model_path,
        connections=connections,
        db_path=db_path,
        mode=mode,
        timeout=timeout,
        access=source,
        stdio_user=user,
        limits=limits,
        memory_budget=memory_budget,
    )
    if transport != "http":
        server.run("stdio")
        return
    uvicorn.run(http_app(server, host, token, source), host=host, port=port, log_level="warning")


def http_app(server: MCPServer, host: str, token: str | None, access: AccessSource | None) -> Any:
    """The streamable-HTTP ASGI app at /mcp, behind `McpGuard` when a token or an access file
    is configured (issue 29 item 4: MCP over HTTP authenticates like REST)."""
    app: Any = server.streamable_http_app(host=host)
    return McpGuard(app, token, access) if token is not None or access is not None else app
