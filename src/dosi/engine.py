"""`dosi.Engine`: the public Python API (compatible with the reference engine's).

Load once, then compile / explain / execute many queries; compiled plans are cached on the
normalized query, so a repeated query costs a dictionary lookup.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from dosi.analysis.attribution import (
    attribution_result,
    candidate_dimensions,
    parse_request,
    plan_attribution,
)
from dosi.analysis.lineage import lineage_graph, lineage_text
from dosi.analysis.source_check import check_sources
from dosi.catalog.views import Catalog
from dosi.compiler.collector import engine_gone, freeze_model
from dosi.compiler.model_compiler import compile_model_text
from dosi.errors import ArgumentError, Diagnostic, ModelError, OsiError, QueryError, bounded
from dosi.execute.cancel import CancellationToken, run_cancellable
from dosi.execute.connections import Profile, check_dialect, parse_connections
from dosi.execute.engines import open_runner
from dosi.execute.frames import pandas_frame, polars_frame
from dosi.execute.options import (
    DEFAULT_QUERY_TIMEOUT,
    ExecOptions,
    check_memory_limit,
    check_timeout,
)
from dosi.execute.rows import arrow_rows
from dosi.execute.runner import Runner
from dosi.execute.shape import conform, output_types
from dosi.execute.values import json_ready
from dosi.execute.warehouse_columns import table_columns
from dosi.model.loader import read_model_text
from dosi.pipeline import CompiledQuery, compile_query
from dosi.plan.joins import JoinGraph
from dosi.plan.node import explain_text
from dosi.query.bounds import check_query_bounds
from dosi.query.detail import DEFAULT_DETAIL_LIMIT, ResolvedDetail, parse_detail, resolve_detail
from dosi.query.dimension_only import dimension_query, is_dimension_only
from dosi.query.literal_cache import LiteralCache, shape_of
from dosi.query.semantic_sql import SqlPlan, VirtualTable, translate, virtual_table
from dosi.query.semantic_sql.result import project
from dosi.query.semantic_sql.types import probe_types
from dosi.sql.detail import explain_detail, render_detail
from dosi.sql.dialects import execution_dialect, get_dialect

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

    def to_json(self, indent: int | None = None) -> str:
        """The result dict as strict JSON, values in the one JSON rule every surface uses
        (`dosi.execute.values.json_value`): integers of any size as numbers, a decimal as a
        number where a double reads it back exactly, else a string of its digits."""
        return json.dumps(
            json_ready(dict(self)), indent=indent, ensure_ascii=False, allow_nan=False
        )

    def to_pandas(self, *, exact: bool = False) -> Any:
        """A pandas DataFrame (needs the optional `pandas` package): metrics numeric
        (DECIMAL as float64, or Arrow-backed decimal with `exact=True`), dates and time
        buckets datetime64 (`dosi.execute.frames`)."""
        return pandas_frame(self._table, exact=exact)

    def to_polars(self) -> Any:
        """A polars DataFrame (needs the optional `polars` package): exact Decimal metrics,
        Date / Datetime buckets (`dosi.execute.frames`)."""
        return polars_frame(self._table)


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
        """`trust_sql=True` lets model SQL read files and settings or write
        (docs/untrusted-queries.md); `query_timeout` (seconds, None for none) and `memory_limit`
        bound every execution; `allow_extensions=True` lifts the DuckDB lockdown on extensions and
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
        self.connections = parse_connections(connections)
        default = self.connections.profile(None)
        self.model = compile_model_text(
            text,
            mode,
            trust_sql=self.trust_sql,
            target=default.dialect if default is not None else "duckdb",
        )
        self.graph = JoinGraph(self.model)
        self.catalog = Catalog(self.model, self.graph)
        self._cache: OrderedDict[str, CompiledQuery] = OrderedDict()
        self._variants: OrderedDict[str, CompiledQuery] = OrderedDict()
        self._literals: LiteralCache[CompiledQuery] = LiteralCache(_CACHE_SIZE)
        self._lock = threading.Lock()
        self._cons: dict[str, Runner] = {}
        self._con_lock = threading.Lock()
        self._sql_table: VirtualTable | None = None
        self._sql_types: dict[str, pa.DataType] | None = None
        # the model lives as long as the engine: out of the collector's full passes
        # (dosi.compiler.collector; docs/performance.md, "The garbage collector")
        if freeze_model():
            weakref.finalize(self, engine_gone)

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
    def _compiled(
        self, query: Any, dialect: str | None, pretty: bool, literals: bool = True
    ) -> CompiledQuery:
        """The compiled query: from the exact-text cache, else (`literals`: the caller reads
        only the SQL and the answer's facts, not the plan) from a template of a query that
        differed only in literals (dosi.query.literal_cache), else compiled in full."""
        check_query_bounds(query)
        if dialect is not None and not isinstance(dialect, str):
            raise ArgumentError(f"dialect must be a name, got {type(dialect).__name__}")
        key = _cache_key(query, dialect, pretty)
        if key is not None:
            hit = self._cache.get(key) or (self._variants.get(key) if literals else None)
            if hit is not None:
                return hit
        shape = shape_of(query, dialect, pretty) if literals and key is not None else None
        if shape is not None:
            template = self._literals.lookup(shape)
            if template is not None:
                # the SQL is this query's; the plan records are the template's (explain and
                # plan_tree compile in full), so it is kept apart from the exact cache
                compiled = replace(template.compiled, sql=template.fill(shape.slots))
                self._keep(self._variants, key, compiled)
                return compiled
        try:
            compiled = compile_query(self.model, self.graph, query, dialect, pretty, bounded=True)
        except OsiError:
            raise
        except RecursionError:  # a backstop: inputs are bounded before they reach a parser
            raise QueryError(
                "query_too_complex",
                "the query nests too deeply to compile",
                hint="simplify the query (see docs/limits.md)",
            ) from None
        except Exception as exc:
            raise QueryError(
                "internal",
                f"the engine failed to compile this query ({type(exc).__name__}: {exc})",
                hint="this is a bug in dosi; please report it with the query and model",
            ) from exc
        self._keep(self._cache, key, compiled)
        if shape is not None:
            with self._lock:
                self._literals.remember(shape, compiled.sql, _facts(compiled), compiled)
        return compiled

    def _keep(
        self, cache: OrderedDict[str, CompiledQuery], key: str | None, compiled: CompiledQuery
    ) -> None:
        if key is not None:
            with self._lock:
                cache[key] = compiled
                if len(cache) > _CACHE_SIZE:
                    cache.popitem(last=False)

    def compile(
        self, query: Any, dialect: str | None = "duckdb", pretty: bool = False
    ) -> dict[str, Any]:
        if is_dimension_only(query):
            return self._dimensions(query, dialect, pretty)[0]
        c = self._compiled(query, dialect, pretty)
        return {
            "dialect": c.dialect.name,
            "sql": c.sql,
            "outputs": c.outputs(),
            "warnings": self._warnings(c),
            "requested_columns": c.requested_columns(),
        }

    def explain(self, query: Any, format: Literal["text", "json"] = "text") -> str:
        """The plan as an indented tree of nodes, the result at the top and the scans at the
        leaves; `format="json"` gives the same tree as JSON text for tools (`plan_tree`)."""
        if format == "json":
            return json.dumps(self.plan_tree(query), indent=2)
        if format != "text":
            raise QueryError(
                "invalid_query",
                f"explain format {format!r} is not one of text, json",
                candidates=["text", "json"],
                hint='use format="text" or format="json"',
            )
        if is_dimension_only(query):
            rd, _ = self._dimension_detail(query)
            return explain_detail(self.model, self.graph, rd)
        c = self._compiled(query, None, False, literals=False)
        return explain_text(c.dag)

    def plan_tree(self, query: Any) -> dict[str, Any]:
        """The plan as nested dicts: kind, one-line description, details, parents."""
        return self._compiled(query, None, False, literals=False).dag.to_json()

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
        *,
        cancellation: CancellationToken | None = None,
    ) -> QueryResult:
        """Run `query` on a connection: the named profile, the default one, `db_path` (a
        DuckDB file) or in-memory DuckDB. The SQL is rendered in the connection's dialect; a
        `dialect` that is not the connection's is `dialect_mismatch`. `timeout_secs` overrides
        the engine's `query_timeout` (None: no limit). A query without metrics answers the
        distinct values of its group_by fields (`dosi.query.dimension_only`)."""
        if is_dimension_only(query):
            out, table = self._run_dimensions(
                query, dialect, connection, timeout_secs, db_path, cancellation
            )
            return QueryResult(out, table)
        c, table = self._execute_table(
            query, dialect, connection, timeout_secs, db_path, cancellation
        )
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
        *,
        cancellation: CancellationToken | None = None,
    ) -> pa.Table:
        """The result as a pyarrow Table (metric columns carry `dosi.metric` metadata): the
        engine's own Arrow result, never converted row by row."""
        if is_dimension_only(query):
            return self._run_dimensions(
                query, None, connection, timeout_secs, db_path, cancellation
            )[1]
        return self._execute_table(query, None, connection, timeout_secs, db_path, cancellation)[1]

    def _execute_table(
        self,
        query: Any,
        dialect: str | None,
        connection: str | None,
        timeout_secs: float | object | None,
        db_path: str | Path | None,
        cancellation: CancellationToken | None,
    ) -> tuple[CompiledQuery, pa.Table]:
        """Compile (cached), run, and label the Arrow result: what execute() and
        execute_arrow() share."""
        if is_dimension_only(query):
            raise ArgumentError("a dimension-only query has no compiled metric plan")
        timeout = self._timeout(timeout_secs)
        profile = self._profile(connection, db_path)
        engine_dialect = profile.dialect
        c = self._compiled(query, execution_dialect(dialect, profile.sql_dialect), False)
        if dialect is not None:
            check_dialect(c.dialect.key, connection, profile.type)
        table = self._run(profile, c.sql, timeout, cancellation)
        if not get_dialect(engine_dialect).canonical_result_types:
            table = conform(table, _temporal_types(c))
        return c, _with_metadata(table, c)

    # -- semantic SQL (docs/serving/sql.md) ------------------------------------------------------
    def sql_table(self) -> VirtualTable:
        """The model as one virtual table: its dimension and metric columns."""
        if self._sql_table is None:
            self._sql_table = virtual_table(self.model)
        return self._sql_table

    def sql_types(
        self, connection: str | None = None, db_path: str | Path | None = None
    ) -> dict[str, pa.DataType]:
        """Each virtual column's Arrow type as the connection returns it (probed once)."""
        if self._sql_types is None:
            self._sql_types = probe_types(
                self.sql_table(),
                lambda q: self.execute_arrow(q, connection=connection, db_path=db_path),
                lambda q: self.select(q, connection=connection, db_path=db_path).arrow,
            )
        return self._sql_types

    def sql_plan(self, text: str | Any, params: list[Any] | None = None) -> SqlPlan:
        """How a SQL statement over the virtual table maps to a dosi query (`plan.query`)."""
        return translate(self.model, self.sql_table(), text, params)

    def sql(
        self,
        text: str | Any,
        params: list[Any] | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
    ) -> QueryResult:
        """Answer a SQL SELECT over the model's virtual table (`SELECT orders__channel,
        MEASURE(revenue) FROM shop GROUP BY 1`): translated into one dosi query and run like
        `execute`; `query` in the result is that dosi query."""
        plan, table, c = self._sql_table_of(
            text, params, connection, timeout_secs, db_path, cancellation
        )
        if c is None:
            data: dict[str, Any] = {
                "dialect": None,
                "sql": None,
                "outputs": [],
                "warnings": self.warnings,
                "requested_columns": [],
            }
        else:
            data = {
                "dialect": c.dialect.name,
                "sql": c.sql,
                "outputs": c.outputs(),
                "warnings": self._warnings(c),
                "requested_columns": c.requested_columns(),
            }
        data.update(
            {
                "query": plan.query,
                "columns": list(table.column_names),
                "rows": arrow_rows(table),
                "row_count": table.num_rows,
            }
        )
        return QueryResult(data, table)

    def sql_arrow(
        self,
        text: str | Any,
        params: list[Any] | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
    ) -> pa.Table:
        """The answer of `sql` as a pyarrow Table only (no Python rows are built)."""
        return self._sql_table_of(text, params, connection, timeout_secs, db_path, cancellation)[1]

    def _sql_table_of(
        self,
        text: str | Any,
        params: list[Any] | None,
        connection: str | None,
        timeout_secs: float | object | None,
        db_path: str | Path | None,
        cancellation: CancellationToken | None,
    ) -> tuple[SqlPlan, pa.Table, CompiledQuery | None]:
        plan = self.sql_plan(text, params)
        if plan.query is None:  # `SELECT * ... LIMIT 0`: the columns as the catalog types them
            return plan, project(plan, None, self.sql_types(connection, db_path)), None
        c, raw = self._execute_table(
            plan.query, None, connection, timeout_secs, db_path, cancellation
        )
        return plan, project(plan, raw), c

    # -- detail rows, attribution, lineage -----------------------------------------------------
    def _detail(self, query: Any, dialect: str | None, pretty: bool, run: bool) -> dict[str, Any]:
        """The compile answer of a detail query (executions default to 100 rows, as the
        reference engine's do)."""
        rd = resolve_detail(self.model, parse_detail(query))
        dia = get_dialect(dialect)
        limit = rd.query.limit
        if run and limit is None:
            limit = DEFAULT_DETAIL_LIMIT
        tree = render_detail(self.model, self.graph, rd, dia, limit)
        return {
            "dialect": dia.name,
            "sql": tree.sql(dialect=dia.name, pretty=pretty),
            "outputs": [],
            "warnings": [d.to_dict() for d in self.model.warnings],
            "requested_columns": rd.requested_columns(),
        }

    def _dimension_detail(self, query: Any) -> tuple[ResolvedDetail, dict[str, str]]:
        check_query_bounds(query)
        dq = dimension_query(self.model, query, self.graph.reachable)
        return resolve_detail(self.model, dq.detail), dq.renames

    def _dimensions(
        self, query: Any, dialect: str | None, pretty: bool
    ) -> tuple[dict[str, Any], dict[str, str], ResolvedDetail]:
        """The compile answer of a dimension-only query: a distinct detail query, its
        columns named as a metric query's group-by columns, every row (no default limit)."""
        rd, renames = self._dimension_detail(query)
        dia = get_dialect(dialect)
        tree = render_detail(self.model, self.graph, rd, dia, rd.query.limit)
        requested = [
            {"requested": c["requested"], "column": renames.get(c["column"], c["column"])}
            for c in rd.requested_columns()
        ]
        out = {
            "dialect": dia.name,
            "sql": tree.sql(dialect=dia.name, pretty=pretty),
            "outputs": [],
            "warnings": [d.to_dict() for d in self.model.warnings],
            "requested_columns": requested,
        }
        return out, renames, rd

    def _run_dimensions(
        self,
        query: Any,
        dialect: str | None,
        connection: str | None,
        timeout_secs: float | object | None,
        db_path: str | Path | None,
        cancellation: CancellationToken | None,
    ) -> tuple[dict[str, Any], pa.Table]:
        profile = self._profile(connection, db_path)
        out, renames, rd = self._dimensions(query, dialect or profile.dialect, False)
        if dialect is not None:
            check_dialect(get_dialect(dialect).key, connection, profile.type)
        table = self._run(profile, out["sql"], self._timeout(timeout_secs), cancellation)
        table = table.rename_columns([renames.get(c, c) for c in table.column_names])
        dims = [
            (renames.get(f.output, f.output), f.grain, False, [f.field.datatype]) for f in rd.fields
        ]
        table = conform(table, output_types(dims))  # a bucketed Date stays a DATE, as above
        out.update(
            {
                "columns": list(table.column_names),
                "rows": arrow_rows(table),
                "row_count": table.num_rows,
            }
        )
        return out, table

    def compile_select(
        self, query: Any, dialect: str | None = "duckdb", pretty: bool = False
    ) -> dict[str, Any]:
        """The SQL of a detail-row query (no rollup stage)."""
        return self._detail(query, dialect, pretty, run=False)

    def explain_select(self, query: Any) -> str:
        rd = resolve_detail(self.model, parse_detail(query))
        return explain_detail(self.model, self.graph, rd)

    def select(
        self,
        query: Any,
        dialect: str | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
    ) -> QueryResult:
        """Detail rows: fields of `from` and of what it reaches many-to-one, filtered, ordered
        and limited (100 rows unless `limit` says otherwise), never aggregated."""
        profile = self._profile(connection, db_path)
        out = self._detail(query, dialect or profile.dialect, False, run=True)
        if dialect is not None:
            check_dialect(get_dialect(dialect).key, connection, profile.type)
        table = self._run(profile, out["sql"], self._timeout(timeout_secs), cancellation)
        if not get_dialect(profile.dialect).canonical_result_types:
            table = conform(table, {})  # DuckDB's value types: UTC wall clocks, int64, float64
        out.update(
            {
                "columns": list(table.column_names),
                "rows": arrow_rows(table),
                "row_count": table.num_rows,
            }
        )
        return QueryResult(out, table)

    def attribute(
        self,
        request: Any,
        dialect: str | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
    ) -> dict[str, Any]:
        """Why `metric` changed from `baseline` to `current`, by dimension, in one statement."""
        req = parse_request(request)
        cands = (
            candidate_dimensions(self.dimensions(req.metric))
            if req.metric in self.model.metrics
            else []
        )
        profile = self._profile(connection, db_path)
        if dialect is not None:
            check_dialect(get_dialect(dialect).key, connection, profile.type)
        plan = plan_attribution(self.model, self.graph, req, cands, profile.dialect)
        table = None
        if plan.sql is not None:
            table = self._run(profile, plan.sql, self._timeout(timeout_secs), cancellation)
        return attribution_result(self.model, plan, table)

    def validate_sources(
        self,
        connection: str | None = None,
        db_path: str | Path | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
    ) -> dict[str, Any]:
        """The model against the warehouse it runs on (issue 21 item 7): every dataset's
        source exists and every column a field, key or relationship names exists with a
        compatible type. `{"valid", "checked": "warehouse", "engine", "issues": [...]}`, each
        issue with its dataset, column and the closest real names (docs/model.md)."""
        profile = self._profile(connection, db_path)
        dia = get_dialect(profile.dialect)
        timeout = self._timeout(timeout_secs)
        found = {}
        how: dict[str, str] = {}
        for ds in self.model.datasets.values():
            got = table_columns(
                lambda sql: self._run(profile, sql, timeout),
                ds.source,
                dia.key,
                dia.name,
                catalog=dia.column_catalog,
            )
            found[ds.name] = (got.columns, got.tables)
            how[ds.name] = got.how
        issues = check_sources(self.model, found, dia.name)
        return {
            "valid": not issues,
            "checked": "warehouse",
            "engine": profile.type,
            "datasets": how,
            "issues": issues,
        }

    def lineage(self, metric: str | None = None, redact_sql: bool = False) -> dict[str, Any]:
        """The model's lineage graph (tables -> datasets -> metrics, joins); with `metric`,
        only what that metric reads, plus its `tree`."""
        return lineage_graph(self.model, self.graph, metric, redact_sql)

    def lineage_text(self, metric: str) -> str:
        return lineage_text(lineage_graph(self.model, self.graph, metric, False))

    def _timeout(self, timeout_secs: float | object | None) -> float | None:
        if timeout_secs is ENGINE_DEFAULT:
            return self.options.query_timeout
        return check_timeout(timeout_secs, "timeout_secs")

    def _profile(self, connection: str | None, db_path: str | Path | None) -> Profile:
        if db_path is not None:
            if not isinstance(db_path, (str, Path)) or "\x00" in str(db_path):
                raise ArgumentError(f"db_path must be a file path, got {bounded(db_path)}")
            return Profile(str(db_path), "duckdb", str(db_path))
        if connection is not None and not isinstance(connection, str):
            raise ArgumentError(f"connection must be a name, got {bounded(connection)}")
        found = self.connections.profile(connection)
        return found if found is not None else Profile(":memory:", "duckdb", ":memory:")

    def _run(
        self,
        profile: Profile,
        sql: str,
        timeout_secs: float | None,
        cancellation: CancellationToken | None = None,
    ) -> pa.Table:
        key = f"{profile.type}:{profile.uri}" if profile.client is None else f"obj:{profile.name}"
        with self._con_lock:
            runner = self._cons.get(key)
            if runner is None:
                runner = self._cons[key] = open_runner(profile, self.options)
            return run_cancellable(runner, sql, timeout_secs, cancellation)

    def runner(self, connection: str | None = None) -> Runner:
        """The open runner of a connection (to cancel a running query from another thread)."""
        profile = self._profile(connection, None)
        key = f"{profile.type}:{profile.uri}" if profile.client is None else f"obj:{profile.name}"
        open_one = self._cons.get(key)  # no lock: a query may hold it while it runs
        if open_one is not None:
            return open_one
        with self._con_lock:
            if key not in self._cons:
                self._cons[key] = open_runner(profile, self.options)
            return self._cons[key]

    def progress(
        self, connection: str | None = None, db_path: str | Path | None = None
    ) -> float | None:
        """Percent done of the statement running on a connection, where its engine reports
        it (DuckDB's query progress); None elsewhere, or when no statement runs. Safe to call
        from another thread while the query runs (the command line's progress line)."""
        profile = self._profile(connection, db_path)
        key = f"{profile.type}:{profile.uri}" if profile.client is None else f"obj:{profile.name}"
        report = getattr(self._cons.get(key), "progress", None)  # no lock: the query holds it
        return report() if callable(report) else None

    def close(self) -> None:
        """Close the connections dosi opened (client objects handed in stay open)."""
        with self._con_lock:
            for runner in self._cons.values():
                runner.close()
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


def _facts(c: CompiledQuery) -> tuple[Any, ...]:
    """What an answer shows besides its SQL: two compiles of one shape must agree on it
    before their SQL becomes a template (dosi.query.literal_cache)."""
    warnings = [d.to_dict() for d in c.warnings]
    return c.dialect.name, c.outputs(), c.requested_columns(), warnings


def _temporal_types(c: CompiledQuery) -> dict[str, pa.DataType]:
    """The DuckDB type of each temporal output, from the plan's branch dimensions."""
    dims: dict[str, tuple[str | None, bool, list[str | None]]] = {}
    for branch in c.plan.branches:
        for d in branch.dims:
            grain, streaming, kinds = dims.setdefault(d.output, (d.grain, False, []))
            dims[d.output] = (grain, streaming or d.window is not None, [*kinds, d.datatype])
    return output_types((name, g, s, k) for name, (g, s, k) in dims.items())


def _with_metadata(table: pa.Table, c: CompiledQuery) -> pa.Table:
    """Arrow field metadata names the metric and the resolved params behind each metric column
    (dosi.metric, dosi.params: CORE-Q-16, SURF-ARROW-01)."""
    outputs = {o["column"]: o for o in c.outputs()}
    fields = []
    for f in table.schema:
        o = outputs.get(f.name)
        if o is not None:
            params = json.dumps(o.get("params") or {}, sort_keys=False, ensure_ascii=False)
            f = f.with_metadata({"dosi.metric": o["metric"], "dosi.params": params})
        fields.append(f)
    if not outputs:
        return table
    # only field metadata changes: relabel the same column buffers (no cast, no copy)
    return pa.Table.from_arrays(table.columns, schema=pa.schema(fields))


def validate(model_text: str, mode: str = "datus", trust_sql: bool = False) -> dict[str, Any]:
    """Validate a model without raising: {valid, version, issues, compile_errors, warnings};
    `version` is the Ossie version the document was written in (a 0.1.1 document is read
    and upgraded in memory). For an invalid model, `stage` is the ModelError code."""
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
