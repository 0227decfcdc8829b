"""D-PARAM in attribution (PARAM-ATTR-01): one value per parameter. A list is rejected as
`param_out_of_domain` with a single-value retry; the bound metric is the same instance a query
binding plans (`dosi.query.params`), and the resolved binding is echoed in
`comparison_metadata.params`."""

from __future__ import annotations

from typing import Any

from dosi.errors import QueryError
from dosi.ir.model import MetricIr, ModelIr
from dosi.query.params import expand_params
from dosi.query.params_shape import params_to_dict, parse_params
from dosi.query.spec import Query


def attribution_params(raw: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The request's `params`, scalars only."""
    params = parse_params(raw.get("params"))
    for name, value in params:
        if isinstance(value, tuple):
            retry = {**raw, "params": {**params_to_dict(params), name: value[0] if value else None}}
            raise QueryError(
                "param_out_of_domain",
                f'attribution binds one value per parameter; "{name}" is a list',
                hint=f"bind a single value, e.g. {name}={value[0] if value else '...'}",
                suggested_retry=retry if value else None,
            )
    return params


def bind_attribution_params(
    model: ModelIr, metric: MetricIr, params: tuple[tuple[str, Any], ...]
) -> tuple[ModelIr, MetricIr, dict[str, Any] | None]:
    """The model holding the bound instance of `metric`, the instance, its resolved params
    (None when the metric declares none)."""
    try:
        expansion = expand_params(model, Query(metrics=(metric.name,), params=params))
    except QueryError as err:
        err.suggested_retry = None  # a query-shaped retry does not fit an attribution request
        raise
    if not expansion.outputs:  # the metric declares no params
        return model, metric, None
    [column] = expansion.outputs
    return expansion.model, expansion.model.metrics[column.column], column.params
