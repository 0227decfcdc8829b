"""Dataset compile: fields (inlined, qualified), time roles, keys and the source -> DatasetIr.

Each dataset is compiled on its own (fields only ever read their own dataset), and its
DatasetIr is built once its fields are final: the field map is read-only from then on.
"""

from __future__ import annotations

from types import MappingProxyType

from dosi.compiler.context import CompileContext
from dosi.compiler.fields import (
    RawField,
    pick_expression,
    qualify_dataset_fields,
    unusable_message,
    usable,
)
from dosi.compiler.keys import check_keys
from dosi.compiler.lod_field import (
    check_lod_time,
    compile_lod_fields,
    lod_field_names,
    reads_lod,
)
from dosi.compiler.sources import compile_source
from dosi.compiler.sqlparse import OSI_READERS
from dosi.compiler.time_format import field_time
from dosi.ext.grains import SUB_DAY_GRAINS
from dosi.ext.lod_field import dropped_in_basic_mode
from dosi.ir.model import DatasetIr, FieldIr, ValidityIr
from dosi.model.schema import TEMPORAL_DATATYPES, DatasetSpec, raw_extensions


def compile_dataset(cx: CompileContext, ds: DatasetSpec, ds_index: int) -> DatasetIr:
    """`ds_index` is the dataset's position in the document (for the line of a repeat)."""
    dpath = f"datasets[{ds.name}]"
    dline = cx.line([("datasets", ds.name)])
    dext = cx.read_ext("dataset", dpath, ds.custom_extensions, dline)
    fields = ds.fields or []
    _check_field_names(cx, ds, dpath, ds_index)
    raw: dict[str, RawField] = {}
    line_map: dict[str, int | None] = {}
    fexts: dict[str, object] = {}
    for f in fields:
        if f.name in raw:
            continue
        dialect, text = pick_expression(f.expression, cx.target)
        fpath = f"{dpath}.fields[{f.name}]"
        line_map[fpath] = cx.line([("datasets", ds.name), ("fields", f.name)])
        if not usable(dialect, cx.target, text):
            cx.sink.error(
                "no_usable_expression",
                unusable_message(f"field `{ds.name}.{f.name}`", f.expression, cx.target),
                path=fpath,
                line=line_map[fpath],
                hint="add an ANSI_SQL entry (or one for the engine the model runs on)",
            )
            continue
        raw[f.name] = RawField(f.name, text, OSI_READERS.get(dialect), fpath)
        fexts[f.name] = cx.read_ext("field", fpath, f.custom_extensions, line_map[fpath])
    lod_names = lod_field_names(fexts)
    dropped = frozenset(
        f.name
        for f in fields
        if dropped_in_basic_mode(cx.mode, raw_extensions(f.custom_extensions))
    )
    exprs = qualify_dataset_fields(
        ds.name, raw, cx.sink, line_map, cx.trust_sql, lod_names, dropped
    )
    lods = compile_lod_fields(cx, ds, raw, exprs, fexts, line_map)
    field_irs: dict[str, FieldIr] = {}
    for f in fields:
        if f.name in field_irs or f.name not in exprs:
            continue
        fpath = f"{dpath}.fields[{f.name}]"
        fext = fexts[f.name]
        is_time = (
            f.dimension.is_time
            if f.dimension is not None and f.dimension.is_time is not None
            else (f.datatype in TEMPORAL_DATATYPES)
        )
        if is_time and reads_lod(exprs[f.name]):  # D-LOD values are never a time axis
            is_time = check_lod_time(cx, ds.name, f, exprs[f.name], fpath, line_map.get(fpath))
        grain = getattr(fext, "time_granularity", None)
        if grain is not None and not is_time:
            cx.sink.error(
                "invalid_datus_extension",
                f"`time_granularity` on `{ds.name}.{f.name}` needs a time field "
                "(dimension.is_time true, or a Date/DateTime datatype)",
                path=fpath,
                line=line_map.get(fpath),
            )
            grain = None
        if grain in SUB_DAY_GRAINS and f.datatype == "Date":
            cx.sink.error(
                "invalid_datus_extension",
                f"`time_granularity` {grain} on `{ds.name}.{f.name}`: a Date holds no time of day",
                path=fpath,
                line=line_map.get(fpath),
                hint="declare day or a coarser grain, or datatype DateTime",
            )
            grain = None
        timed = field_time(  # D-FORMAT: the stored encoding, and the grain it derives
            cx,
            f"{ds.name}.{f.name}",
            f.datatype,
            bool(is_time),
            grain,
            getattr(fext, "time", None),
            fpath,
            line_map.get(fpath),
        )
        field_irs[f.name] = FieldIr(
            dataset=ds.name,
            name=f.name,
            expr=exprs[f.name],
            datatype=f.datatype,
            is_time=bool(is_time),
            time_granularity=timed.grain,
            is_dimension=getattr(fext, "is_dimension", None),
            description=f.description,
            label=f.label,
            source_sql=raw[f.name].text,
            lod=lods.get(f.name),
            time_format=timed.time_format,
        )
    check_keys(cx, ds, dpath, dline)
    primary = primary_time(cx, ds.name, dpath, dline, field_irs, dext)
    return DatasetIr(
        name=ds.name,
        source=compile_source(cx, ds, dpath, dline),
        primary_key=tuple(ds.primary_key or ()),
        unique_keys=tuple(tuple(k) for k in (ds.unique_keys or ())),
        fields=MappingProxyType(field_irs),
        primary_time=primary,
        description=ds.description,
        validity=dataset_validity(cx, ds.name, dpath, dline, field_irs, dext),
    )


def _check_field_names(cx: CompileContext, ds: DatasetSpec, dpath: str, ds_index: int) -> None:
    """Field names are unique within a dataset; the first declaration wins."""
    seen: set[str] = set()
    for i, n in enumerate(f.name for f in ds.fields or []):
        if n in seen:
            cx.sink.error(
                "duplicate_name",
                f"field `{n}` is declared more than once in dataset `{ds.name}`",
                path=f"{dpath}.fields[{n}]",
                line=cx.lines.line_of(("semantic_model", 0, "datasets", ds_index, "fields", i)),
            )
        seen.add(n)


def dataset_validity(
    cx: CompileContext,
    name: str,
    dpath: str,
    dline: int | None,
    fields: dict[str, FieldIr],
    dext: object,
) -> ValidityIr | None:
    """D-VALIDITY: both bounds are plain (not D-FORMAT encoded) time fields of the dataset."""
    spec = getattr(dext, "validity", None)
    if spec is None:
        return None
    ok = True
    for role, fname in (("start", spec.start), ("end", spec.end)):
        f = fields.get(fname)
        if f is not None and f.is_time and not f.encoded:
            continue
        what = (
            "is not a field of it"
            if f is None
            else "is not a time field"
            if not f.is_time
            else "is an encoded (D-FORMAT) time, which a range join cannot compare"
        )
        cx.sink.error(
            "invalid_datus_extension",
            f"`validity.{role}` of dataset `{name}` names `{fname}`, which {what}",
            path=dpath,
            line=dline,
            candidates=[x.name for x in fields.values() if x.is_time and not x.encoded],
            hint="name the dataset's is_time fields where a version begins and ends",
        )
        ok = False
    return ValidityIr(spec.start, spec.end) if ok else None


def primary_time(
    cx: CompileContext,
    name: str,
    dpath: str,
    dline: int | None,
    fields: dict[str, FieldIr],
    dext: object,
) -> str | None:
    """D-TIME on a dataset: the declared time field, else the dataset's single is_time field."""
    declared = getattr(dext, "time_dimension", None)
    if declared is not None:
        target = declared.split(".", 1)[1] if declared.startswith(name + ".") else declared
        f = fields.get(target)
        if f is None or not f.is_time:
            what = "is not a field of it" if f is None else "is not a time field"
            cx.sink.error(
                "invalid_datus_extension",
                f"`time_dimension` of dataset `{name}` names `{declared}`, which {what}",
                path=dpath,
                line=dline,
                candidates=[f.name for f in fields.values() if f.is_time],
                hint="name one of the dataset's is_time fields",
            )
        else:
            return target
    times = [f.name for f in fields.values() if f.is_time]
    return times[0] if len(times) == 1 else None
