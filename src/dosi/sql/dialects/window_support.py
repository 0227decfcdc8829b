"""Which 1.14 window shapes each engine lacks, as gate names for
`Dialect.unsupported_window_functions` (WM "Function registry"; the gate raises
`dialect_unsupported_window_function` before any SQL runs).

Gate names are the frame functions (`regr_slope`, `median`, ...) and the frame clauses a spec
lists in `window_features`: `groups` (GROUPS units), `exclude` (EXCLUDE CURRENT ROW / GROUP /
TIES), `ignore_nulls` (the value family's IGNORE NULLS) and (1.15) `range_interval` (a RANGE
frame over the time key with an INTERVAL bound: a frame's `span`). Every row of the executed engines
was checked on the engine itself (tests/window/test_window_roadmap_engines.py); the
compile-only dialects follow their vendors' documentation, and gate whatever a frame form of
it is not documented for (an ordered-set PERCENTILE_CONT ... OVER (PARTITION BY ...) with no
frame is not a frame function).
"""

from __future__ import annotations

from dosi.ext.window.functions import FRAME_PERCENTILES, FRAME_REGR

REGR: frozenset[str] = frozenset(FRAME_REGR)
PERCENTILES: frozenset[str] = frozenset(FRAME_PERCENTILES)
GROUPS_EXCLUDE: frozenset[str] = frozenset({"groups", "exclude"})
IGNORE_NULLS: frozenset[str] = frozenset({"ignore_nulls"})
#: 1.15 `span`: executed on DuckDB and PostgreSQL; the engines whose RANGE offsets are numbers
#: only (SQLite, MariaDB, ClickHouse, BigQuery), or that have no RANGE offsets at all (SQL
#: Server, Redshift), and those not yet checked on the engine, are gated
RANGE_INTERVAL: frozenset[str] = frozenset({"range_interval"})
#: 1.15 `count_distinct` frames (a correlated count over the distinct fact rows): executed on
#: DuckDB and PostgreSQL, gated elsewhere until checked on the engine
DISTINCT_FRAME: frozenset[str] = frozenset({"count_distinct"})

#: PostgreSQL: ordered-set aggregates take no OVER; no IGNORE NULLS (through 17)
POSTGRES_LACKS = IGNORE_NULLS | PERCENTILES
#: DataFusion: no EXCLUDE, no percentile_disc; IGNORE NULLS exists but the PostgreSQL
#: generator it renders with would drop it, so it is gated rather than mis-rendered
DATAFUSION_LACKS = (
    frozenset({"exclude", "percentile_disc"}) | IGNORE_NULLS | RANGE_INTERVAL | DISTINCT_FRAME
)
#: SQLite has GROUPS and EXCLUDE (3.28); no regression, percentile or IGNORE NULLS
SQLITE_LACKS = REGR | PERCENTILES | IGNORE_NULLS | RANGE_INTERVAL | DISTINCT_FRAME
#: MySQL / MariaDB: ROWS and RANGE only ("Frame exclusion is not supported yet")
MYSQL_LACKS = GROUPS_EXCLUDE | IGNORE_NULLS | REGR | PERCENTILES | RANGE_INTERVAL | DISTINCT_FRAME
#: ClickHouse: GROUPS yes; no EXCLUDE; IGNORE NULLS parses but nth_value does not honour it;
#: its exact quantiles are other functions (quantileExact*), not rendered here
CLICKHOUSE_LACKS = (
    frozenset({"exclude"}) | IGNORE_NULLS | PERCENTILES | RANGE_INTERVAL | DISTINCT_FRAME
)
#: Spark: no GROUPS or EXCLUDE; its ANSI percentile_cont / percentile_disc / median take no
#: window frame, but percentile(x, p) (interpolated: percentile_cont) does
SPARK_LACKS = GROUPS_EXCLUDE | frozenset({"percentile_disc"}) | RANGE_INTERVAL | DISTINCT_FRAME
#: Hive: Spark's, and sqlglot's Hive generator writes no IGNORE NULLS
HIVE_LACKS = SPARK_LACKS | IGNORE_NULLS
#: Snowflake: no GROUPS / EXCLUDE; its percentiles take no window frame
SNOWFLAKE_LACKS = GROUPS_EXCLUDE | PERCENTILES | RANGE_INTERVAL | DISTINCT_FRAME
#: BigQuery: no GROUPS / EXCLUDE, no REGR_*; PERCENTILE_CONT takes no window frame
BIGQUERY_LACKS = GROUPS_EXCLUDE | REGR | PERCENTILES | RANGE_INTERVAL | DISTINCT_FRAME
#: Trino has REGR_SLOPE / REGR_INTERCEPT only; no EXCLUDE; GROUPS not on every release
TRINO_LACKS = (
    GROUPS_EXCLUDE
    | (REGR - {"regr_slope", "regr_intercept"})
    | PERCENTILES
    | RANGE_INTERVAL
    | DISTINCT_FRAME
)
PRESTO_LACKS = TRINO_LACKS | IGNORE_NULLS
#: Oracle: GROUPS / EXCLUDE only from 21c; percentiles take no window frame
ORACLE_LACKS = GROUPS_EXCLUDE | PERCENTILES | RANGE_INTERVAL | DISTINCT_FRAME
#: SQL Server: no GROUPS / EXCLUDE / REGR_* / NTH_VALUE IGNORE NULLS; percentiles unframed
TSQL_LACKS = GROUPS_EXCLUDE | REGR | PERCENTILES | IGNORE_NULLS | RANGE_INTERVAL | DISTINCT_FRAME
#: Redshift: no GROUPS / EXCLUDE / REGR_*; percentiles unframed
REDSHIFT_LACKS = GROUPS_EXCLUDE | REGR | PERCENTILES | RANGE_INTERVAL | DISTINCT_FRAME
