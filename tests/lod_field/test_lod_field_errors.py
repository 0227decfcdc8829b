"""D-LOD fixed fields: every rejection is a structured error with the reference engine's code
(datus-extensions §3 D-LOD; CHECKLIST LOD-FLD-02/04/05/07/08/09/10/12, LOD-FLT-03,
LOD-PLAN-09, the not-yet row "D-LOD field with a window metric")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from lodfieldkit import ext, field, model_text

import dosi
from dosi.errors import ModelError, QueryError
from dosi.query.spec import parse_query, query_to_dict

Edit = Callable[[dict[str, Any]], None]


def _field(m: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in m["datasets"][0]["fields"] if f["name"] == name)


def _lod(expr: str) -> Edit:
    def edit(m: dict[str, Any]) -> None:
        f = _field(m, "active_day")
        f["custom_extensions"] = ext({"v": "1.10", "lod": {"expr": expr}})

    return edit


def _payload(payload: Any) -> Edit:
    def edit(m: dict[str, Any]) -> None:
        _field(m, "active_day")["custom_extensions"] = ext({"v": "1.10", "lod": payload})

    return edit


def _expr(name: str, text: str) -> Edit:
    def edit(m: dict[str, Any]) -> None:
        _field(m, name)["expression"]["dialects"][0]["expression"] = text

    return edit


def _is_time(name: str) -> Edit:
    def edit(m: dict[str, Any]) -> None:
        _field(m, name)["dimension"] = {"is_time": True}

    return edit


def _rel_column(m: dict[str, Any]) -> None:
    m["relationships"][0]["from_columns"] = ["multi_day"]


def _add_metric(name: str, expr: str, lod: str) -> Edit:
    def edit(m: dict[str, Any]) -> None:
        m["metrics"].append(
            {
                "name": name,
                "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expr}]},
            }
        )
        _field(m, "active_day")["custom_extensions"] = ext({"v": "1.10", "lod": {"expr": lod}})

    return edit


MODEL_ERRORS: list[tuple[str, Edit, str]] = [
    (
        "LOD-FLD-07 expression differs from the base",
        _expr("active_day", "COUNT(event_date)"),
        "derive_expression_mismatch",
    ),
    (
        "LOD-FLD-05 include belongs on a metric",
        _lod("avg(include(active_days, sessions.user_id))"),
        "invalid_datus_extension",
    ),
    (
        "LOD-FLD-05 exclude belongs on a metric",
        _lod("exclude(active_days, sessions.user_id)"),
        "invalid_datus_extension",
    ),
    (
        "LOD-FLD-04 no outer aggregate on a field",
        _lod("avg(fixed(active_days, sessions.user_id))"),
        "invalid_datus_extension",
    ),
    ("LOD-FLD-02 unknown base", _lod("fixed(nope, sessions.user_id)"), "invalid_datus_extension"),
    (
        "LOD-FLD-02 dims of another dataset",
        _lod("fixed(active_days, channel.channel_id)"),
        "invalid_datus_extension",
    ),
    (
        "LOD-FLD-02 unknown dims field",
        _lod("fixed(active_days, sessions.nope)"),
        "invalid_datus_extension",
    ),
    ("grammar", _lod("fixed(active_days,"), "invalid_datus_extension"),
    ("payload not an object", _payload("fixed(active_days)"), "invalid_datus_extension"),
    (
        "payload unknown key",
        _payload({"expr": "fixed(active_days)", "x": 1}),
        "invalid_datus_extension",
    ),
    (
        "LOD-FLD-09 nested: a dims key is a fixed field",
        _lod("fixed(active_days, sessions.daily_users)"),
        "invalid_datus_extension",
    ),
    (
        "LOD-FLD-09 nested: a dims key reads a fixed field",
        _lod("fixed(active_days, sessions.multi_day)"),
        "invalid_datus_extension",
    ),
    (
        "LOD-FLD-09 nested: the base aggregates a fixed field",
        _add_metric("avg_dau", "AVG(sessions.daily_users)", "fixed(avg_dau, sessions.user_id)"),
        "invalid_datus_extension",
    ),
    (
        "base is not a single plain aggregate",
        _add_metric(
            "ratio",
            "COUNT(sessions.event_date) / COUNT(DISTINCT sessions.user_id)",
            "fixed(ratio, sessions.user_id)",
        ),
        "not_implemented",
    ),
    ("LOD-FLD-08 a fixed field is never is_time", _is_time("first_day"), "invalid_datus_extension"),
    ("LOD-FLD-12 nor a field reading one", _is_time("visit_kind"), "invalid_datus_extension"),
    ("LOD-FLD-10 relationship column reads a fixed field", _rel_column, "invalid_datus_extension"),
]


@pytest.mark.parametrize(
    ("why", "edit", "code"), MODEL_ERRORS, ids=[e[0][:40] for e in MODEL_ERRORS]
)
def test_lod_field_model_errors(why: str, edit: Edit, code: str) -> None:
    with pytest.raises(ModelError) as info:
        dosi.Engine(model_text=model_text(edit))
    codes = [d.code for d in info.value.issues]
    assert code in codes, (why, codes)


def test_bare_dims_name_the_fields_own_dataset() -> None:
    """A dims entry may be written bare (`user_id`), as the reference engine accepts."""
    e = dosi.Engine(model_text=model_text(_lod("fixed(active_days, user_id)")))
    f = e.model.field("sessions.active_day")
    assert f.lod is not None and f.lod.keys == ("user_id",)


def test_a_fixed_date_field_is_not_a_time_axis(lodf: dosi.Engine) -> None:
    """LOD-FLD-08: a Date datatype alone does not make the fixed field a time axis."""
    with pytest.raises(QueryError) as info:
        lodf.compile({"metrics": ["user_num"], "group_by": ["sessions.first_day:month"]})
    assert info.value.code == "grain_on_non_time_dimension"


QUERY_ERRORS: list[tuple[str, dict[str, Any], str]] = [
    (
        "LOD-FLT-03 context_filter cannot read a fixed field",
        {
            "metrics": ["user_num"],
            "group_by": ["sessions.active_day"],
            "context_filter": "sessions.active_day > 1",
        },
        "unsupported_filter",
    ),
    (
        "LOD-PLAN-09 pinned and stored grains in one query",
        {"metrics": ["session_share"], "group_by": ["sessions.channel_id"]},
        "not_implemented",
    ),
    (
        "LOD-PLAN-09 pinned values of two key families",
        {"metrics": ["avg_active_day", "avg_daily_users"]},
        "not_implemented",
    ),
    (
        "not-yet: a fixed field beside a window metric",
        {"metrics": ["session_rank"], "group_by": ["sessions.active_day"]},
        "not_implemented",
    ),
    (
        "grid: a predicate mixing a detail column and a pinned value",
        {
            "metrics": ["avg_active_day"],
            "group_by": ["channel.channel_name"],
            "where_sql": "sessions.visit_kind = 'new'",
        },
        "not_implemented",
    ),
    (
        "not-yet: a view dim named like the grid's key (acct.user_id vs sessions.user_id)",
        {"metrics": ["avg_active_day"], "group_by": ["acct.user_id"]},
        "duplicate_output_name",
    ),
    (
        "context_filter is a predicate string",
        {"metrics": ["user_num"], "context_filter": 3},
        "invalid_query",
    ),
    (
        "context_filter names no metric (the reference's code)",
        {"metrics": ["user_num"], "context_filter": "user_num > 1"},
        "unsupported_filter",
    ),
    (
        "context_filter names a field the model has",
        {"metrics": ["user_num"], "context_filter": "sessions.nope = 1"},
        "unsupported_filter",
    ),
    (
        "an empty context_filter",
        {"metrics": ["user_num"], "context_filter": " "},
        "unsupported_filter",
    ),
    (
        "context_filter aggregates",
        {"metrics": ["user_num"], "context_filter": "COUNT(sessions.user_id) > 1"},
        "aggregate_in_where",
    ),
    (
        "LOD-FLT-03 nor a field reading a fixed field",
        {"metrics": ["user_num"], "context_filter": "sessions.visit_kind = 'new'"},
        "unsupported_filter",
    ),
]


@pytest.mark.parametrize(
    ("why", "query", "code"), QUERY_ERRORS, ids=[e[0][:40] for e in QUERY_ERRORS]
)
def test_lod_field_query_errors(
    lodf: dosi.Engine, why: str, query: dict[str, Any], code: str
) -> None:
    with pytest.raises(QueryError) as info:
        lodf.compile(query)
    assert info.value.code == code, (why, info.value.message)


def test_basic_mode_drops_fixed_fields() -> None:
    """Basic mode: the field is dropped (aggregate_field_dropped); metrics over it then fail
    as unknown_field, as the reference engine reports."""
    text = model_text(lambda m: m.__setitem__("metrics", m["metrics"][:5]))
    e = dosi.Engine(model_text=text, mode="basic")
    dropped = [w for w in e.model.warnings if w.code == "aggregate_field_dropped"]
    assert {w.path for w in dropped} >= {
        "datasets[sessions].fields[active_day]",
        "datasets[sessions].fields[daily_users]",
    }
    assert "active_day" not in e.model.datasets["sessions"].fields
    with pytest.raises(ModelError) as info:
        dosi.Engine(model_text=model_text(), mode="basic")
    assert "unknown_field" in [d.code for d in info.value.issues]


def test_context_filter_round_trips_in_the_canonical_query() -> None:
    q = parse_query(json.dumps({"metrics": ["m"], "context_filter": "a.b = 1"}))
    assert query_to_dict(q)["context_filter"] == "a.b = 1"
    assert field("x")["name"] == "x"
