"""Python data from a composed YAML node tree, the common case without PyYAML's constructor.

PyYAML's SafeConstructor builds every mapping and sequence through a generator and a state
machine, a fifth of a large model's load (docs/performance.md, "Model load"). A model is
plain mappings, sequences and strings; this builds those in one loop over the nodes and hands
every other scalar (int, float, bool, null, timestamp, binary) to the loader's own
constructor, so each value is what `yaml.safe_load` gives. Anything else (merge keys `<<`,
`!!set`, `!!omap`, a collection as a key, a tag on the wrong kind of node) raises `Fallback`:
the caller then runs PyYAML's constructor over the same nodes, which also reports its errors.
Aliased nodes become one shared object, as in PyYAML; the loop keeps an explicit stack, so
deep nesting reaches the depth check instead of Python's recursion limit.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
#: Scalars SafeConstructor builds without looking at other nodes.
_SCALARS = frozenset(
    "tag:yaml.org,2002:" + t for t in ("null", "bool", "int", "float", "binary", "timestamp")
)
#: Keys flatten_mapping rewrites (merge `<<`, the `=` value key): PyYAML's own path.
_SPECIAL_KEYS = frozenset(("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"))


class Fallback(Exception):
    """The tree holds something only PyYAML's constructor builds (or rejects)."""


def build_document(loader: Any, root: Node) -> Any:
    """What `loader.construct_document(root)` returns, for plain documents."""
    memo: dict[int, Any] = {}
    todo: list[tuple[Node, Any]] = []

    def make(node: Node) -> Any:
        key = id(node)
        if key in memo:
            return memo[key]
        tag, cls = node.tag, node.__class__
        obj: Any
        if tag == _STR and cls is ScalarNode:
            obj = node.value
        elif tag == _MAP and cls is MappingNode:
            obj = {}
            todo.append((node, obj))
        elif tag == _SEQ and cls is SequenceNode:
            obj = []
            todo.append((node, obj))
        elif tag in _SCALARS and cls is ScalarNode:
            obj = loader.construct_object(node)
        else:
            raise Fallback
        memo[key] = obj
        return obj

    out = make(root)
    while todo:
        node, obj = todo.pop()
        if obj.__class__ is dict:
            for key_node, value_node in node.value:
                if key_node.tag in _SPECIAL_KEYS:
                    raise Fallback
                k = make(key_node)
                if k.__class__ in (dict, list):  # unhashable: PyYAML's error
                    raise Fallback
                obj[k] = make(value_node)
        else:
            obj.extend([make(item) for item in node.value])
    return out


__all__ = ["Fallback", "build_document"]
