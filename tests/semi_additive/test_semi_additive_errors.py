"""D-SEMI rejections and registry (datus-extensions §2 `requires`, §2.1, §5, the roadmap row;
CHECKLIST ENV-ROAD-01, ENV-REQ-02, ENV-REG-06): a malformed declaration is a structured
`invalid_datus_extension` with candidates, the key is registered as silent, a payload without
`requires` warns `datus_ext_requires_missing`, and basic mode fails closed on the metric."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import semikit
from semikit import metric

import dosi
from dosi.errors import ModelError, QueryError
from dosi.ext import capabilities

PLAIN = [metric("balance_all_snapshots", "SUM(balances.balance)")]


def _issues(decl: Any, expression: str = "SUM(balances.balance)") -> list[tuple[str, str]]:
    payload = {"v": "1.11", "requires": ["semi_additive"], "semi_additive": decl}
    text = semikit.semi_model_text([*PLAIN, metric("bad", expression, payload)])
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    return [(d.code, d.message, tuple(d.candidates or ())) for d in err.value.issues]


@pytest.mark.parametrize(
    ("decl", "fragment", "candidate"),
    [
        ("balances.snapshot_date", "must be an object", None),
        ({}, "`semi_additive.dimension` is required", None),
        ({"dimension": "balances.snapshot_date", "snapshot": "lastt"}, "must be one of", "last"),
        (
            {"dimension": "balances.snapshot_date", "window_grouping": []},
            "is not a key",
            "window_groupings",
        ),
        (
            {"dimension": "balances.snapshot_date", "window_groupings": "account_id"},
            "array of field",
            None,
        ),
        ({"dimension": "balances.snapshot_dat"}, "matches no field", "balances.snapshot_date"),
        ({"dimension": "snapshot_dat"}, "matches no field", "balances.snapshot_date"),
        ({"dimension": "balances.balance"}, "not a time field", "balances.snapshot_date"),
        (
            {"dimension": "snapshot_date", "window_groupings": ["acount_id"]},
            "matches no field",
            "balances.account_id",
        ),
        (
            {"dimension": "snapshot_date", "window_groupings": ["snapshot_date"]},
            "names the dimension",
            None,
        ),
        (
            {"dimension": "snapshot_date", "window_groupings": ["accounts.region"]},
            "window groupings are fields of `balances`",
            None,
        ),
    ],
)
def test_invalid_declarations(decl: Any, fragment: str, candidate: str | None) -> None:
    issues = _issues(decl)
    assert [c for c, _, _ in issues] == ["invalid_datus_extension"], issues
    _, message, cands = issues[0]
    assert fragment in message
    if candidate is not None:
        assert candidate in cands


def test_min_max_need_a_single_aggregate() -> None:
    issues = _issues(
        {"dimension": "snapshot_date", "snapshot": "max"},
        "SUM(balances.balance) / COUNT(balances.account_id)",
    )
    assert issues[0][0] == "invalid_datus_extension" and "single aggregate" in issues[0][1]
    assert issues[0][2] == ("last", "first")


def test_every_aggregate_reads_the_dimension_dataset() -> None:
    issues = _issues({"dimension": "snapshot_date"}, "SUM(balances.balance) + COUNT(accounts.kind)")
    assert (
        issues[0][0] == "invalid_datus_extension"
        and "reads the dimension's dataset" in issues[0][1]
    )


def test_not_with_a_compose() -> None:
    payload = {
        "v": "1.11",
        "requires": ["semi_additive"],
        "semi_additive": {"dimension": "snapshot_date"},
        "derive": {"type": "compose", "expr": "balance_all_snapshots * 2"},
    }
    text = semikit.semi_model_text([*PLAIN, metric("bad", "SUM(balances.balance) * 2", payload)])
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    assert [d.code for d in err.value.issues] == ["not_implemented"]


def test_registered_as_a_silent_key() -> None:
    rows = {r["key"]: r for r in capabilities()["keys"]}
    row = rows["semi_additive"]
    assert row["carriers"] == ["metric"] and row["since"] == "1.11"
    assert row["impact"] == "silent" and row["requires_needed"] is True and row["implemented"]
    assert any(h["version"] == "1.11" and "semi_additive" in h["added"]
               for h in capabilities()["history"])  # fmt: skip


def test_requires_missing_warns() -> None:
    payload = {"v": "1.11", "semi_additive": {"dimension": "snapshot_date"}}
    engine = dosi.Engine(
        model_text=semikit.semi_model_text([*PLAIN, metric("b", "SUM(balances.balance)", payload)])
    )
    warned = [w for w in engine.warnings if w["code"] == "datus_ext_requires_missing"]
    assert len(warned) == 1 and "semi_additive" in warned[0]["message"]


def test_basic_mode_fails_closed(semi_db: Path) -> None:
    """Basic mode does not read the payload: the balance is refused, never the plain sum."""
    engine = dosi.Engine(
        model_text=semikit.semi_model_text(),
        mode="basic",
        connections={"db": {"type": "duckdb", "uri": str(semi_db)}},
    )
    with pytest.raises(QueryError) as err:
        engine.execute({"metrics": ["balance"], "group_by": ["metric_time:month"]})
    assert err.value.code == "metric_needs_datus_mode"
    assert "semi_additive" in str(err.value)
    rows = engine.execute({"metrics": ["balance_all_snapshots"]})["rows"]
    assert rows == [{"balance_all_snapshots": pytest.approx(3070.0)}]
