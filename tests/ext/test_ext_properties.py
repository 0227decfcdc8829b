"""Property tests: `read_extensions` never raises on arbitrary payloads, only emits known
codes, always returns the carrier's payload type, and basic mode is always exactly one warning
(datus-extensions §2, §5; CHECKLIST ENV-CAR-08/09, ENV-MODE-02/04)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dosi.ext import DatasetExt, FieldExt, MetricExt, ModelExt, RelationshipExt, read_extensions

CODES = {
    "invalid_datus_extension",
    "unsupported_datus_ext_version",
    "datus_ext_version_ahead",
    "datus_ext_key_newer_than_declared",
    "datus_ext_key_required",
    "datus_ext_requires_missing",
    "datus_ext_key_not_implemented",
    "datus_ext_key_misplaced",
    "not_implemented",
}
TYPES = {
    "semantic_model": ModelExt,
    "dataset": DatasetExt,
    "field": FieldExt,
    "relationship": RelationshipExt,
    "metric": MetricExt,
}
KEYS = [
    "v",
    "requires",
    "join_type",
    "fill_nulls_with",
    "time_dimension",
    "time_granularity",
    "dataset",
    "window",
    "derive",
    "measure",
    "params",
    "time",
    "is_dimension",
    "cardinality",
    "lod",
    "type",
    "offset",
    "frame",
    "rank",
    "value",
    "function",
    "periods",
    "reset",
    "calculation",
    "preceding",
    "order",
    "partition",
    "by",
    "mode",
    "exclude",
    "units",
    "second",
    "scope",
    "nulls",
    "count",
    "granularity",
    "direction",
    "buckets",
    "n",
    "name",
    "base",
]
ATOMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            "1.10",
            "1.2",
            "2.0",
            "unbounded",
            "pop",
            "rolling",
            "cumulative",
            "sum",
            "corr",
            "ntile",
            "nth_value",
            "month",
            "day",
            "1 month",
            "value",
            "time",
            "query_dimensions_except",
            "a.b",
            "partition",
            "range",
            "inner",
            "x",
        ]
    ),
)
JSON = st.recursive(
    ATOMS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=5),
    ),
    max_leaves=20,
)
CARRIERS = st.sampled_from(sorted(TYPES))


def _check(carrier: str, res: Any) -> None:
    assert isinstance(res.payload, TYPES[carrier])
    for d in res.diagnostics:
        assert d.code in CODES, d
        assert d.severity in ("error", "warning")
        assert d.path == "p"
        assert d.message


@settings(max_examples=400, deadline=None)
@given(carrier=CARRIERS, payload=st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6))
def test_datus_mode_never_raises_on_object_payloads(carrier: str, payload: dict[str, Any]) -> None:
    res = read_extensions(carrier, "p", [{"vendor_name": "DATUS", "data": json.dumps(payload)}])  # type: ignore[arg-type]
    _check(carrier, res)
    if any(d.severity == "error" and d.message.startswith("`window") for d in res.diagnostics):
        assert getattr(res.payload, "window", None) is None


@settings(max_examples=200, deadline=None)
@given(carrier=CARRIERS, window=JSON)
def test_window_never_raises(carrier: str, window: Any) -> None:
    data = json.dumps({"window": window})
    res = read_extensions("metric", "p", [{"vendor_name": "DATUS", "data": data}])
    _check("metric", res)


@settings(max_examples=200, deadline=None)
@given(carrier=CARRIERS, data=st.one_of(st.text(max_size=40), JSON.map(json.dumps)))
def test_arbitrary_data_strings(carrier: str, data: str) -> None:
    datus = read_extensions(carrier, "p", [{"vendor_name": "datus", "data": data}])  # type: ignore[arg-type]
    _check(carrier, datus)
    basic = read_extensions(carrier, "p", [{"vendor_name": "DATUS", "data": data}], "basic")  # type: ignore[arg-type]
    assert [(d.code, d.severity) for d in basic.diagnostics] == [
        ("ignored_vendor_extension", "warning")
    ]
    assert basic.payload == TYPES[carrier]()
