"""SQLite through the standard library's sqlite3. A `uri` is a database file (or `:memory:`);
cancel is `Connection.interrupt()`, which SQLite checks between steps of the statement."""

from __future__ import annotations

import sqlite3
from typing import Any

from dosi.execute.runner import DbApiRunner


class SQLiteRunner(DbApiRunner):
    engine = "SQLite"
    dialect = "sqlite"

    @classmethod
    def connect(cls, uri: str | None, options: dict[str, Any]) -> SQLiteRunner:
        path = uri or ":memory:"
        for prefix in ("sqlite:///", "sqlite://"):
            if path.startswith(prefix):
                path = path[len(prefix) :] or ":memory:"
        con = sqlite3.connect(path, check_same_thread=False)
        return cls(con, owned=True)

    def send_cancel(self) -> None:
        self.connection.interrupt()
