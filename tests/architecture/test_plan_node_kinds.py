"""Every plan node kind is pinned and rendered (issue 19, Deliver item 4): each kind appears in
at least one plan snapshot (tests/plan/snapshots/node_kinds.json, which
tests/plan/test_plan_snapshots.py keeps equal to the snapshots' plans) and the SQL visitor has
a `visit_<kind>` method for it.

Node kinds are read from the source with ast: every class under src/dosi/plan/ that sets a
class-level `kind` string (the base's own "node" excepted), wherever its file lives.
"""

from __future__ import annotations

import ast
import json

import pytest
from archkit import PACKAGE, REPO, relpath, tree

NODE_KINDS_MANIFEST = REPO / "tests" / "plan" / "snapshots" / "node_kinds.json"
BASE_KIND = "node"


def _class_kind(cls: ast.ClassDef) -> str | None:
    for stmt in cls.body:
        target = value = None
        if isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        if (
            isinstance(target, ast.Name)
            and target.id == "kind"
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            return value.value
    return None


def node_kinds() -> dict[str, str]:
    """kind -> where its class is defined."""
    kinds: dict[str, str] = {}
    for path in sorted((PACKAGE / "plan").rglob("*.py")):
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ClassDef):
                kind = _class_kind(node)
                if kind is not None and kind != BASE_KIND:
                    kinds[kind] = f"{relpath(path)}:{node.lineno} {node.name}"
    return kinds


def _sql_visitors() -> dict[str, set[str]]:
    """Classes under src/dosi/sql/ that define visit_* methods: class -> the kinds visited."""
    found: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / "sql").rglob("*.py")):
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ClassDef):
                visits = {
                    f.name.removeprefix("visit_")
                    for f in node.body
                    if isinstance(f, ast.FunctionDef) and f.name.startswith("visit_")
                }
                if visits:
                    found[f"{relpath(path)} {node.name}"] = visits
    return found


def test_node_kinds_are_found() -> None:
    """The reading above sees the plan: the node kinds every plan has are among them."""
    assert {"scan", "aggregate", "merge", "window", "order_limit"} <= set(node_kinds())


def test_every_node_kind_has_a_plan_snapshot() -> None:
    covered = set().union(*json.loads(NODE_KINDS_MANIFEST.read_text(encoding="utf-8")).values())
    missing = [f"{k}  ({where})" for k, where in sorted(node_kinds().items()) if k not in covered]
    if missing:
        pytest.fail(
            f"{len(missing)} plan node kinds no plan snapshot holds (add a case to "
            "tests/plan/test_plan_snapshots.py):\n" + "\n".join(missing),
            pytrace=False,
        )


def test_every_node_kind_has_a_visit_method_on_the_sql_visitor() -> None:
    visitors = _sql_visitors()
    assert visitors, "no class under src/dosi/sql/ defines visit_* methods"
    name, visited = max(visitors.items(), key=lambda kv: len(kv[1]))
    missing = [
        f"visit_{k}  ({where})" for k, where in sorted(node_kinds().items()) if k not in visited
    ]
    if missing:
        pytest.fail(
            f"the SQL visitor ({name}) lacks {len(missing)} visit methods:\n" + "\n".join(missing),
            pytrace=False,
        )
