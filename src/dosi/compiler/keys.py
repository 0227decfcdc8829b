"""Ossie "Datasets" keys: harmless repeats inside primary_key / unique_keys are warnings.

Keys name columns of the source, declared as fields or not, so nothing here resolves them;
a column repeated within one key, or a unique key declared twice, is allowed by the schema but
a likely slip.
"""

from __future__ import annotations

from dosi.compiler.context import CompileContext
from dosi.model.schema import DatasetSpec


def check_keys(cx: CompileContext, ds: DatasetSpec, dpath: str, dline: int | None) -> None:
    keys = [("primary_key", list(ds.primary_key))] if ds.primary_key else []
    keys += [("unique_keys", list(k)) for k in ds.unique_keys or []]
    seen: set[tuple[str, ...]] = set()
    for where, cols in keys:
        repeated = sorted({c for c in cols if cols.count(c) > 1})
        if repeated:
            cx.sink.warn(
                "duplicate_key_column",
                f"{where} of `{ds.name}` lists {', '.join(f'`{c}`' for c in repeated)} "
                "more than once",
                path=f"{dpath}.{where}",
                line=dline,
                hint="name each column of a key once",
            )
        if where == "unique_keys" and tuple(cols) in seen:
            cx.sink.warn(
                "duplicate_key",
                f"unique_keys of `{ds.name}` declares [{', '.join(cols)}] more than once",
                path=f"{dpath}.unique_keys",
                line=dline,
                hint="declare each unique key once",
            )
        if where == "unique_keys":
            seen.add(tuple(cols))
