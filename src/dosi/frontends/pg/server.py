"""`dosi serve --pg-port` / `dosi pg`: the model's semantic tables over the PostgreSQL wire
protocol (version 3), on asyncio.

The server answers three kinds of statement: semantic queries (translated into dosi queries
by `Engine.sql` and run like REST queries, on a pool of engines), catalog queries (the
emulated `pg_catalog`, `dosi.frontends.pg.catalog`) and session commands. Client SQL is never
sent to the warehouse. Authentication, TLS, a connection limit, a whole-request timeout and
row and byte limits are the server's options (`PgOptions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import ssl
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlglot import exp

from dosi.access import UserContext
from dosi.access.audit import audit
from dosi.access.policy import AccessSource
from dosi.engine import Engine
from dosi.errors import AccessError, OsiError, QueryError
from dosi.execute.budget import budget_of
from dosi.execute.cancel import CancellationToken
from dosi.frontends.contract import EngineHolder, EnginePool
from dosi.frontends.limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS
from dosi.frontends.pg import messages as m
from dosi.frontends.pg.auth import Authenticator, Identity, TrustAuth
from dosi.frontends.pg.catalog import SERVER_VERSION, Catalog
from dosi.frontends.pg.pgtypes import column_type
from dosi.frontends.pg.session import Session
from dosi.frontends.pg.sqlstate import error_fields
from dosi.frontends.pg.statements import Statement
from dosi.query.semantic_sql.params import bind_parameters

DEFAULT_PORT = 5433


@dataclass
class PgOptions:
    """The server's limits and security settings."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    auth: Authenticator = field(default_factory=TrustAuth)
    certfile: str | None = None
    keyfile: str | None = None
    max_connections: int = 64
    #: seconds for the whole request: compile, run, conversion and sending the rows
    query_timeout: float | None = 120.0
    max_rows: int | None = DEFAULT_MAX_ROWS
    max_bytes: int | None = DEFAULT_MAX_BYTES
    workers: int = 8
    database: str = "dosi"
    log: Callable[[str], None] | None = None
    access: AccessSource | None = None  # identities and policies (docs/access-policies.md)


def tls_context(certfile: str, keyfile: str | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(certfile, keyfile)
    return ctx


class _Backend:
    """Statement execution for the sessions: semantic queries on a leased engine, catalog
    queries on the model version's emulated catalog."""

    def __init__(self, server: PgServer, user: UserContext | None = None) -> None:
        self.server = server
        self.user = user  # the access file's user this connection answers as
        self.table_name = server.holder.current().sql_table().name

    async def run(
        self, stmt: Statement, params: list[Any], describe_only: bool, token: CancellationToken
    ) -> pa.Table:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.server.executor, self.server.answer, stmt, params, describe_only, token, self.user
        )

    def param_types(self, stmt: Statement, n: int) -> list[int]:
        return self.server.param_types(stmt, n)

    def offload(self, fn: Callable[..., bytes], *args: Any) -> Awaitable[bytes]:
        """Encoding work in the server's encoder threads (never on the event loop)."""
        return asyncio.get_running_loop().run_in_executor(self.server.encoders, fn, *args)


class PgServer:
    """One listening socket serving one model (reloaded when its file changes)."""

    def __init__(self, holder: EngineHolder, options: PgOptions) -> None:
        self.holder = holder
        self.options = options
        self.tls = tls_context(options.certfile, options.keyfile) if options.certfile else None
        self.executor = ThreadPoolExecutor(
            max_workers=options.workers, thread_name_prefix="dosi-pg"
        )
        # rows are encoded apart from the queries, so a full query pool never holds up the
        # sending of an answer that is already computed
        self.encoders = ThreadPoolExecutor(
            max_workers=max(2, options.workers // 2), thread_name_prefix="dosi-pg-encode"
        )
        self._catalogs: dict[tuple[int, str], Catalog] = {}
        self._catalog_lock = threading.Lock()
        self._sessions: dict[int, tuple[int, Session]] = {}
        self._open = 0
        self._server: asyncio.AbstractServer | None = None
        self.backend = _Backend(self)

    # -- statements (worker threads) ---------------------------------------------------------
    def scoped(self, engine: Engine, user: UserContext | None) -> Engine:
        """The engine as the connection's user sees it, when the access file has policies."""
        access = self.options.access
        if access is None:
            return engine
        policies = access.current().policies
        if policies is None:
            return engine
        if user is None:
            raise AccessError("unauthorized", "this connection has no user")
        return engine.as_user(user, policies, audited=False)

    def catalog(self, pool: EnginePool, user: UserContext | None = None) -> Catalog:
        """The emulated catalog of one model version, as one user sees it (hidden columns
        are absent from information_schema and pg_attribute)."""
        e = self.scoped(pool.first, user)
        key = (id(pool), user.key() if e.scope is not None and user is not None else "")
        found = self._catalogs.get(key)
        if found is not None:
            return found
        with self._catalog_lock:
            if key not in self._catalogs:
                types = e.sql_types(db_path=self.holder.db_path)
                if any(k[0] != id(pool) for k in self._catalogs):
                    self._catalogs = {}  # a new model version: drop the old catalogs
                self._catalogs[key] = Catalog(e.sql_table(), types, self.options.database)
            return self._catalogs[key]

    def answer(
        self,
        stmt: Statement,
        params: list[Any],
        describe_only: bool,
        token: CancellationToken,
        user: UserContext | None = None,
    ) -> pa.Table:
        if self.options.access is None:
            return self._answer(stmt, params, describe_only, token, None)
        outcome = "ok"
        metrics: list[str] = []
        try:
            return self._answer(stmt, params, describe_only, token, user, metrics)
        except OsiError as err:
            outcome = err.code
            raise
        finally:
            name = user.name if user is not None else None
            audit("pg", name, stmt.kind, metrics, outcome)

    def _answer(
        self,
        stmt: Statement,
        params: list[Any],
        describe_only: bool,
        token: CancellationToken,
        user: UserContext | None,
        metrics: list[str] | None = None,
    ) -> pa.Table:
        pool = self.holder.current_pool()
        assert stmt.tree is not None
        if stmt.kind == "catalog":
            tree = stmt.tree
            if params or describe_only:
                tree = bind_parameters(tree.copy(), params) if params else tree
            return self.catalog(pool, user).run(tree)
        with pool.lease() as leased:
            engine = self.scoped(leased, user)
            if stmt.kind == "explain":
                plan = engine.sql_plan(stmt.tree, params)
                text = engine.explain(plan.query) if plan.query is not None else "(no query)"
                return pa.table({"QUERY PLAN": text.splitlines()})
            if describe_only:
                return self._described(engine, stmt.tree, params)
            if metrics is not None:  # the audit line names the metrics asked for
                query = engine.sql_plan(stmt.tree, params or None).query
                metrics.extend(query.get("metrics", []) if isinstance(query, dict) else [])
            budget = budget_of(token)
            return engine.sql_arrow(
                stmt.tree,
                params or None,
                db_path=self.holder.db_path,
                timeout_secs=self.options.query_timeout if budget is None else budget.remaining(),
                cancellation=token,
            )

    def _described(self, engine: Engine, tree: exp.Expression, params: list[Any]) -> pa.Table:
        """The result columns of a semantic query without running it in full: its
        filters dropped (they never change the columns) and no rows asked for."""
        shape = tree.copy()
        for key in ("where", "having", "offset"):
            shape.set(key, None)
        shape.set("limit", exp.Limit(expression=exp.Literal.number(0)))
        params = [None if p is None else p for p in params]
        return engine.sql_arrow(
            shape,
            params or None,
            db_path=self.holder.db_path,
            timeout_secs=self.options.query_timeout,
        )

    def param_types(self, stmt: Statement, n: int) -> list[int]:
        """A type OID per `$n`: the column a parameter is compared with, int8 for LIMIT /
        OFFSET, text otherwise."""
        out = [25] * n
        if stmt.tree is None or stmt.kind != "semantic":
            return out
        try:
            engine = self.holder.current()
            types = engine.sql_types(db_path=self.holder.db_path)
            table = engine.sql_table()
        except OsiError:
            return out
        for node in stmt.tree.find_all(exp.Parameter):
            try:
                i = int(node.name) - 1
            except ValueError:
                continue
            if not 0 <= i < n:
                continue
            parent = node.parent
            if isinstance(parent, (exp.Limit, exp.Offset)):
                out[i] = 20
                continue
            while isinstance(parent, (exp.Paren, exp.Cast)):
                parent = parent.parent
            if isinstance(parent, (exp.Tuple, exp.In)):
                parent = parent if isinstance(parent, exp.In) else parent.parent
            cols = [c for c in (parent.find_all(exp.Column) if parent is not None else ())]
            for c in cols:
                vc = table.column(c.name) or table.column(c.name.lower())
                if vc is not None and vc.name in types:
                    oid = column_type(types[vc.name]).oid
                    out[i] = 1114 if oid == 1184 else oid
                    break
        return out

    # -- connections ----------------------------------------------------------------------------
    async def _startup(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[dict[str, str], asyncio.StreamReader, asyncio.StreamWriter]:
        for _ in range(3):
            code, payload = await m.read_startup(reader)
            if code == m.SSL_REQUEST:
                if self.tls is None:
                    writer.write(b"N")
                    await writer.drain()
                    continue
                writer.write(b"S")
                await writer.drain()
                await writer.start_tls(self.tls)
                continue
            if code == m.GSS_REQUEST:
                writer.write(b"N")
                await writer.drain()
                continue
            if code == m.CANCEL_REQUEST:
                pid, secret = (
                    int.from_bytes(payload[:4], "big"),
                    int.from_bytes(payload[4:8], "big"),
                )
                found = self._sessions.get(pid)
                if found is not None and found[0] == secret:
                    found[1].token.cancel()
                raise ConnectionAbortedError
            if code >> 16 != 3:
                raise m.ProtocolViolation(f"unsupported protocol version {code >> 16}")
            return m.startup_params(payload), reader, writer
        raise m.ProtocolViolation("too many encryption requests")

    async def _authenticate(
        self, params: dict[str, str], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> Identity | None:
        user = params.get("user", "")
        database = params.get("database", user)
        password = None
        if self.options.auth.needs_password:
            writer.write(m.AUTH_CLEARTEXT)
            await writer.drain()
            kind, payload = await m.read_message(reader)
            if kind != b"p":
                return None
            password = payload.rstrip(b"\x00").decode("utf-8", "replace")
        return self.options.auth.check(user, password, database)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open += 1
        pid = 0
        try:
            params, reader, writer = await self._startup(reader, writer)
            if self._open > self.options.max_connections:
                self._refuse(
                    writer,
                    "too_many_connections",
                    f"sorry, too many clients already ({self.options.max_connections})",
                )
                return
            identity = await self._authenticate(params, reader, writer)
            if identity is None:
                self._refuse(
                    writer,
                    "invalid_password",
                    f'password authentication failed for user "{params.get("user", "")}"',
                    "send the server's token as the password",
                )
                return
            backend = self.backend if identity.context is None else _Backend(self, identity.context)
            session = Session(
                backend,
                reader,
                writer,
                params,
                self.options.max_rows,
                self.options.log,
                self.options.max_bytes,
                self.options.query_timeout,
            )
            pid = secrets.randbelow(2**31 - 1) + 1
            secret = secrets.randbelow(2**31 - 1)
            self._sessions[pid] = (secret, session)
            writer.write(
                m.AUTH_OK + self._status(params) + m.backend_key(pid, secret) + m.ready(b"I")
            )
            await writer.drain()
            await session.serve()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError, ConnectionAbortedError):
            pass
        except m.ProtocolViolation as exc:
            with contextlib.suppress(Exception):
                self._refuse(writer, "protocol_violation", str(exc))
        except OsiError as err:
            with contextlib.suppress(Exception):
                writer.write(m.error_response(error_fields(err, "FATAL")))
        finally:
            self._open -= 1
            self._sessions.pop(pid, None)
            with contextlib.suppress(Exception):
                writer.close()

    def _refuse(
        self, writer: asyncio.StreamWriter, code: str, message: str, hint: str | None = None
    ) -> None:
        writer.write(m.error_response(error_fields(QueryError(code, message, hint=hint), "FATAL")))

    def _status(self, params: dict[str, str]) -> bytes:
        values = {
            "server_version": SERVER_VERSION,
            "server_encoding": "UTF8",
            "client_encoding": "UTF8",
            "DateStyle": "ISO, MDY",
            "TimeZone": "UTC",
            "IntervalStyle": "postgres",
            "integer_datetimes": "on",
            "standard_conforming_strings": "on",
            "is_superuser": "off",
            "session_authorization": params.get("user", ""),
            "application_name": params.get("application_name", ""),
        }
        return b"".join(m.parameter_status(k, v) for k, v in values.items())

    # -- lifecycle ------------------------------------------------------------------------------
    async def start(self) -> asyncio.AbstractServer:
        self._server = await asyncio.start_server(self.handle, self.options.host, self.options.port)
        return self._server

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def serve_forever(self) -> None:
        server = await self.start()
        print(
            f"dosi: PostgreSQL protocol on {self.options.host}:{self.port} "
            f"(table {self.backend.table_name})",
            file=sys.stderr,
            flush=True,
        )
        async with server:
            await server.serve_forever()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.encoders.shutdown(wait=False, cancel_futures=True)


def serve(
    model_path: str,
    options: PgOptions,
    connections: Any = None,
    db_path: str | None = None,
    mode: str = "datus",
    pool_size: int = 4,
) -> None:
    """Run the server until interrupted (the CLI's `dosi pg` / `dosi serve --pg-port`)."""
    holder = EngineHolder(model_path, connections, db_path, mode, pool_size=pool_size)
    server = PgServer(holder, options)
    try:
        asyncio.run(server.serve_forever())
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def start_background(holder: EngineHolder, options: PgOptions) -> PgServer:
    """The server on its own event loop thread (beside `dosi serve`'s REST API)."""
    server = PgServer(holder, options)
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="dosi-pg", daemon=True).start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(120)
    print(f"dosi: PostgreSQL protocol on {options.host}:{server.port}", file=sys.stderr, flush=True)
    return server
