"""MySQL and MariaDB through a DB-API driver: PyMySQL (`pip install 'dosi[mysql]'`) for a
`mysql://user@host:port/db` URI, or any DB-API connection handed in. A timeout is enforced by
the server (MariaDB `max_statement_time`, MySQL `max_execution_time`); cancel sends
`KILL QUERY` for this connection's thread from a second connection when dosi opened the first."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from dosi.execute.runner import DbApiRunner, require


def parse_mysql_uri(uri: str) -> dict[str, Any]:
    u = urlparse(uri)
    out: dict[str, Any] = {"host": u.hostname or "127.0.0.1", "port": u.port or 3306}
    if u.username:
        out["user"] = unquote(u.username)
    if u.password:
        out["password"] = unquote(u.password)
    if u.path and u.path != "/":
        out["database"] = u.path.lstrip("/")
    return out


class MySQLRunner(DbApiRunner):
    engine = "MySQL"
    dialect = "mysql"
    timeout_markers = ("max_statement_time", "maximum statement execution time")

    def __init__(self, connection: Any, owned: bool, params: dict[str, Any] | None = None) -> None:
        super().__init__(connection, owned)
        self.params = params
        self._mariadb: bool | None = None

    @classmethod
    def connect(cls, uri: str | None, options: dict[str, Any]) -> MySQLRunner:
        pymysql = require("pymysql", "mysql", "MySQL/MariaDB")
        params = parse_mysql_uri(uri or "mysql://127.0.0.1:3306/")
        if options.get("password") is not None:
            params["password"] = options["password"]
        con = pymysql.connect(autocommit=True, **params)
        return cls(con, owned=True, params=params)

    def prepare(self, cursor: Any, timeout_secs: float | None) -> None:
        if self._mariadb is None:
            cursor.execute("SELECT VERSION()")
            self._mariadb = "mariadb" in str(cursor.fetchone()[0]).lower()
        seconds = float(timeout_secs or 0)
        if self._mariadb:
            cursor.execute("SET SESSION max_statement_time = %s", (seconds,))
        else:
            cursor.execute("SET SESSION max_execution_time = %s", (int(seconds * 1000),))

    def send_cancel(self) -> None:
        if self.params is None:
            return
        pymysql = require("pymysql", "mysql", "MySQL/MariaDB")
        thread = int(self.connection.thread_id())
        killer = pymysql.connect(**self.params)
        try:
            with killer.cursor() as cur:
                cur.execute(f"KILL QUERY {thread}")
        finally:
            killer.close()
