"""D-WINDOW window metrics (window-metrics-extension.md): the `window` payload read into one
family's spec. Layer: extension reading (`dosi.ext`); imports `dosi.errors` and the envelope
helpers of `dosi.ext` only.

One module per family and per sugar, one table (`families`) that lists each once:

* `spec`       – `WindowSpec`, the base every family's spec subclasses (the facts the planner
  and catalog read), the shared `order` / `partition` modifiers, D-PARAM `WindowSlot`;
* `offset`, `frame`, `rank`, `value`, `share`, `streak` – one family each: spec class,
  payload parser, slots (share and streak also parse their reserved `type` spelling);
  `ordered` what rank and value share;
* `pop`, `rolling`, `cumulative` – one sugar each, desugared to a family's spec;
* `functions`  – the function registry (W1 / W2 / W3, rank, value);
* `modifiers`, `reader` – the shared modifiers' parsers and the diagnostics helpers;
* `families`   – THE table: family -> spec class, parser, slots; sugar -> its family;
* `payload`    – `parse_window`, the top-level grammar derived from the table.

The SQL renderer of each family is in `dosi.sql.window.<family>`, registered in
`dosi.sql.window.families` by the family names of this table and checked complete against it
at import (see `families` for the checklist to add a family).
"""

from dosi.ext.window.families import (
    FAMILIES,
    SLOT_BY_NAME,
    SUGARS,
    WINDOW_FAMILIES,
    WINDOW_SLOTS,
    WINDOW_SUGARS,
    WindowFamily,
    WindowSugar,
)
from dosi.ext.window.frame import FRAME_DEFAULT_ORDER, FRAME_DEFAULT_PARTITION, FrameWindow
from dosi.ext.window.offset import MAX_OFFSET_UNITS, OffsetWindow
from dosi.ext.window.payload import WindowParse, parse_window
from dosi.ext.window.rank import RANK_DEFAULT_ORDER, RANK_DEFAULT_PARTITION, RankWindow
from dosi.ext.window.share import SHARE_DEFAULT_PARTITION, ShareWindow
from dosi.ext.window.spec import (
    GRAINS,
    Grain,
    OrderSpec,
    PartitionSpec,
    Shift,
    SlotOutOfRange,
    WindowSlot,
    WindowSpec,
)
from dosi.ext.window.streak import STREAK_DEFAULT_PARTITION, StreakWindow
from dosi.ext.window.value import VALUE_DEFAULT_ORDER, VALUE_DEFAULT_PARTITION, ValueWindow

__all__ = [
    "FAMILIES",
    "FRAME_DEFAULT_ORDER",
    "FRAME_DEFAULT_PARTITION",
    "GRAINS",
    "MAX_OFFSET_UNITS",
    "RANK_DEFAULT_ORDER",
    "RANK_DEFAULT_PARTITION",
    "SHARE_DEFAULT_PARTITION",
    "SLOT_BY_NAME",
    "STREAK_DEFAULT_PARTITION",
    "SUGARS",
    "VALUE_DEFAULT_ORDER",
    "VALUE_DEFAULT_PARTITION",
    "WINDOW_FAMILIES",
    "WINDOW_SLOTS",
    "WINDOW_SUGARS",
    "FrameWindow",
    "Grain",
    "OffsetWindow",
    "OrderSpec",
    "PartitionSpec",
    "RankWindow",
    "ShareWindow",
    "Shift",
    "SlotOutOfRange",
    "StreakWindow",
    "ValueWindow",
    "WindowFamily",
    "WindowParse",
    "WindowSlot",
    "WindowSpec",
    "WindowSugar",
    "parse_window",
]
