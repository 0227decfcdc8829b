"""A running total over the whole history queried without its time axis (issue 22;
MetricFlow's all-time cumulative metric without metric_time, which `dosi import dbt` declares
with `history: "all"`): the frame has no bucket to order, spans the whole series and is the
base's total per partition. Every other time-ordered window, a plain running total included,
keeps `time_axis_not_grouped` (the window spec: the time axis must be grouped with a grain;
the reference engine answers the same). Values from densekit's hand-written sales.
Requirement IDs: WIN-CUM-01, WIN-FRM-21 (windows that order along time need the axis),
WIN-QRY-01."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from densekit import SALES, build, model_text
from enginekit import datus, expr
from periodkit import model_text as period_model

from dosi.engine import Engine
from dosi.errors import OsiError

ALL = {"type": "cumulative", "function": "sum", "history": "all"}


def _with(text: str, extra: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """`text` with metrics added: name -> (expression, window payload), DATUS 1.15."""
    doc = yaml.safe_load(text)
    for name, (expression, window) in extra.items():
        doc["semantic_model"][0]["metrics"].append(
            {
                "name": name,
                "expression": expr(expression),
                "custom_extensions": datus(json.dumps({"v": "1.15", "window": window})),
            }
        )
    return yaml.safe_dump(doc, sort_keys=False)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = build(tmp_path_factory.mktemp("noaxis") / "s.duckdb")
    text = _with(
        model_text(),
        {"rev_all": ("SUM(sales.amount)", ALL), "count_all": ("COUNT(sales.sale_id)", ALL)},
    )
    eng = Engine(model_text=text)
    yield lambda q: eng.execute(q, db_path=db)["rows"]
    eng.close()


def test_running_total_without_axis_is_the_total(run: Any) -> None:
    total = sum(a for *_, a in SALES)
    assert [float(r["rev_all"]) for r in run({"metrics": ["rev_all"]})] == [float(total)]
    rows = run({"metrics": ["rev_all", "count_all"], "group_by": ["sales.region"]})
    want = {
        reg: (
            float(sum(a for _, _, r, a in SALES if r == reg)),
            sum(1 for s in SALES if s[2] == reg),
        )
        for reg in ("east", "west")
    }
    assert {r["region"]: (float(r["rev_all"]), r["count_all"]) for r in rows} == want


@pytest.mark.parametrize(
    "query",
    [
        {"metrics": ["rev_run"]},  # a running total of the range: the spec's rule holds
        {"metrics": ["rev_run"], "group_by": ["sales.region"]},
        {"metrics": ["rev_ytd"]},  # a reset needs its periods
        {"metrics": ["rev_mom"]},  # an offset needs buckets to shift
        {"metrics": ["rev_all"], "time_range": {"start": "2024-02-01"}},
    ],
)
def test_other_time_windows_still_need_the_axis(run: Any, query: dict[str, Any]) -> None:
    with pytest.raises(OsiError) as err:
        run(query)
    assert err.value.code == "time_axis_not_grouped"


def test_sampled_running_total_without_axis(tmp_path: Path) -> None:
    """A period_value running total over the whole history is the total too: without the
    axis there is no coarser bucket to sample."""
    db = build(tmp_path / "p.duckdb")
    text = _with(
        period_model(),
        {"run_last_all": ("SUM(sales.amount)", {**ALL, "period_value": "last"})},
    )
    eng = Engine(model_text=text)
    try:
        rows = eng.execute({"metrics": ["run_last_all"]}, db_path=db)["rows"]
        with pytest.raises(OsiError) as err:
            eng.execute({"metrics": ["run_last"]}, db_path=db)
        assert err.value.code == "time_axis_not_grouped"
    finally:
        eng.close()
    assert [float(r["run_last_all"]) for r in rows] == [float(sum(a for *_, a in SALES))]
