"""`dosi.ir.conform.reachable_fields`: the dimensions one fact can group by, including
the conformed spellings of its paired columns (CONF-05; the per-member set a D-DERIVE compose
intersects for `unconformed_dimension`)."""

from __future__ import annotations

from dosi.engine import Engine
from dosi.ir.conform import reachable_fields, same_dimension


def test_reachable_fields_include_conformed_spellings(netbar: Engine) -> None:
    model, graph = netbar.model, netbar.graph
    login = set(reachable_fields(model, graph.reachable, "netbar_login"))
    assert {"netbar_login.region", "netbar_payment.pay_date", "netbar_register.reg_date",
            "netbar_payment.platform_id"} <= login  # fmt: skip
    assert "netbar_payment.channel" not in login and "platforms.platform_name" not in login
    payment = set(reachable_fields(model, graph.reachable, "netbar_payment"))
    assert {"platforms.platform_name", "netbar_login.stat_date", "netbar_register.reg_date",
            "netbar_login.platform_id"} <= payment  # fmt: skip
    assert "netbar_login.region" not in payment
    register = set(reachable_fields(model, graph.reachable, "netbar_register"))
    # the date is shared through the chain; the registration platform is not paired
    assert "netbar_payment.pay_date" in register
    assert "netbar_login.platform_id" not in register
    shared = login & payment & register
    assert "netbar_login.stat_date" in shared and "netbar_login.region" not in shared


def test_same_dimension_is_the_conformity_class(netbar: Engine) -> None:
    m = netbar.model
    assert same_dimension(m, "netbar_payment.pay_date", "netbar_register.reg_date")
    assert not same_dimension(m, "netbar_payment.pay_date", "netbar_login.platform_id")
    assert same_dimension(m, "netbar_login.region", "netbar_login.region")
