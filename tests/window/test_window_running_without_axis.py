"""A running total queried without its time axis (issue 22; MetricFlow's all-time cumulative
metric without metric_time): the frame has no bucket to order, spans the whole series and is
the base's total per partition. Other time-ordered windows (a reset, an offset) keep
`time_axis_not_grouped`. Values from densekit's hand-written sales. Requirement IDs:
WIN-CUM-01, WIN-FRM-21 (windows that order along time need the axis), WIN-QRY-01."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from densekit import SALES, build, model_text
from periodkit import model_text as period_model

from dosi.engine import Engine
from dosi.errors import OsiError


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = build(tmp_path_factory.mktemp("noaxis") / "s.duckdb")
    eng = Engine(model_text=model_text())
    yield lambda q: eng.execute(q, db_path=db)["rows"]
    eng.close()


def test_running_total_without_axis_is_the_total(run: Any) -> None:
    total = sum(a for *_, a in SALES)
    assert [float(r["rev_run"]) for r in run({"metrics": ["rev_run"]})] == [float(total)]
    rows = run({"metrics": ["rev_run", "count_run"], "group_by": ["sales.region"]})
    want = {
        reg: (
            float(sum(a for _, _, r, a in SALES if r == reg)),
            sum(1 for s in SALES if s[2] == reg),
        )
        for reg in ("east", "west")
    }
    assert {r["region"]: (float(r["rev_run"]), r["count_run"]) for r in rows} == want


@pytest.mark.parametrize(
    "query",
    [
        {"metrics": ["rev_ytd"]},  # a reset needs its periods
        {"metrics": ["rev_mom"]},  # an offset needs buckets to shift
        {"metrics": ["rev_run"], "time_range": {"start": "2024-02-01"}},
    ],
)
def test_other_time_windows_still_need_the_axis(run: Any, query: dict[str, Any]) -> None:
    with pytest.raises(OsiError) as err:
        run(query)
    assert err.value.code == "time_axis_not_grouped"


def test_sampled_running_total_without_axis(tmp_path: Path) -> None:
    """A period_value running total is the total too: without the axis there is no coarser
    bucket to sample."""
    db = build(tmp_path / "p.duckdb")
    eng = Engine(model_text=period_model())
    try:
        rows = eng.execute({"metrics": ["run_last"]}, db_path=db)["rows"]
    finally:
        eng.close()
    assert [float(r["run_last"]) for r in rows] == [float(sum(a for *_, a in SALES))]
