"""D-FORMAT layouts as properties (FMT-DEC-04/05/20, FMT-FLT-01): any ordered, fixed-width run
of %Y%m%d%H%M%S with fixed text parses; the folded bound of a date has the layout's width;
folding preserves time order (so comparing the raw column with folded bounds selects exactly
the rows in range); and DuckDB decodes a folded value back to the start of its stored period.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from dosi.ext.time_format import LayoutError, TimeFormat, parse_layout
from dosi.sql.dialects import DIALECTS

_FIXED = st.text(alphabet="-/:. T_年月日时分秒x%", max_size=3).map(lambda s: s.replace("%", "%%"))


@st.composite
def layouts(draw: st.DrawFn) -> str:
    depth = draw(st.integers(min_value=1, max_value=6))
    out = draw(_FIXED)
    for d in "YmdHMS"[:depth]:
        out += f"%{d}" + draw(_FIXED)
    return out


_DATES = st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(9998, 12, 31))


def _fmt(text: str, storage: str = "string") -> TimeFormat:
    return TimeFormat(text, storage, False, parse_layout(text))  # type: ignore[arg-type]


@given(layouts(), _DATES)
def test_any_layout_parses_and_folds_to_its_width(layout: str, day: dt.date) -> None:
    fmt = _fmt(layout)
    value = fmt.encode(day)
    assert isinstance(value, str) and len(value) == fmt.width


@given(layouts(), _DATES, _DATES)
def test_folding_preserves_time_order(layout: str, a: dt.date, b: dt.date) -> None:
    """FMT-FLT-01: raw-column comparison with folded bounds is a time comparison."""
    fmt = _fmt(layout)
    ea, eb = fmt.encode(fmt.period_start(a)), fmt.encode(fmt.period_start(b))
    assert (ea < eb) == (fmt.period_start(a) < fmt.period_start(b))


@given(st.integers(min_value=1, max_value=6), _DATES, _DATES)
def test_int_keys_fold_in_numeric_order(depth: int, a: dt.date, b: dt.date) -> None:
    fmt = _fmt("".join(f"%{d}" for d in "YmdHMS"[:depth]), "int")
    ea, eb = fmt.encode(fmt.period_start(a)), fmt.encode(fmt.period_start(b))
    assert isinstance(ea, int) and (ea < eb) == (fmt.period_start(a) < fmt.period_start(b))


@settings(max_examples=60, deadline=None)
@given(layouts(), st.dates(min_value=dt.date(1971, 1, 1), max_value=dt.date(2100, 12, 31)))
def test_duckdb_decodes_a_folded_value_to_its_period_start(layout: str, day: dt.date) -> None:
    """FMT-DEC-20: omitted month / day read as 01, omitted time parts as 00."""
    fmt = _fmt(layout)
    stored = fmt.encode(day)
    decoded = DIALECTS["duckdb"].decode_time(exp.Literal.string(str(stored)), fmt)
    got = duckdb.sql(f"SELECT {decoded.sql('duckdb')}").fetchall()[0][0]
    want = fmt.period_start(day)
    if isinstance(got, dt.datetime):
        assert got == dt.datetime.combine(want, dt.time())
    else:
        assert got == want


@pytest.mark.parametrize("layout", [" %Y", " %Y%m%d", "  %Y-%m", " %Y%m%d %H"])
def test_duckdb_decodes_layouts_opening_with_whitespace(layout: str) -> None:
    """FMT-DEC-20 regression (found by the property above): DuckDB's strptime cannot read a
    format that starts with a space, so such layouts decode through the canonical text."""
    fmt = _fmt(layout)
    day = dt.date(2024, 3, 15)
    decoded = DIALECTS["duckdb"].decode_time(exp.Literal.string(str(fmt.encode(day))), fmt)
    got = duckdb.sql(f"SELECT {decoded.sql('duckdb')}").fetchall()[0][0]
    want = fmt.period_start(day)
    assert (got.date() if isinstance(got, dt.datetime) else got) == want


@pytest.mark.parametrize("bad", ["%Y%d", "%d/%m/%Y", "%Y%-m", "%Y%m%d%z", "%f", "%", "x", "%Y%Y"])
def test_rejected_layouts(bad: str) -> None:
    with pytest.raises(LayoutError):
        parse_layout(bad)
