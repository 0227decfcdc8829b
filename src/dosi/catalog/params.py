"""D-PARAM in the catalog (PARAM-CAT-01/02): each metric's bindable `params` (declarations plus
the slots they fill; `declared_on` for a member's) and `param_schema`, the JSON Schema of the
`params` query map an agent reads before binding (allowed -> enum, min/max ->
minimum/maximum; a value or a non-empty list of values)."""

from __future__ import annotations

from typing import Any

from dosi.ext.params import ParamDecl
from dosi.ir.model import MetricIr, ModelIr
from dosi.query.params import declared_params

_JSON_TYPES = {"int": "integer", "float": "number", "string": "string"}


def metric_params(model: ModelIr, metric: MetricIr) -> list[dict[str, Any]] | None:
    """Every param a query can bind for `metric` (None: it has none)."""
    declared = declared_params(model, metric)
    if not declared:
        return None
    out: list[dict[str, Any]] = []
    for d, owner in declared:
        owner_ir = model.metrics[owner]
        assert owner_ir.params is not None
        entry = {
            **d.to_dict(),
            "slots": [s.slot for s in owner_ir.params.slots if s.param == d.name],
        }
        if owner != metric.name:
            entry["declared_on"] = owner
        out.append(entry)
    return out


def value_schema(d: ParamDecl) -> dict[str, Any]:
    out: dict[str, Any] = {"type": _JSON_TYPES[d.type], "default": d.default}
    if d.allowed is not None:
        out["enum"] = list(d.allowed)
    if d.minimum is not None:
        out["minimum"] = d.minimum
    if d.maximum is not None:
        out["maximum"] = d.maximum
    if d.description is not None:
        out["description"] = d.description
    return out


def param_schema(model: ModelIr, metric: MetricIr) -> dict[str, Any] | None:
    """The JSON Schema of the `params` map this metric accepts (None: it has none)."""
    declared = declared_params(model, metric)
    if not declared:
        return None
    props: dict[str, Any] = {}
    for d, _ in declared:
        one = value_schema(d)
        props[d.name] = {
            "oneOf": [one, {"type": "array", "items": dict(one), "minItems": 1}],
            "default": d.default,
        }
    return {"type": "object", "properties": props, "additionalProperties": False}
