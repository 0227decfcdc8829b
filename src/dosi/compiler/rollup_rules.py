"""The parts of a rollup file beyond one rollup's columns (issue 28 items 1 and 3): where the
built rollups are stored and each rollup's refresh rule. Checked here so every shape error is
an `invalid_rollup` naming the fix (docs/rollups-and-cache.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dosi.errors import OsiError, bounded
from dosi.ir.rollup import RefreshRule

REFRESH_KEYS = ("key", "check_every", "every", "partitions")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)?\s*$")
_UNIT = {None: 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


class RollupError(OsiError, ValueError):
    """A rollup declaration the model cannot back (code `invalid_rollup`)."""

    kind = "usage_error"


@dataclass(frozen=True)
class RollupStorage:
    """`path` an embedded DuckDB store (None: the default beside the rollup file), or
    `schema` a schema of the warehouse itself holding the rollup tables."""

    path: str | None = None
    schema: str | None = None


def parse_storage(value: Any) -> RollupStorage:
    if value is None:
        return RollupStorage()
    if isinstance(value, str) and value.strip():
        return RollupStorage(path=value)
    if isinstance(value, dict):
        extra = set(value) - {"schema"}
        schema = value.get("schema")
        if not extra and isinstance(schema, str) and schema.isidentifier():
            return RollupStorage(schema=schema)
    raise bad(
        f"`storage` is a DuckDB file path or {{schema: NAME}} (a warehouse schema), got "
        f"{bounded(value, 60)}"
    )


def parse_refresh(value: Any, default: RefreshRule, where: str) -> RefreshRule:
    """A `refresh` mapping over the file-level default: `key` (one SELECT), `check_every`
    and `every` (seconds, or `30s` / `15m` / `1h` / `1d`), `partitions` (a count >= 1)."""
    if value is None:
        return default
    if not isinstance(value, dict):
        raise bad(f"{where}: `refresh` is a mapping {{every, partitions, key, check_every}}")
    for k in value:
        if k not in REFRESH_KEYS:
            raise bad(f"{where}: unknown refresh key `{bounded(k, 40)}`", list(REFRESH_KEYS))
    key = value.get("key", default.key)
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise bad(f"{where}: refresh `key` is one SELECT statement")
    parts = value.get("partitions", default.partitions)
    if parts is not None and (isinstance(parts, bool) or not isinstance(parts, int) or parts < 1):
        raise bad(f"{where}: refresh `partitions` is a whole number >= 1")
    check = value.get("check_every")
    every = value.get("every")
    return RefreshRule(
        key=key,
        check_every=default.check_every if check is None else seconds(check, where, True),
        every=default.every if every is None else seconds(every, where, False),
        partitions=parts,
    )


def seconds(value: Any, where: str, zero: bool) -> float:
    """A duration: a number of seconds or a number with a unit (s, m, h, d)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        out = float(value)
    else:
        m = _DURATION.match(value) if isinstance(value, str) else None
        if m is None:
            raise bad(f"{where}: a duration is seconds or like 30s, 15m, 1h, 1d; got "
                      f"{bounded(value, 30)}")  # fmt: skip
        out = float(m.group(1)) * _UNIT[m.group(2)]
    if out < 0 or (out == 0 and not zero):
        raise bad(f"{where}: a duration must be {'>= 0' if zero else 'positive'}")
    return out


def bad(message: str, candidates: list[str] | None = None) -> RollupError:
    return RollupError(
        "invalid_rollup",
        message,
        candidates=candidates or [],
        hint="see docs/rollups-and-cache.md for the rollup file's shape",
    )
