"""Plan node kinds, one module each (see `dosi.plan.node` for the base)."""

from dosi.plan.nodes.aggregate import Aggregate
from dosi.plan.nodes.compute_metrics import ComputeMetrics
from dosi.plan.nodes.decode_time import DecodeTime
from dosi.plan.nodes.derive_compute import DeriveCompute
from dosi.plan.nodes.filter_result import FilterResult
from dosi.plan.nodes.join import Join
from dosi.plan.nodes.lod_broadcast import LodBroadcast
from dosi.plan.nodes.lod_rollup import LodRollup
from dosi.plan.nodes.merge import Merge, MergeStrategy
from dosi.plan.nodes.order_limit import OrderLimit
from dosi.plan.nodes.pre_aggregate import PreAggregate
from dosi.plan.nodes.scan import Scan
from dosi.plan.nodes.stream_bucket import StreamBucket
from dosi.plan.nodes.trim import Trim
from dosi.plan.nodes.window import Window

__all__ = [
    "Aggregate",
    "ComputeMetrics",
    "DecodeTime",
    "DeriveCompute",
    "FilterResult",
    "Join",
    "LodBroadcast",
    "LodRollup",
    "Merge",
    "MergeStrategy",
    "OrderLimit",
    "PreAggregate",
    "Scan",
    "StreamBucket",
    "Trim",
    "Window",
]
