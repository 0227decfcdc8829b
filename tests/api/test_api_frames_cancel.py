"""Results people can use (to_pandas / to_polars, Arrow metadata SURF-ARROW-01) and stopping a
running statement (CancellationToken, timeout)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from enginekit import SLOW_MODEL

from dosi import CancellationToken, Engine
from dosi.errors import ExecuteError

Q = {"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]}


def test_to_pandas_and_to_polars_keep_values(shop: Any, shop_db: Path) -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    r = shop.execute(Q, db_path=shop_db)
    df = r.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == r["columns"]
    assert list(df["revenue"]) == [float(x["revenue"]) for x in r["rows"]]
    assert str(df["revenue"].dtype) == "float64" and str(df["order_count"].dtype) == "int64"
    exact = r.to_pandas(exact=True)
    assert list(exact["revenue"]) == [x["revenue"] for x in r["rows"]]  # Decimal, exact
    pf = r.to_polars()
    assert isinstance(pf, pl.DataFrame)
    assert pf["order_count"].to_list() == [x["order_count"] for x in r["rows"]]
    sel = shop.select(
        {"from": "orders", "fields": ["orders.order_id"], "limit": 3}, db_path=shop_db
    )
    assert sel.to_pandas()["order_id"].tolist() == [x["order_id"] for x in sel["rows"]]


def test_arrow_metric_fields_carry_metric_and_params(shop: Any, shop_db: Path) -> None:
    """SURF-ARROW-01."""
    t = shop.execute(Q, db_path=shop_db).arrow
    for name in ("revenue", "order_count"):
        assert t.schema.field(name).metadata == {
            b"dosi.metric": name.encode(),
            b"dosi.params": b"{}",
        }
    assert not t.schema.field("channel").metadata


@pytest.fixture(scope="module")
def slow() -> Any:
    """A model over 20 billion generated rows: every query runs until stopped."""
    e = Engine(model_text=SLOW_MODEL)
    yield e
    e.close()


def test_cancellation_token_stops_a_running_query(slow: Engine) -> None:
    token = CancellationToken()
    threading.Timer(0.3, token.cancel).start()
    started = time.monotonic()
    with pytest.raises(ExecuteError) as err:
        slow.execute({"metrics": ["total"], "group_by": ["big.k"]}, cancellation=token)
    assert err.value.code == "cancelled"
    assert time.monotonic() - started < 10


def test_timeout_stops_a_running_query(slow: Engine) -> None:
    with pytest.raises(ExecuteError) as err:
        slow.execute({"metrics": ["total"]}, timeout_secs=0.3)
    assert err.value.code == "timeout"
