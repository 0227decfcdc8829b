"""Streaming windows in metric queries: the group-by syntax (window-udf.md) parsed into
`StreamWindow` values, and the rules a query must follow (the plan shape is
`dosi.plan.builder.stream_window`, the SQL `dosi.sql.stream_window`).

A group-by item can bucket a time axis (``metric_time`` or a time field such as
``events.event_ts``) into streaming windows (window-udf.md: tumble, hop, cumulate, session).
The item yields two output columns, ``window_start`` and ``window_end`` (microsecond timestamps
without time zone, UDF-GEN-03), in place of the time item.

Syntax (one string form and one object form per window type; the first argument is always the
window length)::

    "metric_time:tumble(1 hour)"                   {"type": "tumble", "size": "1 hour"}
    "metric_time:tumble(1 hour, 15 minutes)"       {"type": "tumble", "size": "1 hour",
                                                    "offset": "15 minutes"}
    "metric_time:hop(15 minutes, 5 minutes)"       {"type": "hop", "size": "15 minutes",
                                                    "slide": "5 minutes"}
    "metric_time:hop(15 minutes, 5 minutes, 1 minute)"   (size, slide, offset)
    "metric_time:cumulate(1 day, 1 hour)"          {"type": "cumulate", "size": "1 day",
                                                    "step": "1 hour"}
    "metric_time:session(30 minutes)"              {"type": "session", "gap": "30 minutes"}

The object form is ``{"field": "metric_time", "window": {...}}``; ``"window"`` may also hold the
string form (``"hop(15 minutes, 5 minutes)"``). In the string form an argument may be named
(``hop(slide=5 minutes, size=15 minutes)``); arguments are separated by commas, so write a
combined interval without one (``"1 hour 30 minutes"`` or ``"PT1H30M"``). Intervals are what
`dosi.udf.parse_interval_ms` reads (``"5 minutes"``, ``"INTERVAL '1' HOUR"``, ``"PT30S"``); in the
object form an integer is milliseconds. Window type and argument names are case-insensitive.

Semantics (decided for dosi, CHECKLIST UDF-GAP-04/05; windows are half-open ``[start, end)``):

* ``tumble(size[, offset])``: windows ``[offset + j*size, offset + (j+1)*size)``; each row is in
  exactly one (UDF-TUM-02/03). ``offset`` may be negative.
* ``hop(size, slide[, offset])``: windows of length ``size`` starting every ``slide`` on the grid
  ``offset + j*slide``; a row counts in *every* window that contains it (``ceil(size/slide)`` or
  ``floor(size/slide)`` windows), not only the earliest one that the ``hop`` UDF returns
  (UDF-HOP-02/04). ``slide <= size``.
* ``cumulate(size, step)``: epochs ``[j*size, (j+1)*size)`` (aligned to 1970-01-01, as the
  ``cumulate`` UDF, UDF-CUM-01); inside an epoch the windows ``[epoch, epoch + i*step)`` for
  ``i = 1..size/step``; a row counts in every window of its epoch that ends after it. ``size`` is a
  multiple of ``step``. No offset. (1970-01-01 was a Thursday: 1-week tumble / cumulate windows
  start on Thursdays unless shifted with an offset, e.g. ``tumble(1 week, -3 days)``.)
* ``session(gap)``: per combination of the *other* group-by values, events ordered by time; a
  new session starts when the time since the previous event is larger than ``gap`` (a gap of
  exactly ``gap`` continues the session). ``window_start`` is the first event's time and
  ``window_end`` the last event's time plus ``gap``.

Rows whose event time is NULL belong to no window. Windows without rows are not returned (no
densification). ``where_sql`` and ``time_range`` filter rows by event time *before* windowing,
so windows at the edges of a ``time_range`` hold only the rows inside it (and sessions are cut
there). Every metric is aggregated per window from the rows, so COUNT DISTINCT and ratios are
exact per window (hop and cumulate rows are expanded to their windows before aggregating).

Rules: lengths are positive, fixed-length (no months or years) and whole milliseconds
(`dosi.udf.validation`); at most one streaming window per query; a hop or cumulate gives at
most `MAX_WINDOWS_PER_ROW` windows per row; a grain and a window on one item are exclusive;
D-WINDOW metrics with a streaming window are ``not_implemented``; a session over metrics of
several datasets is ``not_implemented`` (tumble, hop and cumulate merge several datasets on
``window_start``/``window_end`` and the other group-by values). Without ``order_by`` rows are
ordered by ``window_start``, then the other group-by values, then ``window_end``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from dosi.errors import QueryError, QueryShapeError, closest
from dosi.udf.intervals import parse_interval_ms
from dosi.udf.validation import (
    INVALID_WINDOW_ARGUMENT,
    check_cumulate,
    check_hop,
    check_offset,
    check_window_length,
)

if TYPE_CHECKING:
    from dosi.ir.model import MetricIr

__all__ = [
    "MAX_WINDOWS_PER_ROW",
    "STREAM_WINDOW_TYPES",
    "WINDOW_END",
    "WINDOW_START",
    "StreamWindow",
    "check_stream_query",
    "format_window",
    "parse_window_object",
    "parse_window_text",
    "stream_window_of",
    "windows_per_row",
]

STREAM_WINDOW_TYPES = ("tumble", "hop", "cumulate", "session")


@dataclass(frozen=True)
class StreamWindow:
    """A streaming-window bucketing of the time axis (window-udf.md), sizes in milliseconds."""

    type: str
    size_ms: int | None = None
    slide_ms: int | None = None
    step_ms: int | None = None
    gap_ms: int | None = None
    offset_ms: int = 0


WINDOW_START: Final = "window_start"
WINDOW_END: Final = "window_end"

#: Upper bound on the windows one row is expanded to (hop: ceil(size/slide), cumulate: size/step).
MAX_WINDOWS_PER_ROW: Final = 10_000
#: The longest window length or offset (10,000 years), so epoch-microsecond arithmetic stays
#: inside a 64-bit integer on every engine.
MAX_WINDOW_MS: Final = 10_000 * 366 * 86_400_000

# per type: (required arguments in positional order, optional arguments)
_ARGUMENTS: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "tumble": (("size",), ("offset",)),
    "hop": (("size", "slide"), ("offset",)),
    "cumulate": (("size", "step"), ()),
    "session": (("gap",), ()),
}

_EXAMPLES: Final[dict[str, tuple[str, str]]] = {
    "tumble": ("metric_time:tumble(1 hour)", '{"type": "tumble", "size": "1 hour"}'),
    "hop": (
        "metric_time:hop(15 minutes, 5 minutes)",
        '{"type": "hop", "size": "15 minutes", "slide": "5 minutes"}',
    ),
    "cumulate": (
        "metric_time:cumulate(1 day, 1 hour)",
        '{"type": "cumulate", "size": "1 day", "step": "1 hour"}',
    ),
    "session": ("metric_time:session(30 minutes)", '{"type": "session", "gap": "30 minutes"}'),
}

_CALL: Final = re.compile(r"\s*(?P<type>[A-Za-z_]\w*)\s*(?:\((?P<args>.*)\))?\s*", re.DOTALL)
_NAMED: Final = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>.*)", re.DOTALL)


def _signature(kind: str) -> str:
    required, optional = _ARGUMENTS[kind]
    return f"{kind}(" + ", ".join([*required, *(f"[{o}]" for o in optional)]) + ")"


def _hint(kind: str) -> str:
    text, obj = _EXAMPLES[kind]
    return f'write {_signature(kind)}, e.g. "{text}" or "window": {obj}'


def _all_forms() -> str:
    return "; ".join(f'"{_EXAMPLES[k][0]}"' for k in STREAM_WINDOW_TYPES)


def _argument_error(
    message: str, *, kind: str | None = None, hint: str | None = None, **kw: Any
) -> QueryError:
    return QueryError(
        INVALID_WINDOW_ARGUMENT,
        message,
        hint=hint or (_hint(kind) if kind else f"streaming windows: {_all_forms()}"),
        **kw,
    )


def _window_type(value: Any, spelling: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise QueryError(
            "unknown_window_type",
            f"the streaming window in `{spelling}` needs a `type`",
            candidates=list(STREAM_WINDOW_TYPES),
            hint=f"streaming windows: {_all_forms()}",
        )
    kind = value.strip().lower()
    if kind not in _ARGUMENTS:
        raise QueryError(
            "unknown_window_type",
            f"unknown streaming window type `{value}` in `{spelling}`",
            candidates=closest(kind, STREAM_WINDOW_TYPES) or list(STREAM_WINDOW_TYPES),
            hint=f"streaming windows: {_all_forms()}; a calendar bucket is written "
            '"metric_time:month" (no parentheses)',
        )
    return kind


# ------------------------------------------------------------------------------ parsing


def parse_window_text(text: str, spelling: str) -> StreamWindow:
    """The window part of a string group-by item, e.g. ``hop(15 minutes, 5 minutes)``."""
    found = _CALL.fullmatch(text)
    if found is None:
        raise _argument_error(
            f"cannot read the streaming window `{text}` in `{spelling}`",
            hint=f"streaming windows: {_all_forms()}",
        )
    kind = _window_type(found["type"], spelling)
    if found["args"] is None:
        raise _argument_error(
            f"`{spelling}`: a {kind} window needs its arguments in parentheses",
            kind=kind,
        )
    required, optional = _ARGUMENTS[kind]
    names = (*required, *optional)
    values: dict[str, Any] = {}
    parts = [p.strip() for p in found["args"].split(",")]
    if parts == [""]:
        parts = []
    positional = True
    for index, part in enumerate(parts):
        if not part:
            raise _argument_error(f"`{spelling}`: empty argument {index + 1}", kind=kind)
        named = _NAMED.fullmatch(part)
        if named is not None:
            positional = False
            name = named["name"].lower()
            value: str = named["value"].strip()
        else:
            if not positional:
                raise _argument_error(
                    f"`{spelling}`: positional argument `{part}` after a named one", kind=kind
                )
            if index >= len(names):
                raise _argument_error(
                    f"`{spelling}`: {kind} takes at most {len(names)} argument"
                    f"{'s' if len(names) > 1 else ''}, got {len(parts)}",
                    kind=kind,
                    hint=_hint(kind) + "; combine intervals without a comma: '1 hour 30 minutes'",
                )
            name, value = names[index], part
        if name in values:
            raise _argument_error(f"`{spelling}`: argument `{name}` given twice", kind=kind)
        values[name] = value
    return _build(kind, values, spelling, text_form=True)


def parse_window_object(obj: Any, field: str) -> StreamWindow:
    """The ``window`` value of a group-by object: ``{"type": ..., <lengths>}`` or a string."""
    spelling = f"{field} window"
    if isinstance(obj, str):
        return parse_window_text(obj.strip(), f"{field}:{obj.strip()}")
    if not isinstance(obj, Mapping):
        raise QueryShapeError(
            "invalid_query",
            f"the `window` of group_by `{field}` must be an object with a `type`, got {obj!r}",
            hint=f"streaming windows: {_all_forms()}",
        )
    lowered: dict[str, Any] = {}
    for key, value in obj.items():
        if not isinstance(key, str):
            raise QueryShapeError("invalid_query", f"window keys are strings, got {key!r}")
        lowered[key.lower()] = value
    kind = _window_type(lowered.pop("type", None), spelling)
    return _build(kind, lowered, f"{field}:{kind}", text_form=False)


def _build(kind: str, values: dict[str, Any], spelling: str, *, text_form: bool) -> StreamWindow:
    try:
        return _checked(kind, values, spelling, text_form=text_form)
    except QueryError as err:
        err.hint = err.hint or _hint(kind)  # every rejection names the fix
        raise


def _checked(kind: str, values: dict[str, Any], spelling: str, *, text_form: bool) -> StreamWindow:
    required, optional = _ARGUMENTS[kind]
    allowed = (*required, *optional)
    for name in values:
        if name not in allowed:
            raise QueryError(
                "unknown_query_key",
                f"`{name}` is not an argument of a {kind} window (`{spelling}`)",
                candidates=closest(name, allowed) or list(allowed),
                hint=_hint(kind),
            )
    missing = [name for name in required if name not in values]
    if missing:
        raise _argument_error(
            f"`{spelling}`: a {kind} window needs `{missing[0]}`",
            kind=kind,
            detail={"function": kind, "argument": missing[0]},
        )
    ms = {name: _interval(kind, name, value) for name, value in values.items()}
    offset = ms.get("offset", 0)
    if kind == "tumble":
        check_window_length(kind, "size", ms["size"])
        check_offset(kind, offset)
        return StreamWindow("tumble", size_ms=ms["size"], offset_ms=offset)
    if kind == "hop":
        try:
            check_hop(kind, ms["slide"], ms["size"], offset)
        except QueryError as err:
            if text_form and err.detail and err.detail.get("argument") == "slide":
                err.hint = (
                    f"the string form is hop(size, slide): did you mean "
                    f"hop({values['slide']}, {values['size']})?"
                    if ms["slide"] > ms["size"] > 0
                    else _hint(kind)
                )
            raise
        window = StreamWindow("hop", size_ms=ms["size"], slide_ms=ms["slide"], offset_ms=offset)
    elif kind == "cumulate":
        try:
            check_cumulate(kind, ms["step"], ms["size"])
        except QueryError as err:
            if text_form and ms["step"] > ms["size"] > 0:
                err.hint = (
                    f"the string form is cumulate(size, step): did you mean "
                    f"cumulate({values['step']}, {values['size']})?"
                )
            raise
        window = StreamWindow("cumulate", size_ms=ms["size"], step_ms=ms["step"])
    else:
        check_window_length(kind, "gap", ms["gap"])
        return StreamWindow("session", gap_ms=ms["gap"])
    count = windows_per_row(window)
    if count > MAX_WINDOWS_PER_ROW:
        smaller = "slide" if kind == "hop" else "step"
        raise _argument_error(
            f"`{spelling}`: every row would fall in {count} windows; at most "
            f"{MAX_WINDOWS_PER_ROW} are supported",
            kind=kind,
            hint=f"use a larger `{smaller}` or a smaller `size`",
            detail={"function": kind, "argument": smaller},
        )
    return window


def _interval(kind: str, name: str, value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        raise _argument_error(
            f"{kind}: argument '{name}' `{value}` has no unit",
            kind=kind,
            hint=f"write a number and a unit, e.g. '{value.strip()} seconds'",
            detail={"function": kind, "argument": name},
        )
    ms = parse_interval_ms(value, function=kind, argument=name)
    if abs(ms) > MAX_WINDOW_MS:
        raise _argument_error(
            f"{kind}: argument '{name}' is longer than 10,000 years",
            kind=kind,
            hint="use a window length of at most 10,000 years",
            detail={"function": kind, "argument": name, "max_ms": MAX_WINDOW_MS},
        )
    return ms


# ------------------------------------------------------------------------------ formatting

_UNITS: Final = (
    (604_800_000, "week"),
    (86_400_000, "day"),
    (3_600_000, "hour"),
    (60_000, "minute"),
    (1_000, "second"),
    (1, "millisecond"),
)


def _format_ms(ms: int) -> str:
    for size, unit in _UNITS:
        if ms % size == 0 and (ms != 0 or size == 1):
            n = ms // size
            return f"{n} {unit}{'' if abs(n) == 1 else 's'}"
    raise AssertionError("unreachable")  # pragma: no cover


def format_window(window: StreamWindow) -> str:
    """The canonical string form (``hop(15 minutes, 5 minutes)``); it parses back to `window`."""
    if window.type == "tumble":
        args = [_format_ms(window.size_ms or 0)]
    elif window.type == "hop":
        args = [_format_ms(window.size_ms or 0), _format_ms(window.slide_ms or 0)]
    elif window.type == "cumulate":
        args = [_format_ms(window.size_ms or 0), _format_ms(window.step_ms or 0)]
    else:
        args = [_format_ms(window.gap_ms or 0)]
    if window.offset_ms:
        args.append(f"offset={_format_ms(window.offset_ms)}")
    return f"{window.type}({', '.join(args)})"


def windows_per_row(window: StreamWindow) -> int:
    """How many candidate windows one row is expanded to (1 for tumble and session)."""
    if window.type == "hop":
        return math.ceil((window.size_ms or 0) / (window.slide_ms or 1))
    if window.type == "cumulate":
        return (window.size_ms or 0) // (window.step_ms or 1)
    return 1


# ------------------------------------------------------------------------------ checks


class _GroupByItem(Protocol):
    """What the checks read of a parsed group-by item (`dosi.query.spec.GroupByItem`)."""

    @property
    def field(self) -> str: ...
    @property
    def grain(self) -> str | None: ...
    @property
    def window(self) -> StreamWindow | None: ...


class _Query(Protocol):
    """What the checks read of a parsed query (`dosi.query.spec.Query`, which imports this
    module for the syntax)."""

    @property
    def group_by(self) -> Sequence[_GroupByItem]: ...


class WindowedDim(Protocol):
    """What the checks read of a resolved group-by item (`dosi.query.resolve.ResolvedDim`)."""

    @property
    def window(self) -> StreamWindow | None: ...
    @property
    def spelling(self) -> str: ...
    @property
    def output(self) -> str: ...


# ------------------------------------------------------------------------------ checks


def stream_window_of(dims: Sequence[WindowedDim]) -> WindowedDim | None:
    """The (single) group-by item carrying a streaming window, if any."""
    return next((d for d in dims if d.window is not None), None)


def check_stream_query(
    query: _Query, metrics: Sequence[MetricIr], dims: Sequence[WindowedDim]
) -> None:
    """Query-level rules for streaming windows (called by `resolve_query`)."""
    windowed = [d for d in dims if d.window is not None]
    if not windowed:
        return
    if len(windowed) > 1:
        raise QueryError(
            "not_implemented",
            "at most one streaming window per query; got "
            + ", ".join(f"`{d.spelling}`" for d in windowed),
            hint=f"keep one streaming window, e.g. `{windowed[0].spelling}`",
        )
    for item in query.group_by:
        if item.window is not None and item.grain is not None:
            raise QueryShapeError(
                "invalid_query",
                f"group_by `{item.field}` has both a `grain` and a `window`",
                hint="a streaming window replaces the grain: drop `grain`, or drop `window`",
            )
    dim = windowed[0]
    window_metrics = [m.name for m in metrics if m.window is not None]
    if window_metrics:
        raise QueryError(
            "not_implemented",
            f"window metrics ({', '.join(window_metrics)}) cannot be combined with the "
            f"streaming window `{dim.spelling}`",
            metrics=window_metrics,
            hint="query the window metrics with a calendar grain (metric_time:<grain>), or "
            "drop them from this query",
        )
    taken = {d.output: d.spelling for d in dims if d is not dim}
    taken.update({m.name: f"metric `{m.name}`" for m in metrics})
    for name in (WINDOW_START, WINDOW_END):
        if name in taken:
            raise QueryError(
                "duplicate_output_name",
                f"the streaming window `{dim.spelling}` produces `{name}`, and so does "
                f"{taken[name] if taken[name].startswith('metric') else f'`{taken[name]}`'}",
                hint="rename the field or the metric in the model, or drop it from the query",
            )
