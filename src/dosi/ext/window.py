"""D-WINDOW: the normalized window IR the planner consumes, plus the payload enumerations.

window-metrics-extension.md: every window metric normalizes to one of four families
(`offset`, `frame`, `rank`, `value`); the `pop` / `rolling` / `cumulative` sugars are desugared
by `window_payload.parse_window` into the same classes, recording the sugar in `sugar`.
The properties (`needs_time_axis`, `partition_global`, `is_running`, `expands_scan`) encode the
query-time restrictions of WM "Restrictions" (CHECKLIST WIN-RES-01 … 05, WIN-FRM-21).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, NamedTuple

Grain = Literal["day", "week", "month", "quarter", "year"]
Calculation = Literal["value", "delta", "percent_change", "ratio"]
Direction = Literal["back", "forward"]

GRAINS: tuple[str, ...] = ("day", "week", "month", "quarter", "year")
RESET_GRAINS: tuple[str, ...] = ("week", "month", "quarter", "year")
CALCULATIONS: tuple[str, ...] = ("value", "delta", "percent_change", "ratio")
DIRECTIONS: tuple[str, ...] = ("back", "forward")
SUGARS: tuple[str, ...] = ("pop", "rolling", "cumulative")
FAMILIES: tuple[str, ...] = ("offset", "frame", "rank", "value")

FRAME_W1: tuple[str, ...] = ("sum", "avg", "min", "max", "count")
FRAME_W2: tuple[str, ...] = ("stddev_pop", "stddev_samp", "var_pop", "var_samp")
FRAME_W3: tuple[str, ...] = ("covar_pop", "covar_samp", "corr")
FRAME_FUNCTIONS: tuple[str, ...] = FRAME_W1 + FRAME_W2 + FRAME_W3
TWO_ARG_FUNCTIONS: frozenset[str] = frozenset(FRAME_W3)
RANK_FUNCTIONS: tuple[str, ...] = (
    "row_number",
    "rank",
    "dense_rank",
    "ntile",
    "percent_rank",
    "cume_dist",
)
VALUE_FUNCTIONS: tuple[str, ...] = ("first_value", "last_value", "nth_value")

ORDER_BY: tuple[str, ...] = ("time", "value")
ORDER_DIRECTIONS: tuple[str, ...] = ("asc", "desc")
NULLS: tuple[str, ...] = ("first", "last")
PARTITION_MODES: tuple[str, ...] = (
    "query_dimensions",
    "query_dimensions_except",
    "time_bucket",
    "none",
)
UNITS: tuple[str, ...] = ("rows", "range")

OFFSET_KEYS: tuple[str, ...] = ("count", "granularity", "direction")
FRAME_KEYS: tuple[str, ...] = (
    "function",
    "preceding",
    "reset",
    "require_full_window",
    "order",
    "partition",
    "units",
    "second",
    "scope",
)
RANK_KEYS: tuple[str, ...] = ("function", "buckets", "order", "partition")
VALUE_KEYS: tuple[str, ...] = ("function", "n", "order", "partition")
ORDER_KEYS: tuple[str, ...] = ("by", "direction", "nulls")
PARTITION_KEYS: tuple[str, ...] = ("mode", "exclude")


# --------------------------------------------------------------------------------------------
# IR


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


FRAME_DEFAULT_ORDER = OrderSpec("time", "asc")
FRAME_DEFAULT_PARTITION = PartitionSpec("query_dimensions")
RANK_DEFAULT_ORDER = OrderSpec("value", "desc")
RANK_DEFAULT_PARTITION = PartitionSpec("none")
VALUE_DEFAULT_ORDER = OrderSpec("time", "asc")
VALUE_DEFAULT_PARTITION = PartitionSpec("query_dimensions")


class Shift(NamedTuple):
    """An offset's calendar shift (WM "General form — offset"): what the planner aligns the
    grain to and widens the scan by."""

    count: int
    granularity: Grain
    direction: Direction


class _WindowProps:
    """Planner-facing properties shared by the four families (WM "Restrictions"). The planner
    and the catalog read these, never the family's type (issue 10: no isinstance chains)."""

    family: ClassVar[str] = ""

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
    def expands_scan(self) -> bool:
        return False

    # -- uniform facts the planner reads of every family (no per-family probing) -----------
    @property
    def window_function(self) -> str | None:
        """The SQL window function it needs (None: offsets are self-joins)."""
        return None

    @property
    def partition_spec(self) -> PartitionSpec | None:
        """Its declared partition (None: offsets partition by the non-time dims)."""
        return None

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
    def reset_grain(self) -> Grain | None:
        """The grain a frame's accumulation restarts at (WIN-FRM-17); None: never resets."""
        return None

    @property
    def masked_outside_range(self) -> bool:
        """Rows loaded only for other metrics' lookback / lookahead enter it as NULL: true of
        time-ordered frames, whose value reads the neighbouring buckets."""
        return False

    @property
    def listed_function(self) -> str:  # pragma: no cover - overridden
        """What the catalog lists as its function: an offset's calculation, else the SQL
        window function."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)  # type: ignore[call-overload]
        out["family"] = self.family
        return out


@dataclass(frozen=True)
class OffsetWindow(_WindowProps):
    """Calendar-shifted comparison (WM "General form — offset"; `pop` desugars here)."""

    count: int
    granularity: Grain
    direction: Direction = "back"
    calculation: Calculation = "percent_change"
    sugar: str | None = None
    family: ClassVar[str] = "offset"

    @property
    def ordered_by_time(self) -> bool:
        return True

    @property
    def needs_time_axis(self) -> bool:
        """Offsets always need the time axis (WIN-OFF-12)."""
        return True

    @property
    def expands_scan(self) -> bool:
        """Offset lookback / lookahead widens the input scan (WIN-QRY-04)."""
        return True

    @property
    def shift(self) -> Shift | None:
        return Shift(self.count, self.granularity, self.direction)

    @property
    def listed_function(self) -> str:
        return self.calculation

    def describe(self) -> str:
        return f"offset {self.count} {self.granularity} {self.direction} {self.calculation}"


@dataclass(frozen=True)
class FrameWindow(_WindowProps):
    """Ordered re-aggregation (WM "General form — frame"; `rolling` / `cumulative` desugar here).

    `preceding is None` means UNBOUNDED PRECEDING. With `scope == "partition"` (1.9) the frame is
    the whole partition: `preceding`, `reset`, `units` and `order` do not apply.
    """

    function: str
    preceding: int | None
    reset: Grain | None = None
    require_full_window: bool = False
    order: OrderSpec = FRAME_DEFAULT_ORDER
    partition: PartitionSpec = FRAME_DEFAULT_PARTITION
    units: Literal["rows", "range"] = "rows"
    second: str | None = None
    scope: Literal["partition"] | None = None
    sugar: str | None = None
    family: ClassVar[str] = "frame"

    @property
    def window_function(self) -> str | None:
        return self.function

    @property
    def partition_spec(self) -> PartitionSpec | None:
        return self.partition

    @property
    def second_metric(self) -> str | None:
        return self.second

    @property
    def ordered_by_time(self) -> bool:
        return self.order.by == "time" and self.scope is None

    @property
    def wants_total_order(self) -> bool:
        """A ROWS frame over several rows per bucket would read the warehouse's peer order."""
        return self.scope is None and self.units == "rows"

    @property
    def time_ordered(self) -> bool:
        return self.scope is None and self.order.by == "time"

    @property
    def needs_time_axis(self) -> bool:
        """Time-ordered, reset, or partitioned by time bucket (WIN-FRM-21)."""
        return self.time_ordered or self.reset is not None or self.partition.mode == "time_bucket"

    @property
    def partition_global(self) -> bool:
        """Value-ordered frames (WIN-RES-05) and whole-partition `scope` frames (1.9)."""
        return self.scope is not None or self.order.by == "value"

    @property
    def is_running(self) -> bool:
        """Time-ordered, unbounded, never reset (WIN-RES-04)."""
        return self.time_ordered and self.preceding is None and self.reset is None

    @property
    def expands_scan(self) -> bool:
        """A reset aligns the scan to the reset boundary (WIN-FRM-17)."""
        return self.reset is not None

    @property
    def reset_grain(self) -> Grain | None:
        return self.reset

    @property
    def masked_outside_range(self) -> bool:
        return self.time_ordered

    @property
    def listed_function(self) -> str:
        return self.function

    def describe(self) -> str:
        if self.scope == "partition":
            return f"frame {self.function} over the whole partition"
        start = "unbounded" if self.preceding is None else self.preceding
        text = (
            f"frame {self.function} {self.units} {start} preceding "
            f"order={self.order.by} {self.order.direction}"
        )
        if self.reset:
            text += f" reset={self.reset}"
        if self.require_full_window:
            text += " full-window"
        return text


class _OrderedFamily(_WindowProps):
    """What the rank and value families share: partition-global (WIN-RES-05), and needing the
    time axis only when time-ordered or partitioned by time bucket (WIN-RNK-08, WIN-VAL-07)."""

    function: str
    order: OrderSpec
    partition: PartitionSpec

    @property
    def needs_time_axis(self) -> bool:
        return self.order.by == "time" or self.partition.mode == "time_bucket"

    @property
    def partition_global(self) -> bool:
        return True

    @property
    def window_function(self) -> str | None:
        return self.function

    @property
    def partition_spec(self) -> PartitionSpec | None:
        return self.partition

    @property
    def ordered_by_time(self) -> bool:
        return self.order.by == "time"

    @property
    def argument(self) -> int | None:  # pragma: no cover - overridden
        return None

    @property
    def listed_function(self) -> str:
        return self.function

    def describe(self) -> str:
        arg = f"({self.argument})" if self.argument is not None else ""
        return f"{self.family} {self.function}{arg} order={self.order.by} {self.order.direction}"


@dataclass(frozen=True)
class RankWindow(_OrderedFamily):
    """SQL:2003 ranking over the metric value (WM "General form — rank", 1.3)."""

    function: str
    buckets: int | None = None
    order: OrderSpec = RANK_DEFAULT_ORDER
    partition: PartitionSpec = RANK_DEFAULT_PARTITION
    family: ClassVar[str] = "rank"

    @property
    def argument(self) -> int | None:
        return self.buckets

    @property
    def wants_total_order(self) -> bool:
        """Positional ranks need a total order; peer-aware ranks keep their peers."""
        return self.function in ("row_number", "ntile")


@dataclass(frozen=True)
class ValueWindow(_OrderedFamily):
    """first/last/nth navigation (WM "General form — value", 1.3)."""

    function: str
    n: int | None = None
    order: OrderSpec = VALUE_DEFAULT_ORDER
    partition: PartitionSpec = VALUE_DEFAULT_PARTITION
    family: ClassVar[str] = "value"

    @property
    def wants_total_order(self) -> bool:
        return True

    @property
    def argument(self) -> int | None:
        return self.n


WindowSpec = OffsetWindow | FrameWindow | RankWindow | ValueWindow
