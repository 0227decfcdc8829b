"""`dosi import cube`: a Cube project (YAML data model) -> an Ossie model with DATUS extensions.

cubes -> datasets (`sql_table` or `sql` as the source), dimensions -> fields (`primary_key`
-> the dataset key, `time` -> a time field), segments -> boolean fields to filter on,
measures -> metrics (`cube_members.py`; rolling windows and time shifts -> D-WINDOW,
`cube_windows.py`), joins -> relationships (many side -> one side; Cube's joins are LEFT
joins, the Ossie default), and with `--view NAME` one view's members under the view's names
(`cube_views.py`). Whatever cannot be carried is a structured warning naming the member and
the reason; the result loads without errors.
"""

from __future__ import annotations

from pathlib import Path

from dosi.importers.common import Converted, Notes, document_obj, safe_name
from dosi.importers.cube_convert import CubeConverter
from dosi.importers.cube_project import read_project
from dosi.importers.cube_views import apply_view


def import_cube(
    path: str | Path,
    *,
    view: str | None = None,
    dialect: str | None = None,
    name: str | None = None,
) -> Converted:
    """The Ossie model of a Cube project (or of one of its views, `view`)."""
    notes = Notes()
    root = Path(path)
    project = read_project(root, notes)
    conv = CubeConverter(project, notes, dialect)
    conv.build_datasets()
    conv.build_metrics()
    conv.build_relationships()
    if view is not None:
        datasets, relationships, metrics = apply_view(conv, view)
        model_name = safe_name(name or view)
    else:
        for v in project.views:
            notes.warn(
                "cube_view_not_applied",
                f"view {v}: imported as the cubes it reads; its member names apply with --view {v}",
                path=v,
                hint=f"dosi import cube {root} --view {v}",
            )
        datasets = conv.dataset_objs()
        relationships, metrics = conv.relationships, conv.metrics
        model_name = safe_name(name or project.name or "cube")
    doc = document_obj(model_name, datasets, relationships, metrics)
    header = (
        f"Imported by `dosi import cube` from {root.name}"
        + (f" (view {view})" if view else "")
        + f": {len(datasets)} datasets, {len(metrics)} metrics, "
        f"{len(notes.items)} warnings.",
        "Each metric lists its Cube member (cube.measure) in ai_context.synonyms.",
    )
    return Converted(doc, tuple(notes.items), header)
