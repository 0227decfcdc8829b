"""DATUS extension reading: the one package that parses `custom_extensions` DATUS payloads.

Layer: extension reading, the lowest after `dosi.errors`. It may import `dosi.errors` and the
standard library only; nothing of `dosi.model`, `dosi.ir`, `dosi.compiler` or any layer
above (it never sees SQL trees). datus-extensions §5 ("implementation boundary"): all
extension reading, and the datus/basic mode branch, live here; the rest of the engine only
sees the typed payloads of `ExtRead`.

* `reader`        – `read_extensions`, the mode branch: §2, §5
* `registry`      – the capability registry (keys, impacts, fallbacks): §2.1; `history` §7
* `envelope`      – locating DATUS entries and strict JSON decoding: §2
* `version`       – the `v` gate: §2; `requires` – `requires`: §2
* `key_warnings`  – keys on the wrong carrier, not implemented, missing from requires
* `basic_mode`    – the one warning per element in basic mode: §5
* `payloads`      – typed payloads per carrier: §3, §4; `key_validators` one per key
* one module per extension: `conform` (D-CONFORM), `derive` (D-DERIVE), `lod_field` and
  `lod_metric` (D-LOD), `params` / `params_decl` / `params_slots` / `params_naming`
  (D-PARAM), `time_format` (D-FORMAT), `semi_additive` (D-SEMI), `conversion`
  (D-CONVERSION), `window/` (D-WINDOW: one module per family and sugar, THE family table
  `window.families`; window-metrics-extension.md)
"""

from dosi.ext.conversion import ConversionSpec, ConversionWindow, FieldPair
from dosi.ext.history import HISTORY, WINDOW_FEATURES, HistoryEntry
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
    IMPACTS,
    REGISTRY,
    Carrier,
    Impact,
    KeyInfo,
    capabilities,
)
from dosi.ext.semi_additive import SemiAdditiveSpec
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
    "ConversionSpec",
    "ConversionWindow",
    "DatasetExt",
    "ExtRead",
    "FieldExt",
    "FieldPair",
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
    "SemiAdditiveSpec",
    "TimeFormat",
    "TimeSpec",
    "ValueWindow",
    "WindowSpec",
    "capabilities",
    "default_payload",
    "read_extensions",
]
