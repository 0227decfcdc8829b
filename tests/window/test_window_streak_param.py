"""D-PARAM slot `streak.target` (issue 23): a streak's threshold written `{"param": "t"}` and
bound at query time, in both spellings (`{"streak": {"target": ...}}` and `{"type": "streak",
"target": ...}`), executed on DuckDB.

Expected values come from `streaked` (test_window_streak.py's plain-Python restatement) over
the same daily series: a missing day inside a run, a tie, a NULL, negative and zero values.
The typing follows D-PARAM: a threshold is a number, so the slot takes an `int` or a `float`
param with any domain (a target may be negative; no domain warns `datus_param_unbounded`); a
`string` param is refused at load. Requirement IDs: PARAM-INST-01 (the model plans at the
default), PARAM-BIND-02 (an omitted binding takes the default), PARAM-BIND-04 (a value of the
wrong type is `param_out_of_domain` with a retry), PARAM-BIND-05 (a float param takes a JSON
integer), PARAM-BIND-06 (a list expands to columns), PARAM-OUT-01 / PARAM-OUT-02 (column
names), PARAM-SLOT-07 (a slot's type rule, here widened for a threshold), PARAM-DEC-06.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_window_streak import STREAK_SALES, streaked
from wm_common import build_db, keyed, make_engine, model_yaml, series

import dosi
from dosi.errors import ModelError

T_FLOAT = {"name": "t", "type": "float", "default": 50, "min": -100, "max": 1000}
K_INT = {"name": "k", "type": "int", "default": 0, "allowed": [-5, 0, 5]}
WINDOWS: dict[str, Any] = {
    "big": {"params": [T_FLOAT], "window": {"streak": {"op": ">=", "target": {"param": "t"}}}},
    "big_type": {
        "params": [T_FLOAT],
        "window": {"type": "streak", "op": ">=", "target": {"param": "t"}},
    },
    "moves": {
        "params": [K_INT],
        "window": {"streak": {"compare": "change", "op": ">", "target": {"param": "k"}}},
    },
}
DAY = ["sales.region", "metric_time:day"]
RD = ("region", "metric_time__day")


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(WINDOWS)


@pytest.fixture(scope="module")
def daily_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_db(tmp_path_factory.mktemp("streak_param") / "s.duckdb", STREAK_SALES)


def _run(eng: dosi.Engine, db: str, metrics: list[str], **extra: Any) -> dict[str, Any]:
    return eng.execute({"metrics": metrics, "group_by": DAY, **extra}, db_path=db)


def test_default_binding_is_the_declared_target(eng: dosi.Engine, daily_db: str) -> None:
    """Unbound, the slot holds the default (>= 50; change > 0) under the metric's own name."""
    base = series("day", ("region",), rows=STREAK_SALES)
    res = _run(eng, daily_db, ["big", "big_type", "moves"])
    assert res["columns"] == [*RD, "big", "big_type", "moves"]
    want_big = streaked(base, "day", ">=", 50)
    assert keyed(res["rows"], RD, "big") == want_big
    assert keyed(res["rows"], RD, "big_type") == want_big
    assert keyed(res["rows"], RD, "moves") == streaked(base, "day", ">", 0, "change")


def test_bound_targets_expand_to_columns(eng: dosi.Engine, daily_db: str) -> None:
    """A list binds one column per value, named `{metric}__t_{value}`; 25.5 and the JSON
    integer 20 both fit the float param; the runs change with the threshold (east's 20, 20
    tie meets >= 20 but not >= 25.5)."""
    base = series("day", ("region",), rows=STREAK_SALES)
    res = _run(eng, daily_db, ["big_type"], params={"t": [20, 25.5, -5]})
    cols = ["big_type__t_20", "big_type__t_25_5", "big_type__t_neg5"]
    assert res["columns"] == [*RD, *cols]
    for col, t in zip(res["columns"][2:], (20, 25.5, -5), strict=True):
        assert keyed(res["rows"], RD, col) == streaked(base, "day", ">=", t), col
    got = keyed(res["rows"], RD, "big_type__t_25_5")
    assert [got[("east", f"2024-01-0{d}")] for d in (2, 3, 4)] == [0, 0, 1]


def test_a_negative_int_target_on_the_change(eng: dosi.Engine, daily_db: str) -> None:
    """`change > -5` (an allowed negative int): a drop of less than 5 keeps the run."""
    base = series("day", ("region",), rows=STREAK_SALES)
    res = _run(eng, daily_db, ["moves"], params={"k": -5})
    assert res["columns"] == [*RD, "moves__k_neg5"]
    assert keyed(res["rows"], RD, "moves__k_neg5") == streaked(base, "day", ">", -5, "change")


def test_a_value_outside_the_domain_is_refused(eng: dosi.Engine, daily_db: str) -> None:
    """Out of range, of the wrong type, or not an allowed value: `param_out_of_domain` with a
    ready-to-resend retry, never a streak over another threshold."""
    for params in ({"t": 5000}, {"t": "50"}, {"k": 2}, {"k": 0.5}):
        with pytest.raises(dosi.QueryError) as info:
            _run(eng, daily_db, ["big", "moves"], params=params)
        assert info.value.code == "param_out_of_domain", params
        assert info.value.suggested_retry is not None


def _issues(windows: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ModelError) as info:
        dosi.Engine(model_text=model_yaml(windows))
    return [(i.code, i.message) for i in info.value.issues]


def test_slot_typing_at_load() -> None:
    """A string param cannot be a threshold; an undeclared param names the declared ones."""
    s = {"name": "s", "type": "string", "default": "a", "allowed": ["a"]}
    issues = _issues(
        {"m": {"params": [s], "window": {"streak": {"op": ">", "target": {"param": "s"}}}}}
    )
    assert any(c == "invalid_datus_extension" and "int or float" in m for c, m in issues)
    issues = _issues(
        {
            "m": {
                "params": [T_FLOAT],
                "window": {"type": "streak", "op": ">", "target": {"param": "x"}},
            }
        }
    )
    assert any("undeclared param" in m for _, m in issues)


def test_an_unbounded_threshold_compiles_with_a_warning(tmp_path: Path) -> None:
    """No domain: the model loads (a target needs no lower bound) and warns
    `datus_param_unbounded`; the bound value reaches the SQL as a literal comparison."""
    free = {"name": "t", "type": "int", "default": 1}
    e = dosi.Engine(
        model_text=model_yaml(
            {"m": {"params": [free], "window": {"streak": {"op": ">", "target": {"param": "t"}}}}}
        )
    )
    assert ("datus_param_unbounded", "t") in [
        (w["code"], w["message"].split('"')[1]) for w in e.warnings
    ]
    db = build_db(tmp_path / "s.duckdb", STREAK_SALES)
    res = e.execute({"metrics": ["m"], "group_by": DAY, "params": {"t": -1000}}, db_path=db)
    base = series("day", ("region",), rows=STREAK_SALES)
    assert keyed(res["rows"], RD, res["columns"][2]) == streaked(base, "day", ">", -1000)
