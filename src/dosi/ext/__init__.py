"""DATUS extension reading: the one module that parses `custom_extensions` DATUS payloads.

datus-extensions §5 ("implementation boundary"): all extension reading, and the datus/basic
mode branch, live here; the rest of the engine only sees the typed payloads of `ExtRead`.

* `registry`  – capability registry (keys, impacts, fallbacks, history): §2.1, §7
* `envelope`  – locating DATUS entries and strict JSON decoding: §2
* `version`   – the `v` gate: §2
* `payloads`  – typed payloads per carrier and key validators: §3, §4
* `time_format` – D-FORMAT `time` blocks: layouts, storage, bound encoding: §3 D-FORMAT
* `window`    – D-WINDOW: one module per family and sugar, THE family table
  (`window.families`), validation, desugaring and IR: window-metrics-extension.md
* `reader`    – `read_extensions`, requires handling, basic mode: §2, §5
"""

from dosi.ext.payloads import (
    DatasetExt,
    FieldExt,
    MetricExt,
    ModelExt,
    Payload,
    RelationshipExt,
    default_payload,
)
from dosi.ext.reader import ExtRead, Mode, read_extensions
from dosi.ext.registry import (
    DATUS_EXT,
    DATUS_EXT_VERSION,
    HISTORY,
    IMPACTS,
    REGISTRY,
    WINDOW_FEATURES,
    Carrier,
    HistoryEntry,
    Impact,
    KeyInfo,
    capabilities,
)
from dosi.ext.time_format import LayoutPart, TimeFormat, TimeSpec
from dosi.ext.window import (
    FrameWindow,
    Grain,
    OffsetWindow,
    OrderSpec,
    PartitionSpec,
    RankWindow,
    ValueWindow,
    WindowSpec,
)

__all__ = [
    "DATUS_EXT",
    "DATUS_EXT_VERSION",
    "HISTORY",
    "IMPACTS",
    "REGISTRY",
    "WINDOW_FEATURES",
    "Carrier",
    "DatasetExt",
    "ExtRead",
    "FieldExt",
    "FrameWindow",
    "Grain",
    "HistoryEntry",
    "Impact",
    "KeyInfo",
    "LayoutPart",
    "MetricExt",
    "Mode",
    "ModelExt",
    "OffsetWindow",
    "OrderSpec",
    "PartitionSpec",
    "Payload",
    "RankWindow",
    "RelationshipExt",
    "TimeFormat",
    "TimeSpec",
    "ValueWindow",
    "WindowSpec",
    "capabilities",
    "default_payload",
    "read_extensions",
]
