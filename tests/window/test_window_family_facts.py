"""The facts each window family gives the planner and the catalog (issue 10: families answer
through properties on their spec classes, not isinstance chains or getattr probes). The
planner widens and aligns by an offset's `shift` (WIN-OFF-12, WIN-QRY-04), a frame's
`reset_grain` (WIN-FRM-17), masks time-ordered frames outside the range; the catalog lists
an offset's calculation or the SQL function of the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from dosi.engine import Engine
from dosi.ext import FrameWindow, OffsetWindow, RankWindow, ValueWindow, WindowSpec
from dosi.ext.window import Shift

SHOP = Path(__file__).resolve().parents[2] / "examples" / "shop" / "model.yaml"

CASES: list[tuple[WindowSpec, Shift | None, str | None, bool, str]] = [
    (
        OffsetWindow(3, "month", "forward", "value"),
        Shift(3, "month", "forward"),
        None,
        False,
        "value",
    ),
    (OffsetWindow(1, "year"), Shift(1, "year", "back"), None, False, "percent_change"),
    (FrameWindow("sum", None, reset="year"), None, "year", True, "sum"),
    (FrameWindow("avg", 2), None, None, True, "avg"),
    (FrameWindow("max", None, scope="partition"), None, None, False, "max"),
    (RankWindow("dense_rank"), None, None, False, "dense_rank"),
    (ValueWindow("first_value"), None, None, False, "first_value"),
]


@pytest.mark.parametrize(("spec", "shift", "reset", "masked", "listed"), CASES)
def test_family_facts(
    spec: WindowSpec, shift: Shift | None, reset: str | None, masked: bool, listed: str
) -> None:
    assert spec.shift == shift
    assert spec.reset_grain == reset
    assert spec.masked_outside_range is masked
    assert spec.listed_function == listed


def test_catalog_reads_the_facts() -> None:
    """The shop model's window metrics as the catalog lists them: the family, the listed
    function, and for offsets only the grains their shift lands on (1 month: day, month)."""
    eng = Engine(model_path=SHOP)
    listed = {m["name"]: (m["window_family"], m["window_function"]) for m in eng.metrics()}
    assert listed["revenue_mom"] == ("offset", "percent_change")
    assert listed["revenue_ytd"] == ("frame", "sum")
    assert listed["revenue_rank"] == ("rank", "dense_rank")
    assert listed["first_month_revenue"] == ("value", "first_value")
    assert listed["revenue"] == (None, None)
    assert eng.metric("revenue_mom")["time_granularities"] == ["day", "month"]
    assert eng.metric("revenue_yoy")["time_granularities"] == ["day", "month", "quarter", "year"]
    assert eng.metric("revenue_ytd")["time_granularities"] == [
        *("day", "week", "month", "quarter", "year")
    ]
