"""Basic mode (§5): the same model stays valid without its DATUS payloads.

A metric that only the ignored payload made computable (a COUNT(*) pinned by D-DATASET, a stem
collision resolved by D-MEASURE) becomes unavailable instead of failing the model; querying it
says why. So does a metric whose payload holds a key without which its expression is a wrong
number (D-SEMI `semi_additive`, D-CONVERSION `conversion`): basic mode fails closed on it.
"""

from __future__ import annotations

from dosi.compiler.context import CompileContext
from dosi.errors import Diagnostic

_DEFERRABLE = frozenset(
    {"count_star_needs_dataset", "measure_name_collision", "metric_needs_datus_mode"}
)


def defer_basic_failure(
    cx: CompileContext, metric: str, mark: int, unavailable: dict[str, Diagnostic]
) -> None:
    """Turn the errors `metric` reported since `mark` into its unavailability, when every one
    of them is one a DATUS payload would have prevented."""
    new = cx.sink.items[mark:]
    errors = [d for d in new if d.severity == "error"]
    if not errors or any(d.code not in _DEFERRABLE for d in errors):
        return
    del cx.sink.items[mark:]
    cx.sink.items.extend(d for d in new if d.severity != "error")
    first = errors[0]
    unavailable[metric] = first
    cx.sink.warn(
        "metric_unavailable_in_basic_mode",
        f"metric `{metric}` cannot be computed in basic mode: {first.message}",
        path=first.path,
        line=first.line,
        hint="run in datus mode, where its DATUS extension applies",
    )
