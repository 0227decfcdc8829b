"""`period_value` on a frame window (issue 22 item 7): which of the finer running values
stands for a coarser bucket.

A running total or a period-to-date value is a state per bucket of its accumulation grain (a
day). Grouped by a coarser grain (a month), each month holds many such states; the key says
which one represents it: the `first`, the `last`, or the `average` of them (MetricFlow calls
this period_agg). Without the key a frame accumulates the query grain's own buckets, and a
reset finer than the query grain stays `window_reset_too_fine` (WIN-QRY-03).

    "period_value": "last"                          # accumulated per day (the default grain)
    "period_value": {"value": "average", "grain": "month"}

On an offset (1.15) the key says how a grain the shift does not land on is answered: the
offset is computed per `grain` bucket (each day reads the day the shift lands on) and a
coarser bucket reports the `sum` of those values (MetricFlow's offset at a coarser grain),
or their first, last or average.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from dosi.ext.grains import FIXED_SECONDS, MONTHS
from dosi.ext.window.reader import WindowReader, present

PICKS: tuple[str, ...] = ("first", "last", "average")
#: An offset's values add up over a coarser bucket (1.15); a running value does not.
OFFSET_PICKS: tuple[str, ...] = (*PICKS, "sum")
#: The grains a frame may accumulate at: a day or finer, and whole months (a coarser query
#: grain must be a union of its buckets, see `nests`; weeks straddle months and years).
PERIOD_GRAINS: tuple[str, ...] = ("second", "minute", "hour", "day", "month", "quarter")
KEYS: tuple[str, ...] = ("value", "grain")
DEFAULT_GRAIN = "day"


@dataclass(frozen=True)
class PeriodValue:
    """Accumulate at `grain`; a coarser bucket reports the `value` of its `grain` states."""

    value: Literal["first", "last", "average", "sum"]  # "sum": offsets (1.15), part roll-ups
    grain: str = DEFAULT_GRAIN

    def describe(self) -> str:
        return f"period_value={self.value} of {self.grain}"


def nests(fine: str, coarse: str) -> bool:
    """Is every `coarse` bucket a union of whole `fine` buckets? Day and finer nest in every
    grain (weeks, months, fiscal and retail periods are whole days); a week nests in weeks
    only; months in quarters and years (fiscal ones included)."""
    if fine == coarse:
        return True
    if fine in FIXED_SECONDS and FIXED_SECONDS[fine] <= FIXED_SECONDS["day"]:
        if coarse in FIXED_SECONDS:
            return FIXED_SECONDS[coarse] % FIXED_SECONDS[fine] == 0
        return True
    if fine in MONTHS and coarse in MONTHS:
        return MONTHS[coarse] % MONTHS[fine] == 0
    return False


def parse_period_value(
    r: WindowReader, key: str, raw: Any, picks: tuple[str, ...] = PICKS
) -> PeriodValue | None:
    """`"last"` (accumulated per day) or `{"value": ..., "grain": ...}`; `picks` are the values
    the window allows (an offset's add `sum`)."""
    r.feature(
        "window.offset.period_value" if picks is OFFSET_PICKS else "window.frame.period_value"
    )
    if isinstance(raw, str):
        pick = r.enum(key, raw, picks, hint='e.g. "period_value": "last" for a month-end value')
        return PeriodValue(pick) if pick is not None else None  # type: ignore[arg-type]
    obj = r.obj(key, raw)
    if obj is None:
        return None
    r.deny_unknown(key, obj, KEYS)
    start = r.errors
    if not present(obj, "value"):
        r.err(f"{key}.value", f"is required: {', '.join(picks)}")
        return None
    pick = r.enum(f"{key}.value", obj["value"], picks)
    grain = DEFAULT_GRAIN
    if present(obj, "grain"):
        grain = r.enum(f"{key}.grain", obj["grain"], PERIOD_GRAINS) or DEFAULT_GRAIN
    if r.errors != start or pick is None:
        return None
    return PeriodValue(pick, grain)  # type: ignore[arg-type]
