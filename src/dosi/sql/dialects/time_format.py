"""Decoding a D-FORMAT stored time value: the per-dialect facts and the shared steps.

datus-extensions §3 D-FORMAT and the 1.6 note (FMT-GRP-05/06): grouping parses the stored
value into a date or timestamp; the parts are taken by position, assembled into a layout the
warehouse's own parse function reads, and handed to it. Omitted months and days read as 01,
omitted hours, minutes and seconds as 00 (FMT-DEC-20).

A dialect states one `TimeParser` fact: its parse function(s), its format tokens, which fixed
text its format strings take verbatim, and the argument order. When a layout's fixed text is
outside that set (`%Y年%m月%d日`, `%%`, `T`), the parts are cut out by position and rebuilt as
`YYYY-MM-DD[ HH:MM:SS]` first. A dialect without a parse function (SQLite) casts or wraps that
canonical text (`TimeParser.fn` None).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sqlglot import exp

from dosi.ext.time_format import PART_ORDER, PART_WIDTH, LayoutPart, TimeFormat

_DATE = exp.DataType.build("DATE")
_TIMESTAMP = exp.DataType.build("TIMESTAMP")
_BIGINT = exp.DataType.build("BIGINT")
_TEXT = exp.DataType.build("VARCHAR")

STRFTIME: Mapping[str, str] = MappingProxyType(
    {"Y": "%Y", "m": "%m", "d": "%d", "H": "%H", "M": "%M", "S": "%S"}
)
MYSQL_TOKENS: Mapping[str, str] = MappingProxyType(
    {"Y": "%Y", "m": "%m", "d": "%d", "H": "%H", "M": "%i", "S": "%s"}
)
ORACLE_TOKENS: Mapping[str, str] = MappingProxyType(
    {"Y": "YYYY", "m": "MM", "d": "DD", "H": "HH24", "M": "MI", "S": "SS"}
)
JAVA_TOKENS: Mapping[str, str] = MappingProxyType(
    {"Y": "yyyy", "m": "MM", "d": "dd", "H": "HH", "M": "mm", "S": "ss"}
)
# fixed text every format language here reads as itself
PLAIN_LITERALS = frozenset("-/:. ")
_CANONICAL_SEPARATORS = {"m": "-", "d": "-", "H": " ", "M": ":", "S": ":"}

Piece = str | LayoutPart
_EPOCH = dt.date(1970, 1, 1)


@dataclass(frozen=True)
class TimeParser:
    """How one warehouse parses text into a date or timestamp (a dialect fact).

    `date_fn` / `ts_fn`: the functions for date-only and date-time layouts (None: the other
    one, or a CAST of canonical text when both are None); `tokens`: %Y..%S in the function's
    format language; `literals`: fixed characters its formats take verbatim; `format_first`:
    the format is the first argument (BigQuery); `date_from_ts`: how a date is read from the
    timestamp function when there is no date function (a CAST by default); `ts_cast`: the
    timestamp function returns a zoned value to cast to a plain TIMESTAMP."""

    date_fn: str | None = None
    ts_fn: str | None = None
    tokens: Mapping[str, str] = field(default_factory=lambda: STRFTIME)
    literals: frozenset[str] = PLAIN_LITERALS
    format_first: bool = False
    ts_cast: bool = False
    to_date: Callable[[exp.Expression], exp.Expression] | None = None
    to_timestamp: Callable[[exp.Expression], exp.Expression] | None = None
    # the parse function also runs on the NULL slots of a Nullable column (ClickHouse reads
    # them as ''): its argument gets a parseable stand-in, and the result is guarded
    parses_null_slots: bool = False
    # the text type an integer key is cast to (Oracle's VARCHAR2 needs a length)
    text_type: str = "VARCHAR"

    def render_format(self, pieces: tuple[Piece, ...]) -> str:
        return "".join(p if isinstance(p, str) else self.tokens[p.directive] for p in pieces)

    def call(self, fn: str, text: exp.Expression, fmt: str) -> exp.Expression:
        args = [text, exp.Literal.string(fmt)]
        if self.format_first:
            args.reverse()
        return exp.Anonymous(this=fn, expressions=args)

    def as_date(self, value: exp.Expression) -> exp.Expression:
        if self.to_date is not None:
            return self.to_date(value)
        return exp.Cast(this=value, to=_DATE.copy())


CAST_ONLY = TimeParser()


def complete(fmt: TimeFormat) -> tuple[tuple[Piece, ...], str]:
    """The layout's pieces plus the parts it omits down to a day (or to seconds for layouts
    with hours), and the fixed text to append to the value for them (`01`, `00`)."""
    pieces = list(fmt.pieces)
    last = fmt.parts[-1]
    stop = "S" if fmt.has_time else "d"
    suffix = ""
    offset = fmt.width
    for d in PART_ORDER[PART_ORDER.index(last.directive) + 1 : PART_ORDER.index(stop) + 1]:
        pieces.append(LayoutPart(d, offset, PART_WIDTH[d]))
        offset += PART_WIDTH[d]
        suffix += "01" if d in "md" else "00"
    return tuple(pieces), suffix


def canonical_pieces(has_time: bool) -> tuple[Piece, ...]:
    """`YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS` as pieces (offsets of the canonical text)."""
    out: list[Piece] = []
    offset = 0
    for d in PART_ORDER if has_time else PART_ORDER[:3]:
        if d in _CANONICAL_SEPARATORS:
            out.append(_CANONICAL_SEPARATORS[d])
            offset += 1
        out.append(LayoutPart(d, offset, PART_WIDTH[d]))
        offset += PART_WIDTH[d]
    return tuple(out)


def encoded_text(
    raw: exp.Expression, fmt: TimeFormat, text_type: str = "VARCHAR"
) -> exp.Expression:
    """The stored value as text: an integer key (or a DECIMAL(n,0) one) through BIGINT."""
    if fmt.storage != "int":
        return raw
    to = _TEXT.copy() if text_type == "VARCHAR" else exp.DataType.build(text_type)
    return exp.Cast(this=exp.Cast(this=raw, to=_BIGINT.copy()), to=to)


def canonical_text(
    text: exp.Expression,
    fmt: TimeFormat,
    part: Callable[[exp.Expression, int, int], exp.Expression],
) -> exp.Expression:
    """`YYYY-MM-DD[ HH:MM:SS]` assembled from the parts cut out by position (omitted parts
    read as 01 / 00)."""
    have = {p.directive: p for p in fmt.parts}
    args: list[exp.Expression] = []
    for piece in canonical_pieces(fmt.has_time):
        if isinstance(piece, str):
            args.append(exp.Literal.string(piece))
        elif piece.directive in have:
            p = have[piece.directive]
            args.append(part(text.copy(), p.offset + 1, p.width))
        else:
            args.append(exp.Literal.string("01" if piece.directive in "md" else "00"))
    return _concat(args)


def _concat(args: list[exp.Expression]) -> exp.Expression:
    """`a || b || ...`: each dialect spells it (CONCAT on MySQL, `+` on T-SQL); Oracle's
    CONCAT takes two arguments only."""
    out = args[0]
    for arg in args[1:]:
        out = exp.DPipe(this=out, expression=arg, safe=False)
    return out


def null_guard(text: exp.Expression, value: exp.Expression) -> exp.Expression:
    """NULL for a NULL stored value: CONCAT reads NULL as '' on several engines, which the
    parse function would then reject."""
    is_null = exp.Is(this=text.copy(), expression=exp.Null())
    return exp.Case(ifs=[exp.If(this=is_null, true=exp.Null())], default=value)


def decode(
    raw: exp.Expression,
    fmt: TimeFormat,
    parser: TimeParser,
    part: Callable[[exp.Expression, int, int], exp.Expression],
) -> exp.Expression:
    """The stored value of `raw` (layout `fmt`) as a DATE, or a TIMESTAMP for layouts with
    hours: the dialect's parse function over the value (completed to a day), or over the
    canonical text when the layout's fixed text is not one the function reads verbatim."""
    text = encoded_text(raw, fmt, parser.text_type)
    fn = parser.ts_fn if fmt.has_time else (parser.date_fn or parser.ts_fn)
    # a layout that opens with whitespace goes through the canonical text: DuckDB's strptime
    # skips leading input whitespace before it matches the format's own (' %Y' never parses)
    direct = (
        fn is not None and set(fmt.literal_text) <= parser.literals and not fmt.format[:1].isspace()
    )
    guard = False
    if direct:
        pieces, suffix = complete(fmt)
        arg = text
        if suffix:
            arg = _concat([text.copy(), exp.Literal.string(suffix)])
            guard = True
        stand_in = f"{fmt.encode(_EPOCH)}{suffix}"
    else:
        pieces = canonical_pieces(fmt.has_time)
        arg = canonical_text(text, fmt, part)
        guard = True
        stand_in = "1970-01-01 00:00:00" if fmt.has_time else "1970-01-01"
    if parser.parses_null_slots and fn is not None:
        arg = exp.Coalesce(this=arg, expressions=[exp.Literal.string(stand_in)])
        guard = True
    if fn is None:
        value: exp.Expression = exp.Cast(
            this=arg, to=(_TIMESTAMP if fmt.has_time else _DATE).copy()
        )
    else:
        value = parser.call(fn, arg, parser.render_format(pieces))
        if fmt.has_time and parser.to_timestamp is not None:
            value = parser.to_timestamp(value)
        elif fmt.has_time and parser.ts_cast:
            value = exp.Cast(this=value, to=_TIMESTAMP.copy())
        if not fmt.has_time and parser.date_fn is None:
            value = parser.as_date(value)
    return null_guard(text, value) if guard else value
