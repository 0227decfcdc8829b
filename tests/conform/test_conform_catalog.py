"""D-CONFORM in the catalog (issue 12 item 6): each paired dimension names its conformity
class; a cross-fact metric lists the dimensions its facts share, and its metric_time."""

from __future__ import annotations

from typing import Any

from netbarkit import NETBAR_MODEL

from dosi.engine import Engine


def _rows(engine: Engine, metric: str | None = None) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in engine.dimensions(metric) if d["name"] != "metric_time"}


def test_catalog_conformity_class_on_every_spelling(netbar: Engine) -> None:
    """Item 6: the three dates are one class (transitive, CONF-09), the two platforms another;
    unpaired fields carry no class."""
    dims = _rows(netbar)
    date_class = {dims[n]["conformity_class"] for n in (
        "netbar_login.stat_date", "netbar_payment.pay_date", "netbar_register.reg_date")}  # fmt: skip
    assert date_class == {"netbar_login.stat_date"}
    assert dims["netbar_payment.pay_date"]["conformed_with"] == [
        "netbar_login.stat_date",
        "netbar_register.reg_date",
    ]
    assert dims["netbar_login.platform_id"]["conformed_with"] == ["netbar_payment.platform_id"]
    assert "conformity_class" not in dims["netbar_login.region"]
    assert "conformity_class" not in dims["netbar_register.platform_id"]  # not paired


def test_catalog_cross_fact_metric_lists_what_all_its_facts_read(netbar: Engine) -> None:
    """CONF-10 in the catalog: pay_rate lists one spelling per shared dimension and none of
    the one-sided columns, plus its conformed metric_time (CONF-06); each listed dimension
    compiles."""
    listed = netbar.dimensions("pay_rate")
    names = [d["name"] for d in listed]
    assert names == ["metric_time", "netbar_login.platform_id", "netbar_login.stat_date"]
    assert listed[0]["time_axis"] == "netbar_login.stat_date"
    for d in listed:
        g = d["name"] + (":month" if d["is_time"] else "")
        assert netbar.compile({"metrics": ["pay_rate"], "group_by": [g]})["sql"]


def test_catalog_dataset_lists_its_pairings(netbar: Engine) -> None:
    """A dataset's relationships include its many_to_many pairings, its own spelling first
    and no join type."""
    rels = {r["name"]: r for r in netbar.dataset("netbar_payment")["relationships"]}
    assert rels["login_payment_conformed"] == {
        "name": "login_payment_conformed",
        "to": "netbar_login",
        "cardinality": "many_to_many",
        "join_type": None,
        "columns": [["pay_date", "stat_date"], ["platform_id", "platform_id"]],
    }
    assert rels["payment_to_platforms"]["cardinality"] == "many_to_one"


def test_cli_list_dimensions_shows_the_class() -> None:
    """Item 6: `dosi list dimensions` prints the conformity class column."""
    from click.testing import CliRunner

    from dosi.frontends.cli import cli

    out = CliRunner().invoke(
        cli, ["list", "dimensions", "-m", str(NETBAR_MODEL), "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    assert '"conformity_class": "netbar_login.stat_date"' in out.output
