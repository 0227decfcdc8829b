"""The source tree as the architecture tests read it: every module of src/dosi parsed with ast
(nothing is imported, so a broken layer never hides behind an ImportError), its imports of
other project modules, which of those sit inside a function, and the layer each module
belongs to.

An import edge counts at module level, under `if TYPE_CHECKING:` and inside functions alike
(a type-only dependency against the layer order is still a dependency). `from pkg import sub`
depends on the module `pkg.sub` when there is one, else on `pkg`. A package's `__init__` is
its own module, named after the package.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
PACKAGE = SRC / "dosi"


@dataclass(frozen=True)
class Edge:
    """`source` imports `target` (both project module names) at `line`."""

    source: str
    target: str
    line: int
    in_function: bool

    def __str__(self) -> str:
        where = "function-level " if self.in_function else ""
        return f"{self.source} -> {self.target} ({where}line {self.line})"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of the project by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def relpath(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner(name: str) -> str | None:
    """The project module an imported dotted name lives in (longest known prefix)."""
    mods = modules()
    while name:
        if name in mods:
            return name
        name = name.rpartition(".")[0]
    return None


def _function_nodes(module: ast.Module) -> set[int]:
    inside: set[int] = set()
    for fn in ast.walk(module):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            inside.update(id(n) for n in ast.walk(fn) if n is not fn)
    return inside


@cache
def edges() -> tuple[Edge, ...]:
    """Every import of one project module by another."""
    mods = modules()
    out: list[Edge] = []
    for name, path in mods.items():
        module = tree(path)
        in_function = _function_nodes(module)
        is_package = path.name == "__init__.py"
        for node in ast.walk(module):
            if isinstance(node, ast.Import):
                imported = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                imported = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names
                ]
            else:
                continue
            for dotted in imported:
                target = _owner(dotted)
                if target is not None and target != name:
                    out.append(Edge(name, target, node.lineno, id(node) in in_function))
    return tuple(sorted(set(out), key=lambda e: (e.source, e.line, e.target)))


def layer_of(module: str, layers: tuple[tuple[str, ...], ...]) -> int | None:
    """The index of the layer holding `module`: the layer naming its longest prefix. The root
    package's own name (`dosi`) names its `__init__` only, never the modules beside it."""
    best: tuple[int, int] | None = None  # (prefix length, layer index)
    for index, names in enumerate(layers):
        for prefix in names:
            inside = module == prefix or (
                prefix != PACKAGE.name and module.startswith(prefix + ".")
            )
            if inside and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found
