"""`dosi import lookml`: a LookML project (views and explores, read with `lkml`) -> an Ossie
model with DATUS extensions.

views -> datasets, dimensions and dimension groups -> fields (`lookml_fields.py`), measures
-> metrics (`lookml_measures.py`, filtered measures through `lookml_filters.py`), explore
joins -> relationships with their relationship and join types (`lookml_convert.py`). The
SQL is read in the project's warehouse dialect (`--dialect`, e.g. bigquery) and written as
portable SQL. Whatever cannot be carried is a structured warning naming the LookML object
and the reason; the result loads without errors.
"""

from __future__ import annotations

from pathlib import Path

from dosi.importers.common import Converted, Notes, document_obj, safe_name
from dosi.importers.lookml_convert import LookmlConverter
from dosi.importers.lookml_project import read_project


def import_lookml(
    path: str | Path, *, dialect: str | None = None, name: str | None = None
) -> Converted:
    """The Ossie model of a LookML project (a folder of `.lkml` files, or one file)."""
    notes = Notes()
    root = Path(path)
    project = read_project(root, notes)
    conv = LookmlConverter(project, notes, dialect)
    conv.build_datasets()
    conv.build_relationships()
    conv.build_metrics()
    datasets = conv.dataset_objs()
    doc = document_obj(
        safe_name(name or project.name or "lookml"), datasets, conv.relationships, conv.metrics
    )
    header = (
        f"Imported by `dosi import lookml` from {root.name}: {len(datasets)} datasets, "
        f"{len(conv.metrics)} metrics, {len(notes.items)} warnings.",
        "Each field and metric lists its LookML member (view.field) in ai_context.synonyms.",
    )
    return Converted(doc, tuple(notes.items), header)
