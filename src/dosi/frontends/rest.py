"""REST API over the Engine (FastAPI): `dosi serve -m MODEL`.

Every POST body is JSON: `/v1/query`, `/v1/compile` and `/v1/explain` take the query object
itself (the same JSON as `Engine.execute`); `/v1/select` the detail query; `/v1/attribute`
`{"metric", "current", "baseline", "dimensions"}`; `/v1/validate` `{"model": "<yaml text>"}`.
Errors are the engine's structured errors as JSON (`dosi.frontends.contract`), 4xx for caller
mistakes. Results are JSON by default, CSV or an Arrow IPC stream by `Accept`.

Operations: optional bearer token (`DOSI_TOKEN`), a request-size limit, a per-request timeout
and cancellation when the client disconnects, model reload on file change, and one JSON access
log line per request (logger `dosi.access`).
"""

from __future__ import annotations

import asyncio
import csv
import hmac
import io
import json
import logging
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pyarrow as pa
from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from dosi.engine import Engine, validate
from dosi.errors import OsiError
from dosi.execute.cancel import CancellationToken
from dosi.frontends.contract import (
    EngineHolder,
    engine_capabilities,
    error_body,
    http_status,
    json_safe,
    osi_error_body,
    sql_request,
)

WEB_DIR = Path(__file__).resolve().parent / "web"
ARROW_STREAM = "application/vnd.apache.arrow.stream"
DEFAULT_MAX_BODY = 1_000_000
DEFAULT_TIMEOUT = 30.0

access_log = logging.getLogger("dosi.access")

_QUERY_SCHEMA = {
    "type": "object",
    "description": "A metric query, the same JSON as Engine.execute",
    "properties": {
        "metrics": {"type": "array", "items": {"type": "string"}},
        "group_by": {"type": "array", "items": {}},
        "where_sql": {"type": "string"},
        "context_filter": {"type": "string"},
        "time_range": {
            "type": "object",
            "properties": {
                "start": {"type": "string"},
                "end": {"type": "string"},
                "dimension": {"type": "string"},
            },
        },
        "order_by": {"type": "array", "items": {}},
        "limit": {"type": "integer", "minimum": 0},
    },
    "required": ["metrics"],
}
_SQL_SCHEMA = {
    "type": "object",
    "properties": {"sql": {"type": "string"}, "params": {"type": "array", "items": {}}},
    "required": ["sql"],
}
_SELECT_SCHEMA = {
    "type": "object",
    "properties": {
        "from": {"type": "string"},
        "fields": {"type": "array", "items": {"type": "string"}},
        "where_sql": {"type": "string"},
        "time_range": {"type": "object"},
        "order_by": {"type": "array", "items": {}},
        "limit": {"type": "integer", "minimum": 0},
        "distinct": {"type": "boolean"},
    },
    "required": ["from", "fields"],
}
_WINDOW = {
    "type": "object",
    "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
    "required": ["start", "end"],
}
_ATTRIBUTE_SCHEMA = {
    "type": "object",
    "properties": {
        "metric": {"type": "string"},
        "current": _WINDOW,
        "baseline": _WINDOW,
        "dimensions": {"type": "array", "items": {"type": "string"}},
        "where_sql": {"type": "string"},
        "top_n": {"type": "integer", "minimum": 1},
    },
    "required": ["metric", "current", "baseline", "dimensions"],
}
_VALIDATE_SCHEMA = {
    "type": "object",
    "properties": {"model": {"type": "string"}, "mode": {"enum": ["datus", "basic"]}},
    "required": ["model"],
}


def _body_doc(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": schema}},
        }
    }


class _BodyTooLarge(Exception):
    pass


def _error(status: int, body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(json_safe(body), status_code=status)


def _wants(request: Request) -> str:
    fmt = request.query_params.get("format")
    if fmt in ("json", "csv", "arrow"):
        return fmt
    accept = request.headers.get("accept", "")
    if ARROW_STREAM in accept:
        return "arrow"
    if "text/csv" in accept:
        return "csv"
    return "json"


def _result_response(request: Request, result: Any) -> Response:
    fmt = _wants(request)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        cols = result["columns"]
        w.writerow(cols)
        for row in result["rows"]:
            w.writerow(["" if row.get(c) is None else row.get(c) for c in cols])
        return Response(buf.getvalue(), media_type="text/csv; charset=utf-8")
    if fmt == "arrow":
        table: pa.Table = result.arrow
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return Response(sink.getvalue().to_pybytes(), media_type=ARROW_STREAM)
    return JSONResponse(json_safe(dict(result)))


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
) -> FastAPI:
    holder = EngineHolder(model_path, connections, db_path, mode, reload_interval)
    app = FastAPI(
        title="dosi",
        version=engine_capabilities()["engine_version"],
        description="Semantic-layer engine for Apache Ossie models with the DATUS extensions.",
        openapi_url="/v1/openapi.json",
        docs_url="/v1/docs",
        redoc_url=None,
    )
    app.state.holder = holder

    app.add_middleware(Guard, token=token, max_body=max_body)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _error(exc.status_code, error_body(code, str(exc.detail)))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        return _error(
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
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_body:
                raise _BodyTooLarge
            chunks.append(chunk)
        raw = b"".join(chunks)
        if not raw.strip():
            raise OsiErrorBody(
                400, error_body("invalid_json", "the request body is empty; send a JSON object")
            )
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise OsiErrorBody(
                400,
                error_body("invalid_json", f"the request body is not valid JSON: {exc}"),
            ) from None

    async def call(request: Request, fn: Callable[..., Any]) -> Any:
        """Run `fn(engine, token)` in a worker thread; cancel it if the client goes away."""
        cancel = CancellationToken()
        pool = holder.current_pool()

        def work() -> Any:
            with pool.lease() as engine:
                return fn(engine, cancel)

        task = asyncio.ensure_future(anyio.to_thread.run_sync(work))
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.05)
            if done:
                break
            if await request.is_disconnected():
                cancel.cancel()
                break
        return await task

    async def handle(
        request: Request,
        fn: Callable[[Engine, CancellationToken, Any], Any],
        *,
        needs_body: bool = True,
        lookup: bool = False,
        result: bool = False,
    ) -> Response:
        try:
            body = await body_of(request) if needs_body else None
            out = await call(request, lambda e, c: fn(e, c, body))
        except _BodyTooLarge:
            return _too_large(max_body)
        except OsiErrorBody as err:
            return _error(err.status, err.body)
        except OsiError as err:
            return _error(http_status(err, lookup=lookup), osi_error_body(err))
        if result:
            return _result_response(request, out)
        return JSONResponse(json_safe(out))

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
        return await handle(request, lambda e, c, b: e.metrics(), needs_body=False)

    @app.get("/v1/metrics/{name}", tags=["catalog"])
    async def get_metric(request: Request, name: str) -> Response:
        """One metric in full."""
        return await handle(request, lambda e, c, b: e.metric(name), needs_body=False, lookup=True)

    @app.get("/v1/dimensions", tags=["catalog"])
    async def get_dimensions(request: Request, metric: str | None = None) -> Response:
        """Fields with their D-DIM role; with `?metric=`, only what that metric reaches."""
        return await handle(
            request, lambda e, c, b: e.dimensions(metric), needs_body=False, lookup=True
        )

    @app.get("/v1/datasets", tags=["catalog"])
    async def get_datasets(request: Request) -> Response:
        return await handle(request, lambda e, c, b: e.datasets(), needs_body=False)

    @app.get("/v1/datasets/{name}", tags=["catalog"])
    async def get_dataset(request: Request, name: str) -> Response:
        return await handle(request, lambda e, c, b: e.dataset(name), needs_body=False, lookup=True)

    @app.get("/v1/lineage", tags=["catalog"])
    async def get_lineage(request: Request, metric: str | None = None) -> Response:
        """The lineage graph; with `?metric=`, that metric's subgraph and tree."""
        return await handle(
            request, lambda e, c, b: e.lineage(metric), needs_body=False, lookup=True
        )

    # -- queries ---------------------------------------------------------------------------
    @app.post("/v1/compile", tags=["query"], openapi_extra=_body_doc(_QUERY_SCHEMA))
    async def post_compile(request: Request) -> Response:
        """The SQL of a metric query (`?dialect=`, `?pretty=true`)."""
        pretty = request.query_params.get("pretty", "").lower() in ("1", "true", "yes")
        d = dialect(request) or "duckdb"
        return await handle(request, lambda e, c, b: e.compile(b, d, pretty))

    @app.post("/v1/query", tags=["query"], openapi_extra=_body_doc(_QUERY_SCHEMA))
    async def post_query(request: Request) -> Response:
        """Run a metric query: JSON (rows, columns, outputs), CSV or Arrow IPC by `Accept`."""
        return await handle(
            request,
            lambda e, c, b: e.execute(
                b, db_path=holder.db_path, timeout_secs=timeout, cancellation=c
            ),
            result=True,
        )

    @app.post("/v1/sql", tags=["query"], openapi_extra=_body_doc(_SQL_SCHEMA))
    async def post_sql(request: Request) -> Response:
        """Semantic SQL over the model's virtual table: `{"sql": "SELECT ...", "params"}`."""
        return await handle(
            request,
            lambda e, c, b: e.sql(
                *sql_request(b), db_path=holder.db_path, timeout_secs=timeout, cancellation=c
            ),
            result=True,
        )

    @app.post("/v1/explain", tags=["query"], openapi_extra=_body_doc(_QUERY_SCHEMA))
    async def post_explain(request: Request) -> Response:
        """The logical plan as text, with the query's outputs."""

        def run(e: Engine, c: CancellationToken, b: Any) -> dict[str, Any]:
            plan = e.explain(b)
            compiled = e.compile(b)
            return {
                "plan": plan,
                "outputs": compiled["outputs"],
                "requested_columns": compiled["requested_columns"],
                "sql": compiled["sql"],
            }

        return await handle(request, run)

    @app.post("/v1/select", tags=["query"], openapi_extra=_body_doc(_SELECT_SCHEMA))
    async def post_select(request: Request) -> Response:
        """Detail rows (no rollup): `{"from", "fields", "where_sql", "order_by", "limit"}`."""
        return await handle(
            request,
            lambda e, c, b: e.select(
                b, db_path=holder.db_path, timeout_secs=timeout, cancellation=c
            ),
            result=True,
        )

    @app.post("/v1/attribute", tags=["query"], openapi_extra=_body_doc(_ATTRIBUTE_SCHEMA))
    async def post_attribute(request: Request) -> Response:
        """Why a metric changed between `baseline` and `current`, by dimension."""
        return await handle(
            request,
            lambda e, c, b: e.attribute(
                b, db_path=holder.db_path, timeout_secs=timeout, cancellation=c
            ),
        )

    @app.post("/v1/validate", tags=["model"], openapi_extra=_body_doc(_VALIDATE_SCHEMA))
    async def post_validate(request: Request) -> Response:
        """Validate model text: `{"valid", "issues", "compile_errors", "warnings"}`."""

        def run(e: Engine, c: CancellationToken, b: Any) -> dict[str, Any]:
            return validate_body(b)

        return await handle(request, run)

    # -- the explorer ------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html", media_type="text/html")

    @app.get("/explorer.js", include_in_schema=False)
    async def explorer_js() -> FileResponse:
        return FileResponse(WEB_DIR / "explorer.js", media_type="text/javascript")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> JSONResponse:
        return JSONResponse(
            {"ok": True, "reloads": holder.reloads, "last_reload_error": holder.last_reload_error}
        )

    return app


class Guard:
    """Pure ASGI middleware (so the endpoint still sees a client disconnect): bearer token,
    the Content-Length limit, the request id and one access-log line per request."""

    def __init__(self, app: Any, token: str | None, max_body: int) -> None:
        self.app = app
        self.token = token
        self.max_body = max_body

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        rid = headers.get("x-request-id") or uuid.uuid4().hex[:12]
        path = scope["path"]
        status = {"code": 500}

        async def send_with_id(message: Any) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", rid.encode())]
            await send(message)

        try:
            early = self._reject(path, headers)
            if early is not None:
                await early(scope, receive, send_with_id)
                return
            await self.app(scope, receive, send_with_id)
        finally:
            _log(scope, rid, status["code"], started)

    def _reject(self, path: str, headers: dict[str, str]) -> Response | None:
        if self.token and path.startswith("/v1/") and path not in ("/v1/openapi.json", "/v1/docs"):
            scheme, _, value = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), self.token.encode()
            ):
                response = _error(
                    401,
                    error_body(
                        "unauthorized",
                        "a bearer token is required: send `Authorization: Bearer <token>`",
                        hint="the server was started with DOSI_TOKEN set",
                    ),
                )
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            return _too_large(self.max_body)
        return None


class OsiErrorBody(Exception):
    """A request problem found before the engine runs (bad JSON, bad envelope)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body["message"])
        self.status = status
        self.body = body


def validate_body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise OsiErrorBody(
            400,
            error_body(
                "invalid_request",
                'the body is {"model": "<model YAML or JSON text>"}',
                candidates=["model", "mode"],
            ),
        )
    extra = set(body) - {"model", "mode"}
    if extra:
        raise OsiErrorBody(
            400,
            error_body(
                "unknown_request_key",
                f"unknown key `{sorted(extra)[0]}`",
                candidates=["model", "mode"],
            ),
        )
    mode = body.get("mode", "datus")
    if mode not in ("datus", "basic"):
        raise OsiErrorBody(
            400,
            error_body(
                "invalid_request", '`mode` is "datus" or "basic"', candidates=["datus", "basic"]
            ),
        )
    return validate(body["model"], mode)


def _too_large(limit: int) -> JSONResponse:
    return _error(
        413,
        error_body(
            "request_too_large",
            f"the request body is larger than {limit} bytes",
            hint="send a smaller query; the limit is set with `dosi serve --max-body`",
        ),
    )


def _log(scope: Any, rid: str, status: int, started: float) -> None:
    if not access_log.isEnabledFor(logging.INFO):
        return
    access_log.info(
        json.dumps(
            {
                "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "request_id": rid,
                "client": scope["client"][0] if scope.get("client") else None,
                "method": scope["method"],
                "path": scope["path"],
                "status": status,
                "ms": round((time.perf_counter() - started) * 1000, 2),
            }
        )
    )


def serve(
    model_path: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    connections: Any = None,
    db_path: str | None = None,
    mode: str = "datus",
    token: str | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> None:
    """Run the REST API and the explorer with uvicorn until interrupted."""
    import uvicorn

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False
    app = create_app(
        model_path,
        connections=connections,
        db_path=db_path,
        mode=mode,
        token=token,
        max_body=max_body,
        timeout=timeout,
    )
    print(f"dosi: serving {model_path} on http://{host}:{port}/ (API at /v1)", file=sys.stderr)
    if db_path is None and app.state.holder.current().connections.path_for(None) is None:
        print(
            "dosi: no database given (--db / --connections): queries run on an empty "
            "in-memory DuckDB",
            file=sys.stderr,
        )
    uvicorn.run(app, host=host, port=port, access_log=False, log_level="warning")
