"""DataFusion (dosi.sql.dialects.datafusion, a PostgreSQL subclass): epochs are exact integer
casts of a microsecond timestamp (EXTRACT(EPOCH) is a float there) and integer division is
`/`; executed on DataFusion when it is installed."""

from __future__ import annotations

import datetime as dt
import importlib.util

import pytest
from sqlglot import exp

from dosi.sql.dialects import get_dialect

DF = get_dialect("datafusion")


@pytest.mark.skipif(
    importlib.util.find_spec("datafusion") is None, reason="datafusion is not installed"
)
def test_datafusion_epochs_are_exact() -> None:
    import datafusion

    ctx = datafusion.SessionContext()
    moment = dt.datetime(2025, 11, 28, 12, 0, 30, 123456)
    lit = exp.Cast(
        this=exp.Literal.string(moment.isoformat(sep=" ")), to=exp.DataType.build("TIMESTAMP")
    )
    want = (moment - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    sql = f"SELECT {DF.epoch_us(lit).sql('postgres')} AS e"
    assert ctx.sql(sql).to_pylist()[0]["e"] == want
    back = DF.from_epoch(exp.Literal.number(want), 1000).sql("postgres")
    assert ctx.sql(f"SELECT {back} AS t").to_pylist()[0]["t"] == moment
    seven_div_two = exp.IntDiv(this=exp.Literal.number(7), expression=exp.Literal.number(2))
    div = DF.finalize(exp.select(exp.alias_(seven_div_two, "q")))
    assert ctx.sql(div.sql("postgres")).to_pylist() == [{"q": 3}]
