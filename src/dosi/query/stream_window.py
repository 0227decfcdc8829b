"""Streaming windows: the group-by syntax (window-udf.md) parsed into `StreamWindow` values.

The rules a query must follow and the plan shape live in `dosi.query.stream_windows` and
`dosi.plan.builder.stream`; this module depends on nothing above the errors and UDF checks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from dosi.errors import QueryError, QueryShapeError, closest
from dosi.udf.intervals import parse_interval_ms
from dosi.udf.validation import (
    INVALID_WINDOW_ARGUMENT,
    check_cumulate,
    check_hop,
    check_offset,
    check_window_length,
)

__all__ = [
    "MAX_WINDOWS_PER_ROW",
    "STREAM_WINDOW_TYPES",
    "WINDOW_END",
    "WINDOW_START",
    "StreamWindow",
    "format_window",
    "parse_window_object",
    "parse_window_text",
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
