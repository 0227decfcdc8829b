"""D-CONFORM with a D-FORMAT side (CONF-12, CONF-13): logins keep a native DATE, payments a
`%Y%m%d` string key. A pairing says the two columns are one dimension, not one encoding: every
bound moved at plan time is converted to the target column's own encoding (the stored column
stays unwrapped), and where_sql never moves a comparison onto the encoded side."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import Ref, assert_rows_equal, result_rows
from netbarkit import field_of, netbar_doc, sm, to_yaml

from dosi.engine import Engine
from dosi.errors import QueryError


@pytest.fixture(scope="module")
def encoded_db(netbar_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("netbar_enc") / "netbar.duckdb"
    shutil.copy(netbar_db, path)
    con = duckdb.connect(str(path))
    try:
        con.execute(
            "CREATE TABLE main.netbar_payment_key AS SELECT pay_id, "
            "strftime(pay_date, '%Y%m%d') AS pay_date, platform_id, player_id, amount, channel "
            "FROM main.netbar_payment"
        )
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def encoded(encoded_db: Path) -> Iterator[Engine]:
    doc = netbar_doc()
    pay = next(d for d in sm(doc)["datasets"] if d["name"] == "netbar_payment")
    pay["source"] = "main.netbar_payment_key"
    f = field_of(doc, "netbar_payment", "pay_date")
    f.pop("datatype")  # a String key beside a Date: declared types would disagree (CONF-16)
    f["custom_extensions"] = [
        {
            "vendor_name": "DATUS",
            "data": json.dumps({"v": "1.8", "requires": ["time"], "time": {"format": "%Y%m%d"}}),
        }
    ]
    engine = Engine(model_text=to_yaml(doc))
    yield engine
    engine.close()


def _run(engine: Engine, db: Path, query: dict[str, Any]) -> Any:
    return engine.execute(query, db_path=db)


def test_conf_12_bounds_convert_to_each_sides_encoding(
    encoded: Engine, encoded_db: Path, netbar_ref: Ref
) -> None:
    """CONF-12: one time_range on the native login date filters payments by string keys
    (the key column unwrapped) and logins by dates; the numbers are the native ones."""
    q = {
        "metrics": ["users", "payers"],
        "group_by": ["netbar_login.stat_date:month"],
        "time_range": {"start": "2024-02-01", "end": "2024-03-01", "dimension": "netbar_login.stat_date"},
    }  # fmt: skip
    sql = encoded.compile(q)["sql"]
    assert "netbar_payment.pay_date >= '20240201'" in sql
    assert "netbar_payment.pay_date < '20240301'" in sql
    res = _run(encoded, encoded_db, q)
    expected = netbar_ref.rows(
        """
        SELECT DATE '2024-02-01',
          (SELECT COUNT(DISTINCT player_id) FROM netbar_login
           WHERE stat_date >= DATE '2024-02-01' AND stat_date < DATE '2024-03-01'),
          (SELECT COUNT(DISTINCT player_id) FROM netbar_payment
           WHERE pay_date >= DATE '2024-02-01' AND pay_date < DATE '2024-03-01')
        """
    )
    assert_rows_equal(result_rows(res), expected)


def test_conf_12_grouping_by_the_encoded_spelling(
    encoded: Engine, encoded_db: Path, netbar_ref: Ref
) -> None:
    """CONF-07/12: the merge key is each side's month: decoded on the key side, truncated on
    the native side; the same rows as the all-native model."""
    res = _run(
        encoded,
        encoded_db,
        {"metrics": ["pay_rate"], "group_by": ["netbar_payment.pay_date:month"]},
    )
    expected = netbar_ref.rows(
        """
        WITH l AS (SELECT CAST(date_trunc('month', stat_date) AS DATE) m,
                          COUNT(DISTINCT player_id) n FROM netbar_login GROUP BY 1),
             p AS (SELECT CAST(date_trunc('month', pay_date) AS DATE) m,
                          COUNT(DISTINCT player_id) n FROM netbar_payment GROUP BY 1)
        SELECT COALESCE(l.m, p.m), CAST(p.n AS DOUBLE) / l.n FROM l FULL JOIN p ON l.m = p.m
        """
    )
    assert_rows_equal(result_rows(res), expected)


def test_conf_13_where_sql_on_the_native_spelling_is_not_moved(encoded: Engine) -> None:
    """CONF-13: a payment branch would need the comparison in key encoding: refused, naming
    both spellings; a login-only query keeps it."""
    with pytest.raises(QueryError) as info:
        encoded.compile(
            {"metrics": ["users", "payers"], "where_sql": "netbar_login.stat_date >= '2024-02-01'"}
        )
    assert info.value.code == "unsupported_filter"
    assert "netbar_login.stat_date" in info.value.message
    assert "netbar_payment.pay_date" in info.value.message
    assert encoded.compile(
        {"metrics": ["users"], "where_sql": "netbar_login.stat_date >= '2024-02-01'"}
    )["sql"]
