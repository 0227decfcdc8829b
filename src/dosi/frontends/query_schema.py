"""The metric query's JSON shape as pydantic models, one field per query key
(`dosi.query.spec.QUERY_KEYS`), each with its description and enums: what a typed client
(an MCP agent) is shown. Documentation of the shape only: the engine's own parser
(`parse_query`) still checks every query and answers its structured errors, so a wrong type
gets the error contract with candidates and hints, not a schema library's message.

`tool_argument(key)` is the annotation of one query key as a tool parameter: its JSON Schema
is the field's, its validation accepts anything (the engine decides).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from dosi.ext.window.spec import GRAINS
from dosi.query.spec import QUERY_KEYS


class TimeRangeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: str | None = Field(None, description="Inclusive start, YYYY-MM-DD or a timestamp.")
    end: str | None = Field(None, description="Exclusive end, YYYY-MM-DD or a timestamp.")
    dimension: str | None = Field(
        None, description="The time field the range filters (default metric_time)."
    )


class GroupByInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str = Field(description="dataset.field, or metric_time for the time axis.")
    grain: Literal[GRAINS] | None = Field(  # type: ignore[valid-type]
        None, description="Time grain of a time field (day, week, month, quarter, year, ...)."
    )
    via: list[str] | None = Field(
        None,
        description="The join path to the field's dataset when several exist: each hop a "
        "relationship name or the dataset it reaches ([] = the direct relationship).",
    )


class OrderByInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str = Field(description="An output column or a metric name.")
    desc: bool = Field(False, description="Sort descending.")


class TaggedRangeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str = Field(description="The tag: each metric gets a <metric>__<tag> column.")
    start: str | None = Field(None, description="Inclusive start (empty: open).")
    end: str | None = Field(None, description="Exclusive end (empty: open).")


class QueryInput(BaseModel):
    """A metric query: the same JSON as Engine.execute, REST /v1/query and the CLI's -q."""

    model_config = ConfigDict(extra="forbid")
    metrics: list[str] = Field(
        default_factory=list,
        description="Metric names to compute (list_metrics gives them); empty with group_by "
        "answers the distinct values of the group-by fields.",
    )
    group_by: list[str | GroupByInput] | None = Field(
        None,
        description="Fields to group by: 'orders.channel', 'metric_time:month', or {field, grain}.",
    )
    where_sql: str | None = Field(
        None, description="Row filter on fields, SQL: \"orders.status = 'completed'\"."
    )
    time_range: TimeRangeInput | None = Field(
        None, description="Time window of the query on metric_time (or `dimension`)."
    )
    order_by: list[str | OrderByInput] | None = Field(
        None, description="Sort keys: 'revenue', '-revenue' (descending) or {key, desc}."
    )
    limit: int | None = Field(None, ge=0, description="Keep at most this many rows.")
    params: dict[str, Any] | None = Field(
        None,
        description="D-PARAM bindings {name: value or [values]}; describe_metric gives each "
        "metric's param_schema.",
    )
    time_ranges: list[TaggedRangeInput] | None = Field(
        None, description="Tagged time ranges: one column per metric and tag."
    )
    context_filter: str | None = Field(
        None,
        description="D-LOD context filter, SQL: feeds every fixed rollup and the window "
        "population.",
    )
    densify: Literal["time", "all", "windows", "covered", "none"] | bool | None = Field(
        None,
        description="Fill empty time buckets from a time spine: time, all (crossed with the "
        "grouped values), windows (window metrics over the filled series), covered (windows plus "
        "the empty buckets a window metric has a value in), none/false.",
    )
    week_start: Literal["monday", "sunday", "saturday"] | None = Field(
        None, description="The first day of a week bucket (over the model's calendar)."
    )
    cache: bool | None = Field(
        None,
        description="false: answer from the warehouse, bypassing the result cache "
        "(default true: a repeated query over unchanged data is answered from memory).",
    )


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """`schema` with every `$ref` to `defs` replaced by the definition (a tool's input
    schema is read one property at a time, without the model's `$defs`)."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline(defs[ref.rsplit("/", 1)[1]], defs)
        return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]
    return schema


def query_json_schema() -> dict[str, Any]:
    """The query's JSON Schema, self-contained (no `$defs`)."""
    full = QueryInput.model_json_schema()
    return _inline(full, full.get("$defs", {}))


def field_schema(key: str) -> dict[str, Any]:
    """The JSON Schema of one query key (with its description), optional as a tool
    parameter."""
    schema = dict(query_json_schema()["properties"][key])
    schema.pop("default", None)
    return schema


def tool_argument(key: str) -> Any:
    """The annotation of query key `key` as a tool parameter: advertised with the field's
    schema, validated by the engine."""
    schema = field_schema(key)
    return Annotated[Any, WithJsonSchema(schema), Field(description=schema.get("description"))]


def described_argument(schema: dict[str, Any]) -> Any:
    """A tool parameter advertised with `schema` (and its description), validated by the
    engine rather than by the SDK."""
    return Annotated[Any, WithJsonSchema(schema), Field(description=schema.get("description"))]


#: the query as one tool argument, and each query key as its own
QUERY_ARGUMENT = Annotated[
    Any,
    WithJsonSchema(query_json_schema()),
    Field(description="The whole query as one object (instead of its keys as arguments)."),
]
QUERY_ARGUMENTS: dict[str, Any] = {key: tool_argument(key) for key in QUERY_KEYS}
