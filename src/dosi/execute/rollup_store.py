"""Where built rollups live (issue 28 items 1 and 3): one embedded DuckDB file holding a
table per rollup and a `dosi_rollup_meta` row per table (its declaration's signature, the
data version it was built from, when, how many rows).

Writes never touch the live file: a build or refresh writes a new file beside it (the kept
tables copied over, the rebuilt ones filled from the warehouse) and swaps it in with one
`os.replace`. A query's connection has the old file or the new one attached, never a file
being written, so it sees the old rollup or the new one, never a mix; the engine reopens its
connection when the file's stamp changes. Builds of one store are serialised (a thread lock
and a lock file)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import threading
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from dosi.errors import ExecuteError
from dosi.execute.data_version import path_stamps

try:  # POSIX: the lock file also serialises builds of other processes
    import fcntl
except ImportError:  # pragma: no cover - elsewhere only this process's builds are serialised
    fcntl = None  # type: ignore[assignment]

#: the catalog name the store is attached under on a query's connection
STORE_ALIAS = "dosi_rollups"
META = "dosi_rollup_meta"
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


@dataclass(frozen=True)
class BuiltRollup:
    name: str
    signature: str
    source_version: str
    built_at: str
    rows: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "signature": self.signature,
            "built_at": self.built_at,
            "rows": self.rows,
        }


@dataclass(frozen=True)
class RollupBuild:
    """One table to (re)build: its name, the SELECT that fills it (warehouse dialect text
    rendered by dosi.sql.rollup_build) and the declaration signature it stores."""

    name: str
    sql: str
    signature: str
    # incremental refresh: the predicate (DuckDB SQL over the stored columns) of the old
    # rows kept as they are; `sql` then fills only the rest (None: a full rebuild)
    keep_rows: str | None = None
    # the data version it is built from (None: the version `write` is given for all)
    source_version: str | None = None
    # the rows, already computed by another engine (then `sql` is not run here)
    rows: pa.Table | None = None


def _ident(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql("duckdb")


def _literal(text: str) -> str:
    return exp.Literal.string(text).sql("duckdb")


class RollupStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._status: tuple[Any, dict[str, BuiltRollup]] | None = None

    def stamp(self) -> Any:
        """The file's version (path, size, mtime_ns, inode), as the engine stamps runners."""
        return path_stamps(str(self.path))

    def status(self) -> dict[str, BuiltRollup]:
        return self.versioned_status()[1]

    def versioned_status(self) -> tuple[Any, dict[str, BuiltRollup]]:
        """(the file's stamp, the built rollups in that very version), read once per version:
        a swap while reading is seen and the read repeated."""
        for _ in range(5):
            stamp = self.stamp()
            found = self._read(stamp)
            if self.stamp() == stamp:
                return stamp, found
        raise ExecuteError("rollup_store_busy", "the rollup store kept changing while read")

    def _read(self, stamp: Any) -> dict[str, BuiltRollup]:
        if not self.path.is_file():
            return {}
        cached = self._status
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            con = duckdb.connect(str(self.path), read_only=True)
        except duckdb.Error:  # swapped away between the stat and the open: read again
            return {}
        try:
            rows = con.execute(
                f"SELECT name, signature, source_version, CAST(built_at AS VARCHAR), row_count "
                f"FROM main.{META}"
            ).fetchall()
        except duckdb.Error:
            rows = []
        finally:
            con.close()
        out = {r[0]: BuiltRollup(r[0], r[1], r[2], r[3], int(r[4])) for r in rows}
        self._status = (stamp, out)
        return out

    def write(
        self,
        warehouse: str | None,
        builds: Sequence[RollupBuild],
        source_version: str,
        keep: Sequence[str],
    ) -> dict[str, BuiltRollup]:
        """A new store holding `keep` (copied as they are) and `builds` (filled now from the
        `warehouse` DuckDB file), swapped in atomically. Returns the new status."""
        with self._locked():
            old = self.status()
            tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.tmp")
            con = duckdb.connect(":memory:")
            try:
                con.execute(f"ATTACH {_literal(str(tmp))} AS dosi_new")
                con.execute(
                    f"CREATE TABLE dosi_new.main.{META} (name VARCHAR, signature VARCHAR, "
                    "source_version VARCHAR, built_at TIMESTAMP, row_count BIGINT)"
                )
                kept = [k for k in keep if k in old and k not in {b.name for b in builds}]
                partial = [b for b in builds if b.keep_rows is not None]
                if kept or partial:
                    con.execute(f"ATTACH {_literal(str(self.path))} AS dosi_old (READ_ONLY)")
                    for name in kept:
                        con.execute(
                            f"CREATE TABLE dosi_new.main.{_ident(name)} AS "
                            f"SELECT * FROM dosi_old.main.{_ident(name)}"
                        )
                        con.execute(
                            f"INSERT INTO dosi_new.main.{META} SELECT * FROM "
                            f"dosi_old.main.{META} WHERE name = ?",
                            [name],
                        )
                if builds:
                    if warehouse not in (None, "", ":memory:"):
                        stem = _ident(Path(str(warehouse)).stem or "db")
                        con.execute(f"ATTACH {_literal(str(warehouse))} AS {stem} (READ_ONLY)")
                        con.execute(f"USE {stem}")
                    for b in builds:
                        fill = b.sql
                        if b.rows is not None:
                            con.register("dosi_fill", b.rows)
                            fill = "SELECT * FROM dosi_fill"
                        if b.keep_rows is not None:
                            fill = (
                                f"SELECT * FROM dosi_old.main.{_ident(b.name)} WHERE "
                                f"{b.keep_rows} UNION ALL BY NAME {b.sql}"
                            )
                        con.execute(f"CREATE TABLE dosi_new.main.{_ident(b.name)} AS {fill}")
                        if b.rows is not None:
                            con.unregister("dosi_fill")
                        count = con.execute(
                            f"SELECT count(*) FROM dosi_new.main.{_ident(b.name)}"
                        ).fetchone()
                        con.execute(
                            f"INSERT INTO dosi_new.main.{META} VALUES (?, ?, ?, ?, ?)",
                            [
                                b.name,
                                b.signature,
                                b.source_version or source_version,
                                dt.datetime.now(dt.UTC).replace(tzinfo=None),
                                count[0] if count else 0,
                            ],
                        )
                con.execute("USE memory")
                if kept or partial:
                    con.execute("DETACH dosi_old")
                con.execute("CHECKPOINT dosi_new")  # everything in the file, no WAL left
                con.execute("DETACH dosi_new")
            except duckdb.Error as exc:
                con.close()
                with contextlib.suppress(OSError):
                    tmp.unlink()
                raise ExecuteError(
                    "rollup_build_failed",
                    f"building rollups failed: {str(exc).splitlines()[0][:300]}",
                    hint="check the rollup declarations against the warehouse "
                    "(dosi validate --sources)",
                ) from None
            con.close()
            if Path(f"{tmp}.wal").exists():  # a WAL would not move with the file: no swap
                raise ExecuteError("rollup_build_failed", "the new rollup store kept a WAL")
            os.replace(tmp, self.path)  # the swap: readers see the old file or this one
            return self.status()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        key = str(self.path.resolve())
        with _LOCKS_LOCK:
            lock = _LOCKS.setdefault(key, threading.Lock())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with lock, open(self.path.with_name(f".{self.path.name}.lock"), "w") as fh:
            if fcntl is not None:
                fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(fh, fcntl.LOCK_UN)
