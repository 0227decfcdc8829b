"""The layer order, enforced (issue 19, Deliver item 4): every module of src/dosi belongs to a
layer of LAYERS, imports point only down that list (or within a layer), there are no import
circles between modules or between packages, and no project import hides inside a function.

LAYERS is written once, here. It follows the target layout of the style notes (frontends, the
facade, catalog and analysis, ..., ir / compiler / ext / model) with the order the imports
really take where the picture is drawn by data flow: the SQL visitor reads plan nodes and the
planner reads the resolved query, so `sql` sits above `plan` above `query`. The dialect facts
sit under `sql` and above `plan`: the planner asks for the facts it needs through a protocol
of its own instead of importing `dosi.sql.dialects`, and the window UDFs (below `query`, which
validates streaming windows with them) import nothing of `dosi.sql`. `dosi.errors` (the error
contract) is the floor every layer may import.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from archkit import PACKAGE, SRC, edges, layer_of, modules, strongly_connected

# Top to bottom. A module belongs to the layer naming its longest prefix (`dosi` alone names
# the package's __init__, not every module at the root).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("dosi.frontends", "dosi.__main__"),  # thin transports: CLI, REST, MCP, PostgreSQL, web
    # authoring: other tools' models in and out, scaffolds, the model's JSON Schema
    ("dosi.importers", "dosi.exporters", "dosi.scaffold"),
    ("dosi", "dosi.engine"),  # the public facade: the package itself and Engine
    ("dosi.access",),  # identities, access policies, a user's row-filtered model
    ("dosi.analysis",),  # lineage and attribution
    ("dosi.catalog",),  # catalog views
    ("dosi.pipeline",),  # the compile pipeline: query -> plan -> SQL
    ("dosi.sql",),  # the plan -> sqlglot visitor and per-feature renderers
    ("dosi.sql.dialects",),  # one class per warehouse: facts and small overrides
    ("dosi.plan",),  # logical plan: node kinds, builders per feature
    ("dosi.query",),  # query JSON -> frozen ResolvedQuery
    ("dosi.execute",),  # runners: SQL in, Arrow out
    ("dosi.udf",),  # streaming-window boundary functions
    ("dosi.compiler",),  # model -> IR, by concern
    ("dosi.ir",),  # the frozen compiled model
    ("dosi.ext",),  # the one DATUS extension seam
    ("dosi.model",),  # Ossie model loading and schema
    ("dosi.errors",),  # the error contract
)


def _name(index: int) -> str:
    return " / ".join(LAYERS[index])


def test_every_module_belongs_to_a_layer() -> None:
    """A module outside every layer (a loose module at the package root) has no place in the
    order: put it in a package, or add its layer to LAYERS."""
    loose = [m for m in modules() if layer_of(m, LAYERS) is None]
    if loose:
        pytest.fail(
            f"{len(loose)} modules in no layer of LAYERS:\n" + "\n".join(loose), pytrace=False
        )


def test_imports_point_down_the_layer_list() -> None:
    upward = []
    for e in edges():
        src, dst = layer_of(e.source, LAYERS), layer_of(e.target, LAYERS)
        if src is not None and dst is not None and dst < src:
            upward.append(f"{e}   [{_name(src)} imports {_name(dst)}]")
    if upward:
        pytest.fail(
            f"{len(upward)} imports against the layer order:\n" + "\n".join(upward), pytrace=False
        )


def test_no_import_circles_between_modules() -> None:
    """As the project's import-circle check counts them: a package's `__init__` re-exporting
    its own children is not a circle."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges():
        graph[e.source].add(e.target)
    circles = [
        c
        for c in strongly_connected(graph)
        if len(c) > 2 or not all(x == c[0] or x.startswith(c[0] + ".") for x in c)
    ]
    if circles:
        pytest.fail(
            f"{len(circles)} import circles:\n" + "\n".join(" <-> ".join(c) for c in circles),
            pytrace=False,
        )


def _top(module: str) -> str:
    """The node of the package graph: `dosi.<package>` for every module in a package
    (sub-packages included, `dosi.sql.dialects.mysql` -> `dosi.sql`), the module itself for a
    module at the root (`dosi.engine`)."""
    return ".".join(module.split(".")[:2])


def test_no_import_circles_between_packages() -> None:
    """A package and a sub-package are one node here: `dosi.plan` importing
    `dosi.sql.dialects` while `dosi.sql` imports `dosi.plan` is a circle of `plan` and `sql`."""

    graph: dict[str, set[str]] = defaultdict(set)
    why: dict[tuple[str, str], str] = {}
    for e in edges():
        a, b = _top(e.source), _top(e.target)
        if a != b and a != "dosi" and b != "dosi":
            graph[a].add(b)
            why.setdefault((a, b), str(e))
    circles = strongly_connected(graph)
    lines = []
    for c in circles:
        lines.append(" <-> ".join(c))
        lines.extend(f"    {why[(a, b)]}" for a in c for b in c if (a, b) in why)
    if circles:
        pytest.fail(f"{len(circles)} circles between packages:\n" + "\n".join(lines), pytrace=False)


def test_no_function_level_imports_of_project_modules() -> None:
    hidden = [str(e) for e in edges() if e.in_function]
    if hidden:
        pytest.fail(
            f"{len(hidden)} project imports inside functions:\n" + "\n".join(hidden), pytrace=False
        )


def test_layer_list_names_real_packages() -> None:
    """Every prefix of LAYERS is a module or package that exists (a renamed package must be
    renamed here too, not silently drop out of the check)."""
    known = set(modules()) | {
        ".".join(d.relative_to(SRC).parts) for d in PACKAGE.rglob("*") if d.is_dir()
    }
    missing = [p for names in LAYERS for p in names if p not in known]
    if missing:
        pytest.fail(
            "LAYERS names what src/dosi does not hold: " + ", ".join(missing), pytrace=False
        )
