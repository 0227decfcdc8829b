"""Database column types -> Ossie datatypes, and which columns look like measures or keys.

The type table covers the spellings of DuckDB, PostgreSQL, MySQL/MariaDB, SQLite, ClickHouse
and Spark (`Nullable(...)` / `LowCardinality(...)` wrappers and `(p, s)` parameters removed).
The measure and key guesses are name heuristics for a first draft; the generated YAML says
so in a comment, and every guess is one line to change.
"""

from __future__ import annotations

import re

_WRAPPERS = re.compile(r"^(nullable|lowcardinality)\((.*)\)$", re.I)
_PARAMS = re.compile(r"\(.*\)")

_INTEGER = {
    "int", "integer", "bigint", "smallint", "tinyint", "mediumint", "hugeint", "uhugeint",
    "int1", "int2", "int4", "int8", "int16", "int32", "int64", "int128", "int256",
    "uint8", "uint16", "uint32", "uint64", "uint128", "uint256", "utinyint", "usmallint",
    "uinteger", "ubigint", "serial", "bigserial", "smallserial", "long", "short", "byte",
    "signed", "unsigned", "year", "bigint unsigned", "int unsigned", "integer unsigned",
    "smallint unsigned", "tinyint unsigned", "mediumint unsigned",
}  # fmt: skip
_DECIMAL = {"decimal", "numeric", "number", "money", "dec", "fixed", "decimal32", "decimal64",
            "decimal128", "decimal256", "bignumeric"}  # fmt: skip
_FLOAT = {"float", "double", "real", "float4", "float8", "double precision", "float32",
          "float64", "binary_float", "binary_double"}  # fmt: skip
_BOOLEAN = {"bool", "boolean", "bit"}
_DATE = {"date", "date32"}
_TIME = {"time", "time without time zone", "timetz", "time with time zone"}
_DATETIME = {"timestamp", "datetime", "timestamp without time zone", "datetime64",
             "timestamp_ntz", "timestamp_ns", "timestamp_ms", "timestamp_s", "smalldatetime",
             "datetime2"}  # fmt: skip
_DATETIME_TZ = {"timestamptz", "timestamp with time zone", "timestamp_ltz",
                "timestamp with local time zone", "datetimeoffset"}  # fmt: skip
_STRING = {"varchar", "char", "text", "string", "character varying", "character", "nvarchar",
           "nchar", "bpchar", "uuid", "enum", "fixedstring", "tinytext", "mediumtext",
           "longtext", "name", "citext", "clob", "set", "ipv4", "ipv6", "inet"}  # fmt: skip

_COMPOSITE = {"array", "list", "struct", "map", "tuple", "union", "json", "jsonb", "variant",
              "object", "blob", "bytea", "binary", "varbinary", "bytes", "geometry",
              "geography", "nested", "row", "hstore", "interval"}  # fmt: skip

NUMERIC = frozenset({"Integer", "Decimal", "Float"})
TEMPORAL = frozenset({"Date", "DateTime", "DateTimeTz"})


def base_type(raw: str) -> str:
    """`Nullable(Decimal(10, 2))` -> `decimal`; `character varying(20)` -> `character varying`."""
    text = raw.strip()
    while True:
        m = _WRAPPERS.match(text)
        if m is None:
            break
        text = m.group(2).strip()
    if text.lower().startswith("enum"):
        return "enum"
    return " ".join(_PARAMS.sub("", text).lower().split())


def ossie_datatype(raw: str) -> str | None:
    """The Ossie DataType for a database type name; None when the type says nothing (SQLite's
    untyped columns); `Opaque` for types outside the portable vocabulary (arrays, JSON, ...)."""
    if not raw.strip():
        return None
    t = base_type(raw)
    if "[" in t or t.split(" ")[0].split("<")[0] in _COMPOSITE:
        return "Opaque"
    if t in _INTEGER:
        return "Integer"
    if t in _DECIMAL:
        return "Decimal"
    if t in _FLOAT:
        return "Float"
    if t in _BOOLEAN:
        return "Boolean"
    if t in _DATE:
        return "Date"
    if t in _TIME:
        return "Time"
    if t in _DATETIME_TZ:
        return "DateTimeTz"
    if t in _DATETIME:
        return "DateTime"
    if t in _STRING:
        return "String"
    return _affinity(t)


def _affinity(t: str) -> str:
    """SQLite's type affinity rules, for declared types outside the table (`VARCHAR2`,
    `UNSIGNED BIG INT`, ...): the same substrings SQLite itself looks for."""
    if "int" in t:
        return "Integer"
    if any(s in t for s in ("char", "clob", "text")):
        return "String"
    if any(s in t for s in ("real", "floa", "doub")):
        return "Float"
    if "dec" in t or "num" in t:
        return "Decimal"
    if "timestamp" in t:
        return "DateTimeTz" if "zone" in t or "tz" in t else "DateTime"
    if "date" in t:
        return "DateTime" if "time" in t else "Date"
    return "Opaque"


_KEY_LIKE = re.compile(
    r"(^id$|_id$|^id_|_key$|^key$|_code$|^code$|_no$|_nr$|_num$|_number$|_pk$|_fk$|_sk$|"
    r"zip|postal|phone|^year$|^month$|^day$|_year$|_month$|_day$|^version$|_version$|"
    r"_index$|^index$|^rank$|_rank$|_seq$|^seq|position$|ordinal|^line$|line_no|"
    r"^lat|^lon|latitude|longitude)"
)
_MEASURE_WORDS = re.compile(
    r"(amount|amt|qty|quantity|count|cnt|total|sum|price|cost|revenue|sales|value|balance|"
    r"units|fee|tax|discount|duration|seconds|minutes|hours|size|weight|volume|score|points|"
    r"spend|profit|margin|income|expense|paid|payment|charge|salary|budget|clicks|views|"
    r"impressions|visits|sessions|bytes|distance|length|area|rate)"
)


def key_like(column: str) -> bool:
    """Identifiers, codes and calendar parts: grouped or joined on, never summed."""
    return _KEY_LIKE.search(column.lower()) is not None


def measure_like(column: str, datatype: str | None) -> bool:
    """A numeric column worth a sum metric: decimals and floats that are not key-like, and
    integers whose name says they count or measure something."""
    if datatype not in NUMERIC or key_like(column):
        return False
    if datatype in ("Decimal", "Float"):
        return True
    return _MEASURE_WORDS.search(column.lower()) is not None
