"""Copies of sqlglot trees: what model compile and SQL building clone from shared IR, and
the parsed snippets kept for texts met more than once (dosi.compiler.sqlparse)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

E = TypeVar("E", bound=exp.Expression)

#: Parsed snippets by their parse key (text, reader, limits, markers), kept once a text is
#: met a second time (at most KEPT_MAX: a few megabytes); a text met once costs no copy.
#: Plain dicts: a lost race between threads only parses a text once more.
KEPT_MAX = 4096
_KEPT: dict[Hashable, exp.Expression] = {}
_SEEN: dict[Hashable, None] = {}


def kept(key: Hashable) -> exp.Expression | None:
    """A copy of the tree kept for `key` (the caller owns it), or None."""
    tree = _KEPT.get(key)
    return None if tree is None else clone(tree)


def met(key: Hashable, tree: exp.Expression) -> None:
    """`tree` was just parsed for `key`: keep a copy if the key was met before."""
    if key in _SEEN:
        if len(_KEPT) >= KEPT_MAX:
            _KEPT.clear()
        _KEPT[key] = clone(tree)
        return
    if len(_SEEN) >= 4 * KEPT_MAX:
        _SEEN.clear()
    _SEEN[key] = None


#: sqlglot's own dialect, what `Expression.sql()` renders with (which builds a new one per call)
_GENERIC = Dialect()


def sql_text(node: exp.Expression) -> str:
    """`node.sql()` without its defensive deep copy of the tree (the garbage of a large model
    load, docs/performance.md "Model load"). Safe because sqlglot's own dialect rewrites
    nothing in place for a scalar expression: no bool coercion, no CTE hoisting."""
    return _GENERIC.generate(node, copy=False)


def discard(node: exp.Expression) -> None:
    """Unlink a tree nothing uses any more (an aggregate replaced by its measure's name), so
    reference counting frees it: each child's `parent` link is a reference cycle, garbage
    only the cyclic collector frees, the largest part of a large load's collection
    (docs/performance.md, "Model load")."""
    stack = [node]
    while stack:
        n = stack.pop()
        n.parent = None
        stack.extend(n.iter_expressions())


def clone(e: E) -> E:
    """A copy of an IR expression to build SQL from (IR trees are shared, never edited).

    sqlglot's deepcopy also deep-copies each node's `meta` dict (parser positions, dosi's
    field tag) through `copy.deepcopy`, most of a compile's time; their values are scalars,
    so a dict copy is enough (compile time: docs/performance.md)."""
    root = e.__class__()
    stack: list[tuple[exp.Expression, exp.Expression]] = [(e, root)]
    push, pop = stack.append, stack.pop
    while stack:
        node, out = pop()
        if node.comments is not None:
            out.comments = list(node.comments)
        if node._type is not None:
            out._type = node._type.copy()
        if node._meta is not None:
            out._meta = dict(node._meta)
        args = out.args
        # children are linked as `set` / `append` link them (parent, arg_key, index), directly:
        # the copy is fresh, so there is no hash to reset and no None to drop
        for k, vs in node.args.items():
            if isinstance(vs, exp.Expression):
                child = vs.__class__()
                child.parent, child.arg_key = out, k
                push((vs, child))
                args[k] = child
            elif type(vs) is list:
                items: list[object] = []
                for i, v in enumerate(vs):
                    if isinstance(v, exp.Expression):
                        child = v.__class__()
                        child.parent, child.arg_key, child.index = out, k, i
                        push((v, child))
                        items.append(child)
                    else:
                        items.append(v)
                args[k] = items
            else:
                args[k] = vs
    return root
