"""PostgreSQL through psycopg 3 (`pip install 'dosi[postgres]'`). Autocommit, so a failed query
leaves no aborted transaction; cancel sends PostgreSQL's cancel request for the running query
(the server stops it at its next interrupt check)."""

from __future__ import annotations

from typing import Any

from dosi.execute.runner import DbApiRunner, require


class PostgresRunner(DbApiRunner):
    engine = "PostgreSQL"
    dialect = "postgres"
    #: the server's own `statement_timeout` (set by an administrator or a role)
    timeout_markers = ("canceling statement due to statement timeout",)

    @classmethod
    def connect(cls, uri: str | None, options: dict[str, Any]) -> PostgresRunner:
        psycopg = require("psycopg", "postgres", "PostgreSQL")
        kwargs: dict[str, Any] = {"autocommit": True}
        if options.get("password") is not None:
            kwargs["password"] = options["password"]
        con = psycopg.connect(uri or "", **kwargs)
        return cls(con, owned=True)

    def send_cancel(self) -> None:
        # cancel_safe blocks until the server took the request (libpq's PQcancelBlocking)
        cancel = getattr(self.connection, "cancel_safe", None) or self.connection.cancel
        cancel()
