"""Issue 22 item 8 properties: dosi's Python bucket arithmetic (dosi.plan.calendar, the scan
bounds a window widens to) agrees with the independent expectations of
test_calendar_engines on any day, retail years tile the calendar in 52 or 53 weeks, and the
retail-year offset table covers the 400-year cycle."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st
from test_calendar_engines import _fiscal_quarter, _fiscal_year, _retail, _retail_month, _week

from dosi.ir.calendar import CalendarIr, RetailCalendar
from dosi.plan.calendar import bucket_day, retail_year_end
from dosi.sql.calendar import _CYCLE, retail_shift_table

NRF = RetailCalendar((4, 5, 4), 1, 5, "nearest")
CAL = CalendarIr(week_start=6, fiscal_start_month=4, retail=NRF)
DAYS = st.dates(min_value=dt.date(1901, 1, 1), max_value=dt.date(2099, 12, 31))


@given(DAYS)
def test_python_buckets_match_the_definitions(day: dt.date) -> None:
    assert bucket_day(day, "week", CAL) == _week(day, 6)
    assert bucket_day(day, "fiscal_quarter", CAL) == _fiscal_quarter(day)
    assert bucket_day(day, "fiscal_year", CAL) == _fiscal_year(day)
    assert bucket_day(day, "retail_year", CAL) == _retail(day)[0]
    assert bucket_day(day, "retail_month", CAL) == _retail_month(day)


def test_retail_years_tile_the_calendar() -> None:
    for rule in ("nearest", "last"):
        r = RetailCalendar((5, 4, 4), 12, 6, rule)  # type: ignore[arg-type]
        for year in range(1900, 2101):
            weeks = (retail_year_end(year, r) - retail_year_end(year - 1, r)).days
            assert weeks in (364, 371)


def test_retail_shift_table_covers_the_cycle() -> None:
    for count in (-2, -1, 1):
        table = retail_shift_table(NRF, count)
        uppers = [u for u, _ in table]
        assert uppers == sorted(uppers) and uppers[-1] == _CYCLE
        deltas = {d for _, d in table if d is not None}
        assert all(abs(d - 364 * count) <= 7 * abs(count) for d in deltas)
