"""SQL Server 2022+ (compile only): no NULLS clause (a leading CASE key instead); DATETRUNC and
IS [NOT] DISTINCT FROM exist since 2022."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.window_support import TSQL_LACKS

# a time spine: a recursive WITH stops at 100 steps without OPTION (MAXRECURSION 0)
# DATETRUNC(week, ...) follows @@DATEFIRST (Sunday in us_english); iso_week is Monday's
TSQL = Dialect(
    "tsql",
    unsupported_window_functions=TSQL_LACKS,
    null_ordering=sqlglot_null_ordering("tsql"),
    supports_nulls_clause=False,
    spine_series=None,
    week_unit="ISO_WEEK",
    percentile_style=None,  # PERCENTILE_CONT is analytic (OVER) only
)
