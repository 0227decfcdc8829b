"""`dosi init` end to end: open the connection, read its catalog, build the model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dosi.execute.connections import Profile
from dosi.execute.engines import open_runner
from dosi.importers.common import Converted
from dosi.scaffold.build import build_model
from dosi.scaffold.catalog import FILE_ENGINES
from dosi.scaffold.infer import infer_keys
from dosi.scaffold.readers import read_catalog
from dosi.sql.dialects import get_dialect


def scaffold_model(
    profile: Profile,
    schema: str | None = None,
    tables: Sequence[str] = (),
    match_ids: bool = False,
    name: str | None = None,
) -> Converted:
    """The scaffolded model of one schema of the database `profile` connects to."""
    if name is None and profile.type in FILE_ENGINES and profile.uri:
        name = Path(profile.uri).stem or None  # the database file names the model
    runner = open_runner(profile)
    try:
        catalog = read_catalog(runner, profile.type, schema, tables)
        if match_ids:
            catalog = infer_keys(catalog, runner, get_dialect(profile.dialect).name)
    finally:
        runner.close()
    return build_model(catalog, name)
