"""SQL of the `streak` family: the canned gaps-and-islands lowering (WM "Family roadmap").

A pre-stage over `base AS b` (`columns`) computes, per row of each streak metric's partition
ordered by the time bucket:

* `ok`    – 1 when the bucket meets the condition (its value, or its change against the row
  before when that row is the calendar-previous bucket), else 0 (a NULL never meets it);
* `start` – 1 when an `ok` bucket opens a run: the row before is missing from the calendar
  (a gap) or did not meet the condition;
* `rn`    – the row's position.

The window stage then counts from the run's opening row: `rn - MAX(rn of starts so far) + 1`
for an `ok` row, 0 otherwise. "The row before" is read as `MAX(x) OVER (... ROWS BETWEEN n
PRECEDING AND n PRECEDING)`: the one-row frame every engine has, with no LAG spelling to vary;
each use of it is guarded by the calendar check on the lagged bucket, so an engine that answers
an empty frame with a default instead of NULL cannot open or extend a run. The flags are 0 / 1
CASEs of one comparison each, combined by multiplication: MariaDB 10.11 answers a conjunction of
two window-function predicates wrongly.
"""

from __future__ import annotations

from decimal import Decimal

from sqlglot import exp

from dosi.ext.window import StreakWindow, WindowSpec
from dosi.plan.records import WindowMetric
from dosi.sql.util import aliased, number, table_aliased
from dosi.sql.window.stage import WindowStageSql

PRE = "b"
_OPS: dict[str, type[exp.Binary]] = {
    ">": exp.GT,
    ">=": exp.GTE,
    "<": exp.LT,
    "<=": exp.LTE,
    "=": exp.EQ,
    "!=": exp.NEQ,
}


def _names(s: WindowStageSql, wm: WindowMetric) -> tuple[str, str, str]:
    i = s.stage.metrics.index(wm) if wm in s.stage.metrics else id(wm)
    return f"__streak_ok_{i}", f"__streak_start_{i}", f"__streak_rn_{i}"


def _flag(cond: exp.Expression) -> exp.Expression:
    return exp.Case(
        ifs=[exp.If(this=cond, true=exp.Literal.number(1))], default=exp.Literal.number(0)
    )


def _target(spec: StreakWindow) -> exp.Expression:
    value = spec.target
    return number(float(value) if isinstance(value, Decimal) else value)


def columns(s: WindowStageSql, wm: WindowMetric, spec: WindowSpec) -> list[exp.Expression]:
    """The pre-stage columns of one streak metric over `base AS b`."""
    assert isinstance(spec, StreakWindow)
    p = s.at(PRE)
    t_name = s.stage.time_key
    assert t_name is not None
    t = p.cur(t_name)
    v = p.masked(wm, p.cur(wm.base_column))
    partition = [p.cur(x) for x in wm.partition]

    def lag(x: exp.Expression, n: int) -> exp.Expression:
        frame = exp.WindowSpec(
            kind="ROWS",
            start=exp.Literal.number(n),
            start_side="PRECEDING",
            end=exp.Literal.number(n),
            end_side="PRECEDING",
        )
        order = p.order_keys(wm, "time", "asc", None)
        return p.window(exp.Max(this=x), [y.copy() for y in partition], order, frame)

    def meets(x: exp.Expression) -> exp.Expression:
        return _OPS[spec.op](this=x, expression=_target(spec))

    def adjacent(prev_t: exp.Expression, cur_t: exp.Expression) -> exp.Expression:
        return exp.EQ(this=prev_t, expression=s.dialect.shift(cur_t, -1, s.stage.grain))  # type: ignore[arg-type]

    # 0/1 flags combined by arithmetic, never AND / NOT between predicates that hold window
    # functions: MariaDB 10.11 evaluates such a conjunction wrongly (a true AND true read 0)
    def times(a: exp.Expression, b: exp.Expression) -> exp.Expression:
        return exp.Mul(this=a, expression=b)

    adjacent_1 = _flag(adjacent(lag(t.copy(), 1), t.copy()))
    if spec.compare == "value":
        ok = _flag(meets(v))
        prev_ok = _flag(meets(lag(v.copy(), 1)))
    else:
        ok = times(
            adjacent_1.copy(),
            _flag(meets(exp.Sub(this=v.copy(), expression=lag(v.copy(), 1)))),
        )
        prev_ok = times(
            _flag(adjacent(lag(t.copy(), 2), lag(t.copy(), 1))),
            _flag(meets(exp.Sub(this=lag(v.copy(), 1), expression=lag(v.copy(), 2)))),
        )
    one = exp.Literal.number(1)
    # a run opens at an ok row unless the calendar-previous bucket is the row before and ok
    continues = exp.Paren(this=times(adjacent_1, exp.Paren(this=prev_ok)))
    start = times(
        exp.Paren(this=ok.copy()), exp.Paren(this=exp.Sub(this=one.copy(), expression=continues))
    )
    order = p.order_keys(wm, "time", "asc", None)
    rn = p.window(exp.RowNumber(), [y.copy() for y in partition], order, None)
    ok_name, start_name, rn_name = _names(s, wm)
    return [aliased(ok, ok_name), aliased(start, start_name), aliased(rn, rn_name)]


def render(s: WindowStageSql, wm: WindowMetric, spec: WindowSpec) -> exp.Expression:
    assert isinstance(spec, StreakWindow)
    ok_name, start_name, rn_name = _names(s, wm)
    one = exp.Literal.number(1)
    start_rn = exp.Case(
        ifs=[
            exp.If(
                this=exp.EQ(this=s.cur(start_name), expression=one.copy()),
                true=s.cur(rn_name),
            )
        ]
    )
    frame = exp.WindowSpec(
        kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"
    )
    opened = s.window(
        exp.Max(this=start_rn),
        [s.cur(x) for x in wm.partition],
        s.order_keys(wm, "time", "asc", None),
        frame,
    )
    length = exp.Add(this=exp.Sub(this=s.cur(rn_name), expression=opened), expression=one.copy())
    return exp.Case(
        ifs=[exp.If(this=exp.EQ(this=s.cur(ok_name), expression=one.copy()), true=length)],
        default=exp.Literal.number(0),
    )


def pre_source(s: WindowStageSql, source: exp.Expression) -> exp.Expression:
    """`SELECT b.*, <streak columns> FROM <source> AS b`: the pre-stage the streak metrics
    read as `c`."""
    sel = exp.Select().select(exp.Column(this=exp.Star(), table=exp.to_identifier(PRE)))
    for wm in s.stage.metrics:
        if wm.spec.family == StreakWindow.family:
            for c in columns(s, wm, wm.spec):
                sel = sel.select(c, copy=False)
    return sel.from_(table_aliased(source, PRE), copy=False)
