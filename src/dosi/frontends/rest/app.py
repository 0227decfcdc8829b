"""REST API over the Engine (FastAPI): `dosi serve -m MODEL`.

Every POST body is JSON: `/v1/query`, `/v1/compile` and `/v1/explain` take the query object
itself (the same JSON as `Engine.execute`); `/v1/select` the detail query; `/v1/attribute`
`{"metric", "current", "baseline", "dimensions"}`; `/v1/validate` `{"model": "<yaml text>"}`;
`/v1/sql` `{"sql": "SELECT ...", "params": [...]}` (semantic SQL, docs/serving/sql.md).
Errors are the engine's structured errors as JSON (`dosi.frontends.contract`), 4xx for caller
mistakes. Results are JSON by default, CSV, Parquet or an Arrow IPC stream by `Accept`;
`/v1/chart` draws a query (docs/charts.md).

Operations: optional bearer token (`DOSI_TOKEN`), a request-size limit, a per-request timeout
and cancellation when the client disconnects, model reload on file change, and one JSON access
log line per request (logger `dosi.access`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from dosi.access.audit import request_metrics
from dosi.access.policy import AccessSource
from dosi.engine import Engine
from dosi.errors import AccessError, ArgumentError, OsiError
from dosi.execute.budget import ResultBudget
from dosi.execute.cancel import CancellationToken
from dosi.frontends.contract import (
    EngineHolder,
    OsiErrorBody,
    engine_capabilities,
    error_body,
    http_status,
    osi_error_body,
    sql_request,
    validate_body,
)
from dosi.frontends.encode import encode_json, encode_result
from dosi.frontends.holder import default_memory_budget
from dosi.frontends.limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, ServeLimits, with_retry
from dosi.frontends.rest.body import parse_body
from dosi.frontends.rest.charts import (
    chart_body,
    chart_format,
    chart_response,
    enrich,
    vendor_file,
)
from dosi.frontends.rest.guard import Guard, usable_token
from dosi.frontends.rest.responses import error_response, too_large, wanted_format
from dosi.frontends.rest.schemas import (
    ATTRIBUTE_SCHEMA,
    QUERY_SCHEMA,
    SELECT_SCHEMA,
    SQL_SCHEMA,
    VALIDATE_SCHEMA,
    body_doc,
)

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
WEB_SCRIPTS = frozenset(p.name for p in WEB_DIR.glob("*.js"))
DEFAULT_MAX_BODY = 1_000_000
DEFAULT_TIMEOUT = 30.0
#: worker threads that run requests' catalog, validate, compile and explain work (`dosi serve
#: --workers`; anyio's own default); queries run in their own lane of pool size + 2 threads,
#: and the event loop only reads bodies and writes answers
DEFAULT_WORKERS = 40
DEFAULT_BODY_TIMEOUT = 30.0


class _BodyTooLarge(Exception):
    pass


def rollup_names(body: Any) -> list[str] | None:
    """The `names` of a rollup action body (None or absent: every declared rollup)."""
    if isinstance(body, dict) and set(body) <= {"names"} and body.get("names") is None:
        return None
    names = body.get("names") if isinstance(body, dict) and set(body) == {"names"} else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise OsiErrorBody(
            400, error_body("invalid_request", 'send {"names": ["rollup", ...]} or {}')
        )
    return names


def no_cache(request: Request) -> bool:
    """`Cache-Control: no-cache` (or no-store): the client wants the warehouse's answer."""
    words = request.headers.get("cache-control", "").lower().replace(" ", "").split(",")
    return "no-cache" in words or "no-store" in words


def _forget(task: asyncio.Future[Any]) -> None:
    """A worker left behind after its request timed out: its outcome is no longer wanted."""
    if not task.cancelled():
        task.exception()


def asked_limits(request: Request) -> tuple[str | None, str | None]:
    """A request's own row and byte limits (`?max_rows=` / `?max_bytes=`, or the headers
    `X-Dosi-Max-Rows` / `X-Dosi-Max-Bytes`); the server's limits cap them."""
    q, h = request.query_params, request.headers
    return (
        q.get("max_rows") or h.get("x-dosi-max-rows"),
        q.get("max_bytes") or h.get("x-dosi-max-bytes"),
    )


def create_app(
    model_path: str | Path,
    *,
    connections: Any = None,
    db_path: str | None = None,
    mode: str = "datus",
    token: str | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    timeout: float | None = DEFAULT_TIMEOUT,
    reload_interval: float = 0.5,
    hosts: frozenset[str] | None = None,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    access: str | Path | AccessSource | None = None,
    max_rows: int | None = DEFAULT_MAX_ROWS,
    max_result_bytes: int | None = DEFAULT_MAX_BYTES,
    memory_budget: int | None = None,
    workers: int = DEFAULT_WORKERS,
) -> FastAPI:
    """The application; `hosts` is the Host allow-list (None: any, see `guard.allowed_hosts`).
    The token is checked here (`guard.usable_token`): a bad one fails before serving. With
    `access` (an access file, docs/access-policies.md) every /v1 request authenticates as a
    user and, when the file has policies, is answered as that user. `max_rows` /
    `max_result_bytes` bound every answer (None: no limit), `timeout` the whole request,
    `memory_budget` (bytes; default half the machine's memory) the pool's DuckDB engines
    together. `workers`: the threads catalog, validate, compile and explain requests run in;
    queries have their own lane (docs/serving/rest.md, "Worker model")."""
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 4096:
        raise ArgumentError(f"workers must be a whole number from 1 to 4096, got {workers!r}")
    token = usable_token(token)
    source = access if isinstance(access, AccessSource) or access is None else AccessSource(access)
    limits = ServeLimits(max_rows, max_result_bytes, timeout)
    holder = EngineHolder(
        model_path,
        connections,
        db_path,
        mode,
        reload_interval,
        memory_budget=memory_budget if memory_budget is not None else default_memory_budget(),
    )
    app = FastAPI(
        title="dosi",
        version=engine_capabilities()["engine_version"],
        description="Semantic-layer engine for Apache Ossie models with the DATUS extensions.",
        openapi_url="/v1/openapi.json",
        docs_url=None,  # Swagger UI loads its assets from a CDN: not served (docs/serving/rest.md)
        redoc_url=None,
    )
    app.state.holder = holder
    # work that leases a query engine waits for a thread here, not inside anyio's shared
    # 40 worker threads: under hundreds of clients, threads blocked on a lease held them all
    # and catalog, validate and compile requests waited behind (issue 29)
    lanes: dict[str, anyio.CapacityLimiter] = {}

    def lane(leased: bool) -> anyio.CapacityLimiter:
        """Queries (a leased engine) wait in the query lane; everything else in the
        `workers` threads (made on the event loop, on first use)."""
        if not lanes:
            lanes["query"] = anyio.CapacityLimiter(holder.pool_size + 2)
            lanes["other"] = anyio.CapacityLimiter(workers)
        return lanes["query" if leased else "other"]

    app.state.access = source
    app.add_middleware(Guard, token=token, max_body=max_body, hosts=hosts, access=source)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error_response(exc.status_code, error_body(code, str(exc.detail)))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        return error_response(
            500,
            error_body(
                "internal",
                f"the server failed ({type(exc).__name__}: {exc})",
                hint="this is a bug in dosi; please report it with the request",
                kind="internal_error",
            ),
        )

    async def body_of(request: Request) -> Any:
        chunks = []
        size = 0
        try:
            with anyio.fail_after(body_timeout):  # a client that trickles its body is cut off
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > max_body:
                        raise _BodyTooLarge
                    chunks.append(chunk)
        except TimeoutError:
            raise OsiErrorBody(
                408,
                error_body(
                    "request_timeout",
                    f"the request body did not arrive within {body_timeout} s",
                    hint="send the whole body at once; the limit is `dosi serve --body-timeout`",
                ),
            ) from None
        return parse_body(b"".join(chunks))

    async def call(
        request: Request,
        fn: Callable[[Engine, ResultBudget], Any],
        budget: ResultBudget,
        leased: bool,
    ) -> Any:
        """Run `fn(engine, budget)` in a worker thread (a leased engine, or the current model's
        first one for work that runs no query), as the request's user when the access file
        has policies; stop it when the client goes away, and answer `timeout` as soon as the
        whole request's deadline passes."""
        user = getattr(request.state, "dosi_user", None)

        def as_user(engine: Engine) -> Engine:
            if source is None:
                return engine
            policies = source.current().policies
            if policies is None:
                return engine
            if user is None:
                raise AccessError("unauthorized", "this request has no user")
            return engine.as_user(user, policies, audited=False)

        def work() -> Any:
            if not leased:
                return fn(as_user(holder.current()), budget)
            with holder.lease() as engine:
                return fn(as_user(engine), budget)

        task = asyncio.ensure_future(anyio.to_thread.run_sync(work, limiter=lane(leased)))
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.05)
            if done:
                break
            if budget.timed_out.is_set():  # the worker stops at its next check
                task.add_done_callback(_forget)
                raise budget.stopped_error()
            if await request.is_disconnected():
                budget.cancel()
                break
        return await task

    async def handle(
        request: Request,
        fn: Callable[[Engine, ResultBudget, Any], Any],
        *,
        needs_body: bool = True,
        lookup: bool = False,
        result: bool = False,
        leased: bool = True,
        retry: str | None = None,
    ) -> Response:
        """One request: read the body, run `fn` and encode its answer in a worker thread
        under the request's budget (row and byte limits, whole-request timeout)."""
        body: Any = None
        budget: ResultBudget | None = None
        try:
            body = await body_of(request) if needs_body else None
            request.state.dosi_metrics = request_metrics(body)
            budget = limits.budget(*asked_limits(request))
            fmt = wanted_format(request) if result else "json"

            def run(e: Engine, b: ResultBudget) -> tuple[bytes, str] | Response:
                out = fn(e, b, body)
                if isinstance(out, Response):  # rendered in the worker thread (a chart image)
                    return out
                if result:
                    return encode_result(fmt, out, b)
                return encode_json(out), "application/json"

            answer = await call(request, run, budget, leased)
        except _BodyTooLarge:
            return too_large(max_body)
        except OsiErrorBody as err:
            return error_response(err.status, err.body)
        except OsiError as err:
            request.state.dosi_outcome = err.code
            if retry is not None:
                with_retry(err, body, retry)
            return error_response(http_status(err, lookup=lookup), osi_error_body(err))
        finally:
            if budget is not None:
                budget.close()
        if isinstance(answer, Response):
            return answer
        content, media = answer
        return Response(content, media_type=media)

    def dialect(request: Request) -> str | None:
        return request.query_params.get("dialect") or None

    # -- catalog ---------------------------------------------------------------------------
    @app.get("/v1/capabilities", tags=["catalog"])
    async def get_capabilities() -> JSONResponse:
        """Engine and DATUS extension versions, each key's impact, history, params support."""
        return JSONResponse(engine_capabilities())

    @app.get("/v1/metrics", tags=["catalog"])
    async def get_metrics(request: Request) -> Response:
        """Every metric with its kind, datasets, window and attribution metadata."""
        return await handle(request, lambda e, c, b: e.metrics(), needs_body=False, leased=False)

    @app.get("/v1/metrics/{name}", tags=["catalog"])
    async def get_metric(request: Request, name: str) -> Response:
        """One metric in full."""
        return await handle(
            request, lambda e, c, b: e.metric(name), needs_body=False, lookup=True, leased=False
        )

    @app.get("/v1/dimensions", tags=["catalog"])
    async def get_dimensions(request: Request, metric: str | None = None) -> Response:
        """Fields with their D-DIM role; with `?metric=`, only what that metric reaches."""
        return await handle(
            request,
            lambda e, c, b: e.dimensions(metric),
            needs_body=False,
            lookup=True,
            leased=False,
        )

    @app.get("/v1/datasets", tags=["catalog"])
    async def get_datasets(request: Request) -> Response:
        return await handle(request, lambda e, c, b: e.datasets(), needs_body=False, leased=False)

    @app.get("/v1/datasets/{name}", tags=["catalog"])
    async def get_dataset(request: Request, name: str) -> Response:
        return await handle(
            request, lambda e, c, b: e.dataset(name), needs_body=False, lookup=True, leased=False
        )

    @app.get("/v1/lineage", tags=["catalog"])
    async def get_lineage(request: Request, metric: str | None = None) -> Response:
        """The lineage graph; with `?metric=`, that metric's subgraph and tree."""
        return await handle(
            request,
            lambda e, c, b: e.lineage(metric),
            needs_body=False,
            lookup=True,
            leased=False,
        )

    # -- queries ---------------------------------------------------------------------------
    @app.post("/v1/compile", tags=["query"], openapi_extra=body_doc(QUERY_SCHEMA))
    async def post_compile(request: Request) -> Response:
        """The SQL of a metric query (`?dialect=`, `?pretty=true`)."""
        pretty = request.query_params.get("pretty", "").lower() in ("1", "true", "yes")
        d = dialect(request) or "duckdb"
        return await handle(request, lambda e, c, b: e.compile(b, d, pretty), leased=False)

    def run_query(e: Engine, c: ResultBudget, b: Any, cached: bool = True) -> Any:
        return e.execute(
            b, db_path=holder.db_path, timeout_secs=c.remaining(), cancellation=c, cache=cached
        )

    @app.post("/v1/query", tags=["query"], openapi_extra=body_doc(QUERY_SCHEMA))
    async def post_query(request: Request) -> Response:
        """Run a metric query: JSON (rows, columns, outputs), CSV, Parquet or Arrow IPC by
        `?format=` or `Accept`. JSON with `?pretty=true` has the SQL pretty-printed, with
        `?chart=true` the chart's Vega-Lite spec and each metric's number format; `"cache":
        false` in the body or `Cache-Control: no-cache` reads the warehouse."""
        cached = not no_cache(request)
        return await handle(
            request,
            lambda e, c, b: enrich(request, e, b, run_query(e, c, b, cached), holder.db_path),
            result=True,
            retry="query",
        )

    @app.post("/v1/chart", tags=["query"], openapi_extra=body_doc(QUERY_SCHEMA))
    async def post_chart(request: Request) -> Response:
        """The query's chart (the one the CLI and the explorer draw): its Vega-Lite spec, or
        rendered by `?format=svg|png` (the server's `charts` extra)."""

        def run(e: Engine, c: ResultBudget, b: Any) -> Response:
            fmt = chart_format(request)  # a bad format fails before the query runs
            return chart_response(fmt, chart_body(e, run_query(e, c, b, not no_cache(request))))

        return await handle(request, run)

    @app.post("/v1/sql", tags=["query"], openapi_extra=body_doc(SQL_SCHEMA))
    async def post_sql(request: Request) -> Response:
        """Semantic SQL over the model's virtual table: `{"sql": "SELECT ...", "params"}`."""
        cached = not no_cache(request)
        return await handle(
            request,
            lambda e, c, b: e.sql(
                *sql_request(b),
                db_path=holder.db_path,
                timeout_secs=c.remaining(),
                cancellation=c,
                cache=cached,
            ),
            result=True,
            retry="sql",
        )

    @app.post("/v1/explain", tags=["query"], openapi_extra=body_doc(QUERY_SCHEMA))
    async def post_explain(request: Request) -> Response:
        """The logical plan as text, with the query's outputs."""

        def run(e: Engine, c: ResultBudget, b: Any) -> dict[str, Any]:
            plan = e.explain(b)
            compiled = e.compile(b)
            return {
                "plan": plan,
                "outputs": compiled["outputs"],
                "requested_columns": compiled["requested_columns"],
                "sql": compiled["sql"],
            }

        return await handle(request, run, leased=False)

    @app.post("/v1/select", tags=["query"], openapi_extra=body_doc(SELECT_SCHEMA))
    async def post_select(request: Request) -> Response:
        """Detail rows (no rollup): `{"from", "fields", "where_sql", "order_by", "limit"}`."""
        return await handle(
            request,
            lambda e, c, b: e.select(
                b, db_path=holder.db_path, timeout_secs=c.remaining(), cancellation=c
            ),
            result=True,
            retry="query",
        )

    @app.post("/v1/attribute", tags=["query"], openapi_extra=body_doc(ATTRIBUTE_SCHEMA))
    async def post_attribute(request: Request) -> Response:
        """Why a metric changed between `baseline` and `current`, by dimension."""
        return await handle(
            request,
            lambda e, c, b: e.attribute(
                b, db_path=holder.db_path, timeout_secs=c.remaining(), cancellation=c
            ),
        )

    @app.post("/v1/validate", tags=["model"], openapi_extra=body_doc(VALIDATE_SCHEMA))
    async def post_validate(request: Request) -> Response:
        """Validate model text: `{"valid", "issues", "compile_errors", "warnings"}`; with
        `"sources": true` also against the server's warehouse (`sources`: every dataset's
        table and the columns its fields, keys and relationships name)."""

        def run(e: Engine, c: ResultBudget, b: Any) -> dict[str, Any]:
            out = validate_body(b)  # in a worker thread, holding no query engine (item 5)
            out["checked"] = "model"
            if out["valid"] and b.get("sources") is True and e.scope is not None:
                raise e.scope.denied("action", "validate sources")
            if out["valid"] and b.get("sources") is True:
                conns: Any = holder.connections  # the served model's warehouse
                other = Engine(
                    model_text=b["model"], mode=b.get("mode", "datus"), connections=conns
                )
                try:
                    out["sources"] = other.validate_sources(db_path=holder.db_path)
                finally:
                    other.close()
                out["checked"] = "model and warehouse"
                out["valid"] = out["sources"]["valid"]
            return out

        return await handle(request, run, leased=False)

    # -- the explorer ------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html", media_type="text/html")

    @app.get("/{name}.js", include_in_schema=False)
    async def web_script(name: str) -> Response:
        """The page's own scripts (`web/*.js`), by exact name."""
        if f"{name}.js" not in WEB_SCRIPTS:
            return error_response(404, error_body("not_found", f"no script `{name}.js`"))
        return FileResponse(WEB_DIR / f"{name}.js", media_type="text/javascript")

    @app.get("/vendor/{name}", include_in_schema=False)
    async def vendor(name: str) -> Response:
        """The vendored Vega, Vega-Lite and vega-embed scripts and their licences."""
        return vendor_file(name)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> JSONResponse:
        """Public and minimal: no path, no uri, no error text (those are behind the token).
        503 when a warehouse does not answer or a database file is missing."""
        state = holder.health()
        return JSONResponse(
            {
                "ok": state["ok"],
                "reloads": holder.reloads,
                "last_reload_failed": holder.last_reload_error is not None,
                "connections": state["connections"],
            },
            status_code=200 if state["ok"] else 503,
        )

    @app.get("/v1/rollups", tags=["model"])
    async def rollups_status(request: Request) -> Response:
        """The declared rollups: fresh, stale or missing (why), rows, build time."""
        return await handle(
            request, lambda e, c, b: e.rollups_status(db_path=holder.db_path), needs_body=False
        )

    @app.post("/v1/rollups/{action}", tags=["model"])
    async def rollups_action(request: Request, action: str) -> Response:
        """`build`, `refresh` (only the stale or missing; `"since": "YYYY-MM-DD"` recomputes
        only the buckets from that day on) or `drop` the rollups named in `{"names": [...]}`
        (all when absent); the status after."""

        def run(e: Engine, c: CancellationToken, b: Any) -> dict[str, Any]:
            since = b.pop("since", None) if isinstance(b, dict) else None
            names = rollup_names(b)
            if action == "build":
                return e.rollups_build(names, db_path=holder.db_path)
            if action == "refresh":
                return e.rollups_refresh(names, db_path=holder.db_path, since=since)
            if action == "drop":
                return e.rollups_drop(names, db_path=holder.db_path)
            raise OsiErrorBody(
                404,
                error_body(
                    "not_found",
                    f"no rollup action {action[:40]!r}",
                    candidates=["build", "refresh", "drop"],
                ),
            )

        return await handle(request, run)

    @app.get("/v1/stats", tags=["model"])
    async def stats() -> JSONResponse:
        """Serving counters: the result cache's hits, misses, evictions, invalidations,
        bypasses (`"cache": false`), entries and bytes, and the model reloads."""
        return JSONResponse({"result_cache": holder.results.stats(), "reloads": holder.reloads})

    @app.get("/v1/health", tags=["model"])
    async def health() -> JSONResponse:
        """`/healthz` with the last reload error's text, the model named by its file name."""
        error = holder.last_reload_error
        if error is not None:
            text = json.dumps(error)
            for full in {str(Path(model_path).resolve()), str(model_path)}:
                text = text.replace(json.dumps(full)[1:-1], Path(full).name)
            error = json.loads(text)
        state = holder.health()
        return JSONResponse(
            {
                "ok": state["ok"],
                "reloads": holder.reloads,
                "last_reload_error": error,
                "connections": state["connections"],
                "limits": {
                    "max_rows": limits.max_rows,
                    "max_result_bytes": limits.max_bytes,
                    "timeout": limits.timeout,
                    "engine_memory_limit": holder.memory_limit,
                },
            },
            status_code=200 if state["ok"] else 503,
        )

    return app
