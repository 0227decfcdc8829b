"""`dosi serve`: the REST API and the web explorer under uvicorn.

fastapi and uvicorn (the `serve` extra) are imported at the top of this module and of
`rest.app`; the CLI loads this module only when `dosi serve` runs (`dosi.frontends.extras`)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import uvicorn

from dosi.access.audit import audit_to_stderr
from dosi.access.policy import AccessSource
from dosi.frontends.limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS
from dosi.frontends.rest.app import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY,
    DEFAULT_TIMEOUT,
    DEFAULT_WORKERS,
    create_app,
)
from dosi.frontends.rest.guard import access_log, allowed_hosts, usable_token
from dosi.frontends.rest.slow_clients import with_head_timeout

DEFAULT_HEAD_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 512

__all__ = ["serve", "usable_token"]  # the CLI checks the token before it starts anything


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
    allow_hosts: tuple[str, ...] = (),
    head_timeout: float = DEFAULT_HEAD_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    access: AccessSource | None = None,
    max_rows: int | None = DEFAULT_MAX_ROWS,
    max_result_bytes: int | None = DEFAULT_MAX_BYTES,
    memory_budget: int | None = None,
    workers: int = DEFAULT_WORKERS,
) -> None:
    """Run the REST API and the explorer with uvicorn until interrupted; `allow_hosts` adds
    Host names to the allow-list (loopback names when bound to loopback). A connection gets
    `head_timeout` seconds to send its request head and `body_timeout` for its body; above
    `max_connections` open connections (or requests in flight) the answer is 503. Any
    connection profile can be the default one (a warehouse as well as a DuckDB file)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False
    if access is not None:  # one audit line per request (docs/access-policies.md)
        audit_to_stderr()
    app = create_app(
        model_path,
        connections=connections,
        db_path=db_path,
        mode=mode,
        token=token,
        max_body=max_body,
        timeout=timeout,
        hosts=allowed_hosts(host, allow_hosts),
        body_timeout=body_timeout,
        access=access,
        max_rows=max_rows,
        max_result_bytes=max_result_bytes,
        memory_budget=memory_budget,
        workers=workers,
    )
    print(f"dosi: serving {model_path} on http://{host}:{port}/ (API at /v1)", file=sys.stderr)
    default = app.state.holder.connections.profile(None)
    if db_path is None and (default is None or default.uri == ":memory:"):
        print(
            "dosi: no database given (--db / --connections): queries run on an empty "
            "in-memory DuckDB",
            file=sys.stderr,
        )
    uvicorn.run(
        app,
        host=host,
        port=port,
        access_log=False,
        log_level="warning",
        http=with_head_timeout(head_timeout),
        limit_concurrency=max_connections,
        timeout_keep_alive=5,
    )
