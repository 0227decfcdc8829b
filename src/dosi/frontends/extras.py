"""Frontend modules behind an optional extra, imported only when they are used.

`dosi serve` needs fastapi and uvicorn (`dosi[serve]`), `dosi mcp` the MCP SDK (`dosi[mcp]`),
a `.svg`/`.png` chart vl-convert (`dosi[charts]`), and the dbt and LookML importers their parsers
(`dosi[importers]`). Each module listed in `EXTRAS` imports those
packages at its top, and no module imports it with an import statement: its one caller loads
it here, by name, when the command runs. So every other command starts without paying for
them, and works when they are not installed. `EXTRAS` is the list of these deferred edges for
the checks that read import statements (layer order, import circles).
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: module -> the pip extra that installs what it imports; `load_extra` imports nothing else.
EXTRAS: dict[str, str] = {
    "dosi.frontends.rest.server": "serve",
    "dosi.frontends.mcp.server": "mcp",
    "dosi.frontends.charts.render": "charts",
    # `dosi import dbt` reads dbt with dbt-semantic-interfaces, `dosi import lookml` with lkml
    "dosi.importers.dbt": "importers",
    "dosi.importers.lookml": "importers",
}


def load_extra(module: str) -> ModuleType:
    """Import one of `EXTRAS`; ImportError (naming the missing package) when its extra is not
    installed."""
    if module not in EXTRAS:
        raise ValueError(f"{module} is not listed in dosi.frontends.extras.EXTRAS")
    return importlib.import_module(module)
