"""The served model and its pool of engines, kept current off the request path (issue 29,
items 1, 2 and 5).

A watcher thread, never a request, notices a changed model file and rebuilds the pool; it
also notices a DuckDB file replaced under the server (its identity: device, inode, size and
modification time) and swaps in a new pool whose engines all open the new file, so every
engine of the pool reopens it together. A request leases one engine for its whole life, so
it never sees two model versions or two database files; a lease that finds the file changed
before the watcher did rebuilds the pool first (in the request's worker thread). The watcher
also asks each warehouse profile (a server dosi connects to) whether it answers, on its own
connection, so `/healthz` reports the warehouse's state without holding a query engine.

The pool shares one memory budget: each engine's DuckDB gets `memory_limit = budget / size`
(DuckDB's default is 80% of the machine's memory per instance).
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dosi.engine import Engine, rollups_beside
from dosi.errors import OsiError
from dosi.execute.connections import Connections, Profile, parse_connections
from dosi.execute.engines import open_recovering
from dosi.execute.recovery import Reconnecting
from dosi.execute.result_cache import ResultCache
from dosi.execute.values import json_ready
from dosi.model.loader import read_model_text

#: connection types the watcher probes: servers dosi reaches over the network
PROBED_TYPES = frozenset({"postgres", "mysql", "mariadb", "clickhouse"})
#: states that make the server unhealthy
UNHEALTHY = frozenset({"unavailable", "lost", "missing"})
DEFAULT_POOL_SIZE = 4
DEFAULT_HEALTH_INTERVAL = 2.0
#: a model file changed less than this many seconds ago may still be being written: the
#: watcher waits for it to settle (and for its stamp to hold while the model compiles)
MODEL_SETTLE_SECONDS = 0.2
# seconds between checks of the rollups' refresh schedules (`refresh: {every: ...}`)
ROLLUP_CHECK_SECONDS = 5.0

FileIdentity = tuple[int, int, int, int] | None


def file_identity(path: str | None) -> FileIdentity:
    """(device, inode, size, mtime in ns) of a database file; None when it is missing."""
    if path is None or path in ("", ":memory:"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def machine_memory() -> int | None:
    """The machine's physical memory in bytes, where the platform says."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def default_memory_budget() -> int | None:
    """Half the machine's memory, for all engines of the pool together."""
    total = machine_memory()
    return None if total is None else total // 2


def engine_memory_limit(budget: int | None, size: int) -> str | None:
    """Each engine's DuckDB `memory_limit` from the pool's shared budget (at least 64 MB)."""
    if budget is None:
        return None
    per = max(64, budget // max(1, size) // (1 << 20))
    return f"{per}MB"


class EnginePool:
    """Engines of one model version and one database file identity: each holds its own
    connection, so concurrent requests run side by side instead of queueing on one."""

    def __init__(
        self, first: Engine, build: Callable[[], Engine], size: int, files: dict[str, Any]
    ) -> None:
        self.first = first
        self.files = files
        self._build = build
        self._size = max(1, size)
        self._made = 1
        self._idle: queue.SimpleQueue[Engine] = queue.SimpleQueue()
        self._idle.put(first)
        self._lock = threading.Lock()
        self.retired = False

    @contextlib.contextmanager
    def lease(self) -> Iterator[Engine]:
        """An idle Engine (a new one while fewer than `size` exist), back in the pool after
        (closed instead once the pool is retired)."""
        try:
            engine = self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                grow = self._made < self._size
                if grow:
                    self._made += 1
            engine = self._build() if grow else self._idle.get()
        try:
            yield engine
        finally:
            if self.retired:
                engine.close()
            else:
                self._idle.put(engine)

    def retire(self) -> None:
        """No new leases come here: close the idle engines (leased ones close on return)."""
        self.retired = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


class EngineHolder:
    """The served model, rebuilt when the model file or a DuckDB file changes.

    A model that no longer compiles keeps the old version serving (the failure is visible in
    `last_reload_error`). `check_interval` <= 0 starts no watcher (a caller calls `refresh`).
    Every engine of every version shares one result cache (`results`), cleared on each model
    reload; its keys name the model version, so an in-flight request of the old version never
    answers a new one.
    """

    def __init__(
        self,
        model_path: str | Path,
        connections: Any = None,
        db_path: str | None = None,
        mode: str = "datus",
        check_interval: float = 0.5,
        pool_size: int = DEFAULT_POOL_SIZE,
        *,
        memory_budget: int | None = None,
        health_interval: float = DEFAULT_HEALTH_INTERVAL,
        rollup_interval: float = ROLLUP_CHECK_SECONDS,
    ) -> None:
        self.model_path = Path(model_path)
        self.connections: Connections = parse_connections(connections)
        self.db_path = db_path
        self.mode = mode
        self.check_interval = check_interval
        self.pool_size = pool_size
        self.memory_limit = engine_memory_limit(memory_budget, pool_size)
        self.health_interval = health_interval
        self.rollup_interval = rollup_interval
        self.rollup_refreshes = 0
        self.last_rollup_error: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self.results = ResultCache()
        self._stamp = self._model_stamp()
        self.pool = self._build_pool()  # a missing or broken model fails here (ModelError)
        self.last_reload_error: dict[str, Any] | None = None
        self.reloads = 0
        self.file_reopens = 0
        self._probes: dict[str, Reconnecting] = {
            p.name: open_recovering(p)
            for p in self.connections.profiles.values()
            if p.type in PROBED_TYPES and p.client is None
        }
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        if check_interval > 0:
            self._watcher = threading.Thread(
                target=self._watch, name="dosi-model-watcher", daemon=True
            )
            self._watcher.start()

    # -- what is watched -------------------------------------------------------------------
    def _model_stamp(self) -> tuple[float, int] | None:
        try:
            st = self.model_path.stat()
        except OSError:
            return None
        return (st.st_mtime, st.st_size)

    def database_files(self) -> dict[str, str]:
        """name -> DuckDB file the served queries read: `--db` (named `db`) and every DuckDB
        profile with a file."""
        out = {n: p for n, p in self.connections.duckdb.items() if p != ":memory:"}
        if self.db_path is not None:
            out["db"] = self.db_path
        return out

    def _identities(self) -> dict[str, FileIdentity]:
        return {name: file_identity(path) for name, path in self.database_files().items()}

    def _build_pool(self) -> EnginePool:
        text = read_model_text(self.model_path)
        files = self._identities()

        def build() -> Engine:
            return Engine(
                model_text=text,
                connections=self.connections,
                mode=self.mode,
                memory_limit=self.memory_limit,
                result_cache=self.results,
                rollups=rollups_beside(self.model_path),
            )

        return EnginePool(build(), build, self.pool_size, files)

    # -- keeping current (the watcher thread, or a lease that found a changed file) ---------
    def refresh(self) -> None:
        """Rebuild the pool if the model file or a database file changed since it was built."""
        with self._lock:
            stamp = self._model_stamp()
            model_changed = stamp is not None and stamp != self._stamp
            files_changed = self._identities() != self.pool.files
            if not (model_changed or files_changed):
                return
            if (
                model_changed
                and stamp is not None
                and time.time() - stamp[0] < MODEL_SETTLE_SECONDS
            ):
                return  # maybe half written: the next tick reads it whole
            old = self.pool
            try:
                new = self._build_pool()
                if model_changed and self._model_stamp() != stamp:
                    new.retire()  # rewritten while it compiled: the next tick reads it again
                    return
            except OsiError as err:
                if model_changed:
                    self._stamp = stamp
                    self.last_reload_error = json_ready(_error_dict(err))
                return
            self.pool = new
            if model_changed:
                self._stamp = stamp
                self.results.clear()
                self.reloads += 1
                self.last_reload_error = None
            if files_changed:
                self.file_reopens += 1
            old.retire()

    def _watch(self) -> None:
        next_probe = next_rollups = 0.0
        while not self._stop.wait(self.check_interval):
            try:
                self.refresh()
            except Exception as exc:  # the watcher never dies; the failure is reported
                self.last_reload_error = {"code": "internal", "message": type(exc).__name__}
            if time.monotonic() >= next_probe:
                self.probe()
                next_probe = time.monotonic() + self.health_interval
            if time.monotonic() >= next_rollups:
                self.refresh_rollups()
                next_rollups = time.monotonic() + self.rollup_interval

    def refresh_rollups(self) -> list[str]:
        """Run the rollups' scheduled refreshes (`refresh: {every: ...}`) on the served
        connection; a failure is kept in `last_rollup_error` (and /healthz), never raised."""
        engine = self.pool.first
        if not any(r.refresh.every is not None for r in engine.rollups):
            return []
        try:
            done = engine.rollups_scheduled(db_path=self.db_path)
        except OsiError as err:
            self.last_rollup_error = json_ready(_error_dict(err))
            return []
        except Exception as exc:  # the watcher never dies; the failure is reported
            self.last_rollup_error = {"code": "internal", "message": type(exc).__name__}
            return []
        if done:
            self.rollup_refreshes += 1
            self.last_rollup_error = None
        return done

    def probe(self) -> None:
        """Ask each warehouse profile whether it answers (on the watcher's own connection)."""
        for runner in self._probes.values():
            runner.ping()

    def close(self) -> None:
        self._stop.set()
        for runner in self._probes.values():
            runner.close()

    # -- what requests use -------------------------------------------------------------------
    def current_pool(self) -> EnginePool:
        """The current pool: no file is read and nothing is built here (the event loop calls
        it); the watcher keeps it current."""
        return self.pool

    def current(self) -> Engine:
        """The current version's first Engine (catalog answers; MCP's one client)."""
        return self.pool.first

    def lease(self) -> contextlib.AbstractContextManager[Engine]:
        """An engine of the current pool, for one request's whole life (call it in a worker
        thread: a database file replaced since the pool was built is reopened first)."""
        if self.database_files() and self._identities() != self.pool.files:
            self.refresh()
        return self.pool.lease()

    def health(self) -> dict[str, Any]:
        """`{"ok", "connections": {name: {type, state, ...}}}` without uri, path or secret:
        DuckDB files ok or missing (and how often they were reopened), warehouse profiles as
        the last probe found them."""
        conns: dict[str, dict[str, Any]] = {}
        for name, identity in self._identities().items():
            conns[name] = {
                "type": "duckdb",
                "state": "missing" if identity is None else "ok",
                "reopens": self.file_reopens,
            }
        for name, runner in self._probes.items():
            conns[name] = runner.health()
        for name, profile in self.connections.profiles.items():
            conns.setdefault(name, {"type": profile.type, "state": _unprobed(profile)})
        ok = not any(c["state"] in UNHEALTHY for c in conns.values())
        out: dict[str, Any] = {"ok": ok, "connections": conns}
        if self.rollup_refreshes or self.last_rollup_error is not None:
            out["rollups"] = {
                "scheduled_refreshes": self.rollup_refreshes,
                "last_error": self.last_rollup_error,
            }
        return out


def _unprobed(profile: Profile) -> str:
    """The state of a profile the watcher does not probe (embedded engines, client objects,
    compile-only warehouses)."""
    return "not_checked" if profile.executable else "compile_only"


def _error_dict(err: OsiError) -> dict[str, Any]:
    out = err.to_dict()
    for key in ("candidates", "hint", "suggested_retry"):
        out.setdefault(key, None)
    if out["candidates"] is None:
        out["candidates"] = []
    return out
