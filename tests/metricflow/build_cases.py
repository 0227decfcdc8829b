"""Regenerate tests/fixtures/metricflow/cases.yaml from a run of every MetricFlow case.

    .venv/bin/python tests/metricflow/build_cases.py

Each case gets `status` (what this run measured: pass / fail / needs), `needs` (the dosi
features the question needs; empty for a passing case) and, when it does not pass, `why`.
`needs` comes from the translation and the import when they can tell (a conversion metric, a
date part, a boolean filter ...); a case that translates and runs but answers differently is
classified by hand in `CLASSIFIED` below, after reading its check query, so the file says which
missing feature explains the difference. An unclassified difference is `needs: [unclassified]`
and this script exits 1. The `met` list is kept as it is: a feature that lands adds its name
there, and test_metricflow_bed.py then runs (and requires) every case it unlocks.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import yaml
from calendar_cases import CALENDAR_CLASSIFIED
from mfbed import CASES, build_database, run_all

from dosi.importers.dbt.queries import NEEDS

_SPINE = ["time_spine"]
#: case id -> (needs, why): the value differences, read case by case
CLASSIFIED: dict[str, tuple[list[str], str]] = {
    **{
        f"itest_metrics/{n}": (
            _SPINE,
            "the offset / filled metric has a row for every "
            "time-spine bucket (offset rows where only the shifted bucket "
            "has data, 0-filled empty buckets); dosi has rows where data is",
        )
        for n in (
            "derived_metric_with_offset_window",
            "derived_metric_offset_with_one_metric_input",
            "nested_derived_metric_outer_offset",
            "nested_derived_metric_offset_with_where_constraint",
            "nested_derived_metric_offset_with_time_constraint",
            "time_offset_metric_with_time_constraint",
            "offset_window_with_agg_time_dim",
            "nested_derived_metric_outer_offset_with_agg_time_dimension",
            "simple_fill_nulls_with_0_metric_time",
            "simple_fill_nulls_with_0_month",
            "simple_fill_nulls_with_0_agg_time_dim",
            "simple_join_to_time_spine",
            "derived_fill_nulls_for_one_input_metric",
            "fill_nulls_with_0_multi_metric_query",
            "fill_nulls_with_0_multi_metric_query_with_nesting",
        )
    },
    "itest_cumulative_metric/cumulative_metric_with_non_adjustable_filter": (
        _SPINE,
        "MetricFlow reads the 2-day distinct count on every spine day (2020-01-04 has no "
        "booking of its own); dosi answers on the days with rows",
    ),
    "itest_metrics/cumulative_fill_nulls": (
        _SPINE,
        "fill_nulls_with 0 over every spine day; dosi fills the days with rows",
    ),
    "itest_metrics/cumulative_time_offset_metric_with_time_constraint": (
        _SPINE,
        "MetricFlow's offset reads the distinct counts of the constrained spine days only "
        "(2019-12-20 reads 2019-12-18, outside the constraint: no row); dosi widens the scan "
        "by the offset",
    ),
    "itest_join_to_timespine/test_constraint_on_measure_selected_in_group_by": (
        _SPINE,
        "join_to_timespine: a row for every spine day",
    ),
    "itest_metrics/simple_join_to_time_spine_with_filter": (
        _SPINE,
        "join_to_timespine: a row for every spine day, the filter applied before the spine join",
    ),
    "itest_metrics/nested_derived_metric_offset_with_joined_where_constraint_not_selected": (
        _SPINE,
        "MetricFlow's offset joins the time spine, so it answers on the days the offset value "
        "exists; dosi on the days the filtered rows exist",
    ),
    **{
        n: (
            ["separate_join_paths"],
            "MetricFlow joins each dimension's path separately, so "
            "the bridge table's repeated account_id fans the rows out; dosi joins the bridge "
            "once",
        )
        for n in (
            "itest_multi_hop_join/multihop_join_two_dims_different_sources",
            "itest_multi_hop_join/mixed_length_joins",
        )
    },
    "itest_dimensions/distinct_values_query_with_metric_filter": (
        ["full_outer_dimensions"],
        "MetricFlow reads the listing from the lux mapping model FULL OUTER the metric's "
        "subquery (a listing only the bookings have is a NULL row); dosi lists the listings "
        "model's listings with more than two bookings",
    ),
    "itest_dimensions/query_dimensions_from_different_tables": (
        ["full_outer_dimensions"],
        "MetricFlow joins the dimension models FULL OUTER (users without a listing appear "
        "with a NULL is_lux); dosi's dimension-only query reads the listings and joins their "
        "users many-to-one",
    ),
    "itest_granularity/derived_offset_metric_with_custom_granularity": (
        ["sampled_compose_member"],
        "booking_value a week before per booker this week by alien_day: the offset is summed "
        "from day values, but bookers (COUNT DISTINCT) cannot be rebuilt from day rows "
        "(not_implemented)",
    ),
    "itest_granularity/test_no_metrics_with_custom_granularity_filter": (
        ["spine_filter_cross_join"],
        "metric_time__day with no metric lists the time spine CROSS JOIN the listings that "
        "pass the alien_day filter (every spine day, if any listing passes); dosi finds no "
        "dataset joining the spine and the listings",
    ),
    "itest_granularity/metrics_with_different_time_granularities_and_no_metric_time": (
        ["mixed_grain_metric_time"],
        "the time constraint snaps to each metric's own grain (month for the monthly metric)",
    ),
}
CLASSIFIED.update(CALENDAR_CLASSIFIED)
EXTRA_NEEDS = {
    "partition_join": "joins on shared is_partition dimensions",
    "partition_join_multi_hop": "a partition shared by the fact and a model more than one "
    "relationship away",
    "separate_join_paths": "MetricFlow's per-dimension joins through a bridge",
    "semi_additive_filtered_buckets": "dropping the buckets a filtered semi-additive metric "
    "has no row in",
    "full_outer_dimensions": "dimensions of several models joined FULL OUTER (the values of "
    "either side)",
    "sampled_compose_member": "a compose over an offset answered from day values at a coarser "
    "grain, beside a non-additive input (a count distinct): MetricFlow computes that input at "
    "the coarser grain directly; dosi rebuilds the bucket from day rows, which only sums add up",
    "spine_filter_cross_join": "metric_time listed from the time spine, kept when any row of an "
    "unrelated model passes the filter (MetricFlow's CROSS JOIN)",
    "unclassified": "a difference nobody has explained yet",
}


def main() -> int:
    old = yaml.safe_load(CASES.read_text()) if CASES.exists() else {}
    met = list(old.get("met") or [])
    with tempfile.TemporaryDirectory() as tmp:
        db = build_database(Path(tmp) / "mf.duckdb")
        outcomes = list(run_all(db))
    cases: dict[str, dict[str, object]] = {}
    bad = 0
    for o in outcomes:
        entry: dict[str, object] = {"status": o.status}
        needs = list(o.needs)
        why = o.detail
        if o.status in ("fail", "error"):
            needs, why = CLASSIFIED.get(o.case.id, (["unclassified"], o.detail))
            bad += needs == ["unclassified"]
        entry["needs"] = needs
        if why and o.status != "pass":
            entry["why"] = why[:400]
        cases[o.case.id] = entry
    known = {**NEEDS, **EXTRA_NEEDS}
    used = sorted({n for e in cases.values() for n in e["needs"]})  # type: ignore[attr-defined]
    doc = {
        "met": met,
        "needs": {n: known.get(n, "?") for n in used},
        "cases": cases,
    }
    header = (
        "# MetricFlow's integration test cases (test_cases/) as dosi questions: what each needs.\n"
        "# Generated by tests/metricflow/build_cases.py; `met` lists features dosi has gained\n"
        "# since (test_metricflow_bed.py runs every case whose needs are all met).\n"
    )
    CASES.write_text(header + yaml.safe_dump(doc, sort_keys=False, width=100))
    counts: dict[str, int] = {}
    for e in cases.values():
        counts[str(e["status"])] = counts.get(str(e["status"]), 0) + 1
    print(counts, f"{bad} unclassified")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
