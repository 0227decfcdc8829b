"""Property (issue 21 item 5): on DuckDB, every percentile metric of any small sample, per
group, equals the rule computed in Python (continuous: `statistics.quantiles(..., n=100,
method="inclusive")`; discrete: rank max(1, ceil(n * p)) in exact fractions); NULLs are ignored
and a group of only NULLs is NULL. Requirement ID: CORE-MEAS-01."""

from __future__ import annotations

import itertools
from pathlib import Path

import duckdb
import pytest
from enginekit import dataset, field, metric, model_doc, same, to_yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_percentile_values import cont, disc

from dosi.engine import Engine

FRACTIONS = (0.1, 0.25, 0.5, 0.9, 0.99)
METRICS = [
    *(
        metric(f"c{round(p * 100)}", f"PERCENTILE_CONT({p}) WITHIN GROUP (ORDER BY t.v)")
        for p in FRACTIONS
    ),
    *(
        metric(f"d{round(p * 100)}", f"PERCENTILE_DISC({p}) WITHIN GROUP (ORDER BY t.v)")
        for p in FRACTIONS
    ),
    metric("med", "MEDIAN(t.v)"),
]
MODEL = to_yaml(
    model_doc(
        [dataset("t", [field("g", datatype="Integer"), field("v", datatype="Integer")])],
        metrics=METRICS,
    )
)
_counter = itertools.count()

rows = st.lists(
    st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(-50, 50))),
    min_size=1,
    max_size=25,
)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(model_text=MODEL)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=rows)
def test_every_percentile_follows_the_rule(engine: Engine, tmp_path: Path, data: list) -> None:
    path = tmp_path / f"t{next(_counter)}.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (g INTEGER, v INTEGER)")
    con.executemany("INSERT INTO t VALUES (?, ?)", data)
    con.close()
    names = [m["name"] for m in METRICS]
    res = engine.execute({"metrics": names, "group_by": ["t.g"]}, db_path=path)
    groups: dict[int, list] = {}
    for g, v in data:
        groups.setdefault(g, []).append(v)
    assert {r["g"] for r in res["rows"]} == set(groups)
    for r in res["rows"]:
        vals = groups[r["g"]]
        for p in FRACTIONS:
            k = round(p * 100)
            assert same(r[f"c{k}"], cont(vals, p)), (p, vals, r)
            assert same(r[f"d{k}"], disc(vals, p)), (p, vals, r)
        assert same(r["med"], cont(vals, 0.5))
