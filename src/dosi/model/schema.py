"""Pydantic mirror of ossie/osi-schema.json (0.2.0.dev0).

`extra="forbid"` wherever the JSON Schema says `additionalProperties: false`; AIContext objects
allow extra keys, as the schema does. One deliberate leniency: an expression's `dialect` may be
a name outside the schema's enumeration (public converters write `DUCKDB`); the loader warns
about it (`unknown_expression_dialect`) and the compiler uses it only where it is readable.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

OsiDialect = Literal["ANSI_SQL", "SNOWFLAKE", "MDX", "TABLEAU", "DATABRICKS", "MAQL", "BIGQUERY"]
#: The schema's dialect enumeration, in its order.
OSI_DIALECTS: tuple[str, ...] = get_args(OsiDialect)
#: A dialect name outside the enumeration: a word such as DUCKDB or POSTGRESQL.
_DIALECT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
DataType = Literal[
    "String",
    "Integer",
    "Decimal",
    "Float",
    "Boolean",
    "Date",
    "Time",
    "DateTime",
    "DateTimeTz",
    "Opaque",
]
TEMPORAL_DATATYPES = frozenset({"Date", "Time", "DateTime", "DateTimeTz"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class AIContextObject(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    instructions: str | None = None
    synonyms: list[str] | None = None
    examples: list[str] | None = None


AIContext = str | AIContextObject


class CustomExtension(_Strict):
    vendor_name: str
    data: str


class DialectExpression(_Strict):
    dialect: str
    expression: str

    @field_validator("dialect", mode="before")
    @classmethod
    def _dialect_name(cls, v: Any) -> Any:
        """A schema dialect, or another word-like name (kept, warned about by the loader);
        anything else (a number, an empty or free-text name) is still invalid."""
        if isinstance(v, str) and (v in OSI_DIALECTS or _DIALECT_NAME.fullmatch(v)):
            return v
        raise ValueError(
            "Input should be one of " + ", ".join(OSI_DIALECTS) + " (or a dialect name such "
            "as DUCKDB: letters, digits and underscores)"
        )


class Expression(_Strict):
    dialects: list[DialectExpression] = Field(min_length=1)


class Dimension(_Strict):
    is_time: bool | None = None


class FieldSpec(_Strict):
    name: str
    expression: Expression
    dimension: Dimension | None = None
    label: str | None = None
    description: str | None = None
    datatype: DataType | None = None
    ai_context: AIContext | None = None
    custom_extensions: list[CustomExtension] | None = None


class DatasetSpec(_Strict):
    name: str
    source: str
    primary_key: list[str] | None = None
    unique_keys: list[list[str]] | None = None
    description: str | None = None
    ai_context: AIContext | None = None
    fields: list[FieldSpec] | None = None
    custom_extensions: list[CustomExtension] | None = None


class RelationshipSpec(_Strict):
    name: str
    from_: str = Field(alias="from")
    to: str
    from_columns: list[str] = Field(min_length=1)
    to_columns: list[str] = Field(min_length=1)
    ai_context: AIContext | None = None
    custom_extensions: list[CustomExtension] | None = None


class MetricSpec(_Strict):
    name: str
    expression: Expression
    description: str | None = None
    datatype: DataType | None = None
    ai_context: AIContext | None = None
    custom_extensions: list[CustomExtension] | None = None


class SemanticModelSpec(_Strict):
    name: str
    description: str | None = None
    ai_context: AIContext | None = None
    datasets: list[DatasetSpec] = Field(min_length=1)
    relationships: list[RelationshipSpec] | None = None
    metrics: list[MetricSpec] | None = None
    custom_extensions: list[CustomExtension] | None = None


class DocumentSpec(_Strict):
    version: Literal["0.2.0.dev0"]
    semantic_model: list[SemanticModelSpec]

    @field_validator("semantic_model")
    @classmethod
    def _at_least_one(cls, v: list[SemanticModelSpec]) -> list[SemanticModelSpec]:
        if not v:
            raise ValueError("semantic_model must hold at least one semantic model")
        return v


def raw_extensions(exts: list[CustomExtension] | None) -> list[dict[str, Any]] | None:
    """Extensions as the plain dicts the DATUS reader takes."""
    if exts is None:
        return None
    return [{"vendor_name": e.vendor_name, "data": e.data} for e in exts]
