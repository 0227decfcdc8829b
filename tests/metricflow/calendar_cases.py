"""Hand classification of the MetricFlow cases on sub-day grains, custom granularities and
date parts (issue 22) that translate and run but answer differently: the feature that
explains each difference, read from its check query. build_cases.py merges it."""

from __future__ import annotations

_SPINE_WHY = (
    "MetricFlow answers on every time-spine bucket of the constraint (hours or days without "
    "data come back NULL); dosi's values on the buckets with data are the same"
)

CALENDAR_CLASSIFIED: dict[str, tuple[list[str], str]] = {
    **{
        n: (["time_spine"], _SPINE_WHY)
        for n in (
            "itest_constraints/test_subdaily_time_constraint_with_metric",
            "itest_constraints/test_subdaily_time_constraint_adjusted",
            "itest_metrics/subdaily_offset_window_metric",
            "itest_metrics/subdaily_join_to_time_spine_metric",
            "itest_granularity/test_join_to_time_spine_metric_grouped_by_custom_grain",
        )
    },
    **{
        n: (
            ["partition_join_multi_hop"],
            "MetricFlow joins dim_users, two hops away through listings (which has no "
            "partition), on the bookings' `ds_partitioned` as well as user_id; dosi pairs "
            "partitions only between the two models of one relationship",
        )
        for n in (
            "itest_granularity/test_simple_metric_with_multi_hop_custom_granularity",
            "itest_metrics/simple_metric_with_joined_sub_daily_dimension",
        )
    },
}
