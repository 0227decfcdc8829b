"""dosi 1.15 `empty_buckets: "drop"` on a semi-additive metric (issue 20 bed,
`semi_additive_filtered_buckets`): the snapshot is still picked over every row of the period
(D-SEMI), and a bucket where none of the picked rows passes the metric's filter is no row.
MetricFlow answers so (its check query picks the day over all accounts, then filters by the
users' state). Expected values are plain Python over semikit.BALANCES: account 3 skips the last
snapshot date of February and March and is gone in April, account 1 has every month's last.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import semikit

import dosi

DROP = {"v": "1.15", "empty_buckets": "drop"}


def _only(account: int, name: str, extra: dict[str, Any]) -> dict[str, Any]:
    return semikit.metric(
        name,
        f"SUM(CASE WHEN balances.account_id = {account} THEN balances.balance END)",
        {**semikit.semi(), **extra},
    )


EXTRA = [
    _only(3, "account3_last", DROP),
    _only(1, "account1_last", DROP),
    _only(3, "account3_last_kept", {}),
]


@pytest.fixture(scope="module")
def engine(semi_db: Path) -> dosi.Engine:
    return dosi.Engine(
        model_text=semikit.semi_model_text([*semikit.METRICS, *EXTRA]),
        connections={"db": {"type": "duckdb", "uri": str(semi_db)}},
    )


def expected(account: int) -> dict[str, float | None]:
    """Per month: the rows of `account` at the month's last snapshot date over all accounts;
    a month where it has none is absent."""
    out: dict[str, float | None] = {}
    for m in sorted({semikit.month(d) for d, _, _ in semikit.BALANCES}):
        when = max(d for d, _, _ in semikit.BALANCES if semikit.month(d) == m)
        rows = [b for d, a, b in semikit.BALANCES if d == when and a == account]
        if rows:
            vals = [float(b) for b in rows if b is not None]
            out[m] = sum(vals) if vals else None
    return out


def _run(engine: dosi.Engine, *metrics: str) -> dict[str, tuple[Any, ...]]:
    rows = engine.execute({"metrics": list(metrics), "group_by": ["metric_time:month"]})["rows"]
    return {
        str(r["metric_time__month"])[:10]: tuple(
            None if r[m] is None else float(r[m]) for m in metrics
        )
        for r in rows
    }


def test_a_month_no_picked_row_passes_is_dropped(engine: dosi.Engine) -> None:
    want = expected(3)
    assert _run(engine, "account3_last") == {m: (v,) for m, v in want.items()}
    assert want == {"2024-01-01": 300.0}


def test_keep_is_the_default(engine: dosi.Engine) -> None:
    """Without the key the months stay, NULL: the pick is the same, only the rows differ."""
    got = _run(engine, "account3_last_kept")
    assert got == {
        "2024-01-01": (300.0,),
        **{m: (None,) for m in ("2024-02-01", "2024-03-01", "2024-04-01")},
    }


def test_two_dropping_metrics_keep_the_months_either_has(engine: dosi.Engine) -> None:
    three, one = expected(3), expected(1)
    got = _run(engine, "account3_last", "account1_last")
    assert got == {m: (three.get(m), one.get(m)) for m in three.keys() | one.keys()}
    assert len(got) == 4
