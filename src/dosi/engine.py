"""`dosi.Engine`: the public Python API (compatible with the reference engine's).

Load once, then compile / explain / execute many queries; compiled plans are cached on the
normalized query, so a repeated query costs a dictionary lookup.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import hashlib
import json
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
from sqlglot import exp

from dosi.access import AccessConfig, AccessScope, PolicySet, UserContext, load_access, scope_for
from dosi.access.audit import audit, request_metrics
from dosi.access.listing import (
    visible_dataset,
    visible_datasets,
    visible_dimensions,
    visible_metric,
    visible_metrics,
    visible_table,
    without_hidden_candidates,
)
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
from dosi.compiler.rollup import parse_rollups
from dosi.compiler.rollup_rules import parse_storage
from dosi.errors import (
    AccessError,
    ArgumentError,
    Diagnostic,
    ExecuteError,
    ModelError,
    OsiError,
    QueryError,
    bounded,
    closest,
)
from dosi.execute.budget import budget_of
from dosi.execute.cancel import CancellationToken, run_cancellable
from dosi.execute.connections import Profile, check_dialect, parse_connections
from dosi.execute.data_version import (
    CachePolicy,
    cache_policy,
    files_version,
    local_data,
    profile_files,
    refresh_key_sql,
    settled,
    source_files,
)
from dosi.execute.engines import open_recovering
from dosi.execute.frames import pandas_frame, polars_frame
from dosi.execute.options import (
    DEFAULT_QUERY_TIMEOUT,
    ExecOptions,
    check_memory_limit,
    check_timeout,
)
from dosi.execute.result_cache import ResultCache, check_ttl
from dosi.execute.rollup_schedule import due, partition_start
from dosi.execute.rollup_store import STORE_ALIAS, BuiltRollup, RollupBuild, RollupStore
from dosi.execute.rows import arrow_rows
from dosi.execute.runner import Runner, table_rows_of
from dosi.execute.shape import conform, output_types
from dosi.execute.values import json_ready
from dosi.execute.warehouse_columns import table_columns
from dosi.execute.warehouse_rollups import WarehouseRollupStore
from dosi.ir.model import ModelIr
from dosi.ir.rollup import RollupIr
from dosi.model.loader import parse_document, read_model_text
from dosi.pipeline import CompiledQuery, compile_query, metric_dimension_model
from dosi.plan.joins import JoinGraph
from dosi.plan.node import explain_text
from dosi.plan.rollup_match import AvailableRollups, aligned
from dosi.plan.scan_sizes import (
    PRE_AGGREGATE_MIN_ROWS,
    UNKNOWN_SIZES,
    ScanSizes,
    scan_sizes,
    table_name,
)
from dosi.query.bounds import check_query_bounds
from dosi.query.cache_option import cache_option
from dosi.query.detail import DEFAULT_DETAIL_LIMIT, ResolvedDetail, parse_detail, resolve_detail
from dosi.query.dimension_only import DimensionQuery, dimension_query, is_dimension_only
from dosi.query.literal_cache import LiteralCache, shape_of
from dosi.query.metric_dimensions import KEY as MD_KEY
from dosi.query.metric_dimensions import parse_metric_dimensions
from dosi.query.semantic_sql import SqlPlan, VirtualTable, translate, virtual_table
from dosi.query.semantic_sql.result import project
from dosi.query.semantic_sql.types import probe_types
from dosi.sql.detail import explain_detail, render_detail
from dosi.sql.dialects import execution_dialect, get_dialect
from dosi.sql.min_max import min_max_columns, min_max_select
from dosi.sql.rollup_build import kept_partitions, rollup_select

_CACHE_SIZE = 512
_SCOPE_CACHE_SIZE = 256

#: `execute(timeout_secs=...)` not given: use the engine's `query_timeout`.
ENGINE_DEFAULT: object = object()


def _audited(action: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """One `dosi.audit` line per call of a user's engine (surface `python`): the user, the
    action, the metrics asked for and the outcome (docs/access-policies.md "Audit"). A
    `user=` keyword answers the call as that user (`as_user`)."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(self: Engine, request: Any, *args: Any, **kw: Any) -> Any:
            user = kw.pop("user", None)
            if user is not None:  # `engine.execute(q, user=UserContext(...))`
                return getattr(self.as_user(user), fn.__name__)(request, *args, **kw)
            if not self._audit or self.scope is None:
                return fn(self, request, *args, **kw)
            outcome = "ok"
            try:
                return fn(self, request, *args, **kw)
            except OsiError as err:
                outcome = err.code
                raise
            finally:
                audit("python", self.scope.user.name, action, request_metrics(request), outcome)

        return run

    return wrap


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

    #: the day pre-aggregation's cost rule (docs/performance.md): a fact table the connection
    #: knows to hold fewer rows is read in one GROUP BY (the same rows); 0 pre-aggregates always
    pre_aggregate_min_rows: int = PRE_AGGREGATE_MIN_ROWS

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
        access: str | Path | AccessConfig | PolicySet | None = None,
        user: UserContext | None = None,
        result_cache: ResultCache | bool = True,
        cache_ttl: float | None = None,
        rollups: str | Path | dict[str, Any] | None = None,
        rollup_store: str | Path | None = None,
    ) -> None:
        """`trust_sql=True` lets model SQL read files and settings or write
        (docs/untrusted-queries.md); `query_timeout` (seconds, None for none) and `memory_limit`
        bound every execution; `allow_extensions=True` lifts the DuckDB lockdown on extensions and
        external access. `access` (an access file, docs/access-policies.md) with `user`: this
        engine answers as that user (hidden members denied, rows filtered); `as_user` gives
        one engine per user over the same connections.
        `result_cache`: True (a cache of this engine's own), a `ResultCache`
        to share, or False (none); `cache_ttl` bounds every cached answer's age in seconds
        and lets connections whose data version dosi cannot read be cached
        (docs/rollups-and-cache.md). `rollups`: a rollup file (default: `<model>.rollups.yaml`
        beside `model_path`, when it exists) or its parsed content; `rollup_store`: the
        DuckDB file the built rollups live in (default: the rollup file's `storage`, else
        its name with `.duckdb`)."""
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
        if not isinstance(result_cache, (bool, ResultCache)):
            raise ArgumentError(
                "result_cache must be true, false or a ResultCache, got "
                f"{type(result_cache).__name__}"
            )
        self.results: ResultCache | None = (
            ResultCache()
            if result_cache is True
            else None
            if result_cache is False
            else result_cache
        )
        self.cache_ttl = check_ttl(cache_ttl, "cache_ttl")
        # the model's identity in result-cache keys: an engine of another model version
        # never answers from this one's entries
        self._fingerprint = hashlib.sha256(
            f"{mode}|{int(self.trust_sql)}|{text}".encode()
        ).hexdigest()[:24]
        declared, store_path, schema = _rollup_file(model_path, rollups, rollup_store)
        self.rollup_store: RollupStore | WarehouseRollupStore | None = (
            WarehouseRollupStore(schema)
            if schema is not None
            else RollupStore(store_path)
            if store_path is not None
            else None
        )
        self.options = ExecOptions(
            query_timeout=check_timeout(query_timeout),
            memory_limit=check_memory_limit(memory_limit),
            allow_extensions=bool(allow_extensions),
            attach=((STORE_ALIAS, str(store_path)),) if store_path is not None else (),
        )
        self.connections = parse_connections(connections)
        default = self.connections.profile(None)
        self.model = compile_model_text(
            text,
            mode,
            trust_sql=self.trust_sql,
            target=default.dialect if default is not None else "duckdb",
        )
        # a model reading only tables may run on one DuckDB thread when they are all small
        sources = [table_name(ds.source) for ds in self.model.datasets.values()]
        self.options = replace(self.options, tables_only=bool(sources) and all(sources))
        self.rollups = parse_rollups(declared, self.model) if declared is not None else ()
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
        self._model_files = source_files(ds.source for ds in self.model.datasets.values())
        self._remote_sources = any("://" in f for f in self._model_files)
        # files a query's answer also depends on: the rollup store it may read
        self._extra_files = (str(store_path),) if store_path is not None else ()
        self._opened: dict[str, Any] = {}  # connection key -> its files' version when opened
        self._opened_store: dict[str, Any] = {}  # ... and the rollup store's version
        self._table_rows: dict[str, dict[str, int]] = {}  # ... and its tables' row counts
        self._sizes: dict[str, tuple[dict[str, int], int, ScanSizes]] = {}  # this model's
        self._refreshed: dict[str, tuple[float, str]] = {}  # refresh key: (checked at, value)
        self.policies = _policy_set(access)
        self.scope: AccessScope | None = None
        self._audit = False
        self._borrowed = False
        self._scopes: OrderedDict[str, tuple[PolicySet, Engine]] = OrderedDict()
        if user is not None:
            if self.policies is None:
                raise ArgumentError("`user` needs `access` (an access file with policies)")
            self._enter_scope(scope_for(self.model, self.policies, _user_arg(user)))
            self._audit = True

        # the model lives as long as the engine: out of the collector's full passes
        # (dosi.compiler.collector; docs/performance.md, "The garbage collector")
        if freeze_model():
            weakref.finalize(self, engine_gone)

    # -- access policies (docs/access-policies.md) -----------------------------------------
    def as_user(
        self, user: UserContext, policies: PolicySet | None = None, *, audited: bool = True
    ) -> Engine:
        """This engine as `user` sees it under `policies` (default: the engine's): one
        cached engine per user and policy set, sharing this engine's connections. Without
        policies the engine itself (identities then only authenticate). `audited=False`:
        the caller writes the audit line (the servers)."""
        user = _user_arg(user)
        policies = policies if policies is not None else self.policies
        if policies is None:
            return self
        if self.scope is not None:
            raise ArgumentError(
                "this engine already answers as a user; call as_user on the served engine"
            )
        key = f"{int(audited)}{user.key()}"
        with self._lock:
            hit = self._scopes.get(key)
            if hit is not None and hit[0] is policies:
                self._scopes.move_to_end(key)
                return hit[1]
        scoped = copy.copy(self)
        scoped._enter_scope(scope_for(self.model, policies, user))
        scoped._borrowed = True  # the connections stay this engine's
        scoped._audit = audited
        with self._lock:
            self._scopes[key] = (policies, scoped)
            if len(self._scopes) > _SCOPE_CACHE_SIZE:
                self._scopes.popitem(last=False)
        return scoped

    def _enter_scope(self, scope: AccessScope) -> None:
        """Answer as the scope's user from now on: compile against the row-filtered model
        (its own plan cache), list only what the user sees."""
        self.scope = scope
        self.model = scope.model
        self.graph = JoinGraph(self.model)
        self.catalog = Catalog(self.model, self.graph)
        self._cache = OrderedDict()
        self._variants = OrderedDict()  # literal templates too: never the owner's SQL
        self._literals = LiteralCache(_CACHE_SIZE)
        self._lock = threading.Lock()
        self._scopes = OrderedDict()
        self._sql_table = None
        self._sql_types = None
        self._sizes = {}  # the small datasets of the row-filtered model (none: subqueries)
        # rollups hold every row of the fact table: a policed user reads the filtered
        # sources, never a rollup (docs/access-policies.md)
        self.rollups = ()

    @property
    def user(self) -> UserContext | None:
        return self.scope.user if self.scope is not None else None

    def _guarded(self, err: OsiError) -> OsiError:
        return without_hidden_candidates(self.scope, err) if self.scope is not None else err

    # -- catalog -------------------------------------------------------------------------------
    @property
    def warnings(self) -> list[dict[str, Any]]:
        return [d.to_dict() for d in self._model_warnings()]

    def _model_warnings(self) -> tuple[Diagnostic, ...]:
        """The model's own warnings: the model author's, and they name every metric and field,
        so a policed user sees none of them (docs/access-policies.md)."""
        return () if self.scope is not None else tuple(self.model.warnings)

    def metrics(self) -> list[dict[str, Any]]:
        if self.scope is not None:
            return visible_metrics(self.scope, self.catalog.metrics())
        return self.catalog.metrics()

    def metric(self, name: str) -> dict[str, Any]:
        name = _name_arg(name, "name")
        if self.scope is not None and name in self.model.metrics:
            self.scope.check_metric(name)
        try:
            out = self.catalog.metric(name)
        except OsiError as err:
            raise self._guarded(err) from None
        return out if self.scope is None else visible_metric(self.scope, out)

    def datasets(self) -> list[dict[str, Any]]:
        if self.scope is not None:
            return visible_datasets(self.scope, self.catalog.datasets())
        return self.catalog.datasets()

    def dataset(self, name: str) -> dict[str, Any]:
        name = _name_arg(name, "name")
        if self.scope is None:
            return self.catalog.dataset(name)
        if name in self.model.datasets:
            self.scope.check_dataset(name)
        try:
            return visible_dataset(self.scope, self.catalog.dataset(name))
        except OsiError as err:
            raise self._guarded(err) from None

    def dimensions(self, metric: str | None = None) -> list[dict[str, Any]]:
        metric = None if metric is None else _name_arg(metric, "metric")
        if self.scope is None:
            return self.catalog.dimensions(metric)
        if metric is not None and metric in self.model.metrics:
            self.scope.check_metric(metric)
        try:
            return visible_dimensions(self.scope, self.catalog.dimensions(metric))
        except OsiError as err:
            raise self._guarded(err) from None

    # -- compile ----------------------------------------------------------------------------------
    def _compiled(
        self,
        query: Any,
        dialect: str | None,
        pretty: bool,
        rollups: AvailableRollups | None = None,
        literals: bool = True,
        sizes: ScanSizes = UNKNOWN_SIZES,
    ) -> CompiledQuery:
        """The compiled query: from the exact-text cache, else (`literals`: the caller reads
        only the SQL and the answer's facts, not the plan) from a template of a query that
        differed only in literals (dosi.query.literal_cache), else compiled in full. With
        `rollups` (aggregate awareness) no template is used: whether a rollup serves can
        turn on a literal. `sizes`: the connection's small fact tables (the pre-aggregation's
        cost rule); plans for other sizes are cached apart."""
        literals = literals and rollups is None
        check_query_bounds(query)
        if dialect is not None and not isinstance(dialect, str):
            raise ArgumentError(f"dialect must be a name, got {type(dialect).__name__}")
        key = _cache_key(query, dialect, pretty)
        if key is not None and rollups is not None:
            key = f"{rollups.key}|{key}"
        if key is not None and sizes.small:
            key = f"small:{sizes.key}|{key}"
        if key is not None:
            hit = self._cache.get(key) or (self._variants.get(key) if literals else None)
            if hit is not None:
                return hit
        shape = shape_of(query, dialect, pretty) if literals and key is not None else None
        if shape is not None and sizes.small:
            shape = replace(shape, key=f"small:{sizes.key}|{shape.key}")
        if shape is not None:
            template = self._literals.lookup(shape)
            if template is not None:
                # the SQL is this query's; the plan records are the template's (explain and
                # plan_tree compile in full), so it is kept apart from the exact cache
                compiled = replace(template.compiled, sql=template.fill(shape.slots))
                self._keep(self._variants, key, compiled)
                return compiled
        try:
            self._check_metric_dimensions(query)
            compiled = compile_query(
                self.model, self.graph, query, dialect, pretty, rollups, bounded=True, sizes=sizes
            )
            if self.scope is not None:
                aliases = {c.column: c.metric for c in compiled.columns}  # D-PARAM columns
                self.scope.check_resolved(compiled.resolved, aliases)
        except AccessError:
            raise
        except OsiError as err:
            raise self._guarded(err) from None
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

    @_audited("compile")
    def compile(
        self,
        query: Any,
        dialect: str | None = "duckdb",
        pretty: bool = False,
        *,
        connection: str | None = None,
        db_path: str | Path | None = None,
    ) -> dict[str, Any]:
        """The SQL of `query`. With `connection` / `db_path` it is planned for that
        connection's tables, as `execute` plans it there (the pre-aggregation's cost rule
        reads their sizes: docs/performance.md); without, every table is taken as large."""
        query = cache_option(query)[0]
        if is_dimension_only(query):
            return self._dimensions(query, dialect, pretty)[0]
        sizes = UNKNOWN_SIZES
        if connection is not None or db_path is not None:
            sizes = self._scan_sizes(self._profile(connection, db_path))
        c = self._compiled(query, dialect, pretty, sizes=sizes)
        return {
            "dialect": c.dialect.name,
            "sql": c.sql,
            "outputs": c.outputs(),
            "warnings": self._warnings(c),
            "requested_columns": c.requested_columns(),
        }

    @_audited("explain")
    def explain(
        self,
        query: Any,
        format: Literal["text", "json"] = "text",
        *,
        connection: str | None = None,
        db_path: str | Path | None = None,
    ) -> str:
        """The plan as an indented tree of nodes, the result at the top and the scans at the
        leaves; `format="json"` gives the same tree as JSON text for tools (`plan_tree`).
        With declared rollups, a `Rollups` section says which rollup serves each branch on
        the connection (`connection` / `db_path`, else the default one) and why the others
        did not."""
        if format == "json":
            return json.dumps(self.plan_tree(query), indent=2)
        if format != "text":
            raise QueryError(
                "invalid_query",
                f"explain format {format!r} is not one of text, json",
                candidates=["text", "json"],
                hint='use format="text" or format="json"',
            )
        query = cache_option(query)[0]
        if is_dimension_only(query):
            rd, _, model, graph = self._dimension_detail(query, None)
            return explain_detail(model, graph, rd)
        profile = self._profile(connection, db_path)
        avail = self._available(profile)
        runs_on = self._store_profile(profile)
        dialect = runs_on.dialect if runs_on is not None and avail is not None else None
        sizes = UNKNOWN_SIZES
        if runs_on is None and (connection is not None or db_path is not None):
            sizes = self._scan_sizes(profile)
        c = self._compiled(query, dialect, False, avail, literals=False, sizes=sizes)
        notes = list(c.rollup_notes)
        if dialect is not None and c.rollups_served:
            notes.append(
                "the rollups answer it whole: it runs on the embedded rollup store"
                if c.rollups_whole
                else f"not every table read is a rollup: connection {profile.name} answers "
                "from its own tables"
            )
        text = explain_text(c.dag)
        if notes:
            text = text.rstrip("\n") + "\nRollups\n" + "".join(f"  {n}\n" for n in notes)
        return text

    def plan_tree(self, query: Any) -> dict[str, Any]:
        """The plan as nested dicts: kind, one-line description, details, parents."""
        return self._compiled(cache_option(query)[0], None, False, literals=False).dag.to_json()

    def _warnings(self, c: CompiledQuery) -> list[dict[str, Any]]:
        return [d.to_dict() for d in (*self._model_warnings(), *c.warnings)]

    # -- execute ----------------------------------------------------------------------------------
    @_audited("execute")
    def execute(
        self,
        query: Any,
        dialect: str | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
        cache: bool = True,
    ) -> QueryResult:
        """Run `query` on a connection: the named profile, the default one, `db_path` (a
        DuckDB file) or in-memory DuckDB. The SQL is rendered in the connection's dialect; a
        `dialect` that is not the connection's is `dialect_mismatch`. `timeout_secs` overrides
        the engine's `query_timeout` (None: no limit). A query without metrics answers the
        distinct values of its group_by fields (`dosi.query.dimension_only`). `cache=False`
        (or `"cache": false` in the query) reads the warehouse, bypassing the result cache."""
        query, cached = cache_option(query)
        cached = cached and bool(cache)
        if is_dimension_only(query):
            out, table = self._run_dimensions(
                query, dialect, connection, timeout_secs, db_path, cancellation, cached
            )
            return QueryResult(out, table)
        c, table = self._execute_table(
            query, dialect, connection, timeout_secs, db_path, cancellation, cached
        )
        data = {
            "dialect": c.dialect.name,
            "sql": c.sql,
            "outputs": c.outputs(),
            "warnings": self._warnings(c),
            "requested_columns": c.requested_columns(),
            "columns": list(table.column_names),
            "rows": arrow_rows(table, cancellation),
            "row_count": table.num_rows,
        }
        return QueryResult(data, table)

    @_audited("execute")
    def execute_arrow(
        self,
        query: Any,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
        cache: bool = True,
    ) -> pa.Table:
        """The result as a pyarrow Table (metric columns carry `dosi.metric` metadata): the
        engine's own Arrow result, never converted row by row."""
        query, cached = cache_option(query)
        cached = cached and bool(cache)
        if is_dimension_only(query):
            return self._run_dimensions(
                query, None, connection, timeout_secs, db_path, cancellation, cached
            )[1]
        return self._execute_table(
            query, None, connection, timeout_secs, db_path, cancellation, cached
        )[1]

    def _execute_table(
        self,
        query: Any,
        dialect: str | None,
        connection: str | None,
        timeout_secs: float | object | None,
        db_path: str | Path | None,
        cancellation: CancellationToken | None,
        cache: bool = True,
    ) -> tuple[CompiledQuery, pa.Table]:
        """Compile (cached), run, and label the Arrow result: what execute() and
        execute_arrow() share."""
        if is_dimension_only(query):
            raise ArgumentError("a dimension-only query has no compiled metric plan")
        timeout = self._timeout(timeout_secs)
        profile = self._profile(connection, db_path)
        engine_dialect = profile.dialect
        sizes = self._scan_sizes(profile)
        run_dialect = execution_dialect(dialect, profile.sql_dialect)
        for attempt in range(4):
            # the last attempt reads no rollup: a store swapped under every try is no reason
            # to fail a query the fact table answers
            avail = self._available(profile) if attempt < 3 else None
            runs_on = self._store_profile(profile) if dialect is None else None
            c = None
            if runs_on is not None and avail is not None and avail.rollups:
                # an embedded store beside another engine: a query its rollups answer whole
                # runs on the store (DuckDB); any other reads the warehouse as it is
                c = self._compiled(query, runs_on.dialect, False, avail)
                c = c if c.rollups_whole else None
            if c is None:
                runs_on, avail = profile, avail if runs_on is None else None
                c = self._compiled(query, run_dialect, False, avail, sizes=sizes)
            if dialect is not None:
                check_dialect(c.dialect.key, connection, profile.type)
            store = avail.store_stamp if avail is not None and c.rollups_served else None
            try:
                table = self._run(runs_on, c.sql, timeout, cancellation, cache, store)
                break
            except _StoreSwapped:
                continue  # the plan chose rollups of a store version no longer there: replan
            except ExecuteError as err:
                # a warehouse rollup table dropped between planning and running: the fact
                # table answers (when in doubt, the fact table)
                served = c.rollups_served and self._in_warehouse(profile)
                if not served or err.code != "sql_rejected":
                    raise
                c = self._compiled(
                    query, execution_dialect(dialect, profile.sql_dialect), False, None
                )
                table = self._run(profile, c.sql, timeout, cancellation, cache, None)
                break
        if not get_dialect(engine_dialect).canonical_result_types:
            table = conform(table, _temporal_types(c))
        return c, _with_metadata(table, c)

    # -- semantic SQL (docs/serving/sql.md) ------------------------------------------------------
    def sql_table(self) -> VirtualTable:
        """The model as one virtual table: its dimension and metric columns."""
        if self._sql_table is None:
            table = virtual_table(self.model)
            self._sql_table = table if self.scope is None else visible_table(self.scope, table)
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

    @_audited("sql")
    def sql(
        self,
        text: str | Any,
        params: list[Any] | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
        cache: bool = True,
    ) -> QueryResult:
        """Answer a SQL SELECT over the model's virtual table (`SELECT orders__channel,
        MEASURE(revenue) FROM shop GROUP BY 1`): translated into one dosi query and run like
        `execute`; `query` in the result is that dosi query."""
        plan, table, c = self._sql_table_of(
            text, params, connection, timeout_secs, db_path, cancellation, cache
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
                "rows": arrow_rows(table, cancellation),
                "row_count": table.num_rows,
            }
        )
        return QueryResult(data, table)

    @_audited("sql")
    def sql_arrow(
        self,
        text: str | Any,
        params: list[Any] | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
        cache: bool = True,
    ) -> pa.Table:
        """The answer of `sql` as a pyarrow Table only (no Python rows are built)."""
        return self._sql_table_of(
            text, params, connection, timeout_secs, db_path, cancellation, cache
        )[1]

    def _sql_table_of(
        self,
        text: str | Any,
        params: list[Any] | None,
        connection: str | None,
        timeout_secs: float | object | None,
        db_path: str | Path | None,
        cancellation: CancellationToken | None,
        cache: bool = True,
    ) -> tuple[SqlPlan, pa.Table, CompiledQuery | None]:
        plan = self.sql_plan(text, params)
        if plan.query is None:  # `SELECT * ... LIMIT 0`: the columns as the catalog types them
            return plan, project(plan, None, self.sql_types(connection, db_path)), None
        c, raw = self._execute_table(
            plan.query, None, connection, timeout_secs, db_path, cancellation, bool(cache)
        )
        return plan, project(plan, raw), c

    # -- detail rows, attribution, lineage -----------------------------------------------------
    def _detail(self, query: Any, dialect: str | None, pretty: bool, run: bool) -> dict[str, Any]:
        """The compile answer of a detail query (executions default to 100 rows, as the
        reference engine's do)."""
        rd = self._resolved_detail(query)
        dia = get_dialect(dialect)
        limit = rd.query.limit
        if run and limit is None:
            limit = DEFAULT_DETAIL_LIMIT
        tree = render_detail(self.model, self.graph, rd, dia, limit)
        return {
            "dialect": dia.name,
            "sql": tree.sql(dialect=dia.name, pretty=pretty),
            "outputs": [],
            "warnings": [d.to_dict() for d in self._model_warnings()],
            "requested_columns": rd.requested_columns(),
        }

    def _resolved_detail(self, query: Any) -> ResolvedDetail:
        try:
            rd = resolve_detail(self.model, parse_detail(query))
            if self.scope is not None:
                self.scope.check_detail(rd)
        except AccessError:
            raise
        except OsiError as err:
            raise self._guarded(err) from None
        return rd

    def _dimension_detail(
        self, query: Any, dialect: str | None
    ) -> tuple[ResolvedDetail, DimensionQuery, ModelIr, JoinGraph]:
        """The distinct detail query, over the model with the query's metric dimensions
        (their inner queries compiled for `dialect`)."""
        check_query_bounds(query)
        try:
            self._check_metric_dimensions(query)
            model, graph, query = metric_dimension_model(
                self.model, self.graph, query, get_dialect(dialect)
            )
            dq = dimension_query(model, query, graph.reachable)
            rd = resolve_detail(model, dq.detail)
            if self.scope is not None:
                self.scope.check_detail(rd)
        except AccessError:
            raise
        except OsiError as err:
            raise self._guarded(err) from None
        return rd, dq, model, graph

    def _check_metric_dimensions(self, query: Any) -> None:
        """A policed user's metric dimensions: each inner metric and key field must be
        visible (the joined dataset a metric dimension becomes is then readable)."""
        if self.scope is None or not isinstance(query, dict) or not query.get(MD_KEY):
            return
        for md in parse_metric_dimensions(self.model, query[MD_KEY]):
            self.scope.check_metric(md.metric)
            for f in md.by:
                self.scope.check_field(f)

    def _dimensions(
        self, query: Any, dialect: str | None, pretty: bool
    ) -> tuple[dict[str, Any], DimensionQuery, ResolvedDetail]:
        """The compile answer of a dimension-only query: a distinct detail query, its
        columns named as a metric query's group-by columns, every row (no default limit);
        with `min_max_only`, the one row of each column's range."""
        rd, dq, model, graph = self._dimension_detail(query, dialect)
        renames = dq.renames
        dia = get_dialect(dialect)
        tree = render_detail(model, graph, rd, dia, rd.query.limit)
        if dq.min_max:  # one row: each column's range (dosi.sql.min_max)
            tree = min_max_select(
                tree, [(f.output, renames.get(f.output, f.output)) for f in rd.fields]
            )
        requested = [
            {"requested": c["requested"], "column": renames.get(c["column"], c["column"])}
            for c in rd.requested_columns()
        ]
        if dq.min_max:
            requested = [
                {"requested": c["requested"], "column": name}
                for c in requested
                for name in min_max_columns([c["column"]])
            ]
        out = {
            "dialect": dia.name,
            "sql": tree.sql(dialect=dia.name, pretty=pretty),
            "outputs": [],
            "warnings": [d.to_dict() for d in self._model_warnings()],
            "requested_columns": requested,
        }
        return out, dq, rd

    def _run_dimensions(
        self,
        query: Any,
        dialect: str | None,
        connection: str | None,
        timeout_secs: float | object | None,
        db_path: str | Path | None,
        cancellation: CancellationToken | None,
        cache: bool = True,
    ) -> tuple[dict[str, Any], pa.Table]:
        profile = self._profile(connection, db_path)
        out, dq, rd = self._dimensions(query, dialect or profile.dialect, False)
        renames = dq.renames
        if dialect is not None:
            check_dialect(get_dialect(dialect).key, connection, profile.type)
        table = self._run(profile, out["sql"], self._timeout(timeout_secs), cancellation, cache)
        table = table.rename_columns([renames.get(c, c) for c in table.column_names])
        dims = [
            (renames.get(f.output, f.output), f.grain, False, [f.field.datatype]) for f in rd.fields
        ]
        if dq.min_max:  # each column's range keeps the column's type
            dims = [(c, *rest) for name, *rest in dims for c in min_max_columns([name])]
        table = conform(table, output_types(dims))  # a bucketed Date stays a DATE, as above
        out.update(
            {
                "columns": list(table.column_names),
                "rows": arrow_rows(table, cancellation),
                "row_count": table.num_rows,
            }
        )
        return out, table

    def compile_select(
        self, query: Any, dialect: str | None = "duckdb", pretty: bool = False
    ) -> dict[str, Any]:
        """The SQL of a detail-row query (no rollup stage)."""
        return self._detail(cache_option(query)[0], dialect, pretty, run=False)

    def explain_select(self, query: Any) -> str:
        rd = self._resolved_detail(cache_option(query)[0])
        return explain_detail(self.model, self.graph, rd)

    @_audited("select")
    def select(
        self,
        query: Any,
        dialect: str | None = None,
        connection: str | None = None,
        timeout_secs: float | object | None = ENGINE_DEFAULT,
        db_path: str | Path | None = None,
        *,
        cancellation: CancellationToken | None = None,
        cache: bool = True,
    ) -> QueryResult:
        """Detail rows: fields of `from` and of what it reaches many-to-one, filtered, ordered
        and limited (100 rows unless `limit` says otherwise), never aggregated."""
        query, cached = cache_option(query)
        profile = self._profile(connection, db_path)
        out = self._detail(query, dialect or profile.dialect, False, run=True)
        if dialect is not None:
            check_dialect(get_dialect(dialect).key, connection, profile.type)
        table = self._run(
            profile, out["sql"], self._timeout(timeout_secs), cancellation, cached and cache
        )
        if not get_dialect(profile.dialect).canonical_result_types:
            table = conform(table, {})  # DuckDB's value types: UTC wall clocks, int64, float64
        out.update(
            {
                "columns": list(table.column_names),
                "rows": arrow_rows(table, cancellation),
                "row_count": table.num_rows,
            }
        )
        return QueryResult(out, table)

    @_audited("attribute")
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
        if self.scope is not None:  # the metric, its dimensions and filter: as a metric query
            self._compiled(_attribution_gate(req), None, False)
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
        if self.scope is not None:  # it reads every table's columns: the owner's check only
            raise self.scope.denied("action", "validate_sources")
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
        if self.scope is not None:
            return self._visible_lineage(metric, redact_sql)
        return lineage_graph(self.model, self.graph, metric, redact_sql)

    def lineage_text(self, metric: str) -> str:
        if self.scope is not None:
            return lineage_text(self._visible_lineage(metric, False))
        return lineage_text(lineage_graph(self.model, self.graph, metric, False))

    def _visible_lineage(self, metric: str | None, redact_sql: bool) -> dict[str, Any]:
        """Lineage of what the user sees, with the model's own sources (not the filters)."""
        assert self.scope is not None
        if isinstance(metric, str) and metric in self.model.metrics:
            self.scope.check_metric(metric)
        visible = self.scope.visible_model()
        try:
            return lineage_graph(visible, JoinGraph(visible), metric, redact_sql)
        except OsiError as err:
            raise self._guarded(err) from None

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
        cache: bool | None = None,
        store: Any = None,
    ) -> pa.Table:
        """Run `sql`, through the result cache when `cache` is True (a query's answer; None:
        a catalog probe, never cached). A hit is the stored Arrow table (immutable, shared).
        `store`: the rollup store version the SQL was planned on (it must run on it)."""
        conkey = _con_key(profile)
        results = self.results
        if results is None or cache is None:
            return self._run_now(profile, conkey, sql, timeout_secs, cancellation, store)
        if not cache:
            results.note_bypass()
            return self._run_now(profile, conkey, sql, timeout_secs, cancellation, store)
        policy = cache_policy(profile, self.cache_ttl, self._remote_sources)
        if not policy.cacheable:
            return self._run_now(profile, conkey, sql, timeout_secs, cancellation, store)
        version = self._data_version(profile, conkey, policy, timeout_secs)
        key = (self._fingerprint, conkey, sql)
        hit = results.get(key, version)
        if hit is not None:  # answered as a run would be: cancellable, within the budget
            if cancellation is not None and cancellation.cancelled:
                raise cancellation.stopped_error()
            budget = budget_of(cancellation)
            if budget is not None:
                budget.check_table(hit)
            return hit
        table = self._run_now(profile, conkey, sql, timeout_secs, cancellation, store)
        if settled(version[0]):
            results.put(key, version, table, policy.ttl)
        return table

    def _data_version(
        self, profile: Profile, conkey: str, policy: CachePolicy, timeout_secs: float | None
    ) -> tuple[Any, ...]:
        """What must not change for a stored answer to stand: the connection's files and the
        model's data files (size, mtime_ns, inode), and the refresh key's current value."""
        files = files_version((*profile_files(profile), *self._model_files, *self._extra_files))
        if policy.refresh_key is None:
            return (files,)
        now = time.monotonic()
        seen = self._refreshed.get(conkey)
        if seen is None or now - seen[0] >= policy.refresh_every or policy.refresh_every == 0:
            sql = refresh_key_sql(policy.refresh_key, get_dialect(profile.dialect).name)
            table = self._run_now(profile, conkey, sql, timeout_secs, None)
            seen = self._refreshed[conkey] = (now, repr(table.to_pylist()))
        return (files, seen[1])

    def _run_now(
        self,
        profile: Profile,
        conkey: str,
        sql: str,
        timeout_secs: float | None,
        cancellation: CancellationToken | None,
        store: Any = None,
    ) -> pa.Table:
        with self._con_lock:
            runner = self._open(profile, conkey)
            if store is not None and self._opened_store.get(conkey) != store:
                raise _StoreSwapped
            table = run_cancellable(runner, sql, timeout_secs, cancellation)
        budget = budget_of(cancellation)
        if budget is not None:  # a server's row and byte limits, before a row is built
            budget.check_table(table)
        return table

    def _open(self, profile: Profile, conkey: str) -> Runner:
        """The connection's runner (the caller holds `_con_lock`); one whose files were
        rewritten or swapped since it opened is reopened, so it reads the new data. The
        stamp is taken before and after opening: a swap in between opens again."""
        runner = self._cons.get(conkey)
        if not local_data(profile):
            if runner is None:
                runner = self._cons[conkey] = open_recovering(profile, self.options)
            return runner
        for _ in range(5):
            stamp = files_version((*profile_files(profile), *self._extra_files))
            if runner is not None and self._opened.get(conkey) == stamp:
                return runner
            if runner is not None:
                runner.close()
            runner = self._cons[conkey] = open_recovering(profile, self.options)
            runner.connect()  # opened (its files attached) before the stamps below are taken
            self._opened[conkey] = stamp
            self._table_rows[conkey] = table_rows_of(runner)
            self._opened_store[conkey] = files_version(self._extra_files)
        return runner

    def _scan_sizes(self, profile: Profile) -> ScanSizes:
        """The fact tables of this model the connection knows to be small (its table
        statistics, read once when it opened: dosi.plan.scan_sizes); nothing for a
        connection that is not a local file or memory database."""
        conkey = _con_key(profile)
        rows = self._table_rows.get(conkey)
        if rows is None:
            if not local_data(profile):
                return UNKNOWN_SIZES
            try:
                with self._con_lock:
                    self._open(profile, conkey)
            except ExecuteError:  # the run reports it, after the query's own checks
                return UNKNOWN_SIZES
            rows = self._table_rows.get(conkey)
            if rows is None:
                return UNKNOWN_SIZES
        least = self.pre_aggregate_min_rows
        seen = self._sizes.get(conkey)
        if seen is not None and seen[0] is rows and seen[1] == least:
            return seen[2]
        sizes = scan_sizes(self.model, rows, least)
        self._sizes[conkey] = (rows, least, sizes)
        return sizes

    def runner(self, connection: str | None = None) -> Runner:
        """The open runner of a connection (to cancel a running query from another thread)."""
        profile = self._profile(connection, None)
        key = _con_key(profile)
        open_one = self._cons.get(key)  # no lock: a query may hold it while it runs
        if open_one is not None:
            return open_one
        with self._con_lock:
            return self._open(profile, key)

    def progress(
        self, connection: str | None = None, db_path: str | Path | None = None
    ) -> float | None:
        """Percent done of the statement running on a connection, where its engine reports
        it (DuckDB's query progress); None elsewhere, or when no statement runs. Safe to call
        from another thread while the query runs (the command line's progress line)."""
        profile = self._profile(connection, db_path)
        report = getattr(self._cons.get(_con_key(profile)), "progress", None)  # no lock
        return report() if callable(report) else None

    def cache_stats(self) -> dict[str, Any] | None:
        """The result cache's counters and sizes (hits, misses, evictions, ...); None when
        this engine has no cache."""
        return None if self.results is None else self.results.stats()

    # -- rollups (docs/rollups-and-cache.md) ---------------------------------------------------
    def _rollup_version(
        self,
        profile: Profile,
        r: RollupIr,
        fresh: bool = False,
        memo: dict[str, str] | None = None,
    ) -> str | None:
        """The data version a rollup is built from and checked against: the connection's and
        the model's files, and the rollup's refresh key (else the connection's
        `cache_refresh_key`), read at most every `refresh.check_every` seconds (`fresh`: now;
        `memo`: keys already read for this query). None: nothing says whether a server's
        data changed (no refresh key)."""
        files = files_version((*profile_files(profile), *self._model_files))
        key = r.refresh.key or profile.options.get("cache_refresh_key")
        if not isinstance(key, str):
            known = local_data(profile) and not self._remote_sources
            return repr(files) if known else None
        conkey = _con_key(profile)
        if memo is not None and key in memo:
            return repr((files, memo[key]))
        now = time.monotonic()
        seen = self._refreshed.get(f"{conkey}|{key}")
        if fresh or seen is None or now - seen[0] >= r.refresh.check_every:
            sql = refresh_key_sql(key, get_dialect(profile.dialect).name)
            table = self._run_now(profile, conkey, sql, None, None)
            seen = self._refreshed[f"{conkey}|{key}"] = (now, repr(table.to_pylist()))
        if memo is not None:
            memo[key] = seen[1]
        return repr((files, seen[1]))

    def _store_profile(self, profile: Profile) -> Profile | None:
        """The embedded store's own DuckDB connection, for queries on another engine's
        connection that its rollups answer whole (None: the store is that connection's)."""
        if not isinstance(self.rollup_store, RollupStore) or profile.embedded_database:
            return None
        return Profile("dosi_rollup_store", "duckdb", ":memory:")

    def _in_warehouse(self, profile: Profile) -> bool:
        """The rollups live in this connection's warehouse (a schema of it)."""
        return isinstance(self.rollup_store, WarehouseRollupStore) and profile.executable

    def _built(self, profile: Profile) -> tuple[Any, dict[str, BuiltRollup]]:
        """(the store's version, the built rollups) of the store `profile` reads."""
        store = self.rollup_store
        if isinstance(store, WarehouseRollupStore):
            conkey = _con_key(profile)
            dialect = get_dialect(profile.dialect).name
            built = store.status(
                lambda sql: self._run_now(profile, conkey, sql, None, None), dialect
            )
            return None, built
        assert store is not None
        return store.versioned_status()

    def _store_table(self, name: str) -> exp.Table:
        if isinstance(self.rollup_store, WarehouseRollupStore):
            return self.rollup_store.table(name)
        return exp.Table(
            this=exp.to_identifier(name, quoted=True),
            db=exp.to_identifier("main"),
            catalog=exp.to_identifier(STORE_ALIAS),
        )

    def _store_refusal(self, profile: Profile) -> str | None:
        """Why rollups of this engine's store cannot serve queries on `profile`, or None."""
        if isinstance(self.rollup_store, WarehouseRollupStore):
            if not profile.executable or not get_dialect(profile.dialect).transactional_ddl:
                return (
                    f"rollups stored in the warehouse need transactional DDL (PostgreSQL); "
                    f"connection {profile.name} is {profile.type}"
                )
            return None
        if not profile.executable:
            return f"connection {profile.name} ({profile.type}) does not run queries"
        return None

    def _available(self, profile: Profile) -> AvailableRollups | None:
        """The rollups a query on `profile` may read: built from this declaration and from
        the data as it is now (a rollup whose source changed is stale: the fact table)."""
        if not self.rollups or self.rollup_store is None:
            return None
        why = self._store_refusal(profile)
        if why is not None:
            return AvailableRollups(unusable={r.name: (r.dataset, why) for r in self.rollups})
        stamp, built = self._built(profile)
        usable, tables, unusable = [], {}, {}
        memo: dict[str, str] = {}  # each refresh key read once per query
        for r in self.rollups:
            b = built.get(r.name)
            version = self._rollup_version(profile, r, memo=memo) if b is not None else None
            if b is None:
                unusable[r.name] = (r.dataset, "not built (dosi rollups build)")
            elif b.signature != r.signature:
                unusable[r.name] = (r.dataset, "built from another declaration or model")
            elif version is None and not _within_budget(r, b.built_at):
                unusable[r.name] = (
                    r.dataset,
                    f"dosi cannot see whether connection {profile.name}'s data changed "
                    "since the build: declare refresh: {key: SELECT ...} (or the "
                    "connection's cache_refresh_key), or a staleness_budget",
                )
            elif b.source_version != version and not _within_budget(r, b.built_at):
                unusable[r.name] = (r.dataset, "stale: the data changed since it was built")
            else:
                usable.append(r)
                tables[r.name] = self._store_table(r.name)
        sizes = {r.name: built[r.name].rows for r in usable}
        return AvailableRollups(tuple(usable), tables, unusable, stamp, sizes)

    def _rollup_profile(self, connection: str | None, db_path: str | Path | None) -> Profile:
        if self.rollup_store is None or not self.rollups:
            raise ArgumentError(
                "this engine has no rollups declared",
                hint="pass rollups= a rollup file, or put <model>.rollups.yaml beside the "
                "model (docs/rollups-and-cache.md)",
            )
        profile = self._profile(connection, db_path)
        why = self._store_refusal(profile)
        if why is not None:
            raise ArgumentError(
                why, hint="pass db_path= the DuckDB file (or a duckdb connection profile)"
            )
        return profile

    def _pick(self, names: list[str] | None) -> list[RollupIr]:
        known = {r.name: r for r in self.rollups}
        for n in names or []:
            if n not in known:
                raise ArgumentError(
                    f"unknown rollup {bounded(n, 40)}", candidates=closest(str(n), known)
                )
        return [r for r in self.rollups if names is None or r.name in names]

    def rollups_build(
        self,
        names: list[str] | None = None,
        connection: str | None = None,
        db_path: str | Path | None = None,
        *,
        only_stale: bool = False,
        since: str | dt.date | None = None,
    ) -> dict[str, Any]:
        """Build (all, or `names`) from the warehouse and swap them in at once (a new store
        file, or new warehouse tables renamed in one transaction); `only_stale=True`
        (refresh) rebuilds only those not fresh. `since` (a date on a bucket boundary of
        each rollup's grain): an incremental refresh, recomputing only the time buckets from
        `since` on and keeping the older stored rows as they are (you assert the older data
        did not change). The status after."""
        profile = self._rollup_profile(connection, db_path)
        assert self.rollup_store is not None
        dia = get_dialect(profile.dialect)
        start = _since_date(since)
        picked = self._pick(names)
        for r in picked:
            if start is not None and r.grain is not None and not aligned(start, r.grain):
                raise ArgumentError(
                    f"since {start.isoformat()} does not start a {r.grain} bucket of rollup "
                    f"{r.name}",
                    hint="pass the first day of a bucket (a month: YYYY-MM-01), or refresh "
                    "without since (a full rebuild)",
                )
        built = self._built(profile)[1]
        if only_stale:
            states = {
                s["name"]: s["state"] for s in self.rollups_status(connection, db_path)["rollups"]
            }
            picked = [r for r in picked if states.get(r.name) != "fresh"]
        stored = dia.name if self._in_warehouse(profile) else "duckdb"
        fetch = not self._in_warehouse(profile) and not profile.embedded_database
        builds = []
        memo: dict[str, str] = {}
        for r in picked:
            b = built.get(r.name)
            # taken before the rows are read: a change during the build leaves it stale
            version = self._rollup_version(profile, r, fresh=True, memo=memo) or ""
            partial = start is not None and b is not None and b.signature == r.signature
            partial = partial and not r.joined  # row numbers: rebuilt whole
            if partial and r.time is not None:
                assert start is not None
                fill = rollup_select(self.model, r, dia, start).sql(dialect=dia.name)
                keep = kept_partitions(self.model, r, start).sql(dialect=stored)
                builds.append(RollupBuild(r.name, fill, r.signature, keep, version))
            else:
                fill = rollup_select(self.model, r, dia).sql(dialect=dia.name)
                builds.append(RollupBuild(r.name, fill, r.signature, None, version))
            if fetch:  # another engine's rows, computed there, copied into the embedded store
                rows = self._run_now(profile, _con_key(profile), builds[-1].sql, None, None)
                builds[-1] = replace(builds[-1], rows=rows)
        if builds:
            self._write_store(profile, builds, ())
        out = self.rollups_status(connection, db_path)
        out["built"] = [b.name for b in builds]
        return out

    def _write_store(self, profile: Profile, builds: list[RollupBuild], drop: list[str]) -> None:
        store = self.rollup_store
        if isinstance(store, RollupStore):
            keep = [r.name for r in self.rollups if r.name not in drop]
            store.write(profile.uri if profile.embedded_database else None, builds, "", keep)
            return
        assert store is not None
        dialect = get_dialect(profile.dialect).name
        if profile.client is not None:  # the application's connection: queries wait meanwhile
            with self._con_lock:
                store.write(_dbapi(self._open(profile, _con_key(profile))), dialect, builds, drop)
            return
        runner = open_recovering(profile, self.options)  # a connection of its own: queries
        try:  # keep running on theirs and read the old tables until the swap
            store.write(_dbapi(runner), dialect, builds, drop)
        finally:
            runner.close()

    def rollups_scheduled(
        self,
        connection: str | None = None,
        db_path: str | Path | None = None,
        now: dt.datetime | None = None,
    ) -> list[str]:
        """Refresh the rollups whose `refresh.every` is due (each whole, or its last
        `refresh.partitions` time buckets); what `dosi serve`'s watcher thread calls. The
        names refreshed."""
        if not any(r.refresh.every is not None for r in self.rollups):
            return []
        profile = self._rollup_profile(connection, db_path)
        now = now or dt.datetime.now(dt.UTC)
        built = self._built(profile)[1]
        states = {
            s["name"]: s["state"] for s in self.rollups_status(connection, db_path)["rollups"]
        }
        by_start: dict[dt.date | None, list[str]] = {}
        for r in self.rollups:
            if due(r, built, states.get(r.name) == "fresh", now):
                by_start.setdefault(partition_start(r, now), []).append(r.name)
        done: list[str] = []
        for start, names in by_start.items():
            self.rollups_build(names, connection, db_path, since=start)
            done += names
        return done

    def rollups_refresh(
        self,
        names: list[str] | None = None,
        connection: str | None = None,
        db_path: str | Path | None = None,
        *,
        since: str | dt.date | None = None,
    ) -> dict[str, Any]:
        """Rebuild the rollups that are missing or stale (their data or declaration changed);
        `since`: only their time buckets from that date on (see `rollups_build`)."""
        return self.rollups_build(names, connection, db_path, only_stale=True, since=since)

    def rollups_status(
        self, connection: str | None = None, db_path: str | Path | None = None
    ) -> dict[str, Any]:
        """Each declared rollup: built or not, fresh or stale (why), rows, when built."""
        profile = self._rollup_profile(connection, db_path)
        assert self.rollup_store is not None
        avail = self._available(profile)
        built = self._built(profile)[1]
        rows = []
        for r in self.rollups:
            b = built.get(r.name)
            why = avail.unusable.get(r.name) if avail is not None else None
            state = "missing"
            if b is not None:
                version = self._rollup_version(profile, r)
                current = b.signature == r.signature and b.source_version == version
                state = "fresh" if current and version is not None else "stale"
            reason = why[1] if why is not None else None
            if why is None and state == "stale":
                reason = "the data changed; serving within its staleness budget"
            rows.append(
                {
                    "name": r.name,
                    "declaration": r.describe(),
                    "state": state,
                    "serving": why is None,
                    "reason": reason,
                    **({"rows": b.rows, "built_at": b.built_at} if b is not None else {}),
                }
            )
        return {"store": str(self.rollup_store.path), "rollups": rows}

    def rollups_drop(
        self,
        names: list[str] | None = None,
        connection: str | None = None,
        db_path: str | Path | None = None,
    ) -> dict[str, Any]:
        """Drop (all, or `names`) from the store; queries then read the fact table."""
        profile = self._rollup_profile(connection, db_path)
        assert self.rollup_store is not None
        gone = sorted({r.name for r in self._pick(names)})
        self._write_store(profile, [], gone)
        out = self.rollups_status(connection, db_path)
        out["dropped"] = gone
        return out

    def close(self) -> None:
        """Close the connections dosi opened (client objects handed in stay open); a user's
        engine from `as_user` leaves them to the engine it came from."""
        if self._borrowed:
            return
        with self._con_lock:
            for runner in self._cons.values():
                runner.close()
            self._cons.clear()
            self._opened.clear()
            self._opened_store.clear()
            self._table_rows.clear()


def _policy_set(access: Any) -> PolicySet | None:
    if access is None:
        return None
    if isinstance(access, PolicySet):
        return access
    config = access if isinstance(access, AccessConfig) else load_access(access)
    if config.policies is None:
        raise ArgumentError("the access file has no `policies`", hint="see docs/access-policies.md")
    return config.policies


def _user_arg(user: Any) -> UserContext:
    if not isinstance(user, UserContext):
        raise ArgumentError(f"user must be a dosi.UserContext, got {type(user).__name__}")
    return user


def _attribution_gate(req: Any) -> dict[str, Any]:
    """The metric query an attribution request reads: checked like any query of the user."""
    query: dict[str, Any] = {"metrics": [req.metric], "group_by": list(req.dimensions)}
    if req.where_sql:
        query["where_sql"] = req.where_sql
    if req.params:
        query["params"] = dict(req.params)
    return query


def _name_arg(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ArgumentError(f"{what} must be a string, got {type(value).__name__}")
    return value


def rollups_beside(model_path: str | Path) -> Path | None:
    """`<model>.rollups.yaml` beside the model file, when it exists."""
    beside = Path(model_path).with_suffix(".rollups.yaml")
    return beside if beside.is_file() else None


def _rollup_file(
    model_path: str | Path | None,
    rollups: str | Path | dict[str, Any] | None,
    store: str | Path | None,
) -> tuple[Any, Path | None, str | None]:
    """The rollup declarations (parsed YAML), the embedded store's path, or the warehouse
    schema the rollups are stored in (docs/rollups-and-cache.md)."""
    base: Path | None = None
    if rollups is None and model_path is not None:
        rollups = rollups_beside(model_path)
    if rollups is None:
        return None, None, None
    if isinstance(rollups, (str, Path)):
        path = Path(rollups)
        data = parse_document(read_model_text(path))
        base = path.parent
        default_store = path.with_suffix(".duckdb")
    elif isinstance(rollups, dict):
        data = rollups
        default_store = None
    else:
        raise ArgumentError(f"rollups must be a file path or a mapping, got {bounded(rollups)}")
    storage = parse_storage(data.get("storage") if isinstance(data, dict) else None)
    if store is None and storage.schema is not None:
        return data, None, storage.schema
    declared = storage.path
    if store is None and declared is not None:
        found = Path(declared)
        store = found if found.is_absolute() or base is None else base / found
    if store is None:
        store = default_store
    if store is None:
        raise ArgumentError(
            "rollups given as a mapping need a store: pass rollup_store= a DuckDB file path, "
            "or declare storage: {schema: NAME} (tables in the warehouse)"
        )
    return data, Path(store), None


def _since_date(value: str | dt.date | None) -> dt.date | None:
    if value is None or (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise ArgumentError(f"since must be a date (YYYY-MM-DD), got {bounded(value)}")


def _within_budget(r: RollupIr, built_at: str) -> bool:
    """A stale rollup still serves for its declared staleness budget after its build."""
    if r.staleness_budget is None:
        return False
    try:
        built = dt.datetime.fromisoformat(built_at).replace(tzinfo=dt.UTC)
    except ValueError:
        return False
    return (dt.datetime.now(dt.UTC) - built).total_seconds() < r.staleness_budget


def _dbapi(runner: Any) -> Any:
    """The DB-API connection under a runner (a warehouse store writes through it)."""
    inner = runner.connect() if hasattr(runner, "connect") else runner
    con = getattr(inner, "connection", None)
    if con is None or not hasattr(con, "cursor"):
        raise ExecuteError(
            "config",
            "storing rollups in the warehouse needs a DB-API connection (psycopg)",
            hint="use a postgres connection profile or a psycopg connection",
        )
    return con


class _StoreSwapped(Exception):
    """The rollup store changed between planning a query and running it (replan)."""


def _con_key(profile: Profile) -> str:
    """A connection's identity: its type and uri, or the client object handed in."""
    if profile.client is None:
        return f"{profile.type}:{profile.uri}"
    return f"obj:{profile.name}:{id(profile.client)}"


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


__all__ = ["Diagnostic", "Engine", "QueryResult", "rollups_beside", "validate"]
