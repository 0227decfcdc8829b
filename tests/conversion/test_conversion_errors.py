"""D-CONVERSION rejections and registry: a malformed declaration is a structured
`invalid_datus_extension` with candidates; an expression that is not what the declaration
computes is `conversion_expression_mismatch`; the key is registered as silent (1.12) and
basic mode fails closed on the metric (datus-extensions §2, §2.1, §5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import convkit
import pytest
from convkit import RATE, conv, metric

import dosi
from dosi.errors import ModelError, QueryError
from dosi.ext import capabilities

PLAIN = convkit.METRICS[:5]
BASE: dict[str, Any] = {"base": "visitors", "conversion": "buyers", "entity": "user_id"}


def _issues(decl: Any, expression: str = RATE) -> list[tuple[str, str, tuple[str, ...]]]:
    text = convkit.conv_model_text([*PLAIN, metric("bad", expression, conv(decl))])
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    return [(d.code, d.message, tuple(d.candidates or ())) for d in err.value.issues]


@pytest.mark.parametrize(
    ("decl", "fragment", "candidate"),
    [
        ("visitors", "must be an object", None),
        ({"conversion": "buyers", "entity": "user_id"}, "`conversion.base` is required", None),
        ({"base": "visitors", "conversion": "buyers"}, "`conversion.entity` is required", None),
        ({**BASE, "windw": "7 days"}, "is not a key", "window"),
        ({**BASE, "window": "7 fortnights"}, "granularity must be one of", None),
        ({**BASE, "window": "seven days"}, "<count> <granularity>", None),
        ({**BASE, "window": {"count": 0, "granularity": "day"}}, "count must be between", None),
        ({**BASE, "calculation": "rate"}, "must be one of", "conversion_rate"),
        ({**BASE, "base": "visitorz"}, "which is not a metric", "visitors"),
        ({**BASE, "entity": "usr_id"}, "matches no field", "visits.user_id"),
        ({**BASE, "constant_properties": ["sesion_id"]}, "matches no field", "visits.session_id"),
        (
            {**BASE, "entity": {"base": "visits.user_id", "conv": "buys.user_id"}},
            "is not a key",
            None,
        ),
    ],
)
def test_invalid_declarations(decl: Any, fragment: str, candidate: str | None) -> None:
    issues = _issues(decl)
    assert [c for c, _, _ in issues][:1] == ["invalid_datus_extension"], issues
    assert any(fragment in m for _, m, _ in issues), issues
    if candidate is not None:
        assert any(candidate in cands for _, _, cands in issues), issues


def test_the_expression_must_be_what_the_declaration_computes() -> None:
    issues = _issues(BASE, "COUNT(buys.buy_id) / COUNT(DISTINCT visits.user_id)")
    assert [c for c, _, _ in issues] == ["conversion_expression_mismatch"]
    assert "write the expression" not in issues[0][1]  # the fix is in the hint


def test_an_event_metric_must_be_a_plain_aggregate() -> None:
    ratio = metric("per_visit", "COUNT(buys.buy_id) / COUNT(visits.visit_id)")
    text = convkit.conv_model_text(
        [
            *PLAIN,
            ratio,
            metric(
                "bad",
                "COUNT(DISTINCT buys.user_id) / (COUNT(buys.buy_id) / COUNT(visits.visit_id))",
                conv({**BASE, "base": "per_visit"}),
            ),
        ]
    )
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    assert [d.code for d in err.value.issues] == ["invalid_datus_extension"]
    assert "not a single plain aggregate" in err.value.issues[0].message


def test_registered_as_a_silent_key() -> None:
    rows = {r["key"]: r for r in capabilities()["keys"]}
    row = rows["conversion"]
    assert row["carriers"] == ["metric"] and row["since"] == "1.12"
    assert row["impact"] == "silent" and row["requires_needed"] is True


def test_basic_mode_fails_closed(conv_db: Path) -> None:
    engine = dosi.Engine(
        model_text=convkit.conv_model_text(),
        mode="basic",
        connections={"db": {"type": "duckdb", "uri": str(conv_db)}},
    )
    with pytest.raises(QueryError) as err:
        engine.execute({"metrics": ["visit_to_buy_rate_7d"]})
    assert err.value.code == "metric_needs_datus_mode" and "conversion" in str(err.value)
    assert engine.execute({"metrics": ["visitors"]})["rows"] == [{"visitors": 5}]
