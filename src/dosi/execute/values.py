"""The one definition of how a result value looks on each surface (docs/results.md, "Exact
values").

* Python rows (`to_python`): dates and timestamps as ISO strings, as the reference engine
  returns them; a DECIMAL with fraction digits as `decimal.Decimal` holding exactly the
  warehouse's digits (money never loses a cent); a DECIMAL without fraction digits (a HUGEINT
  sum) and every integer as `int`, whatever its size; floats as they are.
* JSON (`json_value`, every JSON surface: CLI, REST, MCP): one rule, chosen once. A value is a
  JSON number when a standard JSON reader (integers exact, fractions read as IEEE doubles, as
  Python's `json` reads them) gives the same value back, otherwise a string of its exact
  digits. So integers of any size are numbers written digit for digit, a decimal whose
  shortest double prints the same value (`1.01`, `2.5`) is a number, and a decimal no double
  holds (`12345678901234567.89`) is the string `"12345678901234567.89"`. NaN and infinities
  are `null`.
* Text (`text_value`, tables and CSV): the exact digits, a DECIMAL at its scale (`2.50`),
  never in exponent form.

dosi.execute.rows applies `to_python` a column at a time.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any


def to_python(value: Any) -> Any:
    """One value as `execute()` rows hold it."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        exponent = value.as_tuple().exponent
        return int(value) if isinstance(exponent, int) and exponent >= 0 else value
    if isinstance(value, dt.time):
        return value.isoformat()
    return value


def json_value(value: Any) -> Any:
    """A scalar in its JSON form (see the module docstring); other values pass through."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return json_decimal(value)
    return value


def json_ready(value: Any) -> Any:
    """`value` (dicts and lists of scalars) with every scalar in its JSON form."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return json_value(value)


def json_decimal(value: decimal.Decimal) -> int | float | str | None:
    """A decimal as a JSON number where a double reads it back exactly, else its digits."""
    if not value.is_finite():
        return None
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent >= 0:
        return int(value)
    as_float = float(value)
    if math.isfinite(as_float) and decimal.Decimal(repr(as_float)) == value:
        return as_float
    return decimal_text(value)


def decimal_text(value: decimal.Decimal) -> str:
    """The exact digits of a decimal, in positional notation at its own scale."""
    return format(value, "f")


def text_value(value: Any) -> str | None:
    """The exact text of a number (tables and CSV); None for anything else."""
    if isinstance(value, decimal.Decimal):
        return decimal_text(value) if value.is_finite() else str(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return None


__all__ = [
    "decimal_text",
    "json_decimal",
    "json_ready",
    "json_value",
    "text_value",
    "to_python",
]
