"""D-WINDOW: what every window family's spec shares, the base the planner and catalog read.

window-metrics-extension.md: every window metric normalizes to one spec of one family (the
table in `dosi.ext.window.families`); the `pop` / `rolling` / `cumulative` sugars are
desugared by their parsers into the same classes, recording the sugar in `sugar`. The
properties (`needs_time_axis`, `partition_global`, `is_running`, `expands_scan`) encode the
query-time restrictions of WM "Restrictions" (CHECKLIST WIN-RES-01 … 05, WIN-FRM-21).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, NamedTuple

from dosi.ext.grains import CALENDAR_GRAINS, DAY_GRAINS, FISCAL_GRAINS, SUB_DAY_GRAINS
from dosi.ext.window.period_value import PeriodValue
from dosi.ext.window.span import Span

Grain = str  # a grain of the vocabulary (dosi.ext.grains)
Direction = Literal["back", "forward"]

#: Offset units: the 1.x enum, then (issue 22) the sub-day grains, the fiscal periods and the
#: retail year (a retail month or quarter has no fixed place a count of them moves to)
GRAINS: tuple[str, ...] = (*DAY_GRAINS, *SUB_DAY_GRAINS, *FISCAL_GRAINS, "retail_year")
#: Resets finer than a day (1.15): an hour-to-date on a timestamp axis queried by minute or hour
SUB_DAY_RESETS: tuple[str, ...] = ("minute", "hour")
#: Reset grains: the 1.x ones (WIN-FRM-04: never day), then (issue 22) the calendar grains and
#: (1.15) the sub-day ones
RESET_GRAINS: tuple[str, ...] = (
    "week",
    "month",
    "quarter",
    "year",
    *CALENDAR_GRAINS,
    *SUB_DAY_RESETS,
)

ORDER_BY: tuple[str, ...] = ("time", "value")
ORDER_DIRECTIONS: tuple[str, ...] = ("asc", "desc")
NULLS: tuple[str, ...] = ("first", "last")
PARTITION_MODES: tuple[str, ...] = (
    "query_dimensions",
    "query_dimensions_except",
    "time_bucket",
    "none",
)
ORDER_KEYS: tuple[str, ...] = ("by", "direction", "nulls")
PARTITION_KEYS: tuple[str, ...] = ("mode", "exclude")


@dataclass(frozen=True)
class OrderSpec:
    """Shared `order` modifier (WM "Shared modifiers"; `nulls` is 1.9)."""

    by: Literal["time", "value"]
    direction: Literal["asc", "desc"]
    nulls: Literal["first", "last"] | None = None


@dataclass(frozen=True)
class PartitionSpec:
    """Shared `partition` modifier (WM "Shared modifiers")."""

    mode: Literal["query_dimensions", "query_dimensions_except", "time_bucket", "none"]
    exclude: tuple[str, ...] = ()


class Shift(NamedTuple):
    """An offset's calendar shift (WM "General form — offset"): what the planner aligns the
    grain to and widens the scan by."""

    count: int
    granularity: Grain
    direction: Direction


class WindowSpec:
    """A window metric's normalized spec: the base of every family's frozen dataclass.

    The planner and the catalog read these properties, never the family's type (issue 10: no
    isinstance chains); only the family's SQL renderer reads its own fields."""

    family: ClassVar[str] = ""
    #: the partition its parser uses when the payload declares none (identity-compared)
    default_partition: ClassVar[PartitionSpec | None] = None

    @property
    def needs_time_axis(self) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def partition_global(self) -> bool:
        return False

    @property
    def is_running(self) -> bool:
        return False

    @property
    def reads_history(self) -> bool:
        """Reads every row before a time_range start (a frame's 1.15 `history: "all"`)."""
        return False

    @property
    def expands_scan(self) -> bool:
        return False

    # -- uniform facts the planner reads of every family (no per-family probing) -----------
    @property
    def window_function(self) -> str | None:
        """The SQL window function it needs (None: offsets are self-joins)."""
        return None

    @property
    def window_features(self) -> tuple[str, ...]:
        """SQL window clauses beyond the function that a dialect may lack (1.14: `groups`,
        `exclude`, `ignore_nulls`), gated like a function (`dialect_unsupported_window_function`)."""
        return ()

    @property
    def reads_ahead(self) -> bool:
        """A time-ordered frame that reads buckets after the current one (`frame.following`,
        1.14): under a time_range end the scan's end widens, the output is trimmed back."""
        return False

    @property
    def bucket_lookahead(self) -> int | None:
        """The buckets after the current one such a frame reads (None: unbounded)."""
        return None

    @property
    def partition_spec(self) -> PartitionSpec | None:
        """Its declared partition (None: offsets partition by the non-time dims)."""
        return None

    @property
    def partition_is_default(self) -> bool:
        """No `partition` was declared: the family's default applies (WIN-19-07)."""
        spec = self.partition_spec
        return spec is not None and spec is self.default_partition

    @property
    def second_metric(self) -> str | None:
        """The second series of a two-argument frame (covar / corr)."""
        return None

    @property
    def ordered_by_time(self) -> bool:
        """Rows are ordered (or shifted) along the time axis."""
        return False

    @property
    def wants_total_order(self) -> bool:
        """Its value depends on the order of peers: dims break ties (WIN-RNK-06, WIN-VAL-06)."""
        return False

    @property
    def shift(self) -> Shift | None:
        """The calendar shift of an offset; None for the other families."""
        return None

    @property
    def lookback_span(self) -> Span | None:
        """The calendar interval a frame reads back from each bucket (1.15 `span`); None for
        frames counted in buckets and the other families."""
        return None

    @property
    def reset_grain(self) -> Grain | None:
        """The grain a frame's accumulation restarts at (WIN-FRM-17), or an offset to the
        period start aligns its scan to; None: never resets."""
        return None

    @property
    def period_start(self) -> Grain | None:
        """An offset's `period_start` (1.15): it reads the first bucket of this period; None
        for every other window."""
        return None

    @property
    def reads_time_bucket(self) -> bool:
        """Partitions by the time bucket when the query groups by one, without needing it
        (a share: the whole range is one bucket otherwise)."""
        return False

    @property
    def one_row_per_bucket(self) -> bool:
        """Reads its partition as a series of at most one row per time bucket (a streak):
        the query may group by no dimension outside the partition."""
        return False

    @property
    def masked_outside_range(self) -> bool:
        """Rows loaded only for other metrics' lookback / lookahead enter it as NULL: true of
        time-ordered frames, whose value reads the neighbouring buckets."""
        return False

    @property
    def bucket_lookback(self) -> int | None:
        """The buckets before the current one a time-ordered bounded frame reads: over a
        densified series (one row per calendar bucket) the scan widens by that many grains, so
        a rolling 3-month frame spans three calendar months; None: no such frame."""
        return None

    @property
    def sampled(self) -> PeriodValue | None:
        """A frame's `period_value` (dosi.ext.window.period_value.PeriodValue): the grain it
        accumulates at and the running value a coarser bucket reports; None: the frame
        accumulates the query grain's buckets."""
        return None

    @property
    def listed_function(self) -> str:  # pragma: no cover - overridden
        """What the catalog lists as its function: an offset's calculation, else the SQL
        window function."""
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)  # type: ignore[call-overload]
        out["family"] = self.family
        return out


class SlotOutOfRange(ValueError):
    """A D-PARAM value a window slot's type accepts but the window cannot take (an offset
    past 10,000 years); the message says why, without the metric."""


@dataclass(frozen=True)
class WindowSlot:
    """A D-PARAM slot of the window payload (PARAM-SLOT-01..05, -07): where `{"param": n}` may
    stand, the least value it takes, and the spec with the slot at a bound value.

    The count slots take `int` params with a lower bound (PARAM-SLOT-07). A threshold slot (the
    streak `target`) is a number compared with the series: `types` lists `int` and `float`,
    and `least` is None (a target may be negative)."""

    name: str  # "offset.count", "frame.preceding", ...
    least: int | None
    #: (the payload object holding the slot, its key), or None when this payload has no such
    #: slot
    site: Callable[[dict[str, Any]], tuple[dict[str, Any], str] | None]
    bind: Callable[[WindowSpec, Any], WindowSpec]
    types: tuple[str, ...] = ("int",)


def key_in_object(
    family_key: str, key: str
) -> Callable[[dict[str, Any]], tuple[dict[str, Any], str] | None]:
    """A slot site: `key` inside the payload's `family_key` object, when that is an object."""

    def site(window: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        value = window.get(family_key)
        return (value, key) if isinstance(value, dict) else None

    return site
