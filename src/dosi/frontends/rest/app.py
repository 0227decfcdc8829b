"""REST API over the Engine (FastAPI): `dosi serve -m MODEL`.

Every POST body is JSON: `/v1/query`, `/v1/compile` and `/v1/explain` take the query object
itself (the same JSON as `Engine.execute`); `/v1/select` the detail query; `/v1/attribute`
`{"metric", "current", "baseline", "dimensions"}`; `/v1/validate` `{"model": "<yaml text>"}`;
`/v1/sql` `{"sql": "SELECT ...", "params": [...]}` (semantic SQL, docs/serving/sql.md).
Errors are the engine's structured errors as JSON (`dosi.frontends.contract`), 4xx for caller
mistakes. Results are JSON by default, CSV or an Arrow IPC stream by `Accept`.

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

from dosi.engine import Engine
from dosi.errors import OsiError
from dosi.execute.budget import ResultBudget
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
DEFAULT_MAX_BODY = 1_000_000
DEFAULT_TIMEOUT = 30.0
DEFAULT_BODY_TIMEOUT = 30.0


class _BodyTooLarge(Exception):
    pass


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
    max_rows: int | None = DEFAULT_MAX_ROWS,
    max_result_bytes: int | None = DEFAULT_MAX_BYTES,
    memory_budget: int | None = None,
) -> FastAPI:
    """The application; `hosts` is the Host allow-list (None: any, see `guard.allowed_hosts`).
    The token is checked here (`guard.usable_token`): a bad one fails before serving.
    `max_rows` / `max_result_bytes` bound every answer (None: no limit), `timeout` the whole
    request, `memory_budget` (bytes; default half the machine's memory) the pool's DuckDB
    engines together."""
    token = usable_token(token)
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

    app.add_middleware(Guard, token=token, max_body=max_body, hosts=hosts)

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
        first one for work that runs no query); stop it when the client goes away, and answer
        `timeout` as soon as the whole request's deadline passes."""

        def work() -> Any:
            if not leased:
                return fn(holder.current(), budget)
            with holder.lease() as engine:
                return fn(engine, budget)

        task = asyncio.ensure_future(anyio.to_thread.run_sync(work))
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
            budget = limits.budget(*asked_limits(request))
            fmt = wanted_format(request) if result else "json"

            def run(e: Engine, b: ResultBudget) -> tuple[bytes, str]:
                out = fn(e, b, body)
                if result:
                    return encode_result(fmt, out, b)
                return encode_json(out), "application/json"

            content, media = await call(request, run, budget, leased)
        except _BodyTooLarge:
            return too_large(max_body)
        except OsiErrorBody as err:
            return error_response(err.status, err.body)
        except OsiError as err:
            if retry is not None:
                with_retry(err, body, retry)
            return error_response(http_status(err, lookup=lookup), osi_error_body(err))
        finally:
            if budget is not None:
                budget.close()
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

    @app.post("/v1/query", tags=["query"], openapi_extra=body_doc(QUERY_SCHEMA))
    async def post_query(request: Request) -> Response:
        """Run a metric query: JSON (rows, columns, outputs), CSV or Arrow IPC by `Accept`."""
        return await handle(
            request,
            lambda e, c, b: e.execute(
                b, db_path=holder.db_path, timeout_secs=c.remaining(), cancellation=c
            ),
            result=True,
            retry="query",
        )

    @app.post("/v1/sql", tags=["query"], openapi_extra=body_doc(SQL_SCHEMA))
    async def post_sql(request: Request) -> Response:
        """Semantic SQL over the model's virtual table: `{"sql": "SELECT ...", "params"}`."""
        return await handle(
            request,
            lambda e, c, b: e.sql(
                *sql_request(b),
                db_path=holder.db_path,
                timeout_secs=c.remaining(),
                cancellation=c,
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

    @app.get("/explorer.js", include_in_schema=False)
    async def explorer_js() -> FileResponse:
        return FileResponse(WEB_DIR / "explorer.js", media_type="text/javascript")

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
