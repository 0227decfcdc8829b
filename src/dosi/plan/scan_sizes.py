"""Which fact tables are known to be small: the cost rule of the day pre-aggregation (issue 27
item 3).

Grouping by the raw date first and rolling the days up to the query's grain pays when a scan
reads many rows per day (a 10M-row table: 0.3-0.5x the time of one GROUP BY), and costs on a
small table (a few thousand rows: 1.3-1.4x), where the extra aggregate and its hash table are
the whole query. Both plans give the same rows (the measures roll up exactly; `ROLLUP_AGGS`), so
the rule only ever chooses between two equal answers. The sizes are what a connection knows at
connect time (DuckDB's table statistics); a dataset whose size is unknown (a SQL source, a view,
a file, a warehouse without statistics, a row-filtered user's source) keeps the
pre-aggregation: the plan that is right at scale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

from dosi.ir.model import ModelIr

#: below this many rows a fact table is read in one GROUP BY. Measured on DuckDB 2.0 (shop
#: example, month and year rollups): pre-aggregation 1.3-1.4x at 4,000 rows, about even at
#: 50,000-100,000, 0.3x at 1,000,000.
PRE_AGGREGATE_MIN_ROWS = 50_000


@dataclass(frozen=True)
class ScanSizes:
    """The datasets whose table holds fewer than `PRE_AGGREGATE_MIN_ROWS` rows."""

    small: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        """Part of a plan cache key: two connections with other sizes compile apart."""
        return ",".join(sorted(self.small))


#: nothing known: every dataset is planned as a large one
UNKNOWN_SIZES = ScanSizes()


def table_name(source: exp.Expression) -> str | None:
    """`catalog.schema.table` (lower case, as far as the source spells it) of a plain table
    source; None for a subquery, a function or a file."""
    if not isinstance(source, exp.Table) or not isinstance(source.this, exp.Identifier):
        return None
    parts = [p for p in (source.catalog, source.db, source.name) if p]
    return ".".join(parts).lower()


def scan_sizes(
    model: ModelIr, table_rows: Mapping[str, int], min_rows: int = PRE_AGGREGATE_MIN_ROWS
) -> ScanSizes:
    """The model's small datasets, from a connection's row counts keyed by every spelling of
    each table (`t`, `s.t`, `c.s.t`, lower case; a short spelling two tables share holds the
    larger count)."""
    small = set()
    for name, ds in model.datasets.items():
        table = table_name(ds.source)
        rows = table_rows.get(table) if table is not None else None
        if rows is not None and rows < min_rows:
            small.add(name)
    return ScanSizes(frozenset(small)) if small else UNKNOWN_SIZES
