"""D-GRAIN `time_granularity`: the native grain of a time field (issue 3).

Requirement IDs: GRAIN-01..05 (basic-mode fallbacks: tests/ext/test_ext_engine_modes.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, mini_yaml, result_rows

from dosi.engine import Engine
from dosi.errors import ModelError, QueryError

Make = Callable[..., Any]
MONTH_GRAIN = {"orders.order_date": {"time_granularity": "month"}}

# ------------------------------------------------------------------------------ D-GRAIN


@pytest.mark.parametrize(
    "item",
    ["orders.order_date:day", "orders.order_date:week", "metric_time:day", "metric_time:week"],
)
def test_grain_04_finer_than_native_is_grain_too_fine(mini_engine: Make, item: str) -> None:
    """GRAIN-04: on a month-grain column, day and week (explicit or via metric_time) are
    `grain_too_fine`; week counts as finer than month (reference §3.8)."""
    engine, _ = mini_engine(field_ext=MONTH_GRAIN)
    with pytest.raises(QueryError) as info:
        engine.compile({"metrics": ["revenue"], "group_by": [item]})
    assert info.value.code == "grain_too_fine"


@pytest.mark.parametrize("grain", ["month", "quarter", "year"])
def test_grain_05_native_or_coarser_grains_work(
    mini_engine: Make, mini_ref: Any, grain: str
) -> None:
    """GRAIN-05: truncating to the native grain or coarser is unaffected."""
    _, run = mini_engine(field_ext=MONTH_GRAIN)
    res = run({"metrics": ["revenue"], "group_by": [f"metric_time:{grain}"]})
    assert_rows_equal(
        result_rows(res),
        mini_ref.rows(
            f"SELECT CAST(DATE_TRUNC('{grain}', order_date) AS DATE), SUM(amount) "
            "FROM orders GROUP BY 1"
        ),
    )


def test_grain_05_ungrained_grouping_is_allowed(mini_engine: Make) -> None:
    """Reference §3.8: grouping by the field with no grain returns the stored values."""
    _, run = mini_engine(field_ext=MONTH_GRAIN)
    res = run({"metrics": ["order_count"], "group_by": ["orders.order_date"]})
    assert res["row_count"] == 7


def test_grain_without_declaration_allows_any_grain(mini: Engine) -> None:
    """GRAIN-03: with no declaration (a Date field defaults to day), day works."""
    assert mini.compile({"metrics": ["revenue"], "group_by": ["metric_time:day"]})["sql"]


def test_grain_03_dimensions_report_the_native_grain(mini_engine: Make) -> None:
    """GRAIN-03 / reference §3.8: dimensions() shows the declared grain; an undeclared Date
    field reports day."""
    engine, _ = mini_engine(field_ext=MONTH_GRAIN)
    dims = {d["name"]: d for d in engine.dimensions()}
    assert dims["orders.order_date"]["time_granularity"] == "month"
    assert dims["refunds.refund_date"]["time_granularity"] == "day"


def test_grain_01_requires_a_time_field() -> None:
    """GRAIN-01: `time_granularity` on a non-time field is invalid_datus_extension."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(field_ext={"orders.status": {"time_granularity": "month"}}))
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("invalid_datus_extension", "datasets[orders].fields[status]")
    ]


@pytest.mark.parametrize("value", ["hour", "Month", 1])
def test_grain_02_value_outside_the_enum_is_invalid(value: Any) -> None:
    """GRAIN-02: day | week | month | quarter | year."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(field_ext={"orders.order_date": {"time_granularity": value}}))
    assert [d.code for d in info.value.issues] == ["invalid_datus_extension"]
