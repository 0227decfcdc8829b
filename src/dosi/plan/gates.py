"""Dialect gates for window functions (WM "Function registry"): a structured error, never SQL
the warehouse would reject."""

from __future__ import annotations

from dosi.errors import QueryError
from dosi.ext import FrameWindow, RankWindow
from dosi.query.resolve import ResolvedQuery
from dosi.sql.dialects import Dialect

_TWO_ARG = frozenset({"covar_pop", "covar_samp", "corr"})


def check_window_gates(rq: ResolvedQuery, dialect: Dialect) -> None:
    for m in rq.planned_metrics:
        w = m.window
        fn = None
        two_arg = isinstance(w, FrameWindow) and w.function in _TWO_ARG
        if (two_arg and not dialect.supports_two_arg_stat_window) or (
            isinstance(w, RankWindow)
            and w.function == "cume_dist"
            and not dialect.supports_cume_dist
        ):
            fn = w.function  # type: ignore[union-attr]
        if fn is not None:
            raise QueryError(
                "dialect_unsupported_window_function",
                f"window metric `{m.name}` needs {fn.upper()} as a window function, which "
                f"{dialect.name} does not support",
                metrics=[m.name],
                hint="query this metric on another engine, or precompute it in the dataset SQL",
            )
