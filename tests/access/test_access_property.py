"""issue 30 item 6, hypothesis: for random metric queries (filters, ORs, groupings, LOD
totals, window lookbacks, time ranges) a policed user's answer equals the same query's answer
over a database that contains only that user's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from accesskit import ACCESS, MODEL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dosi
from dosi import Engine

CONFIG = dosi.load_access(ACCESS)
SERVED = Engine(str(MODEL), access=CONFIG)
PLAIN = Engine(str(MODEL))

METRICS = [
    "revenue",
    "order_count",
    "buyer_count",
    "revenue_all_time",
    "revenue_channel_free",
    "revenue_share",
]
WINDOWED = ["revenue_rolling_3m", "revenue_mom"]
DIMS = ["orders.region", "orders.channel", "orders.tenant_id"]
WHERES = [
    "orders.region = 'EMEA' OR orders.region = 'APAC'",
    "orders.channel <> 'web' OR orders.tenant_id = 2",
    "orders.tenant_id IN (1, 2, 3, 4) OR orders.region IS NULL",
    "orders.amount > 100",
    "NOT (orders.region = 'AMER')",
]
RANGES = [None, {"start": "2024-03-01", "end": "2025-02-01"}, {"start": "2025-01-01"}]


@st.composite
def queries(draw: st.DrawFn) -> dict[str, Any]:
    windowed = draw(st.booleans())
    q: dict[str, Any] = {}
    if windowed:
        q["metrics"] = draw(st.lists(st.sampled_from(WINDOWED), min_size=1, unique=True))
        q["group_by"] = ["metric_time:month"]
    else:
        q["metrics"] = draw(st.lists(st.sampled_from(METRICS), min_size=1, max_size=3, unique=True))
        q["group_by"] = draw(st.lists(st.sampled_from(DIMS), max_size=2, unique=True))
    where = draw(st.sampled_from([None, *WHERES]))
    if where is not None:
        q["where_sql"] = where
    if not windowed and draw(st.booleans()):
        q["context_filter"] = draw(st.sampled_from(WHERES))
    span = draw(st.sampled_from(RANGES))
    if span is not None:
        q["time_range"] = span
    return q


def _rows(r: Any) -> list[str]:
    return sorted(map(repr, r["rows"]))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=queries(), name=st.sampled_from(["ana", "tom", "eve", "sam"]))
def test_issue30_property_answer_equals_only_the_users_rows(
    query: dict[str, Any], name: str, acl_db: Path, only_rows: dict[str, Path]
) -> None:
    user = CONFIG.identities.user(name)
    assert user is not None
    scoped = SERVED.as_user(user)
    visible = {m["name"] for m in scoped.metrics()}
    if not set(query["metrics"]) <= visible:
        query = dict(query, metrics=[m for m in query["metrics"] if m in visible] or ["revenue"])
    try:
        want = PLAIN.execute(query, db_path=only_rows[name])
    except dosi.QueryError as err:  # a query shape the model refuses: the user gets the same
        with pytest.raises(dosi.QueryError) as mine:
            scoped.execute(query, db_path=acl_db)
        assert mine.value.code == err.code
        return
    got = scoped.execute(query, db_path=acl_db)
    assert _rows(got) == _rows(want)
