"""SQL for a branch grouped by a streaming window (tumble / hop / cumulate / session).

Syntax and semantics are documented in `dosi.query.stream_window`. Every shape is plain SQL
built from `dosi.sql.stream_window_bounds` (epoch arithmetic, no UDF calls), so the same plan renders
for DuckDB, PostgreSQL, BigQuery, Spark and Databricks; on DuckDB the boundaries equal the
`tumble` / `hop` / `cumulate` UDFs (window-udf.md, UDF-TUM-02/03, UDF-HOP-02, UDF-CUM-01/02).
``window_start`` / ``window_end`` are timestamps without time zone (UDF-GEN-03) and both appear
in ``GROUP BY`` (UDF-GEN-04). Rows whose event time is NULL are dropped (they are in no window).

Shapes (``ts`` is the branch's time expression; the branch's joins, ``where_sql`` and
``time_range`` filters stay in place, so they apply to the rows before windowing):

* tumble -- ``SELECT tumble(ts) AS window_start, tumble_end(ts) AS window_end, dims, aggs
  FROM fact JOIN ... WHERE filters AND ts IS NOT NULL GROUP BY window_start, window_end, dims``
  (the portable expressions of the two UDFs).
* hop -- each row is expanded to every window containing it: a CROSS JOIN with a VALUES list of
  the ``ceil(size/slide)`` start offsets ``0, slide, 2*slide, ...`` added to the earliest window
  start ``hop(ts)``, keeping the candidates with ``start <= ts`` (every candidate ends after
  ``ts`` because the earliest one does); then the usual GROUP BY, so COUNT DISTINCT and ratios
  are computed from the rows of each window.
* cumulate -- the same expansion with the ``size/step`` window ends ``step, 2*step, ..., size``
  after the epoch start ``cumulate(ts)``, keeping the windows with ``end > ts``.
* session -- gaps and islands in derived tables: (1) the filtered rows with ``epoch_us(ts)``,
  the other group-by values and every column the aggregates read; (2) a flag
  ``LAG(ts) IS NULL OR ts - LAG(ts) > gap`` per partition of the other group-by values; (3) a
  running ``SUM(flag)`` (RANGE frame, so rows tied on ``ts`` share a session) as the session id;
  (4) ``GROUP BY`` the other values and the session id, with ``window_start = MIN(ts)`` and
  ``window_end = MAX(ts) + gap``; the aggregates are re-pointed at the columns of (1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.errors import QueryError, closest
from dosi.plan.records import Branch, BranchDim
from dosi.query.stream_window import WINDOW_END, WINDOW_START, StreamWindow, windows_per_row
from dosi.sql.dialects import streaming_dialects
from dosi.sql.stream_window_bounds import (
    cumulate_start_expr,
    epoch_us_expr,
    hop_start_expr,
    session_expr,
    timestamp_from_epoch,
    tumble_end_expr,
    tumble_start_expr,
)

if TYPE_CHECKING:
    from dosi.ir.model import ModelIr
    from dosi.sql.dialects import Dialect


class Renderer(Protocol):
    """What the streaming shapes use of `dosi.sql.render.Renderer` (a branch's pieces)."""

    model: ModelIr
    dialect: Dialect

    def dim_expr(self, d: BranchDim) -> exp.Expression: ...
    def time_value(self, d: BranchDim) -> exp.Expression: ...
    def from_clause(self, branch: Branch, select: exp.Select) -> exp.Select: ...


__all__ = ["stream_grouped", "stream_window_start"]

Lookup = Callable[[str], exp.Expression]
Build = Callable[[Lookup], exp.Expression]

_OFFSETS = "dosi_windows"  # the VALUES list of window offsets
_OFFSET = "dosi_offset_ms"
_TS = "dosi_ts"
_NEW = "dosi_new_session"
_SESSION = "dosi_session"
_BIGINT = exp.DataType.build("BIGINT")


def _dialect_name(dialect: Dialect | str) -> str:
    """The dialect's key, once it is known to render streaming windows (a structured
    `dialect_unsupported_streaming_window` error otherwise, before any SQL exists)."""
    name = dialect if isinstance(dialect, str) else dialect.key
    supported = streaming_dialects()
    if name not in supported:
        raise QueryError(
            "dialect_unsupported_streaming_window",
            f"streaming windows cannot be rendered for dialect {name!r}",
            candidates=closest(name, supported) or list(supported),
            hint="streaming windows render for: " + ", ".join(supported),
        )
    return name


def _num(value: int) -> exp.Expression:
    literal = exp.Literal.number(abs(value))
    return exp.Neg(this=literal) if value < 0 else literal


def stream_window_start(
    ts: exp.Expression, window: StreamWindow, dialect: Dialect | str
) -> exp.Expression:
    """The UDF-equivalent start of `window` for one row: ``tumble``, the earliest ``hop``, the
    ``cumulate`` epoch or the ``session`` passthrough (used where a single bucket is wanted)."""
    name = _dialect_name(dialect)
    if window.type == "tumble":
        return tumble_start_expr(ts, window.size_ms or 0, window.offset_ms, name)
    if window.type == "hop":
        return hop_start_expr(ts, window.slide_ms or 0, window.size_ms or 0, window.offset_ms, name)
    if window.type == "cumulate":
        return cumulate_start_expr(ts, window.step_ms or 0, window.size_ms or 0, name)
    return session_expr(ts, window.gap_ms or 0, name)


def _offset() -> exp.Column:
    return exp.column(_OFFSET, _OFFSETS)


def _plus(a: exp.Expression, b: exp.Expression | int) -> exp.Expression:
    if isinstance(b, int):
        if b == 0:
            return a
        return (
            exp.Add(this=a, expression=_num(b)) if b > 0 else exp.Sub(this=a, expression=_num(-b))
        )
    return exp.Add(this=a, expression=b)


def _times_1000(ms: exp.Expression) -> exp.Expression:
    return exp.Mul(this=exp.Paren(this=ms), expression=exp.Literal.number(1000))


def stream_grouped(r: Renderer, b: Branch, columns: Sequence[tuple[str, Build]]) -> exp.Select:
    """SELECT window_start, window_end, the other dims and `columns`, grouped per window.

    `columns` are (output name, builder); a builder makes the column's value from a measure
    lookup (as in `Renderer._grouped`).
    """
    windowed = [d for d in b.dims if d.window is not None]
    if len(windowed) != 1:  # pragma: no cover - resolve_query allows one window
        raise QueryError("not_implemented", "at most one streaming window per query")
    wdim = windowed[0]
    window = wdim.window
    assert isinstance(window, StreamWindow)
    dialect = _dialect_name(r.dialect)
    if window.type == "session":
        return _session(r, b, wdim, window, columns, dialect)
    return _bucketed(r, b, wdim, window, columns, dialect)


def _bucketed(
    r: Renderer,
    b: Branch,
    wdim: BranchDim,
    window: StreamWindow,
    columns: Sequence[tuple[str, Build]],
    dialect: str,
) -> exp.Select:
    ts = r.time_value(wdim)  # D-FORMAT: an encoded axis is decoded first
    preds: list[exp.Expression] = [exp.Not(this=exp.Is(this=ts.copy(), expression=exp.Null()))]
    offsets: list[int] = []
    size = window.size_ms or 0
    if window.type == "tumble":
        start = tumble_start_expr(ts, size, window.offset_ms, dialect)
        end = tumble_end_expr(ts, size, window.offset_ms, dialect)
    elif window.type == "hop":
        slide = window.slide_ms or 0
        earliest = hop_start_expr(ts, slide, size, window.offset_ms, dialect, output="epoch_ms")
        n = windows_per_row(window)
        start_ms = earliest
        if n > 1:
            offsets = [k * slide for k in range(n)]
            start_ms = _plus(earliest, _offset())
            # the candidate must start at or before the row (it ends after it: start > ts - size)
            preds.append(
                exp.LTE(this=_times_1000(start_ms.copy()), expression=epoch_us_expr(ts, dialect))
            )
        start = timestamp_from_epoch(start_ms, 1, dialect)
        end = timestamp_from_epoch(_plus(start_ms.copy(), size), 1, dialect)
    elif window.type == "cumulate":
        step = window.step_ms or 0
        epoch = cumulate_start_expr(ts, step, size, dialect, output="epoch_ms")
        n = windows_per_row(window)
        end_ms = _plus(epoch.copy(), size)
        if n > 1:
            offsets = [k * step for k in range(1, n + 1)]
            end_ms = _plus(epoch.copy(), _offset())
            # the row counts in every window of its epoch that ends after it
            preds.append(
                exp.GT(this=_times_1000(end_ms.copy()), expression=epoch_us_expr(ts, dialect))
            )
        start = timestamp_from_epoch(epoch, 1, dialect)
        end = timestamp_from_epoch(end_ms, 1, dialect)
    else:  # pragma: no cover - parse_window_* only builds the four types
        raise QueryError("unknown_window_type", f"unknown streaming window {window.type!r}")

    sel = exp.Select()
    groups: list[exp.Expression] = []
    for d in b.dims:
        pairs = (
            [(WINDOW_START, start), (WINDOW_END, end)] if d is wdim else [(d.output, r.dim_expr(d))]
        )
        for name, e in pairs:
            sel = sel.select(exp.alias_(e, ident(name)), copy=False)
            groups.append(e.copy())
    for name, build in columns:
        value = build(lambda n: r.model.measures[n].expr.copy())
        sel = sel.select(exp.alias_(value, ident(name)), copy=False)
    sel = r.from_clause(b, sel)
    if offsets:
        offsets_table = r.dialect.values_table(offsets, _OFFSETS, _OFFSET)
        sel = sel.join(offsets_table, join_type="CROSS", copy=False)
    sel = sel.where(*preds, copy=False)
    return sel.group_by(*groups, copy=False)


def _session(
    r: Renderer,
    b: Branch,
    wdim: BranchDim,
    window: StreamWindow,
    columns: Sequence[tuple[str, Build]],
    dialect: str,
) -> exp.Select:
    gap_us = (window.gap_ms or 0) * 1000
    others = [d for d in b.dims if d is not wdim]
    dim_names = {id(d): f"dosi_d{i}" for i, d in enumerate(others)}

    # (4) first, so the aggregates' columns are known: each becomes a column of (1)
    read: dict[str, tuple[str, exp.Expression]] = {}

    def repoint(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column):
            key = node.sql()
            if key not in read:
                read[key] = (f"dosi_c{len(read)}", node.copy())
            return exp.column(read[key][0])
        return node

    def lookup(n: str) -> exp.Expression:
        return r.model.measures[n].expr.copy().transform(repoint)

    outer = exp.Select()
    groups: list[exp.Expression] = []
    for d in b.dims:
        if d is wdim:
            first = exp.Min(this=exp.column(_TS))
            last = _plus(exp.Max(this=exp.column(_TS)), gap_us)
            outer = outer.select(
                exp.alias_(timestamp_from_epoch(first, 1000, dialect), ident(WINDOW_START)),
                exp.alias_(timestamp_from_epoch(last, 1000, dialect), ident(WINDOW_END)),
                copy=False,
            )
        else:
            ref = exp.column(dim_names[id(d)])
            outer = outer.select(exp.alias_(ref, ident(d.output)), copy=False)
            groups.append(ref.copy())
    for name, build in columns:
        outer = outer.select(exp.alias_(build(lookup), ident(name)), copy=False)

    # (1) the filtered rows
    ts = r.time_value(wdim)  # D-FORMAT: an encoded axis is decoded first
    rows = exp.Select().select(exp.alias_(epoch_us_expr(ts, dialect), ident(_TS)), copy=False)
    for d in others:
        rows = rows.select(exp.alias_(r.dim_expr(d), ident(dim_names[id(d)])), copy=False)
    for alias, source in read.values():
        rows = rows.select(exp.alias_(source, ident(alias)), copy=False)
    rows = r.from_clause(b, rows)
    rows = rows.where(exp.Not(this=exp.Is(this=ts.copy(), expression=exp.Null())), copy=False)

    carried = [_TS, *dim_names.values(), *(alias for alias, _ in read.values())]
    partition = [exp.column(n) for n in dim_names.values()]
    nulls = r.dialect.nulls_first_default(False)  # no NULLS clause (dosi_ts is never NULL)

    def over(this: exp.Expression, frame: bool) -> exp.Window:
        spec = None
        if frame:
            spec = exp.WindowSpec(
                kind="RANGE", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"
            )
        return exp.Window(
            this=this,
            partition_by=[p.copy() for p in partition] or None,
            order=exp.Order(expressions=[exp.Ordered(this=exp.column(_TS), nulls_first=nulls)]),
            spec=spec,
        )

    # (2) a flag on the first row of each session
    previous = over(exp.Lag(this=exp.column(_TS)), frame=False)
    starts = exp.Or(
        this=exp.Is(this=previous, expression=exp.Null()),
        expression=exp.GT(
            this=exp.Sub(this=exp.column(_TS), expression=previous.copy()),
            expression=_num(gap_us),
        ),
    )
    flag = exp.Case(
        ifs=[exp.If(this=starts, true=exp.Literal.number(1))], default=exp.Literal.number(0)
    )
    flagged = exp.Select().select(*(exp.column(n) for n in carried), copy=False)
    flagged = flagged.select(exp.alias_(flag, ident(_NEW)), copy=False)
    flagged = flagged.from_(_derived(rows, "dosi_session_rows"), copy=False)

    # (3) the session id: how many sessions started up to this row's time
    numbered = exp.Select().select(*(exp.column(n) for n in carried), copy=False)
    session_id = over(exp.Sum(this=exp.column(_NEW)), frame=True)
    numbered = numbered.select(exp.alias_(session_id, ident(_SESSION)), copy=False)
    numbered = numbered.from_(_derived(flagged, "dosi_session_flags"), copy=False)

    outer = outer.from_(_derived(numbered, "dosi_sessions"), copy=False)
    return outer.group_by(*groups, exp.column(_SESSION), copy=False)


def _derived(select: exp.Select, alias: str) -> exp.Expression:
    return exp.alias_(exp.Subquery(this=select), ident(alias), table=True)
