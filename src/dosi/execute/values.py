"""The JSON-friendly form of one result value, as the reference engine returns rows.

Dates and timestamps become ISO strings, decimals an int (no fraction digits) or a float.
The one definition of the conversion: dosi.execute.rows applies it a column at a time.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any


def to_python(value: Any) -> Any:
    """One value as `execute()` rows hold it."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        exponent = value.as_tuple().exponent
        return int(value) if isinstance(exponent, int) and exponent >= 0 else float(value)
    if isinstance(value, dt.time):
        return value.isoformat()
    return value


__all__ = ["to_python"]
