"""Rollups stored in the warehouse itself (issue 28 items 1 and 3): a table per rollup in a
declared schema, and a `dosi_rollup_meta` table saying what each was built from.

A build fills a new table under a name of its own (`<rollup>__new_<hex>`) outside any
transaction, then swaps it in one transaction: drop the old table, rename the new one, replace
its meta row. The warehouse's DDL is transactional (the dialect says so), so a query sees the
old table or the new one whole, never a half-written one; a query already reading the old
table holds its lock and finishes on it before the drop goes through. Builds of one store in
this process are serialised; two processes building at once each swap a complete table.
Values are rendered as SQL literals by sqlglot, names are checked identifiers, quoted."""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from sqlglot import exp

from dosi.errors import ExecuteError
from dosi.execute.rollup_store import META, BuiltRollup, RollupBuild

_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()
_TIMESTAMP = exp.DataType.build("TIMESTAMP")


class WarehouseRollupStore:
    """The rollup tables of one warehouse schema (`storage: {schema: NAME}`)."""

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self._seen_meta = False

    @property
    def path(self) -> str:
        return f"schema {self.schema}"

    def table(self, name: str) -> exp.Table:
        return exp.Table(
            this=exp.to_identifier(name, quoted=True),
            db=exp.to_identifier(self.schema, quoted=True),
        )

    def _name(self, name: str, dialect: str) -> str:
        return self.table(name).sql(dialect=dialect)

    def status(self, run: Callable[[str], pa.Table], dialect: str) -> dict[str, BuiltRollup]:
        """The built rollups, read with `run` (a query on the warehouse connection)."""
        if not self._seen_meta:
            probe = (
                exp.select(exp.Count(this=exp.Star()))
                .from_(exp.table_("tables", db="information_schema"))
                .where(
                    exp.and_(
                        exp.column("table_schema").eq(exp.Literal.string(self.schema)),
                        exp.column("table_name").eq(exp.Literal.string(META)),
                    )
                )
            )
            found = run(probe.sql(dialect=dialect)).column(0).to_pylist()
            if not found or not found[0]:
                return {}
            self._seen_meta = True
        table = run(
            "SELECT name, signature, source_version, CAST(built_at AS VARCHAR), row_count "
            f"FROM {self._name(META, dialect)}"
        )
        out = {}
        for row in table.to_pylist():
            name, signature, version, built_at, rows = row.values()
            out[name] = BuiltRollup(name, signature, version, built_at, int(rows))
        return out

    def write(
        self, con: Any, dialect: str, builds: Sequence[RollupBuild], drop: Sequence[str] = ()
    ) -> None:
        """Fill each build's new table, then swap them all in (and drop `drop`) in one
        transaction on the DB-API connection `con` (autocommit: dosi opens the transaction)."""
        with self._locked():
            cur = con.cursor()
            fresh: list[tuple[RollupBuild, str, int]] = []
            try:
                self._ensure(cur, dialect)
                for b in builds:
                    tmp = f"{b.name}__new_{uuid.uuid4().hex[:10]}"
                    fill = b.sql
                    if b.keep_rows is not None:
                        fill = (
                            f"SELECT * FROM {self._name(b.name, dialect)} WHERE {b.keep_rows} "
                            f"UNION ALL {b.sql}"
                        )
                    cur.execute(f"CREATE TABLE {self._name(tmp, dialect)} AS {fill}")
                    cur.execute(f"SELECT count(*) FROM {self._name(tmp, dialect)}")
                    fresh.append((b, tmp, int(cur.fetchone()[0])))
                now = dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(sep=" ")
                cur.execute("BEGIN")
                cur.execute(f"LOCK TABLE {self._name(META, dialect)} IN EXCLUSIVE MODE")
                for b, tmp, rows in fresh:
                    cur.execute(f"DROP TABLE IF EXISTS {self._name(b.name, dialect)}")
                    new = exp.to_identifier(b.name, quoted=True).sql(dialect=dialect)
                    cur.execute(f"ALTER TABLE {self._name(tmp, dialect)} RENAME TO {new}")
                    self._forget(cur, dialect, b.name)
                    values = ", ".join(
                        v.sql(dialect=dialect)
                        for v in (
                            exp.Literal.string(b.name),
                            exp.Literal.string(b.signature),
                            exp.Literal.string(b.source_version or ""),
                            exp.cast(exp.Literal.string(now), _TIMESTAMP.copy()),
                            exp.Literal.number(rows),
                        )
                    )
                    cur.execute(f"INSERT INTO {self._name(META, dialect)} VALUES ({values})")
                for name in drop:
                    cur.execute(f"DROP TABLE IF EXISTS {self._name(name, dialect)}")
                    self._forget(cur, dialect, name)
                cur.execute("COMMIT")
            except Exception as exc:
                with contextlib.suppress(Exception):
                    cur.execute("ROLLBACK")
                for _, tmp, _ in fresh:
                    with contextlib.suppress(Exception):
                        cur.execute(f"DROP TABLE IF EXISTS {self._name(tmp, dialect)}")
                raise ExecuteError(
                    "rollup_build_failed",
                    f"building rollups in schema {self.schema} failed: "
                    f"{str(exc).splitlines()[0][:300]}",
                    hint="check the rollup declarations against the warehouse "
                    "(dosi validate --sources) and that the connection may create tables in "
                    "the schema",
                ) from None
            finally:
                with contextlib.suppress(Exception):
                    cur.close()

    def _ensure(self, cur: Any, dialect: str) -> None:
        schema = exp.to_identifier(self.schema, quoted=True).sql(dialect=dialect)
        cur.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {self._name(META, dialect)} (name VARCHAR(200), "
            "signature VARCHAR(200), source_version TEXT, built_at TIMESTAMP, row_count BIGINT)"
        )
        self._seen_meta = True

    def _forget(self, cur: Any, dialect: str, name: str) -> None:
        lit = exp.Literal.string(name).sql(dialect=dialect)
        cur.execute(f"DELETE FROM {self._name(META, dialect)} WHERE name = {lit}")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with _LOCKS_LOCK:
            lock = _LOCKS.setdefault(self.schema, threading.Lock())
        with lock:
            yield
