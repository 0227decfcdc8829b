"""D-FORMAT checks that need the field: its datatype, its time role and its D-GRAIN grain.

datus-extensions §3 D-FORMAT "配置项与支持的格式": storage is inferred from `datatype`
(String -> string, Integer -> int, none -> string; FMT-DEC-11/12), an explicit storage must
agree with it, a layout needs a String / Integer (or undeclared) datatype, a native name its
matching temporal datatype (FMT-DEC-08/09), `int` only for digit-only layouts of at most 14
digits (FMT-DEC-13), `time.granularity` and `time_granularity` must agree (GRAIN-06) and may
not be finer than the layout (FMT-DEC-16). The grain a layout derives becomes the field's
native grain (GRAIN-03). Every problem is `invalid_datus_extension` naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass

from dosi.compiler.context import CompileContext
from dosi.ext import TimeFormat, TimeSpec
from dosi.ext.grains import grain_rank
from dosi.ext.time_format import MAX_INT_DIGITS, NATIVE_FORMATS
from dosi.ir.model import Grain

INVALID = "invalid_datus_extension"
_LAYOUT_TYPES = (None, "String", "Integer")


@dataclass(frozen=True)
class FieldTime:
    """What D-FORMAT and D-GRAIN decide for one field."""

    time_format: TimeFormat | None
    grain: Grain | None


def field_time(
    cx: CompileContext,
    qualified: str,
    datatype: str | None,
    is_time: bool,
    flat_grain: Grain | None,
    spec: TimeSpec | None,
    path: str,
    line: int | None,
) -> FieldTime:
    """The field's encoding and native grain, reporting every contradiction."""

    def bad(message: str, hint: str | None = None) -> FieldTime:
        cx.sink.error(INVALID, f"`{qualified}`: {message}", path=path, line=line, hint=hint)
        return FieldTime(None, None)

    if spec is None:
        return FieldTime(None, flat_grain)
    if not is_time:
        return bad(
            "the `time` block needs a time field (dimension.is_time true, explicitly or by a "
            "Date / DateTime datatype)",
            "declare dimension: {is_time: true} on the field",
        )
    storage = spec.storage
    fmt: TimeFormat | None = None
    if spec.format is not None and spec.format in NATIVE_FORMATS:
        want = NATIVE_FORMATS[spec.format]
        if datatype is not None and datatype != want:
            return bad(
                f'`time.format` "{spec.format}" is a native {want}, but the datatype is {datatype}',
                f"declare datatype: {want}, or omit time.format (the datatype says it)",
            )
        fmt = spec.time_format(None)
    elif spec.format is not None:
        if datatype not in _LAYOUT_TYPES:
            return bad(
                f'`time.format` layout "{spec.format}" needs datatype String or Integer (got '
                f"{datatype})",
                "a native date or timestamp column needs no time.format; a DECIMAL(n,0) key "
                "declares datatype Integer",
            )
        inferred = "int" if datatype == "Integer" else "string"
        if storage is not None and datatype is not None and storage != inferred:
            return bad(
                f'`time.storage` "{storage}" contradicts datatype {datatype} (which stores '
                f'"{inferred}")',
                "drop time.storage: it is inferred from the datatype",
            )
        storage = storage or inferred
        fmt = spec.time_format(storage)
        assert fmt is not None
        if storage == "int":
            if fmt.literal_text:
                return bad(
                    f'`time.storage` "int" needs a digits-only layout without fixed text; '
                    f'"{spec.format}" holds "{fmt.literal_text}"',
                    'store it as a string (datatype String), or use e.g. "%Y%m%d"',
                )
            if fmt.width > MAX_INT_DIGITS:  # pragma: no cover - %Y..%S is 14 digits
                return bad(f"an int layout has at most {MAX_INT_DIGITS} digits")
    grain: Grain | None = spec.granularity  # type: ignore[assignment]
    if grain is not None and flat_grain is not None and grain != flat_grain:
        return bad(
            f'`time.granularity` "{grain}" contradicts `time_granularity` "{flat_grain}"',
            "declare the grain once (either spelling), or make them agree",
        )
    grain = grain or flat_grain
    derived = fmt.derived_grain if fmt is not None else None
    finer = grain is not None and derived is not None and grain_rank(grain) < grain_rank(derived)
    if fmt is not None and fmt.encoded and finer:
        return bad(
            f'`time.format` "{fmt.format}" stores no finer than {derived}; the declared '
            f'granularity "{grain}" is finer',
            f"declare {derived} or a coarser grain, or drop the granularity",
        )
    return FieldTime(fmt, grain or (derived if fmt is not None and fmt.encoded else None))  # type: ignore[arg-type]
