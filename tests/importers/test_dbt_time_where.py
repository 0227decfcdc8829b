"""A MetricFlow where filter that only bounds metric_time becomes dosi's time_range (issue 22
item 1: MetricFlow applies it after its time-spine joins, which dosi's time_range does: scan
widened for offsets, result trimmed, spine bounded); anything else stays a where filter.
Expected bounds written out by hand (end exclusive)."""

from __future__ import annotations

import pytest

from dosi.importers.dbt.time_where import where_as_time_range

AXIS = ["bookings_source.ds"]
TS = "CAST(bookings_source.ds AS TIMESTAMP)"


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        (
            f"{TS} >= CAST('2020-01-08' AS TIMESTAMP) AND {TS} < CAST('2020-01-10' AS TIMESTAMP)",
            {"start": "2020-01-08", "end": "2020-01-10"},
        ),
        (f"{TS} >= CAST('2020-01-01' AS TIMESTAMP)", {"start": "2020-01-01"}),
        ("bookings_source.ds <= '2020-01-02'", {"end": "2020-01-03"}),
        ("bookings_source.ds > '2020-01-02'", {"start": "2020-01-03"}),
        (
            "bookings_source.ds >= '2020-01-01' AND bookings_source.ds >= '2020-01-05'",
            {"start": "2020-01-05"},
        ),
    ],
)
def test_bounds_on_the_axis_become_a_time_range(sql: str, want: dict[str, str]) -> None:
    assert where_as_time_range(sql, AXIS) == want


@pytest.mark.parametrize(
    "sql",
    [
        "bookings_source.is_instant",
        "bookings_source.ds >= '2020-01-01' OR bookings_source.ds < '2019-01-01'",
        "bookings_source.ds >= '2020-01-01' AND bookings_source.is_instant = TRUE",
        "other.ds >= '2020-01-01'",
        "bookings_source.ds >= '2020-01-01 10:00:00'",
        "bookings_source.ds = '2020-01-01'",
        "bookings_source.ds >=",
    ],
)
def test_anything_else_stays_a_where_filter(sql: str) -> None:
    assert where_as_time_range(sql, AXIS) is None
