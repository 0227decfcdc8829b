"""The REST server's ASGI guard: bearer token, request-size limit, request id and the access log
(one JSON line per request, logger `dosi.access`)."""

from __future__ import annotations

import hmac
import json
import logging
import time
import uuid
from typing import Any

from fastapi.responses import Response

from dosi.frontends.contract import error_body
from dosi.frontends.rest.responses import error_response, too_large

access_log = logging.getLogger("dosi.access")


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
            log_request(scope, rid, status["code"], started)

    def _reject(self, path: str, headers: dict[str, str]) -> Response | None:
        if self.token and path.startswith("/v1/") and path not in ("/v1/openapi.json", "/v1/docs"):
            scheme, _, value = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), self.token.encode()
            ):
                response = error_response(
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
            return too_large(self.max_body)
        return None


def log_request(scope: Any, rid: str, status: int, started: float) -> None:
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
