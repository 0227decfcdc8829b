"""D-WINDOW 1.14, the roadmap the window spec left "out of scope as of 1.3" (WM "Extensibility
model and roadmap", "Frozen degrees of freedom": following bounds, GROUPS units, frame
exclusion; "Family roadmap": value-family ignore_nulls; "Function registry": regr_*,
percentile_cont / percentile_disc / median). Every expected value comes from plain Python
over the SALES rows (roadmap_ref, wm_common): calendar gaps, a NULL region, an all-NULL bucket,
a zero-sum bucket and tied values. CHECKLIST IDs: WIN-FRM-01 (frame object), WIN-FRM-15
(frames count existing buckets), WIN-QRY-05 (scan expansion and trim), WIN-RES-05
(partition-global metrics beside expanders), WIN-REG-02 (registered functions only),
WIN-REG-03 (dialect gates), WIN-VAL-01 (value navigation), WIN-PAY-06 (unknown keys),
ENV-REG-06 (capabilities), ENV-V-11 (the version the engine implements)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from roadmap_ref import framed, navigate
from test_window_payload import read_window
from wm_common import (
    D,
    Key,
    assert_series,
    build_db,
    key_date,
    keyed,
    model_yaml,
    run,
    series,
)

import dosi
from dosi.errors import DiagnosticSink
from dosi.ext.registry import WINDOW_FEATURES, capabilities
from dosi.ext.window import parse_window
from dosi.frontends.cli import cli
from dosi.sql.dialects import DIALECTS

WINDOWS: dict[str, Any] = {
    "c3": {"frame": {"function": "sum", "preceding": 1, "following": 1}},
    "c3avg": {"frame": {"function": "avg", "preceding": 1, "following": 1}},
    "ahead2": {"frame": {"function": "sum", "preceding": 0, "following": 2}},
    "rest": {"frame": {"function": "sum", "preceding": 0, "following": "unbounded"}},
    "c3full": {
        "frame": {"function": "count", "preceding": 1, "following": 1, "require_full_window": True}
    },
    "c5ytd": {"frame": {"function": "sum", "preceding": 2, "following": 2, "reset": "year"}},
    "c3x": {
        "frame": {"function": "sum", "preceding": 1, "following": 1, "exclusion": "current_row"}
    },
    "grp": {
        "frame": {
            "function": "sum",
            "preceding": 1,
            "following": 0,
            "units": "groups",
            "partition": {"mode": "none"},
        }
    },
    "grp_x_group": {
        "frame": {
            "function": "sum",
            "preceding": 1,
            "following": 1,
            "units": "groups",
            "exclusion": "group",
            "partition": {"mode": "none"},
        }
    },
    "grp_x_ties": {
        "frame": {
            "function": "count",
            "preceding": 0,
            "following": 0,
            "units": "groups",
            "exclusion": "ties",
            "partition": {"mode": "none"},
        }
    },
    "val_ties": {
        "frame": {
            "function": "sum",
            "preceding": 1,
            "following": 1,
            "units": "groups",
            "exclusion": "ties",
            "order": {"by": "value", "direction": "asc"},
            "partition": {"mode": "none"},
        }
    },
    "first_nn": {"value": {"function": "first_value", "ignore_nulls": True}},
    "last_nn": {"value": {"function": "last_value", "ignore_nulls": True}},
    "last_raw": {"value": {"function": "last_value"}},
    "second_nn": {"value": {"function": "nth_value", "n": 2, "ignore_nulls": True}},
    "med3": {"frame": {"function": "median", "preceding": 1, "following": 1}},
    "p25": {"frame": {"function": "percentile_cont", "fraction": 0.25, "preceding": 2}},
    "p90d": {"frame": {"function": "percentile_disc", "fraction": 0.9, "preceding": 2}},
    "p0d": {"frame": {"function": "percentile_disc", "fraction": 0, "preceding": "unbounded"}},
}
REGR = (
    "regr_slope",
    "regr_intercept",
    "regr_r2",
    "regr_count",
    "regr_avgx",
    "regr_avgy",
    "regr_sxx",
    "regr_syy",
    "regr_sxy",
)
for _fn in REGR:
    WINDOWS[_fn] = {"frame": {"function": _fn, "preceding": 2, "second": "cnt"}}
WINDOWS["slope_c"] = {
    "frame": {"function": "regr_slope", "preceding": 1, "following": 1, "second": "cnt"}
}

RM = ("region", "metric_time__month")
M = ("metric_time__month",)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_db(tmp_path_factory.mktemp("roadmap") / "w.duckdb")


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return dosi.Engine(model_text=model_yaml(WINDOWS))


def _rows(eng: dosi.Engine, db: str, metrics: list[str], group_by: list[str], **kw: Any) -> Any:
    return run(eng, db, metrics, group_by, **kw)


def _in(base: dict[Key, Any], start: dt.date | None, end: dt.date | None) -> dict[Key, Any]:
    return {
        k: v
        for k, v in base.items()
        if (start is None or key_date(k) >= start) and (end is None or key_date(k) < end)
    }


# ------------------------------------------------------------------------------ following


def test_following_frames_over_existing_buckets(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-01 / WIN-FRM-15: ROWS BETWEEN p PRECEDING AND f FOLLOWING over the existing
    buckets of each region (gaps are not buckets), unbounded ahead, a full-window count, a
    reset that clips the frame at the year, and EXCLUDE CURRENT ROW."""
    base = series("month", ("region",))
    metrics = ["c3", "c3avg", "ahead2", "rest", "c3full", "c5ytd", "c3x"]
    rows = _rows(eng, db, metrics, ["sales.region", "metric_time:month"])
    expected = {
        "c3": framed(base, "sum", 1, 1),
        "c3avg": framed(base, "avg", 1, 1),
        "ahead2": framed(base, "sum", 0, 2),
        "rest": framed(base, "sum", 0, None),
        "c3full": framed(base, "count", 1, 1, require_full=True),
        "c5ytd": framed(base, "sum", 2, 2, partition=lambda k: (k[0], k[-1][:4])),
        "c3x": framed(base, "sum", 1, 1, exclusion="current_row"),
    }
    for name, exp in expected.items():
        assert_series(keyed(rows, RM, name), exp, name)


def test_following_widens_the_scan_end_and_trims(eng: dosi.Engine, db: str) -> None:
    """WIN-QRY-05: under a time_range the frame at the last in-range month reads the months
    after it (the scan keeps no end bound: the next existing buckets may lie anywhere after
    it), the start side reads in-range rows only, as every undensified frame does, and the
    output is trimmed back to the range."""
    start, end = D("2023-10-01"), D("2024-03-01")
    tr = {"start": start.isoformat(), "end": end.isoformat()}
    base = series("month", ("region",), start=start)  # every row from the start on
    rows = _rows(
        eng, db, ["c3", "ahead2", "rest"], ["sales.region", "metric_time:month"], time_range=tr
    )
    for name, (p, f) in {"c3": (1, 1), "ahead2": (0, 2), "rest": (0, None)}.items():
        assert_series(keyed(rows, RM, name), _in(framed(base, "sum", p, f), None, end), name)
    sql = eng.compile({"metrics": ["c3"], "group_by": ["metric_time:month"], "time_range": tr})[
        "sql"
    ]
    assert "2024-03-01" in sql.split("win AS")[1] and "2024-03-01" not in sql.split("win AS")[0]


def test_following_under_densify_reads_calendar_buckets(eng: dosi.Engine, db: str) -> None:
    """Densify interplay: over the dense series a following bound counts calendar months (the
    missing 2024-05 is a NULL month, not skipped), and the scan's end widens by exactly the
    frame's following months (the start by its preceding ones), so trimming changes no
    in-range value."""
    start, end = D("2024-01-01"), D("2024-06-01")
    tr = {"start": start.isoformat(), "end": end.isoformat()}
    q = {"group_by": ["metric_time:month"], "time_range": tr, "densify": "time"}
    total = series("month")
    months = [dt.date(2023, 12, 1), *(dt.date(2024, m, 1) for m in range(1, 8))]
    dense = {(d.isoformat(),): total.get((d.isoformat(),)) for d in months}
    rows = eng.execute({"metrics": ["c3", "ahead2"], **q}, db_path=db)["rows"]
    assert_series(keyed(rows, M, "c3"), _in(framed(dense, "sum", 1, 1), start, end), "c3")
    assert_series(keyed(rows, M, "ahead2"), _in(framed(dense, "sum", 0, 2), start, end), "ahead2")
    plan = eng.explain({"metrics": ["ahead2"], **q})
    assert "[2024-01-01, 2024-08-01)" in plan


def test_following_beside_other_windows(eng: dosi.Engine, db: str) -> None:
    """A following frame beside a back offset: each answers as it would alone (rows loaded for
    the frame's lookahead enter no trailing frame; the offset's lookback rows enter no
    following frame); a partition-global metric beside it is refused (WIN-RES-05)."""
    e = dosi.Engine(
        model_text=model_yaml(
            {
                "c3": WINDOWS["c3"],
                "mom": {"type": "pop", "offset": "1 month", "calculation": "value"},
                "roll2": {"type": "rolling", "function": "sum", "periods": 2},
                "first_nn": WINDOWS["first_nn"],
            }
        )
    )
    start, end = D("2023-11-01"), D("2024-03-01")
    tr = {"time_range": {"start": start.isoformat(), "end": end.isoformat()}}
    rows = run(e, db, ["c3", "mom", "roll2"], ["metric_time:month"], **tr)
    from_start = series("month", start=start)
    everything = series("month")
    prev = {
        k: everything.get(((key_date(k) - dt.timedelta(days=1)).replace(day=1).isoformat(),))
        for k in _in(from_start, None, end)
    }
    assert_series(keyed(rows, M, "c3"), _in(framed(from_start, "sum", 1, 1), None, end), "c3")
    assert_series(
        keyed(rows, M, "roll2"),
        _in(framed(_in(from_start, None, end), "sum", 1, 0), None, end),
        "roll2",
    )
    assert_series(keyed(rows, M, "mom"), prev, "mom")
    with pytest.raises(dosi.QueryError) as info:
        e.compile({"metrics": ["first_nn", "c3"], "group_by": ["metric_time:month"], **tr})
    assert info.value.code == "not_implemented" and "first_nn" in info.value.message


# ------------------------------------------------------------------------ GROUPS, exclusion


def test_groups_frames_and_exclusion(eng: dosi.Engine, db: str) -> None:
    """GROUPS units: with one partition over region x month rows, a peer group is a month (all
    its regions); EXCLUDE GROUP drops the current month, EXCLUDE TIES the other regions of it.
    Over a value order, tied values (east 150 in 2024-01 and 2024-03) are one group."""
    base = series("month", ("region",))
    month = lambda k: key_date(k)  # noqa: E731
    everyone = lambda k: ()  # noqa: E731
    rows = _rows(
        eng,
        db,
        ["grp", "grp_x_group", "grp_x_ties", "val_ties"],
        ["sales.region", "metric_time:month"],
    )
    exp = {
        "grp": framed(base, "sum", 1, 0, units="groups", partition=everyone, order=month),
        "grp_x_group": framed(
            base, "sum", 1, 1, units="groups", exclusion="group", partition=everyone, order=month
        ),
        "grp_x_ties": framed(
            base, "count", 0, 0, units="groups", exclusion="ties", partition=everyone, order=month
        ),
        "val_ties": framed(
            base,
            "sum",
            1,
            1,
            units="groups",
            exclusion="ties",
            partition=everyone,
            order=lambda k: (base[k] is None, base[k] or 0),
        ),
    }
    for name, e in exp.items():
        assert_series(keyed(rows, RM, name), e, name)
    assert {v for v in exp["grp_x_ties"].values()} == {1}


# ------------------------------------------------------------------------------ ignore_nulls


def test_ignore_nulls_navigation(eng: dosi.Engine, db: str) -> None:
    """WIN-VAL-01 + 1.14 ignore_nulls: west's all-NULL 2023-06 bucket and NULL-leading /
    trailing series (day grain: west ends 2024-04-30 with a non-NULL, the NULL region's
    series) navigate past NULL values; without ignore_nulls the NULL is the answer."""
    rows_sales = [s for s in series_rows() if s.region != "west" or s.sale_date.year < 2024]
    from wm_common import Sale  # the extra NULL-valued buckets at a series' ends

    extra = (Sale(900, D("2024-09-01"), "west", None), Sale(901, D("2022-01-03"), "east", None))
    path = build_db(Path(_tmp()) / "nulls.duckdb", (*rows_sales, *extra))
    base = series("month", ("region",), rows=(*rows_sales, *extra))
    rows = run(
        eng,
        path,
        ["first_nn", "last_nn", "last_raw", "second_nn"],
        ["sales.region", "metric_time:month"],
    )
    assert_series(keyed(rows, RM, "first_nn"), navigate(base, "first_value", ignore_nulls=True))
    assert_series(keyed(rows, RM, "last_nn"), navigate(base, "last_value", ignore_nulls=True))
    assert_series(keyed(rows, RM, "last_raw"), navigate(base, "last_value"))
    assert_series(keyed(rows, RM, "second_nn"), navigate(base, "nth_value", 2, ignore_nulls=True))
    west = [r for r in rows if r["region"] == "west"]
    assert {r["last_raw"] for r in west} == {None} and {r["last_nn"] for r in west} == {50}


def series_rows() -> tuple[Any, ...]:
    from wm_common import SALES

    return SALES


def _tmp() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="dosi_roadmap_")


# ------------------------------------------------------------------- regr_*, percentiles


def test_regression_frames(eng: dosi.Engine, db: str) -> None:
    """1.14 regr_*: REGR_*(y, x) with the metric (revenue) as y and `second` (cnt) as x, over
    trailing 3-month frames and a centered one; NULL without spread in x (one point, equal
    counts), never NaN; pairs with a NULL side are skipped (west's all-NULL 2023-06)."""
    base = series("month", ("region",))
    cnt = series("month", ("region",), measure="count")
    names = [*REGR, "slope_c"]
    rows = _rows(eng, db, names, ["sales.region", "metric_time:month"])
    for fn in REGR:
        assert_series(keyed(rows, RM, fn), framed(base, fn, 2, 0, second=cnt), fn)
    assert_series(
        keyed(rows, RM, "slope_c"), framed(base, "regr_slope", 1, 1, second=cnt), "slope_c"
    )
    assert any(r["regr_slope"] is None for r in rows) and any(
        r["regr_slope"] not in (None, 0) for r in rows
    )


def test_percentile_frames(eng: dosi.Engine, db: str) -> None:
    """1.14 percentiles: median over a centered frame, PERCENTILE_CONT at 0.25 (interpolated)
    and PERCENTILE_DISC at 0.9 and 0 over trailing frames; NULL buckets are skipped."""
    base = series("month", ("region",))
    rows = _rows(eng, db, ["med3", "p25", "p90d", "p0d"], ["sales.region", "metric_time:month"])
    assert_series(keyed(rows, RM, "med3"), framed(base, "median", 1, 1), "med3")
    assert_series(
        keyed(rows, RM, "p25"), framed(base, "percentile_cont", 2, 0, fraction=0.25), "p25"
    )
    assert_series(
        keyed(rows, RM, "p90d"), framed(base, "percentile_disc", 2, 0, fraction=0.9), "p90d"
    )
    assert_series(
        keyed(rows, RM, "p0d"), framed(base, "percentile_disc", None, 0, fraction=0.0), "p0d"
    )


# ------------------------------------------------------------------- validation, versions


def _parse(window: dict[str, Any]) -> tuple[Any, list[Any], tuple[str, ...]]:
    sink = DiagnosticSink()
    res = parse_window(window, path="m", sink=sink)
    return res.spec, list(sink.items), res.features


@pytest.mark.parametrize(
    ("frame", "key", "needle"),
    [
        ({"following": -1}, "window.frame.following", "integer >= 0"),
        ({"following": "all"}, "window.frame.following", "unbounded"),
        (
            {"following": 1, "order": {"by": "time", "direction": "desc"}},
            "window.frame.following",
            '"preceding": 1, "following": 2',
        ),
        (
            {"following": 1, "units": "range", "preceding": "unbounded", "order": {"by": "value"}},
            "window.frame.following",
            "range",
        ),
        (
            {"following": "unbounded", "require_full_window": True},
            "window.frame.require_full_window",
            "unbounded",
        ),
        (
            {"units": "groups", "require_full_window": True},
            "window.frame.require_full_window",
            "groups",
        ),
        ({"exclusion": "current"}, "window.frame.exclusion", "current_row"),
        ({"function": "percentile_cont"}, "window.frame.fraction", "required"),
        ({"function": "percentile_disc", "fraction": 1.5}, "window.frame.fraction", "between"),
        ({"function": "median", "fraction": 0.5}, "window.frame.fraction", "median"),
        ({"function": "regr_slope"}, "window.frame.second", "regr_slope"),
        ({"function": "sum", "second": "cnt"}, "window.frame.second", "regr_"),
    ],
)
def test_invalid_roadmap_frames(frame: dict[str, Any], key: str, needle: str) -> None:
    """WIN-FRM-01 / WIN-REG-02: each mistake is one invalid_datus_extension naming the key,
    with the fix (and candidates for a misspelled enum)."""
    payload = {"function": "sum", "preceding": 2, **frame}
    spec, diags, _ = _parse({"frame": payload})
    assert spec is None and diags, diags
    assert all(d.code == "invalid_datus_extension" for d in diags)
    d = next(d for d in diags if d.message.startswith(f"`{key}`"))
    assert needle in d.message + (d.hint or ""), d
    if key == "window.frame.exclusion":
        assert "current_row" in d.candidates


def test_ignore_nulls_validation() -> None:
    """`value.ignore_nulls` is a boolean; on an offset (a calendar self-join, never LAG) it
    is refused with the value family as the fix; `frame.exclude` is not the key's name."""
    spec, diags, _ = _parse({"value": {"function": "first_value", "ignore_nulls": "yes"}})
    assert spec is None and "true or false" in diags[0].message
    spec, diags, _ = _parse(
        {
            "offset": {"count": 1, "granularity": "month", "ignore_nulls": True},
            "calculation": "value",
        }
    )
    assert spec is None and "self-join" in diags[0].message and "value" in (diags[0].hint or "")
    spec, diags, _ = _parse({"frame": {"function": "sum", "preceding": 1, "exclude": "ties"}})
    assert spec is None and "exclusion" in diags[0].candidates


@pytest.mark.parametrize(
    ("window", "feature"),
    [
        (WINDOWS["c3"], "window.frame.following"),
        (WINDOWS["grp"], "window.frame.units (groups)"),
        (WINDOWS["c3x"], "window.frame.exclusion"),
        (WINDOWS["regr_slope"], "window.frame.function (regr_*)"),
        (WINDOWS["med3"], "window.frame.function (percentiles)"),
        (WINDOWS["p25"], "window.frame.fraction"),
        (WINDOWS["first_nn"], "window.value.ignore_nulls"),
    ],
)
def test_features_are_dated_1_14(window: dict[str, Any], feature: str) -> None:
    """ENV-REG-06: each new shape is an in-family feature of 1.14: a document declaring an
    older `v` is told the key is newer than it declares (an engine older than 1.14 rejects the
    unknown key or value outright: frame / value objects deny unknown keys, WIN-PAY-06)."""
    spec, diags, features = _parse(window)
    assert spec is not None and not diags and feature in features
    assert WINDOW_FEATURES[feature] == "1.14"
    res = read_window(window, v="1.13")
    assert {d.code for d in res.diagnostics} == {"datus_ext_key_newer_than_declared"}
    assert any(f"`{feature}`" in d.message and "1.14" in d.message for d in res.diagnostics)
    assert read_window(window, v="1.14").diagnostics == ()


def test_capabilities_and_info_list_1_14() -> None:
    """ENV-V-11 / ENV-REG-06: the engine reports 1.15 (1.14 shapes dated 1.14), and `dosi info` / the capabilities
    carry the dated features."""
    caps = capabilities()
    assert caps["version"] == dosi.DATUS_EXT_VERSION == "1.15"
    window = next(k for k in caps["keys"] if k["key"] == "window")
    assert window["features"]["window.frame.following"] == "1.14"
    assert any(h["version"] == "1.14" for h in caps["history"])
    r = CliRunner().invoke(cli, ["info", "--format", "json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    win = next(k for k in info["keys"] if k["key"] == "window")
    assert win["features"]["window.value.ignore_nulls"] == "1.14"


# ------------------------------------------------------------------- gates, catalog, explain

GATED = {
    "postgres": ("first_nn", "med3", "p25", "p90d"),
    "sqlite": ("first_nn", "regr_slope", "med3"),
    "mariadb": ("grp", "c3x", "first_nn", "regr_slope", "med3"),
    "clickhouse": ("c3x", "first_nn", "med3"),
    "datafusion": ("c3x", "first_nn", "p90d"),
    "spark": ("grp", "c3x", "p90d"),
    "bigquery": ("grp", "regr_slope", "p25"),
    "tsql": ("first_nn", "grp", "regr_count"),
}


@pytest.mark.parametrize("dialect", sorted(GATED))
def test_dialect_gates_are_structured(eng: dosi.Engine, dialect: str) -> None:
    """WIN-REG-03: a clause or function an engine lacks is dialect_unsupported_window_function
    before any SQL exists, naming the metric and what it needs."""
    for metric in GATED[dialect]:
        with pytest.raises(dosi.QueryError) as info:
            eng.compile({"metrics": [metric], "group_by": ["metric_time:month"]}, dialect=dialect)
        err = info.value
        assert err.code == "dialect_unsupported_window_function", err
        assert metric in err.message and dialect in err.message and err.hint


_CLAUSE = {
    "grp": "GROUPS BETWEEN",
    "c3x": "EXCLUDE CURRENT ROW",
    "first_nn": "IGNORE NULLS",
    "c3": "1 FOLLOWING",
}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_an_admitted_clause_is_rendered(eng: dosi.Engine, dialect: str) -> None:
    """Never silently dropped: where the gate admits GROUPS, EXCLUDE or IGNORE NULLS, the
    dialect's SQL says it (sqlglot drops what a dialect's generator does not know)."""
    for metric, clause in _CLAUSE.items():
        try:
            sql = eng.compile(
                {"metrics": [metric], "group_by": ["metric_time:month"]}, dialect=dialect
            )["sql"]
        except dosi.QueryError as err:
            assert err.code == "dialect_unsupported_window_function"
            continue
        assert clause in sql.upper(), (dialect, metric, sql)


def test_catalog_and_explain(eng: dosi.Engine) -> None:
    """Catalog metadata: family, function, requires_time_axis; explain names the bounds, the
    exclusion, the fraction and ignore_nulls."""
    cat = {m["name"]: m for m in eng.metrics()}
    assert cat["c3"]["window_family"] == "frame" and cat["c3"]["window_function"] == "sum"
    assert cat["regr_slope"]["window_function"] == "regr_slope"
    assert cat["p25"]["window_function"] == "percentile_cont"
    c3 = eng.metric("c3")
    assert c3["requires_time_axis"] is True and c3["window"]["following"] == 1
    assert eng.metric("val_ties")["requires_time_axis"] is False
    assert eng.metric("first_nn")["window"]["ignore_nulls"] is True
    text = eng.explain(
        {"metrics": ["c3x", "p25", "grp", "first_nn"], "group_by": ["metric_time:month"]}
    )
    assert "sum rows 1 preceding 1 following" in text and "exclude=current_row" in text
    assert "percentile_cont(0.25)" in text and "groups 1 preceding" in text
    assert "ignore_nulls" in text


# ------------------------------------------------------------------------------ attribution


def test_attribution_classifies_every_1_14_shape(eng: dosi.Engine, db: str) -> None:
    """Issue 23 item 6 (attribution classification): a following bound, a GROUPS frame, an
    exclusion, ignore_nulls, a regr_* or a percentile frame transforms the time series, so no
    segment split of it adds up: each is `unsupported` (`window_metric`, naming its family) in
    the catalog and in `attribute`, which answers without running a query."""
    for name in WINDOWS:
        meta = eng.metric(name)
        assert (meta["attributable"], meta["attribution_strategy"]) == (False, "unsupported")
    family = {"c3": "frame", "grp": "frame", "c3x": "frame", "first_nn": "value", "p25": "frame"}
    family |= {"regr_slope": "frame", "med3": "frame"}
    for name, fam in family.items():
        r = eng.attribute(
            {
                "metric": name,
                "baseline": {"start": "2024-01-01", "end": "2024-02-01"},
                "current": {"start": "2024-02-01", "end": "2024-03-01"},
                "dimensions": ["sales.region"],
            },
            db_path=db,
        )
        assert (r["strategy"], r["attributable"], r["attribution"]) == ("unsupported", False, None)
        assert r["unsupported_reason"]["code"] == "window_metric"
        assert r["unsupported_reason"]["message"].startswith(f"{fam} window metrics"), name
        assert r["comparison_metadata"]["queries_executed"] == 0
