"""ClickHouse: embedded chDB (`pip install 'dosi[chdb]'`; `uri` a session folder or empty for a
temporary one) or a server through clickhouse-connect (`pip install 'dosi[clickhouse]'`;
`uri` `clickhouse://user@host:8123/db`). Every query carries `join_use_nulls = 1` in its SQL
(dosi.sql.dialects.clickhouse). Timeouts are ClickHouse's own `max_execution_time` (the server
or the embedded engine stops the query and raises TIMEOUT_EXCEEDED).

chDB embeds a known ClickHouse release (`chdb.engine_version`), so its SQL is rendered for that
version (`engine_version`: version-gated window functions such as `cume_dist`); a server's
version is a connection option (`server_version`), since it is known only once connected."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa

from dosi.execute.runner import Deadline, failure, require


def engine_version() -> str | None:
    """The ClickHouse release the installed chDB embeds (e.g. "26.9.2.1"), None without chDB
    or when the package does not say."""
    if importlib.util.find_spec("chdb") is None:
        return None
    version = getattr(importlib.import_module("chdb"), "engine_version", None)
    return str(version) if isinstance(version, str) and version else None


class ChdbRunner:
    """An embedded chDB session (chdb.session.Session)."""

    engine = "chDB"
    dialect = "clickhouse"

    def __init__(self, session: Any, owned: bool) -> None:
        self.session = session
        self.owned = owned

    @classmethod
    def connect(cls, uri: str | None, options: dict[str, Any]) -> ChdbRunner:
        session_mod = require("chdb.session", "chdb", "chDB")
        path = uri or ""
        for prefix in ("chdb:///", "chdb://"):
            if path.startswith(prefix):
                path = path[len(prefix) :]
        return cls(session_mod.Session(path) if path else session_mod.Session(), owned=True)

    def run(self, sql: str, timeout_secs: float | None = None) -> pa.Table:
        limit = float(timeout_secs or 0)
        try:
            if limit:
                self.session.query(f"SET max_execution_time = {limit}")
            table = self.session.query(sql, "ArrowTable")
        except Exception as exc:
            expired = limit > 0 and "TIMEOUT_EXCEEDED" in str(exc)
            raise failure(self.engine, exc, sql, _expired(expired), timeout_secs) from None
        finally:
            if limit:
                self.session.query("SET max_execution_time = 0")
        return table

    def cancel(self) -> None:
        """chDB runs the query on the calling thread and has no interrupt; a timeout is the
        way to bound it."""

    def close(self) -> None:
        if self.owned:
            self.session.close()


class ClickHouseRunner:
    """A ClickHouse server through clickhouse-connect (HTTP)."""

    engine = "ClickHouse"
    dialect = "clickhouse"

    def __init__(self, client: Any, owned: bool) -> None:
        self.client = client
        self.owned = owned

    @classmethod
    def connect(cls, uri: str | None, options: dict[str, Any]) -> ClickHouseRunner:
        cc = require("clickhouse_connect", "clickhouse", "ClickHouse")
        u = urlparse(uri or "clickhouse://127.0.0.1:8123/")
        kwargs: dict[str, Any] = {"host": u.hostname or "127.0.0.1", "port": u.port or 8123}
        if u.username:
            kwargs["username"] = unquote(u.username)
        password = options.get("password") or (unquote(u.password) if u.password else None)
        if password is not None:
            kwargs["password"] = password
        if u.path and u.path != "/":
            kwargs["database"] = u.path.lstrip("/")
        kwargs["secure"] = u.scheme in ("clickhouses", "https")
        return cls(cc.get_client(**kwargs), owned=True)

    def run(self, sql: str, timeout_secs: float | None = None) -> pa.Table:
        settings: dict[str, Any] = {"join_use_nulls": 1}
        if timeout_secs:
            settings["max_execution_time"] = timeout_secs
        try:
            return self.client.query_arrow(sql, settings=settings)
        except Exception as exc:
            expired = bool(timeout_secs) and "TIMEOUT_EXCEEDED" in str(exc)
            raise failure(self.engine, exc, sql, _expired(expired), timeout_secs) from None

    def cancel(self) -> None:
        """The server enforces max_execution_time; there is no client-side interrupt."""

    def close(self) -> None:
        if self.owned:
            self.client.close()


def _expired(flag: bool) -> Deadline:
    d = Deadline(None, lambda: None)
    if flag:
        d.expired.set()
    return d
