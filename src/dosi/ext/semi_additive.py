"""`semi_additive` on a metric (the DATUS roadmap key, 1.11; ignore impact silent): the metric
adds up across every dimension but one time dimension, along which a period is represented by
one snapshot (account balances, inventory, headcount).

Payload: `{"dimension": "<field or dataset.field>", "snapshot": "last" | "first" | "min" |
"max", "window_groupings": ["<field>", ...]}`. `dimension` is required; `snapshot` defaults to
`last`; `window_groupings` picks the snapshot per value of those fields (each account's last
snapshot, then summed across accounts). `last` / `first` are the latest / earliest snapshot
time of the period; `min` / `max` the snapshot time whose value is the lowest / highest. Unknown
keys inside the object are rejected: the key is silent-impact, so a newer in-family addition
must fail closed rather than be dropped. Field names are resolved by the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from dosi.errors import DiagnosticSink, closest
from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as _show

Snapshot = Literal["last", "first", "min", "max"]
SNAPSHOTS: tuple[str, ...] = ("last", "first", "min", "max")
KEYS: tuple[str, ...] = ("dimension", "snapshot", "window_groupings")
INVALID = "invalid_datus_extension"
HINT = (
    'e.g. "semi_additive": {"dimension": "balances.snapshot_date", "snapshot": "last", '
    '"window_groupings": ["account_id"]}'
)


@dataclass(frozen=True)
class SemiAdditiveSpec:
    """The declaration as written: names are resolved against the model by the compiler."""

    dimension: str
    snapshot: Snapshot = "last"
    window_groupings: tuple[str, ...] = ()

    @property
    def by_value(self) -> bool:
        """`min` / `max` pick the snapshot by its value, `last` / `first` by its time."""
        return self.snapshot in ("min", "max")


def _name(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != "" and value == value.strip()


def read_semi_additive(
    value: Any, path: str | None, sink: DiagnosticSink
) -> SemiAdditiveSpec | None:
    """The validated declaration, or None after its errors are reported."""

    def bad(key: str, message: str, cands: list[str] | None = None) -> None:
        sink.error(
            INVALID, f"`{key}` {message}", path=path, hint=HINT, candidates=tuple(cands or ())
        )

    if not isinstance(value, dict):
        bad("semi_additive", f"must be an object (got {json_type(value)} {_show(value)})")
        return None
    ok = True
    for k in value:
        if k not in KEYS:
            bad(f"semi_additive.{k}", "is not a key of `semi_additive`", closest(k, KEYS))
            ok = False
    dim = value.get("dimension")
    if dim is None:
        bad("semi_additive.dimension", "is required: the time field the metric does not add along")
        ok = False
    elif not _name(dim):
        bad(
            "semi_additive.dimension",
            f"must be a field name string (got {json_type(dim)} {_show(dim)})",
        )
        ok = False
    snap = value.get("snapshot", "last")
    if snap not in SNAPSHOTS:
        cands = closest(snap, SNAPSHOTS) if isinstance(snap, str) else []
        bad(
            "semi_additive.snapshot",
            f"must be one of {', '.join(SNAPSHOTS)} (got {json_type(snap)} {_show(snap)})",
            cands,
        )
        ok = False
    groups = value.get("window_groupings", [])
    if not isinstance(groups, list) or not all(_name(g) for g in groups):
        bad(
            "semi_additive.window_groupings",
            f"must be an array of field names (got {json_type(groups)} {_show(groups)})",
        )
        ok = False
    elif len(set(groups)) != len(groups):
        bad("semi_additive.window_groupings", "names a field twice")
        ok = False
    if not ok:
        return None
    return SemiAdditiveSpec(dim, snap, tuple(groups))
