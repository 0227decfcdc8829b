"""Argument rules and error texts shared by every implementation of the window UDFs.

`window-udf.md` leaves validation open (CHECKLIST UDF-GAP-02..04); the rules decided for dosi are
kept here once so the pure-Python reference, the DuckDB macros and the DataFusion UDFs reject the
same inputs with the same words:

* window lengths (`interval`, `slide`, `size`, `step`, `gap`) are positive, fixed-length (no month
  or year part) and a whole number of milliseconds; `offset` may have any sign;
* `hop` needs `slide <= size` (otherwise some timestamps fall in no window at all);
* `cumulate` needs `step <= size` and `size` a multiple of `step`.

Engines raise these as text starting with ``[invalid_window_argument]``; `error_from_engine`
turns such an engine exception back into a `QueryError`.
"""

from __future__ import annotations

import re
from typing import Final

from dosi.errors import QueryError

INVALID_WINDOW_ARGUMENT: Final = "invalid_window_argument"

#: Accepted argument counts per function (window-udf.md; UDF-TUM-01, HOP-01, SES-01, CUM-01/02).
WINDOW_FUNCTION_ARITIES: Final[dict[str, tuple[int, ...]]] = {
    "tumble": (2, 3),
    "tumble_end": (2, 3),
    "hop": (3, 4),
    "hop_end": (3, 4),
    "session": (2,),
    "cumulate": (3,),
    "cumulate_end": (3,),
}

#: Argument names per function, in call order (the optional `offset` last).
WINDOW_FUNCTION_PARAMETERS: Final[dict[str, tuple[str, ...]]] = {
    "tumble": ("ts", "interval", "offset"),
    "tumble_end": ("ts", "interval", "offset"),
    "hop": ("ts", "slide", "size", "offset"),
    "hop_end": ("ts", "slide", "size", "offset"),
    "session": ("ts", "gap"),
    "cumulate": ("ts", "step", "size"),
    "cumulate_end": ("ts", "step", "size"),
}

# Problem phrases: the tail of "<function>: argument '<argument>' <problem>".
NOT_FIXED_LENGTH: Final = (
    "must be a fixed-length interval; months and years have no fixed length in milliseconds"
)
NOT_WHOLE_MS: Final = "must be a whole number of milliseconds"
NOT_POSITIVE: Final = "must be a positive interval"
NOT_AN_INTERVAL: Final = "is not an interval"
SLIDE_LARGER_THAN_SIZE: Final = "must not be larger than argument 'size'"
STEP_LARGER_THAN_SIZE: Final = "must not be larger than argument 'size'"
SIZE_NOT_MULTIPLE_OF_STEP: Final = "must be a multiple of argument 'step'"

_HINTS: Final[dict[str, str]] = {
    NOT_FIXED_LENGTH: "use days or weeks instead, e.g. INTERVAL '30' DAY",
    NOT_WHOLE_MS: "window math runs in milliseconds; round the interval to whole milliseconds",
    NOT_POSITIVE: "window lengths must be greater than zero",
}


def message(function: str, argument: str, problem: str) -> str:
    """The human text of a rejection, naming the function and the argument."""
    return f"{function}: argument '{argument}' {problem}"


def engine_message(function: str, argument: str, problem: str) -> str:
    """The text an engine raises (DuckDB `error()`, DataFusion UDF exception)."""
    return f"[{INVALID_WINDOW_ARGUMENT}] {message(function, argument, problem)}"


def window_argument_error(function: str, argument: str, problem: str) -> QueryError:
    """A `QueryError` with code `invalid_window_argument` naming the function and argument."""
    return QueryError(
        INVALID_WINDOW_ARGUMENT,
        message(function, argument, problem),
        hint=_HINTS.get(problem),
        detail={"function": function, "argument": argument},
    )


_ENGINE_TEXT = re.compile(
    r"\[" + INVALID_WINDOW_ARGUMENT + r"\] (?P<function>\w+): argument '(?P<argument>\w+)' "
    r"(?P<problem>[^\"\n]*)"
)


def error_from_engine(exc: BaseException) -> QueryError | None:
    """Rebuild the `QueryError` from a DuckDB/DataFusion exception raised by a window UDF.

    Returns None when the exception did not come from the window-argument checks.
    """
    found = _ENGINE_TEXT.search(str(exc))
    if found is None:
        return None
    problem = found["problem"].rstrip("\\'\" )")
    return window_argument_error(found["function"], found["argument"], problem)


def check_window_length(function: str, argument: str, value_ms: int) -> int:
    """Reject a non-positive window length (milliseconds); return it unchanged."""
    if isinstance(value_ms, bool) or not isinstance(value_ms, int):
        raise window_argument_error(function, argument, NOT_WHOLE_MS)
    if value_ms <= 0:
        raise window_argument_error(function, argument, NOT_POSITIVE)
    return value_ms


def check_offset(function: str, offset_ms: int) -> int:
    """An offset is any whole number of milliseconds (positive, zero or negative)."""
    if isinstance(offset_ms, bool) or not isinstance(offset_ms, int):
        raise window_argument_error(function, "offset", NOT_WHOLE_MS)
    return offset_ms


def check_hop(function: str, slide_ms: int, size_ms: int, offset_ms: int) -> None:
    """Validate `hop`/`hop_end` arguments (positive lengths, slide <= size)."""
    check_window_length(function, "slide", slide_ms)
    check_window_length(function, "size", size_ms)
    check_offset(function, offset_ms)
    if slide_ms > size_ms:
        raise window_argument_error(function, "slide", SLIDE_LARGER_THAN_SIZE)


def check_cumulate(function: str, step_ms: int, size_ms: int) -> None:
    """Validate `cumulate`/`cumulate_end` arguments (step <= size, size % step == 0)."""
    check_window_length(function, "step", step_ms)
    check_window_length(function, "size", size_ms)
    if step_ms > size_ms:
        raise window_argument_error(function, "step", STEP_LARGER_THAN_SIZE)
    if size_ms % step_ms != 0:
        raise window_argument_error(function, "size", SIZE_NOT_MULTIPLE_OF_STEP)
