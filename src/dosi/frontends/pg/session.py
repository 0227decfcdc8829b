"""One client connection after authentication: the simple and extended query protocols,
prepared statements and portals, cursors, and the session commands answered as no-ops.

Queries run in the server's worker threads (`Backend.run`) and their rows are encoded in its
encoder threads a slice at a time (`dosi.frontends.pg.stream`), all under one budget per
request: row and byte limits and a timeout covering compile, run, conversion and sending
(issue 29, item 1). The protocol itself never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from dosi.errors import OsiError, QueryError
from dosi.execute.budget import ResultBudget
from dosi.execute.cancel import CancellationToken
from dosi.frontends.limits import with_retry
from dosi.frontends.pg import messages as m
from dosi.frontends.pg.catalog import default_settings
from dosi.frontends.pg.params import decode
from dosi.frontends.pg.pgtypes import (
    BINARY,
    TEXT,
    ColumnType,
    can_send_binary,
    column_type,
)
from dosi.frontends.pg.sqlstate import error_fields
from dosi.frontends.pg.statements import (
    DECLARE,
    FETCH,
    SET,
    SET_TZ,
    Statement,
    classify,
    split,
    unquote,
)
from dosi.frontends.pg.stream import ClientGone, Sender


@dataclass
class Result:
    """A statement's answer: rows (a table) or only a command tag."""

    tag: str
    table: pa.Table | None = None
    copy: str | None = None  # COPY TO STDOUT: its format (text, csv, binary)
    budget: ResultBudget | None = None  # the request's, until its rows are sent
    sent_bytes: int = 0  # encoded bytes of this answer sent so far

    @property
    def types(self) -> list[ColumnType]:
        assert self.table is not None
        return [column_type(f.type) for f in self.table.schema]


class Backend(Protocol):
    """What a session asks the server for: run a statement in a worker thread."""

    table_name: str

    async def run(
        self,
        stmt: Statement,
        params: list[Any],
        describe_only: bool,
        token: CancellationToken,
    ) -> pa.Table: ...

    def param_types(self, stmt: Statement, n: int) -> list[int]: ...

    def offload(self, fn: Callable[..., bytes], *args: Any) -> Awaitable[bytes]: ...


def _forget(task: asyncio.Future[Any]) -> None:
    """Collect the outcome of work whose client was already answered (timeout, gone)."""
    if not task.cancelled():
        task.exception()


@dataclass
class Prepared:
    text: str
    stmt: Statement | None  # None: the empty statement
    param_oids: tuple[int, ...]
    error: OsiError | None = None
    described: pa.Table | None = None


@dataclass
class Portal:
    prepared: Prepared
    params: list[Any]
    formats: tuple[int, ...]
    result: Result | None = None
    sent: int = 0


@dataclass
class Cursor:
    name: str
    result: Result
    hold: bool
    pos: int = 0  # rows before the cursor (0: before the first row)


@dataclass
class SessionState:
    settings: dict[str, str] = field(default_factory=default_settings)
    prepared: dict[str, Prepared] = field(default_factory=dict)
    portals: dict[str, Portal] = field(default_factory=dict)
    cursors: dict[str, Cursor] = field(default_factory=dict)
    status: bytes = b"I"  # I idle, T in a transaction, E failed transaction


def _formats(codes: tuple[int, ...], n: int) -> list[int]:
    if not codes:
        return [TEXT] * n
    if len(codes) == 1:
        return [codes[0]] * n
    if len(codes) != n:
        raise QueryError("protocol_violation", f"{len(codes)} result format codes for {n} columns")
    return list(codes)


def _tag(keyword: str, table: pa.Table) -> str:
    return f"SELECT {table.num_rows}" if keyword != "FETCH" else f"FETCH {table.num_rows}"


class Session:
    """The protocol loop of one connection."""

    def __init__(
        self,
        backend: Backend,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        startup: dict[str, str],
        max_rows: int | None,
        on_query: Callable[[str], None] | None = None,
        max_bytes: int | None = None,
        timeout: float | None = None,
    ) -> None:
        self.backend = backend
        self.reader = reader
        self.writer = writer
        self.state = SessionState()
        for key in ("application_name", "datestyle", "timezone", "search_path"):
            value = startup.get(key) or startup.get(key.capitalize())
            if value:
                self.state.settings[key] = value
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self.timeout = timeout  # the whole request: compile, run, conversion, sending
        self.token: CancellationToken = CancellationToken()
        self.on_query = on_query

    # -- the loop ------------------------------------------------------------------------------
    async def serve(self) -> None:
        skipping = False  # after an extended-protocol error: discard until Sync
        while True:
            kind, payload = await m.read_message(self.reader)
            if kind == b"X":
                return
            if kind == b"S":
                skipping = False
                self._send(m.ready(self.state.status))
                await self.writer.drain()
                continue
            if kind == b"H":
                await self.writer.drain()
                continue
            if skipping:
                continue
            try:
                if kind == b"Q":
                    await self._simple(m.Reader(payload).cstring())
                    self._send(m.ready(self.state.status))
                elif kind == b"P":
                    self._parse(payload)
                elif kind == b"B":
                    self._bind(payload)
                elif kind == b"D":
                    await self._describe(payload)
                elif kind == b"E":
                    await self._execute(payload)
                elif kind == b"C":
                    self._close(payload)
                elif kind in (b"d", b"c", b"f"):
                    raise QueryError("sql_unsupported", "COPY is not supported")
                else:
                    raise QueryError("protocol_violation", f"unexpected message {kind!r}")
            except OsiError as err:
                self._error(err)
                if kind == b"Q":
                    self._send(m.ready(self.state.status))
                else:
                    skipping = True
            if kind == b"Q":
                await self.writer.drain()

    def _send(self, data: bytes) -> None:
        self.writer.write(data)

    def _error(self, err: OsiError) -> None:
        if self.state.status == b"T":
            self.state.status = b"E"
        self._send(m.error_response(error_fields(err)))

    # -- simple query --------------------------------------------------------------------------
    async def _simple(self, text: str) -> None:
        parts = split(text)
        for part in parts:
            stmt = classify(part, self.backend.table_name)
            if stmt.kind == "empty":
                self._send(m.EMPTY_QUERY)
                continue
            result = await self._run(stmt, [])
            if result.copy is not None:
                await self._copy(result)
            elif result.table is not None:
                types = result.types
                self._send(m.row_description(result.table.column_names, types, [TEXT] * len(types)))
                await self._rows(result, types, [TEXT] * len(types))
            self._send(m.command_complete(result.tag))

    def _sender(self, result: Result) -> Sender:
        """Sends `result` under its request's budget; a later step (the next Execute of a
        suspended portal, a FETCH) gets a fresh deadline and the same byte limit."""
        budget = result.budget or ResultBudget(None, self.max_bytes, self.timeout)
        result.budget = budget
        return Sender(self.reader, self.writer, self.backend.offload, budget, result.sent_bytes)

    def _sent(self, result: Result, sender: Sender) -> None:
        result.sent_bytes = sender.sent_bytes
        if result.budget is not None:
            result.budget.close()
            result.budget = None

    async def _rows(
        self,
        result: Result,
        types: list[ColumnType],
        formats: list[int],
        start: int = 0,
        stop: int | None = None,
    ) -> int:
        assert result.table is not None
        sender = self._sender(result)
        try:
            return await sender.rows(result.table, types, formats, start, stop)
        finally:
            self._sent(result, sender)

    async def _answer(self, stmt: Statement, params: list[Any], budget: ResultBudget) -> pa.Table:
        """The statement's table from a worker thread; `timeout` as soon as the request's
        deadline passes (the worker stops at its next check), and the work cancelled when
        the client goes away."""
        task = asyncio.ensure_future(self.backend.run(stmt, params, False, budget))
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.05)
            if done:
                return task.result()
            if budget.timed_out.is_set():
                task.add_done_callback(_forget)
                raise budget.stopped_error()
            if self.reader.at_eof() or self.writer.is_closing():
                budget.cancel()
                task.add_done_callback(_forget)
                raise ClientGone("the client went away while its query ran")

    # -- running a statement -----------------------------------------------------------------------
    async def _run(self, stmt: Statement, params: list[Any]) -> Result:
        if self.on_query is not None:
            self.on_query(stmt.text)
        if self.state.status == b"E" and not re.match(
            r"(?i)^(ROLLBACK|ABORT|COMMIT|END)\b", stmt.text
        ):
            raise QueryError(
                "transaction_aborted",
                "current transaction is aborted, commands ignored until end of transaction block",
                hint="send ROLLBACK",
            )
        if stmt.kind == "copy":
            assert stmt.inner is not None
            inner = await self._run(stmt.inner, params)
            assert inner.table is not None
            return Result(
                f"COPY {inner.table.num_rows}", inner.table, stmt.copy_format, inner.budget
            )
        if stmt.kind in ("semantic", "catalog", "explain"):
            # the serving limits (issue 29, item 1): the engine refuses an answer over them
            # before any row is converted; catalog answers are checked here
            budget = ResultBudget(self.max_rows, self.max_bytes, self.timeout)
            self.token = budget
            try:
                table = await self._answer(stmt, params, budget)
                budget.check_table(table)
            except OsiError as err:
                budget.close()
                raise with_retry(err, stmt.text, "sql") from None
            except BaseException:
                budget.close()
                raise
            return Result(_tag("SELECT", table), table, budget=budget)
        return await self._command(stmt, params)

    async def _command(self, stmt: Statement, params: list[Any]) -> Result:
        text, kw = stmt.text, stmt.keyword
        st = self.state
        if kw in ("BEGIN", "START"):
            st.status = b"T" if st.status == b"I" else st.status
            return Result("BEGIN")
        if kw in ("COMMIT", "END", "ROLLBACK", "ABORT"):
            if re.match(r"(?i)^ROLLBACK\s+(WORK\s+|TRANSACTION\s+)?TO\b", text):
                if st.status == b"E":
                    st.status = b"T"
                return Result("ROLLBACK")
            failed = st.status == b"E"
            st.status = b"I"
            st.cursors = {k: c for k, c in st.cursors.items() if c.hold}
            return Result("ROLLBACK" if failed or kw in ("ROLLBACK", "ABORT") else "COMMIT")
        if kw in ("SAVEPOINT", "RELEASE"):
            return Result(kw)
        if kw == "SET":
            tz = SET_TZ.match(text)
            hit = SET.match(text)
            if tz:
                st.settings["timezone"] = tz.group("value").strip("'\"")
            elif hit:
                value = hit.group("value").strip()
                st.settings[hit.group("name").lower()] = value.strip("'").strip('"')
            return Result("SET")
        if kw == "RESET":
            name = text.split(None, 1)[1].strip().lower() if " " in text else "all"
            defaults = default_settings()
            if name == "all":
                st.settings = defaults
            elif name in defaults:
                st.settings[name] = defaults[name]
            return Result("RESET")
        if kw == "SHOW":
            return self._show(text)
        if kw == "DISCARD":
            st.prepared.clear()
            st.portals.clear()
            st.cursors.clear()
            st.settings = default_settings()
            return Result(
                "DISCARD " + text.split(None, 1)[1].upper().strip()
                if " " in text
                else "DISCARD ALL"
            )
        if kw == "DEALLOCATE":
            name = text.split()[-1]
            if name.upper() == "ALL":
                st.prepared.clear()
                return Result("DEALLOCATE ALL")
            st.prepared.pop(unquote(name), None)
            return Result("DEALLOCATE")
        if kw in ("LISTEN", "UNLISTEN", "NOTIFY"):
            return Result(kw)
        if kw == "DECLARE":
            return await self._declare(text, params)
        if kw in ("FETCH", "MOVE"):
            return self._fetch(text)
        if kw == "CLOSE":
            name = text.split(None, 1)[1].strip().rstrip(";") if " " in text else ""
            if name.upper() == "ALL":
                st.cursors.clear()
            elif st.cursors.pop(unquote(name), None) is None:
                raise QueryError("unknown_cursor", f'cursor "{unquote(name)}" does not exist')
            return Result("CLOSE CURSOR")
        raise QueryError(
            "sql_unsupported",
            f"{kw} is not supported by the semantic database",
            hint="send SELECT over the semantic table, catalog queries, or "
            "session commands (SET, SHOW, BEGIN, DECLARE CURSOR, FETCH)",
        )

    def _show(self, text: str) -> Result:
        name = text.split(None, 1)[1].strip().rstrip(";").strip() if " " in text else ""
        key = name.lower().replace(" ", "")
        key = {"timezone": "timezone", "transactionisolationlevel": "transaction_isolation"}.get(
            key, key
        )
        if key == "all":
            items = sorted(self.state.settings.items())
            table = pa.table(
                {
                    "name": [k for k, _ in items],
                    "setting": [v for _, v in items],
                    "description": [""] * len(items),
                }
            )
            return Result("SHOW", table)
        if key not in self.state.settings:
            raise QueryError("unknown_setting", f'unrecognized configuration parameter "{name}"')
        return Result("SHOW", pa.table({name.lower(): [self.state.settings[key]]}))

    async def _declare(self, text: str, params: list[Any]) -> Result:
        hit = DECLARE.match(text)
        if not hit:
            raise QueryError(
                "sql_syntax_error",
                "cannot read this DECLARE",
                hint="DECLARE name CURSOR [WITH HOLD] FOR SELECT ...",
            )
        name = unquote(hit.group("name"))
        inner = classify(hit.group("query"), self.backend.table_name)
        if inner.kind not in ("semantic", "catalog"):
            raise QueryError("sql_unsupported", "a cursor reads a SELECT")
        if self.state.status == b"I" and (hit.group("hold") or "").upper() != "WITH":
            raise QueryError(
                "unknown_cursor",
                "DECLARE CURSOR can only be used in transaction blocks",
                hint="BEGIN first, or declare it WITH HOLD",
            )
        result = await self._run(inner, params)
        if result.budget is not None:  # each FETCH is sent under its own deadline
            result.budget.close()
            result.budget = None
        self.state.cursors[name] = Cursor(name, result, (hit.group("hold") or "").upper() == "WITH")
        return Result("DECLARE CURSOR")

    def _cursor(self, name: str) -> Cursor:
        c = self.state.cursors.get(unquote(name))
        if c is None:
            raise QueryError("unknown_cursor", f'cursor "{unquote(name)}" does not exist')
        return c

    def _fetch(self, text: str) -> Result:
        hit = FETCH.match(text)
        if not hit:
            raise QueryError("sql_syntax_error", "cannot read this FETCH / MOVE")
        c = self._cursor(hit.group("name"))
        table = c.result.table
        assert table is not None
        total = table.num_rows
        direction = (hit.group("dir") or "").upper()
        raw = (hit.group("count") or "").upper()
        count = total if raw == "ALL" or direction == "ALL" else int(raw) if raw else 1
        if direction == "ABSOLUTE":
            c.pos = max(0, min(total + 1, count if count >= 0 else total + 1 + count))
            lo, hi = c.pos - 1, c.pos
        elif direction == "RELATIVE":
            c.pos = max(0, min(total + 1, c.pos + count))
            lo, hi = c.pos - 1, c.pos
        elif direction == "FIRST":
            c.pos, lo, hi = 1, 0, 1
        elif direction == "LAST":
            c.pos, lo, hi = total, total - 1, total
        elif direction in ("BACKWARD", "PRIOR"):
            if direction == "PRIOR":
                count = 1
            hi = c.pos - 1
            lo = max(0, hi - count)
            c.pos = lo + 1 if hi > 0 else 0
        else:
            lo = min(c.pos, total)
            hi = min(total, lo + count)
            c.pos = hi if hi - lo == count else total + 1
        lo, hi = max(0, lo), max(0, min(total, hi))
        rows = table.slice(lo, max(0, hi - lo))
        if direction in ("BACKWARD", "PRIOR"):
            rows = rows.take(list(range(rows.num_rows - 1, -1, -1)))
        if hit.group("verb").upper() == "MOVE":
            return Result(f"MOVE {rows.num_rows}")
        return Result(f"FETCH {rows.num_rows}", rows)

    def cursor_columns(self, stmt: Statement) -> pa.Table | None:
        """The empty table a FETCH statement will answer with (for Describe)."""
        hit = FETCH.match(stmt.text)
        if not hit or hit.group("verb").upper() != "FETCH":
            return None
        table = self._cursor(hit.group("name")).result.table
        return None if table is None else table.slice(0, 0)

    # -- extended query protocol -----------------------------------------------------------------
    def _parse(self, payload: bytes) -> None:
        name, query, oids = m.parse_parse(payload)
        stmt = classify(query, self.backend.table_name)
        self.state.prepared[name] = Prepared(query, None if stmt.kind == "empty" else stmt, oids)
        self._send(m.PARSE_COMPLETE)

    def _bind(self, payload: bytes) -> None:
        b = m.parse_bind(payload)
        prep = self.state.prepared.get(b.statement)
        if prep is None:
            raise QueryError(
                "unknown_statement", f'prepared statement "{b.statement}" does not exist'
            )
        n = len(b.params)
        fmts = b.param_formats
        pf = [TEXT] * n if not fmts else [fmts[0]] * n if len(fmts) == 1 else list(fmts)
        oids = list(prep.param_oids) + [0] * (n - len(prep.param_oids))
        if prep.stmt is not None and any(o == 0 for o in oids):
            inferred = self.backend.param_types(prep.stmt, n)
            oids = [o or inferred[i] for i, o in enumerate(oids)]
        values = [decode(v, oids[i], pf[i]) for i, v in enumerate(b.params)]
        _release(self.state.portals.get(b.portal))
        self.state.portals[b.portal] = Portal(prep, values, b.result_formats)
        self._send(m.BIND_COMPLETE)

    async def _describe(self, payload: bytes) -> None:
        r = m.Reader(payload)
        what, name = r.byte(), r.cstring()
        if what == b"S":
            prep = self.state.prepared.get(name)
            if prep is None:
                raise QueryError("unknown_statement", f'prepared statement "{name}" does not exist')
            n = _param_count(prep)
            oids = list(prep.param_oids) + [0] * (n - len(prep.param_oids))
            if prep.stmt is not None and any(o == 0 for o in oids):
                inferred = self.backend.param_types(prep.stmt, n)
                oids = [o or inferred[i] for i, o in enumerate(oids)]
            self._send(m.parameter_description(oids))
            table = await self._columns(prep, [None] * n)
            if table is None:
                self._send(m.NO_DATA)
            else:
                types = [column_type(f.type) for f in table.schema]
                self._send(m.row_description(table.column_names, types, [TEXT] * len(types)))
            return
        portal = self.state.portals.get(name)
        if portal is None:
            cursor = self.state.cursors.get(name)
            if cursor is None:
                raise QueryError("unknown_portal", f'portal "{name}" does not exist')
            table = cursor.result.table
            assert table is not None
            types = [column_type(f.type) for f in table.schema]
            self._send(m.row_description(table.column_names, types, [TEXT] * len(types)))
            return
        table = await self._portal_table(portal)
        if table is None:
            self._send(m.NO_DATA)
            return
        types = [column_type(f.type) for f in table.schema]
        formats = _formats(portal.formats, len(types))
        _check_binary(types, formats)
        self._send(m.row_description(table.column_names, types, formats))

    async def _columns(self, prep: Prepared, params: list[Any]) -> pa.Table | None:
        """The result columns of a prepared statement, before any parameter is bound."""
        stmt = prep.stmt
        if stmt is None:
            return None
        if stmt.kind in ("semantic", "catalog"):
            if prep.described is None:
                prep.described = await self.backend.run(stmt, params, True, CancellationToken())
            return prep.described
        if stmt.kind == "explain":
            return pa.table({"QUERY PLAN": pa.array([], pa.string())})
        if stmt.keyword == "FETCH":
            return self.cursor_columns(stmt)
        if stmt.keyword == "SHOW":
            return self._show(stmt.text).table
        return None

    async def _portal_table(self, portal: Portal) -> pa.Table | None:
        """Run the portal's statement once (Describe may come before Execute)."""
        stmt = portal.prepared.stmt
        if stmt is None:
            return None
        if stmt.kind not in ("semantic", "catalog", "explain") and stmt.keyword not in (
            "FETCH",
            "SHOW",
        ):
            return None
        if portal.result is None:
            portal.result = await self._run(stmt, portal.params)
        return portal.result.table

    async def _execute(self, payload: bytes) -> None:
        r = m.Reader(payload)
        name, limit = r.cstring(), r.int32()
        portal = self.state.portals.get(name)
        if portal is None:
            raise QueryError("unknown_portal", f'portal "{name}" does not exist')
        stmt = portal.prepared.stmt
        if stmt is None:
            self._send(m.EMPTY_QUERY)
            return
        if portal.result is None:
            portal.result = await self._run(stmt, portal.params)
        result = portal.result
        if result.copy is not None:
            await self._copy(result)
            return
        if result.table is None:
            self._send(m.command_complete(result.tag))
            return
        described = portal.prepared.described
        if described is not None and described.schema.types != result.table.schema.types:
            result.table = _conform(result.table, described.schema)
        types = result.types
        formats = _formats(portal.formats, len(types))
        _check_binary(types, formats)
        stop = result.table.num_rows if limit <= 0 else portal.sent + limit
        sent = await self._rows(result, types, formats, portal.sent, stop)
        portal.sent += sent
        if portal.sent < result.table.num_rows:
            self._send(m.PORTAL_SUSPENDED)
            return
        self._send(m.command_complete(result.tag))

    async def _copy(self, result: Result) -> None:
        """COPY (query) TO STDOUT: CopyOutResponse, one CopyData per row, CopyDone."""
        assert result.table is not None and result.copy is not None
        sender = self._sender(result)
        try:
            await sender.copy(result.table, result.types, result.copy)
        finally:
            self._sent(result, sender)
        self._send(m.command_complete(result.tag))

    def _close(self, payload: bytes) -> None:
        r = m.Reader(payload)
        what, name = r.byte(), r.cstring()
        if what == b"S":
            self.state.prepared.pop(name, None)
        else:
            _release(self.state.portals.pop(name, None))
        self._send(m.CLOSE_COMPLETE)


def _release(portal: Portal | None) -> None:
    """Stop the deadline of a portal's answer that will not be sent any further."""
    if portal is not None and portal.result is not None and portal.result.budget is not None:
        portal.result.budget.close()
        portal.result.budget = None


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` in the types a Describe announced (a column's type may differ when the
    filters change which branches a query merges, e.g. a DATE bucket next to a TIMESTAMP)."""
    if table.num_columns != len(schema):
        return table
    cols = [
        c if c.type == f.type else c.cast(f.type, safe=False)
        for c, f in zip(table.columns, schema, strict=True)
    ]
    return pa.Table.from_arrays(cols, names=table.column_names)


def _check_binary(types: list[ColumnType], formats: list[int]) -> None:
    for t, f in zip(types, formats, strict=True):
        if f == BINARY and not can_send_binary(t):
            raise QueryError(
                "sql_unsupported",
                f"binary output of type {t.name} is not supported",
                hint="request this column in text format",
            )


def _param_count(prep: Prepared) -> int:
    found = [int(x) for x in re.findall(r"\$(\d+)", prep.text)]
    return max([len(prep.param_oids), *found]) if found or prep.param_oids else 0
