"""Plan node kinds, one module each, named by its `kind` (see `dosi.plan.node` for the base
and the abstract `PlanVisitor`). `NODE_KINDS` lists every kind once; importing this package
checks that `PlanVisitor` has exactly one abstract `visit_<kind>` per kind. Layer: logical
plan (`dosi.plan`); a node holds IR values and plan records, never SQL under construction."""

from dosi.plan.node import PlanNode, PlanVisitor
from dosi.plan.nodes.aggregate import Aggregate
from dosi.plan.nodes.compute_metrics import ComputeMetrics
from dosi.plan.nodes.conversion_join import ConversionJoin
from dosi.plan.nodes.decode_time import DecodeTime
from dosi.plan.nodes.densify import Densify
from dosi.plan.nodes.derive_compute import DeriveCompute
from dosi.plan.nodes.filter_result import FilterResult
from dosi.plan.nodes.join import Join
from dosi.plan.nodes.lod_attach import LodAttach, LodSide
from dosi.plan.nodes.lod_broadcast import LodBroadcast
from dosi.plan.nodes.lod_include import LodInclude, LodIncludeMetric
from dosi.plan.nodes.lod_rollup import LodRollup
from dosi.plan.nodes.merge import Merge, MergeStrategy
from dosi.plan.nodes.order_limit import OrderLimit
from dosi.plan.nodes.period_sample import PeriodSample
from dosi.plan.nodes.pre_aggregate import PreAggregate
from dosi.plan.nodes.scan import Scan
from dosi.plan.nodes.semi_additive_join import SemiAdditiveJoin
from dosi.plan.nodes.stream_bucket import StreamBucket
from dosi.plan.nodes.trim import Trim
from dosi.plan.nodes.window import Window

NODE_KINDS: tuple[type[PlanNode], ...] = (
    Aggregate,
    ComputeMetrics,
    ConversionJoin,
    DecodeTime,
    Densify,
    DeriveCompute,
    FilterResult,
    Join,
    LodAttach,
    LodBroadcast,
    LodInclude,
    LodRollup,
    Merge,
    OrderLimit,
    PeriodSample,
    PreAggregate,
    Scan,
    SemiAdditiveJoin,
    StreamBucket,
    Trim,
    Window,
)

_unvisited = PlanVisitor.__abstractmethods__ - {f"visit_{k.kind}" for k in NODE_KINDS}
if _unvisited:
    raise TypeError(f"PlanVisitor methods without a node kind: {sorted(_unvisited)}")

__all__ = [
    "NODE_KINDS",
    "Aggregate",
    "ComputeMetrics",
    "ConversionJoin",
    "DecodeTime",
    "Densify",
    "DeriveCompute",
    "FilterResult",
    "Join",
    "LodAttach",
    "LodBroadcast",
    "LodInclude",
    "LodIncludeMetric",
    "LodRollup",
    "LodSide",
    "Merge",
    "MergeStrategy",
    "OrderLimit",
    "PeriodSample",
    "PreAggregate",
    "Scan",
    "SemiAdditiveJoin",
    "StreamBucket",
    "Trim",
    "Window",
]
