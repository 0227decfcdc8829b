"""D-WINDOW payload validation and desugaring (window-metrics-extension.md "The window payload",
general forms, sugars, shared modifiers, Validation; datus-extensions §7 1.9 additions;
CHECKLIST §10 WIN-*)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from dosi.errors import Diagnostic
from dosi.ext import (
    FrameWindow,
    MetricExt,
    OffsetWindow,
    OrderSpec,
    PartitionSpec,
    RankWindow,
    ValueWindow,
    read_extensions,
)

INVALID = "invalid_datus_extension"


def read_window(window: Any, v: str | None = None) -> Any:
    payload: dict[str, Any] = {"window": window}
    if v is not None:
        payload["v"] = v
    return read_extensions(
        "metric", "metrics[w]", [{"vendor_name": "DATUS", "data": json.dumps(payload)}]
    )


def ok(window: Any) -> Any:
    res = read_window(window)
    assert res.diagnostics == (), [str(d) for d in res.diagnostics]
    assert isinstance(res.payload, MetricExt)
    assert res.payload.window is not None
    return res.payload.window


def bad(window: Any, *key_paths: str) -> list[Diagnostic]:
    """Every diagnostic is an invalid_datus_extension error; the window falls back to None;
    the messages name exactly the given key paths (in order)."""
    res = read_window(window)
    assert res.payload == MetricExt()
    assert res.diagnostics, "expected errors"
    assert all(d.code == INVALID and d.severity == "error" for d in res.diagnostics), [
        str(d) for d in res.diagnostics
    ]
    assert all(d.path == "metrics[w]" for d in res.diagnostics)
    named = [d.message.split("`")[1] for d in res.diagnostics]
    assert named == list(key_paths), [d.message for d in res.diagnostics]
    return list(res.diagnostics)


def no_sugar(spec: Any) -> Any:
    return dataclasses.replace(spec, sugar=None)


# ---------------------------------------------------------------------------------------------
# 10.3 payload shape


def test_win_pay_01_shapes_normalize_to_families() -> None:
    """WIN-PAY-01 / WIN-CAR-07: absent type = general; pop → offset; rolling, cumulative → frame."""
    assert (
        ok({"offset": {"count": 1, "granularity": "month"}, "calculation": "delta"}).family
        == "offset"
    )
    assert ok({"frame": {"function": "sum", "preceding": 1}}).family == "frame"
    assert ok({"rank": {"function": "rank"}}).family == "rank"
    assert ok({"value": {"function": "first_value"}}).family == "value"
    assert ok({"type": "pop", "offset": "1 month"}).family == "offset"
    assert ok({"type": "rolling", "function": "sum", "periods": 2}).family == "frame"
    assert ok({"type": "cumulative", "function": "sum"}).family == "frame"


@pytest.mark.parametrize("value", ["pop", [1], 3, True, "1 month"])
def test_window_must_be_an_object(value: Any) -> None:
    """WM Validation: window must be a JSON object."""
    bad(value, "window")


def test_win_pay_03_general_form_needs_exactly_one_family() -> None:
    """WIN-PAY-03: zero or several families → invalid."""
    d = bad({}, "window")
    assert "exactly one family" in d[0].message
    d = bad(
        {
            "offset": {"count": 1, "granularity": "month"},
            "calculation": "delta",
            "frame": {"function": "sum", "preceding": 1},
        },
        "window",
    )
    assert "offset, frame" in d[0].message
    bad({"rank": {"function": "rank"}, "value": {"function": "first_value"}}, "window")


def test_win_pay_03_each_family_is_still_validated_when_several_are_set() -> None:
    """One run reports everything: inner errors of both families are reported too."""
    bad(
        {"rank": {"function": "nope"}, "value": {"function": "first_value", "n": 2}},
        "window",
        "window.rank.function",
        "window.value.n",
    )


def test_win_pay_04_unknown_top_level_keys_ignored() -> None:
    """WIN-PAY-04: unknown top-level keys are ignored …"""
    spec = ok({"type": "pop", "offset": "1 month", "label": "MoM", "funnel": {"x": 1}})
    assert spec == OffsetWindow(1, "month", "back", "percent_change", "pop")


def test_win_pay_04_only_an_unknown_family_fails_exactly_one_rule() -> None:
    """… so a document with only a future family key fails the exactly-one-family rule."""
    d = bad({"funnel": {"steps": 2}}, "window")
    assert "found none this engine knows" in d[0].message


@pytest.mark.parametrize("kind", ["funnel", "POP", "Share", "rank", "frame", 1, True, ["pop"]])
def test_win_pay_05_unknown_type_lists_the_window_types(kind: Any) -> None:
    """WIN-PAY-05: unknown type values are rejected, listing pop / rolling / cumulative and
    (DATUS 1.13) the reserved share / streak types."""
    d = bad({"type": kind, "offset": "1 month"}, "window.type")
    assert '"pop", "rolling", "cumulative", "share" or "streak"' in d[0].message


def test_type_null_is_the_general_form() -> None:
    assert ok({"type": None, "rank": {"function": "rank"}}).family == "rank"


@pytest.mark.parametrize(
    ("window", "path"),
    [
        (
            {
                "offset": {"count": 1, "granularity": "month", "anchor": "end"},
                "calculation": "value",
            },
            "window.offset.anchor",
        ),
        (
            {"type": "pop", "offset": {"count": 1, "granularity": "month", "calendar": "fiscal"}},
            "window.offset.calendar",
        ),
        ({"frame": {"function": "sum", "preceding": 1, "exclude": "ties"}}, "window.frame.exclude"),
        ({"rank": {"function": "rank", "ties": "min"}}, "window.rank.ties"),
        (
            {"frame": {"function": "sum", "preceding": 1, "order": {"by": "time", "key": "x"}}},
            "window.frame.order.key",
        ),
        (
            {"rank": {"function": "rank", "partition": {"mode": "none", "by": ["a.b"]}}},
            "window.rank.partition.by",
        ),
    ],
)
def test_win_pay_06_unknown_keys_inside_families_and_modifiers_rejected(
    window: dict[str, Any], path: str
) -> None:
    """WIN-PAY-06 / WIN-REG-07 / WIN-19-11: deny_unknown_fields inside offset / frame / rank /
    value / order / partition — never silently dropped."""
    d = bad(window, path)
    assert "unknown keys are rejected" in d[0].message
    assert d[0].hint is not None and d[0].hint.startswith("allowed keys:")


def test_win_pay_06_near_miss_gets_candidates() -> None:
    d = bad(
        {"frame": {"function": "sum", "preceeding": 1}},
        "window.frame.preceeding",
        "window.frame.preceding",
    )
    assert d[0].candidates[0] == "preceding"


@pytest.mark.parametrize(
    ("window", "paths"),
    [
        # general form: sugar-only keys at the top level
        ({"frame": {"function": "sum", "preceding": 1}, "function": "sum"}, ["window.function"]),
        ({"frame": {"function": "sum", "preceding": 1}, "periods": 3}, ["window.periods"]),
        (
            {"frame": {"function": "sum", "preceding": "unbounded"}, "reset": "year"},
            ["window.reset"],
        ),
        (
            {"frame": {"function": "sum", "preceding": 2}, "require_full_window": True},
            ["window.require_full_window"],
        ),
        (
            {"frame": {"function": "sum", "preceding": 1}, "calculation": "delta"},
            ["window.calculation"],
        ),
        ({"rank": {"function": "rank"}, "calculation": "value"}, ["window.calculation"]),
        # pop: frame, function, periods, reset (and rank / value / require_full_window)
        ({"type": "pop", "offset": "1 month", "frame": {"function": "sum"}}, ["window.frame"]),
        ({"type": "pop", "offset": "1 month", "function": "sum"}, ["window.function"]),
        ({"type": "pop", "offset": "1 month", "periods": 3}, ["window.periods"]),
        ({"type": "pop", "offset": "1 month", "reset": "year"}, ["window.reset"]),
        ({"type": "pop", "offset": "1 month", "rank": {"function": "rank"}}, ["window.rank"]),
        (
            {"type": "pop", "offset": "1 month", "value": {"function": "last_value"}},
            ["window.value"],
        ),
        (
            {"type": "pop", "offset": "1 month", "require_full_window": True},
            ["window.require_full_window"],
        ),
        # rolling: offset, calculation, frame, reset
        (
            {"type": "rolling", "function": "avg", "periods": 3, "offset": "1 month"},
            ["window.offset"],
        ),
        (
            {"type": "rolling", "function": "avg", "periods": 3, "calculation": "delta"},
            ["window.calculation"],
        ),
        ({"type": "rolling", "function": "avg", "periods": 3, "frame": {}}, ["window.frame"]),
        ({"type": "rolling", "function": "avg", "periods": 3, "reset": "year"}, ["window.reset"]),
        ({"type": "rolling", "function": "avg", "periods": 3, "rank": {}}, ["window.rank"]),
        # cumulative: offset, calculation, frame, periods
        ({"type": "cumulative", "function": "sum", "offset": "1 month"}, ["window.offset"]),
        ({"type": "cumulative", "function": "sum", "calculation": "ratio"}, ["window.calculation"]),
        ({"type": "cumulative", "function": "sum", "frame": {}}, ["window.frame"]),
        ({"type": "cumulative", "function": "sum", "periods": 3}, ["window.periods"]),
        ({"type": "cumulative", "function": "sum", "value": {}}, ["window.value"]),
        (
            {"type": "cumulative", "function": "sum", "require_full_window": False},
            ["window.require_full_window"],
        ),
    ],
)
def test_win_pay_07_keys_of_another_shape_rejected(
    window: dict[str, Any], paths: list[str]
) -> None:
    """WIN-PAY-07, WIN-POP-03, WIN-ROL-04, WIN-CUM-03: keys owned by another shape."""
    d = bad(window, *paths)
    assert "is not allowed" in d[0].message or "applies only to the offset family" in d[0].message


# ---------------------------------------------------------------------------------------------
# 10.4 offset


def test_win_off_01_general_offset_object_form() -> None:
    """WIN-OFF-01: {count, granularity, direction?} + a required calculation."""
    spec = ok({"offset": {"count": 12, "granularity": "month"}, "calculation": "value"})
    assert spec == OffsetWindow(12, "month", "back", "value", None)


def test_win_off_01_calculation_required_in_general_form() -> None:
    d = bad({"offset": {"count": 1, "granularity": "month"}}, "window.calculation")
    assert "pop" in d[0].message


@pytest.mark.parametrize("calc", ["value", "delta", "percent_change", "ratio"])
def test_win_enum_calculations(calc: str) -> None:
    """WIN-ENUM-02..05: the four calculations."""
    assert (
        ok({"offset": {"count": 1, "granularity": "year"}, "calculation": calc}).calculation == calc
    )


@pytest.mark.parametrize("calc", ["pct", "growth", 1, "Delta"])
def test_win_enum_bad_calculation(calc: Any) -> None:
    bad({"offset": {"count": 1, "granularity": "year"}, "calculation": calc}, "window.calculation")
    bad({"type": "pop", "offset": "1 year", "calculation": calc}, "window.calculation")


@pytest.mark.parametrize("count", [0, -1, 1.5, 1.0, True, "1", None])
def test_win_off_02_object_count_integer_at_least_one(count: Any) -> None:
    """WIN-OFF-02: offset.count is an integer ≥ 1 (bool is not an integer; null ≡ missing)."""
    d = bad(
        {"offset": {"count": count, "granularity": "month"}, "calculation": "value"},
        "window.offset.count",
    )
    assert "integer >= 1" in d[0].message or "required" in d[0].message


def test_win_off_03_granularity_required_and_enumerated() -> None:
    """WIN-OFF-03 / WIN-ENUM-01."""
    bad({"offset": {"count": 1}, "calculation": "value"}, "window.offset.granularity")
    d = bad(
        {"offset": {"count": 1, "granularity": "fortnight"}, "calculation": "value"},
        "window.offset.granularity",
    )
    assert '"day", "week", "month", "quarter", "year", "second", "minute", "hour"' in d[0].message
    # issue 22: sub-day and calendar offsets join the 1.x enum
    for grain in ("day", "week", "month", "quarter", "year", "hour", "minute", "fiscal_year"):
        assert (
            ok({"offset": {"count": 1, "granularity": grain}, "calculation": "value"}).granularity
            == grain
        )


def test_win_off_04_direction_back_default_and_forward() -> None:
    """WIN-OFF-04: direction back (default) | forward, object form only."""
    spec = ok(
        {
            "offset": {"count": 1, "granularity": "month", "direction": "forward"},
            "calculation": "delta",
        }
    )
    assert spec.direction == "forward"
    spec = ok({"type": "pop", "offset": {"count": 1, "granularity": "month", "direction": "back"}})
    assert spec.direction == "back"
    assert ok({"type": "pop", "offset": "1 month"}).direction == "back"
    bad(
        {"type": "pop", "offset": {"count": 1, "granularity": "month", "direction": "lead"}},
        "window.offset.direction",
    )


@pytest.mark.parametrize(
    ("text", "count", "grain"),
    [
        ("1 month", 1, "month"),
        ("2 weeks", 2, "week"),
        ("3 days", 3, "day"),
        ("1 year", 1, "year"),
        ("12 months", 12, "month"),
        ("4 quarters", 4, "quarter"),
        ("1 quarters", 1, "quarter"),
    ],
)
def test_win_pop_02_offset_string_form(text: str, count: int, grain: str) -> None:
    """WIN-POP-02: "<count> <granularity>", one trailing s accepted; always back."""
    assert ok({"type": "pop", "offset": text}) == OffsetWindow(
        count, grain, "back", "percent_change", "pop"
    )  # type: ignore[arg-type]


def test_offset_string_also_accepted_in_the_general_form() -> None:
    """Decision: the string form is a property of `offset`, valid wherever offset is."""
    assert ok({"offset": "2 weeks", "calculation": "ratio"}) == OffsetWindow(
        2, "week", "back", "ratio"
    )


@pytest.mark.parametrize(
    "text",
    [
        "month",
        "1month",
        "1  month",
        " 1 month",
        "1 month ",
        "1 mnth",
        "1 monthss",
        "one month",
        "1 Month",
        "-1 month",
        "1.5 month",
        "1 fortnight",
        "",
        "1 s",
        "1 month ago",
    ],
)
def test_win_pop_02_bad_offset_string(text: str) -> None:
    """WIN-POP-02 / WM Validation: the offset string must be "<count> <granularity>"."""
    res = read_window({"type": "pop", "offset": text})
    assert res.payload == MetricExt()
    assert res.diagnostics
    for d in res.diagnostics:
        assert (d.code, d.severity) == (INVALID, "error")
        assert d.message.startswith("`window.offset`")
        assert d.hint is not None and "<count> <granularity>" in d.hint


@pytest.mark.parametrize("text", ["0 month", "0 days"])
def test_win_off_02_string_count_at_least_one(text: str) -> None:
    """WIN-OFF-02: count ≥ 1 in the string form too."""
    d = bad({"type": "pop", "offset": text}, "window.offset")
    assert ">= 1" in d[0].message


@pytest.mark.parametrize("value", [1, ["1 month"], True])
def test_offset_must_be_string_or_object(value: Any) -> None:
    bad({"type": "pop", "offset": value}, "window.offset")


# ---------------------------------------------------------------------------------------------
# 10.5 frame


@pytest.mark.parametrize(
    "fn", ["sum", "avg", "min", "max", "count", "stddev_pop", "stddev_samp", "var_pop", "var_samp"]
)
def test_win_enum_07_09_one_argument_frame_functions(fn: str) -> None:
    """WIN-ENUM-07/09: W1 and W2 functions."""
    assert ok({"frame": {"function": fn, "preceding": 2}}).function == fn


@pytest.mark.parametrize("fn", ["covar_pop", "covar_samp", "corr"])
def test_win_enum_10_two_argument_functions_require_second(fn: str) -> None:
    """WIN-ENUM-10 / WIN-FRM-13: W3 needs `second` (general frame form only)."""
    spec = ok({"frame": {"function": fn, "preceding": 5, "second": "order_count"}})
    assert (spec.function, spec.second) == (fn, "order_count")
    d = bad({"frame": {"function": fn, "preceding": 5}}, "window.frame.second")
    assert "two-argument" in d[0].message
    d = bad({"type": "rolling", "function": fn, "periods": 3}, "window.function")
    assert "general frame form" in d[0].message


@pytest.mark.parametrize("fn", ["sum", "count", "var_samp"])
def test_win_frm_13_second_only_for_two_argument_functions(fn: str) -> None:
    bad({"frame": {"function": fn, "preceding": 1, "second": "x"}}, "window.frame.second")


@pytest.mark.parametrize("second", ["", " x", 3, ["a"], {"metric": "a"}])
def test_win_frm_13_second_is_a_metric_name(second: Any) -> None:
    bad({"frame": {"function": "corr", "preceding": 1, "second": second}}, "window.frame.second")


@pytest.mark.parametrize("fn", ["stddev", "variance", "STDDEV", "var", "covar"])
def test_win_enum_09_bare_stddev_variance_rejected(fn: str) -> None:
    """WIN-ENUM-09: bare STDDEV / VARIANCE mean different things across engines."""
    d = bad({"frame": {"function": fn, "preceding": 1}}, "window.frame.function")
    assert "_pop" in (d[0].hint or "")
    bad({"type": "cumulative", "function": fn}, "window.function")


@pytest.mark.parametrize(
    "fn", ["mode", "percentile", "regr_valx", "rank", "first_value", "Sum", 1, None]
)
def test_win_reg_02_function_above_level_or_unknown_rejected(fn: Any) -> None:
    """WIN-REG-02 / WIN-REG-06: unregistered functions are invalid, never a fallback."""
    d = bad({"frame": {"function": fn, "preceding": 1}}, "window.frame.function")
    if fn == "rank":
        assert "window.rank" not in d[0].message and '"rank": {"function": "rank"}' in (
            d[0].hint or ""
        )


@pytest.mark.parametrize(("value", "expected"), [(0, 0), (1, 1), (30, 30), ("unbounded", None)])
def test_win_frm_03_preceding(value: Any, expected: int | None) -> None:
    """WIN-FRM-03: integer ≥ 0 or "unbounded" (None in the IR)."""
    assert ok({"frame": {"function": "sum", "preceding": value}}).preceding == expected


@pytest.mark.parametrize("value", [-1, 1.5, 2.0, True, "3", "UNBOUNDED", "all", [1]])
def test_win_frm_03_bad_preceding(value: Any) -> None:
    d = bad({"frame": {"function": "sum", "preceding": value}}, "window.frame.preceding")
    assert '"unbounded"' in d[0].message


def test_win_frm_03_preceding_required() -> None:
    d = bad({"frame": {"function": "sum"}}, "window.frame.preceding")
    assert "required" in d[0].message


@pytest.mark.parametrize("reset", ["week", "month", "quarter", "year"])
def test_win_frm_04_reset(reset: str) -> None:
    """WIN-FRM-04/05: reset with unbounded or numeric preceding."""
    assert (
        ok({"frame": {"function": "sum", "preceding": "unbounded", "reset": reset}}).reset == reset
    )
    assert ok({"frame": {"function": "sum", "preceding": 3, "reset": reset}}).reset == reset


def test_win_frm_04_reset_day_rejected() -> None:
    """WIN-FRM-04: reset: day is rejected (finest grain)."""
    d = bad(
        {"frame": {"function": "sum", "preceding": "unbounded", "reset": "day"}},
        "window.frame.reset",
    )
    assert "never coarser" in d[0].message
    # hour and minute resets are 1.15 (tests/window/test_window_sub_day_reset.py); a second
    # reset is still no grain a frame restarts at
    bad({"frame": {"function": "sum", "preceding": 1, "reset": "second"}}, "window.frame.reset")
    bad({"frame": {"function": "sum", "preceding": 1, "reset": 1}}, "window.frame.reset")


def test_win_frm_06_require_full_window_finite() -> None:
    """WIN-FRM-06: require_full_window with a finite preceding."""
    spec = ok({"frame": {"function": "avg", "preceding": 2, "require_full_window": True}})
    assert spec.require_full_window is True
    assert ok({"frame": {"function": "avg", "preceding": 2}}).require_full_window is False
    bad(
        {"frame": {"function": "avg", "preceding": 2, "require_full_window": 1}},
        "window.frame.require_full_window",
    )
    bad(
        {"frame": {"function": "avg", "preceding": 2, "require_full_window": "true"}},
        "window.frame.require_full_window",
    )


def test_win_frm_07_require_full_window_true_with_unbounded_rejected() -> None:
    """WIN-FRM-07: an unbounded frame is never partial."""
    d = bad(
        {"frame": {"function": "sum", "preceding": "unbounded", "require_full_window": True}},
        "window.frame.require_full_window",
    )
    assert "unbounded" in d[0].message
    # false is the default: harmless (decision)
    ok({"frame": {"function": "sum", "preceding": "unbounded", "require_full_window": False}})


def test_win_frm_08_require_full_window_under_range_rejected() -> None:
    """WIN-FRM-08: rejected under units "range"."""
    d = bad(
        {
            "frame": {
                "function": "count",
                "preceding": "unbounded",
                "units": "range",
                "order": {"by": "value"},
                "require_full_window": True,
            }
        },
        "window.frame.require_full_window",
        "window.frame.require_full_window",
    )
    assert "range" in d[1].message


def test_win_frm_10_order_default_and_value_forbids_reset() -> None:
    """WIN-FRM-10: default {time, asc}; order.by value forbids reset."""
    spec = ok({"frame": {"function": "sum", "preceding": 1}})
    assert spec.order == OrderSpec("time", "asc")
    spec = ok({"frame": {"function": "sum", "preceding": 1, "order": {"by": "value"}}})
    assert spec.order == OrderSpec("value", "desc")
    d = bad(
        {
            "frame": {
                "function": "sum",
                "preceding": "unbounded",
                "reset": "year",
                "order": {"by": "value"},
            }
        },
        "window.frame.reset",
    )
    assert "incoherent" in d[0].message


def test_win_frm_11_partition_default() -> None:
    """WIN-FRM-11: frame partition defaults to query_dimensions."""
    assert ok({"frame": {"function": "sum", "preceding": 1}}).partition == PartitionSpec(
        "query_dimensions"
    )


def test_win_frm_12_units() -> None:
    """WIN-FRM-12: rows default; range needs unbounded + order.by value."""
    assert ok({"frame": {"function": "sum", "preceding": 1}}).units == "rows"
    assert ok({"frame": {"function": "sum", "preceding": 1, "units": "rows"}}).units == "rows"
    spec = ok(
        {
            "frame": {
                "function": "count",
                "preceding": "unbounded",
                "units": "range",
                "order": {"by": "value", "direction": "asc"},
            }
        }
    )
    assert (spec.units, spec.order) == ("range", OrderSpec("value", "asc"))
    d = bad(
        {
            "frame": {
                "function": "count",
                "preceding": 3,
                "units": "range",
                "order": {"by": "value"},
            }
        },
        "window.frame.units",
    )
    assert "unbounded" in d[0].message
    d = bad(
        {"frame": {"function": "count", "preceding": "unbounded", "units": "range"}},
        "window.frame.units",
    )
    assert 'order.by "value"' in d[0].message
    bad({"frame": {"function": "sum", "preceding": 1, "units": "peers"}}, "window.frame.units")


# ---------------------------------------------------------------------------------------------
# 1.9: frame.scope, order.nulls


def test_win_19_01_scope_partition() -> None:
    """WIN-19-01: scope "partition": the whole partition, no preceding needed."""
    spec = ok({"frame": {"function": "count", "scope": "partition"}})
    assert (spec.scope, spec.preceding, spec.reset, spec.units) == ("partition", None, None, "rows")
    spec = ok(
        {"frame": {"function": "avg", "scope": "partition", "partition": {"mode": "time_bucket"}}}
    )
    assert spec.partition == PartitionSpec("time_bucket")
    ok({"frame": {"function": "corr", "scope": "partition", "second": "m2"}})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("preceding", 3),
        ("preceding", "unbounded"),
        ("reset", "year"),
        ("require_full_window", False),
        ("units", "rows"),
        ("order", {"by": "value"}),
    ],
)
def test_win_19_02_scope_exclusive_with_ordered_frame_keys(key: str, value: Any) -> None:
    """WIN-19-02: scope is mutually exclusive with preceding, reset, require_full_window, units,
    order — an error, not ignored."""
    d = bad(
        {"frame": {"function": "count", "scope": "partition", key: value}}, f"window.frame.{key}"
    )
    assert "scope" in d[0].message


def test_win_19_scope_bad_value() -> None:
    bad({"frame": {"function": "count", "scope": "all"}}, "window.frame.scope")


@pytest.mark.parametrize("nulls", ["first", "last"])
def test_win_19_03_order_nulls(nulls: str) -> None:
    """WIN-19-03: order.nulls first | last."""
    spec = ok({"rank": {"function": "rank", "order": {"by": "value", "nulls": nulls}}})
    assert spec.order == OrderSpec("value", "desc", nulls)  # type: ignore[arg-type]
    bad({"rank": {"function": "rank", "order": {"nulls": "middle"}}}, "window.rank.order.nulls")


# ---------------------------------------------------------------------------------------------
# 10.6 rank, 10.7 value


@pytest.mark.parametrize("fn", ["row_number", "rank", "dense_rank", "percent_rank", "cume_dist"])
def test_win_rnk_01_rank_functions(fn: str) -> None:
    """WIN-RNK-01/04/05: defaults order {value, desc}, partition none."""
    assert ok({"rank": {"function": fn}}) == RankWindow(
        fn, None, OrderSpec("value", "desc"), PartitionSpec("none")
    )


def test_win_rnk_02_ntile_buckets() -> None:
    """WIN-RNK-02: buckets ≥ 1 iff ntile."""
    assert ok({"rank": {"function": "ntile", "buckets": 4}}).buckets == 4
    bad({"rank": {"function": "ntile"}}, "window.rank.buckets")
    bad({"rank": {"function": "ntile", "buckets": 0}}, "window.rank.buckets")
    bad({"rank": {"function": "ntile", "buckets": True}}, "window.rank.buckets")
    bad({"rank": {"function": "rank", "buckets": 4}}, "window.rank.buckets")


def test_win_rnk_01_bad_rank_function() -> None:
    bad({"rank": {}}, "window.rank.function")
    d = bad({"rank": {"function": "sum"}}, "window.rank.function")
    assert "frame-family" in (d[0].hint or "")
    bad({"rank": {"function": "first_value"}}, "window.rank.function")
    bad({"rank": "rank"}, "window.rank")


def test_win_rnk_overrides() -> None:
    spec = ok(
        {
            "rank": {
                "function": "row_number",
                "order": {"by": "time"},
                "partition": {"mode": "query_dimensions_except", "exclude": ["activities.ac_code"]},
            }
        }
    )
    assert spec.order == OrderSpec("time", "asc")
    assert spec.partition == PartitionSpec("query_dimensions_except", ("activities.ac_code",))


@pytest.mark.parametrize("fn", ["first_value", "last_value"])
def test_win_val_01_value_functions(fn: str) -> None:
    """WIN-VAL-01/04: defaults order {time, asc}, partition query_dimensions."""
    assert ok({"value": {"function": fn}}) == ValueWindow(
        fn, None, OrderSpec("time", "asc"), PartitionSpec("query_dimensions")
    )


def test_win_val_02_nth_value_n() -> None:
    """WIN-VAL-02: n ≥ 1 iff nth_value."""
    assert ok({"value": {"function": "nth_value", "n": 2}}).n == 2
    bad({"value": {"function": "nth_value"}}, "window.value.n")
    bad({"value": {"function": "nth_value", "n": 0}}, "window.value.n")
    bad({"value": {"function": "nth_value", "n": "2"}}, "window.value.n")
    bad({"value": {"function": "last_value", "n": 2}}, "window.value.n")
    bad({"value": {"function": "lag"}}, "window.value.function")


# ---------------------------------------------------------------------------------------------
# 10.8 shared modifiers


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ({"by": "time"}, OrderSpec("time", "asc")),
        ({"by": "value"}, OrderSpec("value", "desc")),
        ({"by": "time", "direction": "desc"}, OrderSpec("time", "desc")),
        ({"by": "value", "direction": "asc"}, OrderSpec("value", "asc")),
        ({}, OrderSpec("time", "asc")),
        ({"direction": "desc"}, OrderSpec("time", "desc")),
    ],
)
def test_win_mod_01_order_direction_defaults_per_by(
    order: dict[str, Any], expected: OrderSpec
) -> None:
    """WIN-MOD-01: omitted direction: time → asc, value → desc (omitted by → family default)."""
    assert ok({"value": {"function": "first_value", "order": order}}).order == expected


def test_win_mod_01_bad_order() -> None:
    bad(
        {"frame": {"function": "sum", "preceding": 1, "order": {"by": "row"}}},
        "window.frame.order.by",
    )
    bad(
        {"frame": {"function": "sum", "preceding": 1, "order": {"direction": "up"}}},
        "window.frame.order.direction",
    )
    bad({"frame": {"function": "sum", "preceding": 1, "order": "time"}}, "window.frame.order")


@pytest.mark.parametrize("mode", ["query_dimensions", "time_bucket", "none"])
def test_win_mod_02_partition_modes(mode: str) -> None:
    """WIN-MOD-02."""
    spec = ok({"frame": {"function": "sum", "preceding": 1, "partition": {"mode": mode}}})
    assert spec.partition == PartitionSpec(mode)  # type: ignore[arg-type]


def test_win_mod_03_exclude_rules() -> None:
    """WIN-MOD-03: exclude only with query_dimensions_except, non-empty, qualified names."""
    base = {"function": "sum", "preceding": 1}
    spec = ok(
        {
            "frame": {
                **base,
                "partition": {
                    "mode": "query_dimensions_except",
                    "exclude": ["orders.region", "users.city"],
                },
            }
        }
    )
    assert spec.partition.exclude == ("orders.region", "users.city")
    bad(
        {"frame": {**base, "partition": {"mode": "query_dimensions_except"}}},
        "window.frame.partition.exclude",
    )
    bad(
        {"frame": {**base, "partition": {"mode": "query_dimensions_except", "exclude": []}}},
        "window.frame.partition.exclude",
    )
    bad(
        {"frame": {**base, "partition": {"mode": "query_dimensions_except", "exclude": "o.r"}}},
        "window.frame.partition.exclude",
    )
    bad(
        {"frame": {**base, "partition": {"mode": "none", "exclude": ["o.r"]}}},
        "window.frame.partition.exclude",
    )
    bad(
        {
            "frame": {
                **base,
                "partition": {
                    "mode": "query_dimensions_except",
                    "exclude": ["region", "o.r", "a.b.c", 3, " o.r"],
                },
            }
        },
        "window.frame.partition.exclude[0]",
        "window.frame.partition.exclude[2]",
        "window.frame.partition.exclude[3]",
        "window.frame.partition.exclude[4]",
    )
    bad({"frame": {**base, "partition": {}}}, "window.frame.partition.mode")
    bad({"frame": {**base, "partition": {"mode": "all"}}}, "window.frame.partition.mode")
    bad({"frame": {**base, "partition": "none"}}, "window.frame.partition")


# ---------------------------------------------------------------------------------------------
# 10.9 sugars and desugaring


def test_win_pop_01_04_pop_desugaring() -> None:
    """WIN-POP-01/04: pop ≡ general offset, calculation defaulting to percent_change."""
    assert no_sugar(ok({"type": "pop", "offset": "1 month"})) == ok(
        {"offset": {"count": 1, "granularity": "month"}, "calculation": "percent_change"}
    )
    assert no_sugar(ok({"type": "pop", "offset": "1 year", "calculation": "delta"})) == ok(
        {"offset": {"count": 1, "granularity": "year"}, "calculation": "delta"}
    )
    spec = ok(
        {"type": "pop", "offset": {"count": 12, "granularity": "month"}, "calculation": "value"}
    )
    assert spec == OffsetWindow(12, "month", "back", "value", "pop")


def test_win_pop_01_offset_required() -> None:
    bad({"type": "pop"}, "window.offset")
    bad({"type": "pop", "calculation": "nope"}, "window.offset", "window.calculation")


def test_win_rol_01_02_rolling_desugaring() -> None:
    """WIN-ROL-01/02: rolling(f, N) ≡ frame(f, preceding N-1); periods 1 = identity frame."""
    assert no_sugar(ok({"type": "rolling", "function": "avg", "periods": 3})) == ok(
        {"frame": {"function": "avg", "preceding": 2}}
    )
    spec = ok({"type": "rolling", "function": "sum", "periods": 1})
    assert spec == FrameWindow("sum", 0, sugar="rolling")


def test_win_rol_03_rolling_require_full_window() -> None:
    """WIN-ROL-03: rolling require_full_window carries into the frame."""
    spec = ok({"type": "rolling", "function": "avg", "periods": 7, "require_full_window": True})
    assert (spec.preceding, spec.require_full_window) == (6, True)
    bad(
        {"type": "rolling", "function": "avg", "periods": 7, "require_full_window": "yes"},
        "window.require_full_window",
    )


@pytest.mark.parametrize("periods", [0, -3, 2.5, True, "3", None])
def test_win_rol_01_periods_integer_at_least_one(periods: Any) -> None:
    bad({"type": "rolling", "function": "avg", "periods": periods}, "window.periods")


def test_win_rol_01_function_required() -> None:
    bad({"type": "rolling", "periods": 3}, "window.function")
    bad({"type": "rolling", "function": "ntile", "periods": 3}, "window.function")


def test_win_cum_01_02_cumulative_desugaring() -> None:
    """WIN-CUM-01/02: cumulative(f) ≡ frame(f, unbounded); with reset r it carries reset."""
    assert no_sugar(ok({"type": "cumulative", "function": "sum"})) == ok(
        {"frame": {"function": "sum", "preceding": "unbounded"}}
    )
    assert no_sugar(ok({"type": "cumulative", "function": "sum", "reset": "year"})) == ok(
        {"frame": {"function": "sum", "preceding": "unbounded", "reset": "year"}}
    )
    assert ok({"type": "cumulative", "function": "max"}).sugar == "cumulative"


def test_win_cum_01_reset_enum() -> None:
    bad({"type": "cumulative", "function": "sum", "reset": "day"}, "window.reset")
    bad({"type": "cumulative", "function": "sum", "reset": "decade"}, "window.reset")
    bad({"type": "cumulative"}, "window.function")


# ---------------------------------------------------------------------------------------------
# planner properties (WM "Restrictions", CHECKLIST WIN-RES-*)


def test_offset_properties() -> None:
    """WIN-OFF-12 / WIN-QRY-04: offsets always need the axis and expand the scan."""
    spec = ok({"type": "pop", "offset": "1 month"})
    assert (spec.needs_time_axis, spec.partition_global, spec.is_running, spec.expands_scan) == (
        True,
        False,
        False,
        True,
    )


def test_frame_properties() -> None:
    """WIN-FRM-21 / WIN-RES-04/05."""
    running = ok({"type": "cumulative", "function": "sum"})
    assert (
        running.needs_time_axis,
        running.partition_global,
        running.is_running,
        running.expands_scan,
    ) == (True, False, True, False)
    ytd = ok({"type": "cumulative", "function": "sum", "reset": "year"})
    assert (ytd.needs_time_axis, ytd.is_running, ytd.expands_scan) == (True, False, True)
    rolling = ok({"type": "rolling", "function": "avg", "periods": 3})
    assert (rolling.needs_time_axis, rolling.is_running, rolling.expands_scan) == (
        True,
        False,
        False,
    )
    by_value = ok(
        {
            "frame": {
                "function": "count",
                "preceding": "unbounded",
                "units": "range",
                "order": {"by": "value"},
            }
        }
    )
    assert (by_value.needs_time_axis, by_value.partition_global, by_value.is_running) == (
        False,
        True,
        False,
    )
    bucket = ok(
        {
            "frame": {
                "function": "sum",
                "preceding": "unbounded",
                "order": {"by": "value"},
                "partition": {"mode": "time_bucket"},
            }
        }
    )
    assert bucket.needs_time_axis is True
    scoped = ok({"frame": {"function": "count", "scope": "partition"}})
    assert (
        scoped.needs_time_axis,
        scoped.partition_global,
        scoped.is_running,
        scoped.expands_scan,
    ) == (False, True, False, False)


def test_rank_value_properties() -> None:
    """WIN-RNK-08/09, WIN-VAL-07: partition-global; axis only when time-ordered."""
    rank = ok({"rank": {"function": "rank"}})
    assert (rank.needs_time_axis, rank.partition_global, rank.is_running, rank.expands_scan) == (
        False,
        True,
        False,
        False,
    )
    assert ok({"rank": {"function": "rank", "order": {"by": "time"}}}).needs_time_axis is True
    value = ok({"value": {"function": "first_value"}})
    assert (value.needs_time_axis, value.partition_global) == (True, True)
    assert (
        ok({"value": {"function": "first_value", "order": {"by": "value"}}}).needs_time_axis
        is False
    )


def test_to_dict_includes_family() -> None:
    d = ok({"type": "rolling", "function": "avg", "periods": 3}).to_dict()
    assert (
        d["family"] == "frame"
        and d["preceding"] == 2
        and d["order"] == {"by": "time", "direction": "asc", "nulls": None}
    )
    assert json.dumps(d)


# ---------------------------------------------------------------------------------------------
# window.base (D-DERIVE M2): the name is read here, the compiler checks what it names


def test_window_base_is_read() -> None:
    """WIN-BASE-01: window.base is read (no longer not_implemented) beside the window spec."""
    res = read_window({"base": "revenue", "type": "pop", "offset": "1 month"})
    assert res.diagnostics == ()
    assert isinstance(res.payload, MetricExt)
    assert res.payload.window_base == "revenue"
    assert res.payload.window is not None


def test_window_base_must_be_a_name_and_other_problems_still_report() -> None:
    res = read_window({"base": 3, "type": "pop"})
    assert [d.code for d in res.diagnostics] == [INVALID, INVALID]
    assert "window.base" in res.diagnostics[0].message


def test_one_run_reports_every_window_problem() -> None:
    """ENV-CAR-09 for windows: every violation in one pass, each naming its key path."""
    bad(
        {
            "frame": {
                "function": "stddev",
                "preceding": -1,
                "reset": "day",
                "units": "cols",
                "order": {"by": "x"},
                "partition": {"mode": "query_dimensions_except"},
            }
        },
        "window.frame.function",
        "window.frame.preceding",
        "window.frame.reset",
        "window.frame.order.by",
        "window.frame.partition.exclude",
        "window.frame.units",
    )
