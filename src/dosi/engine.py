"""`dosi.Engine`: the public Python API (compatible with the reference engine's).

Load once, then compile / explain / execute many queries; compiled plans are cached on the
normalized query, so a repeated query costs a dictionary lookup.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pyarrow as pa

from dosi.catalog import Catalog
from dosi.compiler.model_compiler import compile_model_text
from dosi.errors import ArgumentError, Diagnostic, OsiError, QueryError, bounded
from dosi.execute.connections import check_dialect, parse_connections
from dosi.execute.duckdb_runner import arrow_rows, open_duckdb, run_sql
from dosi.execute.options import (
    DEFAULT_QUERY_TIMEOUT,
    ExecOptions,
    check_memory_limit,
    check_timeout,
)
from dosi.model.loader import read_model_text
from dosi.pipeline import CompiledQuery, compile_query
from dosi.plan.joins import JoinGraph
from dosi.query.bounds import check_query_bounds

_CACHE_SIZE = 512

#: `execute(timeout_secs=...)` not given: use the engine's `query_timeout`.
ENGINE_DEFAULT: object = object()


class QueryResult(dict):  # type: ignore[type-arg]
    """The result dict ({dialect, sql, outputs, warnings, requested_columns, columns, rows,
    row_count}) that also carries the Arrow table."""

    def __init__(self, data: dict[str, Any], table: pa.Table) -> None:
        super().__init__(data)
        self._table = table

    @property
    def arrow(self) -> pa.Table:
        return self._table

    def to_arrow(self) -> pa.Table:
        return self._table


class Engine:
    """A compiled semantic model, ready to answer metric queries."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        model_text: str | None = None,
        connections: dict[str, Any] | None = None,
        mode: str = "datus",
        pool_size: int = 8,
        *,
        trust_sql: bool = False,
        query_timeout: float | None = DEFAULT_QUERY_TIMEOUT,
        memory_limit: str | None = None,
        allow_extensions: bool = False,
    ) -> None:
        """`trust_sql=True` lets model SQL read files and settings or write (README, "Running
        untrusted queries"); `query_timeout` (seconds, None for none) and `memory_limit` bound
        every execution; `allow_extensions=True` lifts the DuckDB lockdown on extensions and
        external access."""
        if mode not in ("datus", "basic"):
            raise ArgumentError(f'mode must be "datus" or "basic", got {bounded(mode)}')
        if model_path is None and model_text is None:
            raise ArgumentError("pass a model: model_path or model_text")
        if model_path is not None and model_text is not None:
            raise ArgumentError("pass at most one of model_path or model_text")
        if model_path is not None and not isinstance(model_path, (str, Path)):
            raise ArgumentError(f"model_path must be a path, got {type(model_path).__name__}")
        if model_text is not None and not isinstance(model_text, str):
            raise ArgumentError(f"model_text must be a string, got {type(model_text).__name__}")
        text = read_model_text(model_path) if model_path is not None else model_text
        assert text is not None
        self.mode = mode
        self.trust_sql = bool(trust_sql)
        self.options = ExecOptions(
            query_timeout=check_timeout(query_timeout),
            memory_limit=check_memory_limit(memory_limit),
            allow_extensions=bool(allow_extensions),
        )
        self.model = compile_model_text(text, mode, trust_sql=self.trust_sql)
        self.graph = JoinGraph(self.model)
        self.catalog = Catalog(self.model, self.graph)
        self.connections = parse_connections(connections)
        self._cache: OrderedDict[str, CompiledQuery] = OrderedDict()
        self._lock = threading.Lock()
        self._cons: dict[str, Any] = {}
        self._con_lock = threading.Lock()

    # -- catalog -------------------------------------------------------------------------------
    @property
    def warnings(self) -> list[dict[str, Any]]:
        return [d.to_dict() for d in self.model.warnings]

    def metrics(self) -> list[dict[str, Any]]:
        return self.catalog.metrics()

    def metric(self, name: str) -> dict[str, Any]:
        return self.catalog.metric(_name_arg(name, "name"))

    def datasets(self) -> list[dict[str, Any]]:
        return self.catalog.datasets()

    def dataset(self, name: str) -> dict[str, Any]:
        return self.catalog.dataset(_name_arg(name, "name"))

    def dimensions(self, metric: str | None = None) -> list[dict[str, Any]]:
        return self.catalog.dimensions(None if metric is None else _name_arg(metric, "metric"))

    # -- compile ----------------------------------------------------------------------------------
    def _compiled(self, query: Any, dialect: str | None, pretty: bool) -> CompiledQuery:
        check_query_bounds(query)
        if dialect is not None and not isinstance(dialect, str):
            raise ArgumentError(f"dialect must be a name, got {type(dialect).__name__}")
        key = _cache_key(query, dialect, pretty)
        if key is not None:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        try:
            compiled = compile_query(self.model, self.graph, query, dialect, pretty)
        except OsiError:
            raise
        except RecursionError:  # a backstop: inputs are bounded before they reach a parser
            raise QueryError(
                "query_too_complex",
                "the query nests too deeply to compile",
                hint='simplify the query (see the README, "Limits")',
            ) from None
        except Exception as exc:
            raise QueryError(
                "internal",
                f"the engine failed to compile this query ({type(exc).__name__}: {exc})",
                hint="this is a bug in dosi; please report it with the query and model",
            ) from exc
        if key is not None:
            with self._lock:
                self._cache[key] = compiled
                if len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return compiled

    def compile(
        self, query: Any, dialect: str | None = "duckdb", pretty: bool = False
    ) -> dict[str, Any]:
        c = self._compiled(query, dialect, pretty)
        return {
            "dialect": c.dialect.name,
            "sql": c.sql,
            "outputs": c.outputs(),
            "warnings": self._warnings(c),
            "requested_columns": c.requested_columns(),
        }

    def explain(self, query: Any) -> str:
        c = self._compiled(query, None, False)
        return c.plan.explain()

    def _warnings(self, c: CompiledQuery) -> list[dict[str, Any]]:
        return [d.to_dict() for d in (*self.model.warnings, *c.warnings)]

    # -- execute ----------------------------------------------------------------------------------
    def execute(
        self,
        query: Any,
        dialect: str | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
    ) -> QueryResult:
        """Run a query; `timeout_secs` overrides the engine's `query_timeout` (None: no limit)."""
        timeout = (
            self.options.query_timeout
            if timeout_secs is ENGINE_DEFAULT
            else check_timeout(timeout_secs, "timeout_secs")
        )
        c = self._compiled(query, dialect, False)
        path = self._resolve_path(connection, db_path)
        if dialect is not None:
            check_dialect(c.dialect.name, connection)
        table = self._run(path, c.sql, timeout)
        table = _with_metadata(table, c)
        data = {
            "dialect": c.dialect.name,
            "sql": c.sql,
            "outputs": c.outputs(),
            "warnings": self._warnings(c),
            "requested_columns": c.requested_columns(),
            "columns": list(table.column_names),
            "rows": arrow_rows(table),
            "row_count": table.num_rows,
        }
        return QueryResult(data, table)

    def execute_arrow(
        self,
        query: Any,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
    ) -> pa.Table:
        """The result as a pyarrow Table (metric columns carry `dosi.metric` metadata)."""
        return self.execute(query, None, connection, timeout_secs, db_path).arrow

    def _resolve_path(self, connection: str | None, db_path: str | Path | None) -> str | None:
        if db_path is not None:
            if not isinstance(db_path, (str, Path)) or "\x00" in str(db_path):
                raise ArgumentError(f"db_path must be a file path, got {bounded(db_path)}")
            return str(db_path)
        if connection is not None and not isinstance(connection, str):
            raise ArgumentError(f"connection must be a name, got {bounded(connection)}")
        return self.connections.path_for(connection)

    def _run(self, path: str | None, sql: str, timeout_secs: float | None) -> pa.Table:
        key = path or ":memory:"
        with self._con_lock:
            con = self._cons.get(key)
            if con is None:
                con = self._cons[key] = open_duckdb(path, options=self.options)
            return run_sql(con, sql, timeout_secs)

    def close(self) -> None:
        with self._con_lock:
            for con in self._cons.values():
                con.close()
            self._cons.clear()


def _name_arg(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ArgumentError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _cache_key(query: Any, dialect: str | None, pretty: bool) -> str | None:
    try:
        body = query if isinstance(query, str) else json.dumps(query, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return None
    return f"{(dialect or 'duckdb').lower()}|{int(pretty)}|{body}"


def _with_metadata(table: pa.Table, c: CompiledQuery) -> pa.Table:
    """Arrow field metadata names the metric behind each metric column (dosi.metric)."""
    metrics = {m.name for m in c.resolved.metrics}
    fields = []
    for f in table.schema:
        if f.name in metrics:
            f = f.with_metadata({"dosi.metric": f.name, "dosi.params": "{}"})
        fields.append(f)
    return table.cast(pa.schema(fields)) if metrics else table


def validate(model_text: str, mode: str = "datus", trust_sql: bool = False) -> dict[str, Any]:
    """Validate a model without raising: {valid, version, issues, compile_errors, warnings};
    `version` is the Ossie version the document was written in (a 0.1.1 document is read
    and upgraded in memory). For an invalid model, `stage` is the ModelError code."""
    from dosi.errors import ModelError

    if not isinstance(model_text, str):
        raise ArgumentError(f"model_text must be a string, got {type(model_text).__name__}")
    try:
        model = compile_model_text(model_text, mode, trust_sql=trust_sql)
    except ModelError as err:
        return {
            "valid": False,
            "stage": err.code,
            "issues": [d.to_dict() for d in err.issues],
            "compile_errors": err.compile_errors,
            "warnings": [d.to_dict() for d in err.warnings],
        }
    return {
        "valid": True,
        "version": model.source_version,
        "issues": [],
        "compile_errors": [],
        "warnings": [d.to_dict() for d in model.warnings],
    }


__all__ = ["Diagnostic", "Engine", "QueryResult", "validate"]
