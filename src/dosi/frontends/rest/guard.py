"""The REST server's ASGI guard: Host allow-list, bearer token, request-size limit, security
headers, request id and the access log (one JSON line per request, logger `dosi.access`).

The Host check stops DNS rebinding: a page on another site whose name resolves to 127.0.0.1
could otherwise read the API through the browser (issue 29, item 4)."""

from __future__ import annotations

import hmac
import json
import logging
import time
import uuid
from typing import Any

from fastapi.responses import Response

from dosi.access import UserContext
from dosi.access.audit import TOKEN_USER_NAME, audit
from dosi.access.policy import AccessSource
from dosi.errors import AccessError
from dosi.frontends.contract import error_body
from dosi.frontends.rest.responses import error_response, too_large
from dosi.frontends.tokens import usable_token

__all__ = ["Guard", "allowed_hosts", "usable_token"]

access_log = logging.getLogger("dosi.access")

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: On every answer; the explorer page loads only its own script and talks only to this server.
SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
)
PUBLIC_V1 = ("/v1/openapi.json",)
#: the shared DOSI_TOKEN when an access file is configured: a user of its own, group `token`
TOKEN_USER = UserContext(TOKEN_USER_NAME, ("token",))


def is_loopback(host: str) -> bool:
    return host.strip("[]").lower() in LOOPBACK_NAMES or host.startswith("127.")


def allowed_hosts(bind: str, extra: tuple[str, ...] = ()) -> frozenset[str] | None:
    """The Host names a request may carry: the loopback names when bound to loopback, plus
    `extra` (`--allow-host`); None (any) when bound elsewhere and nothing was added."""
    names = {h.strip("[]").lower() for h in extra}
    if is_loopback(bind):
        return frozenset(LOOPBACK_NAMES | {bind.strip("[]").lower()} | names)
    return frozenset(names) if names else None


def _host_name(value: bytes) -> str:
    text = value.decode("latin-1").strip().lower()
    if text.startswith("["):  # [::1]:8000
        return text[1 : text.find("]")] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


class Guard:
    """Pure ASGI middleware (so the endpoint still sees a client disconnect): bearer token,
    the Content-Length limit, the request id and one access-log line per request."""

    def __init__(
        self,
        app: Any,
        token: str | None,
        max_body: int,
        hosts: frozenset[str] | None = None,
        access: AccessSource | None = None,
    ) -> None:
        self.app = app
        self.token = None if token is None else token.encode("utf-8")
        self.max_body = max_body
        self.hosts = hosts
        self.access = access  # identities and policies (docs/access-policies.md)

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
                message["headers"] = [
                    *message["headers"],
                    (b"x-request-id", rid.encode("utf-8", "replace")),
                    *SECURITY_HEADERS,
                ]
            await send(message)

        state = scope.setdefault("state", {})
        try:
            early = self._reject(path, headers, dict(scope["headers"]), state)
            if early is not None:
                await early(scope, receive, send_with_id)
                return
            await self.app(scope, receive, send_with_id)
        finally:
            log_request(scope, rid, status["code"], started)
            if self.access is not None and path.startswith("/v1/"):
                user = state.get("dosi_user")
                audit(
                    "rest",
                    user.name if isinstance(user, UserContext) else None,
                    f"{scope['method']} {path}",
                    state.get("dosi_metrics", ()),
                    state.get("dosi_outcome")
                    or ("ok" if status["code"] < 400 else f"http_{status['code']}"),
                    request_id=rid,
                    status=status["code"],
                )

    def identify(self, value: bytes) -> UserContext | None:
        """The user a bearer token names: the shared token, else an identity of the access
        file (hashed, compared in constant time). An unreadable access file raises."""
        if self.token and hmac.compare_digest(value, self.token):
            return TOKEN_USER
        if self.access is None:
            return None
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return self.access.current().identities.by_token(text) if text else None

    def _reject(
        self, path: str, headers: dict[str, str], raw: dict[bytes, bytes], state: dict[str, Any]
    ) -> Response | None:
        if self.hosts is not None and _host_name(raw.get(b"host", b"")) not in self.hosts:
            return error_response(
                421,
                error_body(
                    "host_not_allowed",
                    "the Host header names a host this server does not answer for",
                    hint="open the server by a loopback name (localhost, 127.0.0.1), or start "
                    "it with `dosi serve --allow-host NAME`",
                ),
            )
        policed = self.token or self.access is not None
        if policed and path.startswith("/v1/") and path not in PUBLIC_V1:
            scheme, _, value = raw.get(b"authorization", b"").partition(b" ")
            try:
                user = self.identify(value.strip()) if scheme.lower() == b"bearer" else None
            except AccessError as err:
                state["dosi_outcome"] = err.code
                return error_response(503, error_body(err.code, err.message, hint=err.hint))
            state["dosi_user"] = user
            if user is None:
                state["dosi_outcome"] = "unauthorized"
                response = error_response(
                    401,
                    error_body(
                        "unauthorized",
                        "a bearer token is required: send `Authorization: Bearer <token>`",
                        hint="the server was started with DOSI_TOKEN or an access file",
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
