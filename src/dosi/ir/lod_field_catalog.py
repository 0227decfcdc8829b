"""Catalog columns of a D-LOD fixed field (`dosi list dimensions`, `dataset()`): the mode, its
keys and base, as the reference engine lists them; None for every other field."""

from __future__ import annotations

from typing import Any

from dosi.ir.model import FieldIr


def lod_field_columns(f: FieldIr) -> dict[str, Any]:
    lod = f.lod
    return {
        "lod_mode": "fixed" if lod is not None else None,
        "lod_dims": [f"{f.dataset}.{k}" for k in lod.keys] if lod is not None else None,
        "lod_base": lod.base if lod is not None else None,
    }
