"""The D-WINDOW function registry (WM "Function registry"): the SQL window functions each
family may name, by registry level (W1 plain, W2 statistical, W3 two-argument; WIN-ENUM-07/09/10,
WIN-REG-02). Parsers read it to accept a function and to say which family a misplaced one
belongs to (`frame_function`: the frame family and its sugars); the dialect gates read the
spec's `window_function`."""

from __future__ import annotations

from typing import Any

from dosi.ext.window.reader import WindowReader

FRAME_W1: tuple[str, ...] = ("sum", "avg", "min", "max", "count")
FRAME_W2: tuple[str, ...] = ("stddev_pop", "stddev_samp", "var_pop", "var_samp")
FRAME_W3: tuple[str, ...] = ("covar_pop", "covar_samp", "corr")
#: 1.14: the SQL:2003 linear-regression aggregates, two-argument like W3 (`second` is x)
FRAME_REGR: tuple[str, ...] = (
    "regr_slope",
    "regr_intercept",
    "regr_r2",
    "regr_count",
    "regr_avgx",
    "regr_avgy",
    "regr_sxx",
    "regr_syy",
    "regr_sxy",
)
#: 1.14: the inverse-distribution functions as frame aggregates (`fraction` for the two
#: percentiles; median is percentile_cont at 0.5)
FRAME_PERCENTILES: tuple[str, ...] = ("percentile_cont", "percentile_disc", "median")
FRACTION_FUNCTIONS: frozenset[str] = frozenset({"percentile_cont", "percentile_disc"})
#: 1.15: the distinct count over the window's fact rows, for a COUNT(DISTINCT x) base metric
#: (not a re-aggregation of the per-bucket counts; dosi.sql.window.distinct)
FRAME_DISTINCT: tuple[str, ...] = ("count_distinct",)
FRAME_FUNCTIONS: tuple[str, ...] = (
    FRAME_W1 + FRAME_W2 + FRAME_W3 + FRAME_REGR + FRAME_PERCENTILES + FRAME_DISTINCT
)
TWO_ARG_FUNCTIONS: frozenset[str] = frozenset(FRAME_W3 + FRAME_REGR)
RANK_FUNCTIONS: tuple[str, ...] = (
    "row_number",
    "rank",
    "dense_rank",
    "ntile",
    "percent_rank",
    "cume_dist",
)
VALUE_FUNCTIONS: tuple[str, ...] = ("first_value", "last_value", "nth_value")

_BARE_STATS: dict[str, str] = {
    "stddev": "stddev_pop or stddev_samp",
    "variance": "var_pop or var_samp",
    "var": "var_pop or var_samp",
    "covar": "covar_pop or covar_samp",
}


def frame_function(r: WindowReader, key: str, value: Any, allow_two_arg: bool) -> str | None:
    """W1 / W2 / W3 registry levels (WIN-ENUM-07/09/10, WIN-REG-02), and the 1.14 regression
    and percentile functions."""
    if value is None:
        r.err(key, f"is required (one of {', '.join(FRAME_FUNCTIONS)})")
        return None
    if isinstance(value, str) and value in FRAME_FUNCTIONS:
        if value in FRAME_W2:
            r.feature("window.frame.function (W2 statistical)")
        if value in TWO_ARG_FUNCTIONS:
            if not allow_two_arg:
                r.err(
                    key,
                    f'"{value}" is a two-argument function: it needs `second`, which only '
                    "the general frame form has",
                    hint=f'write {{"frame": {{"function": "{value}", "preceding": 2, '
                    '"second": "<metric>"}}',
                )
                return None
            r.feature(
                "window.frame.function (regr_*)"
                if value in FRAME_REGR
                else "window.frame.function (W3 two-argument)"
            )
        if value in FRAME_PERCENTILES:
            r.feature("window.frame.function (percentiles)")
        if value in FRAME_DISTINCT:
            r.feature("window.frame.function (count_distinct)")
        return value
    if isinstance(value, str) and value.lower() in _BARE_STATS:
        r.err(
            key,
            f'bare "{value}" is rejected: it means different things across engines',
            hint=f"use the explicit form {_BARE_STATS[value.lower()]}",
        )
        return None
    if isinstance(value, str) and value in RANK_FUNCTIONS:
        hint = f'"{value}" is a rank-family function: use {{"rank": {{"function": "{value}"}}}}'
    elif isinstance(value, str) and value in VALUE_FUNCTIONS:
        hint = f'"{value}" is a value-family function: use {{"value": {{"function": "{value}"}}}}'
    else:
        hint = None
    r.enum(key, value, FRAME_FUNCTIONS, hint)
    return None
