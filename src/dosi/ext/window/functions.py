"""The D-WINDOW function registry (WM "Function registry"): the SQL window functions each
family may name, by registry level (W1 plain, W2 statistical, W3 two-argument; WIN-ENUM-07/09/10,
WIN-REG-02). Parsers read it to accept a function and to say which family a misplaced one
belongs to; the dialect gates read the spec's `window_function`."""

from __future__ import annotations

FRAME_W1: tuple[str, ...] = ("sum", "avg", "min", "max", "count")
FRAME_W2: tuple[str, ...] = ("stddev_pop", "stddev_samp", "var_pop", "var_samp")
FRAME_W3: tuple[str, ...] = ("covar_pop", "covar_samp", "corr")
FRAME_FUNCTIONS: tuple[str, ...] = FRAME_W1 + FRAME_W2 + FRAME_W3
TWO_ARG_FUNCTIONS: frozenset[str] = frozenset(FRAME_W3)
RANK_FUNCTIONS: tuple[str, ...] = (
    "row_number",
    "rank",
    "dense_rank",
    "ntile",
    "percent_rank",
    "cume_dist",
)
VALUE_FUNCTIONS: tuple[str, ...] = ("first_value", "last_value", "nth_value")
