"""Who calls the MCP server (issue 29 item 4, issue 30 item 1): over HTTP a bearer token,
the shared `DOSI_TOKEN` or a token of the access file, checked by an ASGI guard before the
MCP transport sees the request; over stdio the local user the operator names (`--user`).
Each tool runs on an engine answering as that user (docs/access-policies.md)."""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Iterable
from typing import Any

from mcp_types import CallToolResult

from dosi.access import UserContext
from dosi.access.audit import TOKEN_USER_NAME, audit, request_metrics
from dosi.access.policy import AccessSource
from dosi.engine import Engine
from dosi.errors import AccessError, ArgumentError
from dosi.frontends.contract import EngineHolder, error_body
from dosi.frontends.mcp.results import guarded

TOKEN_USER = UserContext(TOKEN_USER_NAME, ("token",))


class McpGuard:
    """Pure ASGI middleware in front of the streamable-HTTP app: every HTTP request carries
    `Authorization: Bearer <token>` naming a user, else 401 (503 when the access file does
    not read). The user rides in the ASGI scope's state, which the MCP request context keeps."""

    def __init__(self, app: Any, token: str | None, access: AccessSource | None) -> None:
        if token is None and access is None:
            raise ArgumentError("an MCP guard needs a token or an access file")
        self.app = app
        self.token = token.encode("utf-8") if token is not None else None
        self.access = access

    def identify(self, value: bytes) -> UserContext | None:
        if self.token is not None and hmac.compare_digest(value, self.token):
            return TOKEN_USER
        if self.access is None:
            return None
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return self.access.current().identities.by_token(text) if text else None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = dict(scope["headers"])
        scheme, _, value = raw.get(b"authorization", b"").partition(b" ")
        status, body = (
            401,
            error_body(
                "unauthorized",
                "a bearer token is required: send `Authorization: Bearer <token>`",
                hint="the MCP server was started with DOSI_TOKEN or an access file",
            ),
        )
        try:
            user = self.identify(value.strip()) if scheme.lower() == b"bearer" else None
        except AccessError as err:
            user, status, body = None, 503, error_body(err.code, err.message, hint=err.hint)
        if user is None:
            audit("mcp", None, "http", (), body["code"])
            payload = json.dumps(body).encode("utf-8")
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b"Bearer"),
                        (b"content-length", str(len(payload)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": payload})
            return
        scope.setdefault("state", {})["dosi_user"] = user
        await self.app(scope, receive, send)


def _request_user(ctx: Any) -> UserContext | None:
    """The user the guard put in this tool call's HTTP request (None over stdio)."""
    try:
        request = ctx.request_context.request
    except (AttributeError, ValueError):
        return None
    state = getattr(request, "scope", {}).get("state") or {}
    user = state.get("dosi_user")
    return user if isinstance(user, UserContext) else None


class Caller:
    """Runs a tool on a leased engine answering as the caller: the HTTP request's user, or
    the stdio user; without an access file the served engine itself."""

    def __init__(
        self,
        holder: EngineHolder,
        access: AccessSource | None = None,
        stdio_user: str | None = None,
        audited: bool = False,
    ) -> None:
        self.holder = holder
        self.access = access
        self.stdio_user = stdio_user
        self.audited = audited or access is not None

    def _user(self, ctx: Any) -> UserContext | None:
        user = _request_user(ctx)
        if user is None and self.stdio_user is not None and self.access is not None:
            user = self.access.current().identities.user(self.stdio_user)
            if user is None:
                raise AccessError("unauthorized", f"no user `{self.stdio_user}` in the access file")
        return user

    def _scoped(self, engine: Engine, user: UserContext | None) -> Engine:
        if self.access is None:
            return engine
        policies = self.access.current().policies
        if policies is None:
            return engine
        if user is None:
            raise AccessError(
                "unauthorized",
                "this MCP call has no user, and the access file has policies",
                hint="over stdio start `dosi mcp --user NAME`; over HTTP send a bearer token",
            )
        return engine.as_user(user, policies, audited=False)

    def run(
        self,
        ctx: Any,
        action: str,
        request: Any,
        fn: Callable[[Engine], Any],
        metrics: Iterable[str] | None = None,
    ) -> CallToolResult:
        """`fn(engine)` as a tool result, with one audit line (user, tool, metrics, outcome)."""
        names = list(metrics) if metrics is not None else request_metrics(request)
        who: list[str | None] = [None]

        def work() -> Any:
            user = self._user(ctx)
            who[0] = user.name if user is not None else None
            with self.holder.lease() as engine:
                return fn(self._scoped(engine, user))

        result = guarded(work)
        if self.audited:
            outcome = "ok"
            if result.is_error and isinstance(result.structured_content, dict):
                outcome = str(result.structured_content.get("code") or "error")
            audit("mcp", who[0], action, names, outcome)
        return result

    def value(self, ctx: Any, fn: Callable[[Engine], Any]) -> Any:
        """`fn(engine)` for a resource or prompt (errors raise, as the SDK reports them)."""
        user = self._user(ctx)
        with self.holder.lease() as engine:
            return fn(self._scoped(engine, user))
