"""The model's DOSI settings for densification (dosi.ext.settings) checked against the model:
the default of the query key `densify`, and the time-spine table, whose dataset and date field
must exist."""

from __future__ import annotations

from collections.abc import Mapping

from dosi.compiler.context import CompileContext
from dosi.errors import closest
from dosi.ext.settings import INVALID, ModelSettings, read_model_settings
from dosi.ir.densify import TimeSpineIr
from dosi.ir.model import DatasetIr
from dosi.model.schema import raw_extensions

PATH = "semantic_model"


def read_settings(cx: CompileContext, exts: object) -> ModelSettings:
    """The semantic model's DOSI entry, read in either mode (it is dosi's, not DATUS)."""
    return read_model_settings(raw_extensions(exts), PATH, cx.sink)  # type: ignore[arg-type]


def compile_time_spine(
    cx: CompileContext, settings: ModelSettings, datasets: Mapping[str, DatasetIr]
) -> TimeSpineIr | None:
    """The declared time spine, or None (with an `invalid_dosi_setting` error) when its
    dataset or field is not in the model or the field is not a time field."""
    spine = settings.time_spine
    if spine is None:
        return None
    ds = datasets.get(spine.dataset)
    if ds is None:
        cx.sink.error(
            INVALID,
            f"`time_spine.dataset` names `{spine.dataset}`, which is not a dataset of the model",
            path=PATH,
            candidates=tuple(closest(spine.dataset, datasets)),
            hint="declare the time-spine table as a dataset and name it here",
        )
        return None
    f = ds.fields.get(spine.field)
    if f is None or not f.is_time:
        times = [x.name for x in ds.fields.values() if x.is_time]
        what = "is not a field of" if f is None else "is not a time field (is_time) of"
        cx.sink.error(
            INVALID,
            f"`time_spine.field` `{spine.field}` {what} `{spine.dataset}`",
            path=PATH,
            candidates=tuple(closest(spine.field, times) or times),
            hint="name the spine's date column, declared with dimension.is_time: true",
        )
        return None
    return TimeSpineIr(ds.name, f.name, f.expr, f.time_granularity or "day", spine.bounds)
