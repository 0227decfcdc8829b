"""Size and shape bounds on a raw query (dict or JSON text), checked before anything recurses
into it: nesting depth, item count, text size, key types and integer sizes (docs/limits.md)."""

from __future__ import annotations

from typing import Any, Final

from dosi.errors import QueryShapeError, bounded

MAX_QUERY_DEPTH: Final = 16  # a query is at most ~5 levels deep; 16 leaves room
MAX_QUERY_ITEMS: Final = 10_000  # list items and object keys, all levels together
MAX_QUERY_CHARS: Final = 1_000_000  # JSON text, or the strings of a dict query together
MAX_INT_BITS: Final = 63  # every integer in a query fits a signed 64-bit column


def _bad(message: str, hint: str | None = None) -> QueryShapeError:
    return QueryShapeError("invalid_query", message, hint=hint)


def check_query_bounds(query: Any) -> None:
    """Raise `invalid_query` for a query over the bounds; walks without recursion."""
    if isinstance(query, str):
        if len(query) > MAX_QUERY_CHARS:
            raise _bad(
                f"the query text has {len(query)} characters; the limit is {MAX_QUERY_CHARS}"
            )
        return
    chars = 0
    items = 0
    stack: list[tuple[Any, int]] = [(query, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = []
            for key, value in node.items():
                if not isinstance(key, str):
                    raise _bad(
                        f"query keys are strings; got the key {bounded(key, 40)}",
                        hint="write the query as JSON: every object key is a string",
                    )
                chars += len(key)
                children.append(value)
        elif isinstance(node, (list, tuple)):
            children = list(node)
        else:
            if isinstance(node, str):
                chars += len(node)
            elif (
                isinstance(node, int)
                and not isinstance(node, bool)
                and node.bit_length() > MAX_INT_BITS
            ):
                raise _bad(f"the integer {bounded(node, 40)} is out of range (64-bit)")
            children = []
        if chars > MAX_QUERY_CHARS:
            raise _bad(f"the query holds more than {MAX_QUERY_CHARS} characters of text")
        if not children:
            continue
        if depth >= MAX_QUERY_DEPTH:
            raise _bad(f"the query nests deeper than {MAX_QUERY_DEPTH} levels")
        items += len(children)
        if items > MAX_QUERY_ITEMS:
            raise _bad(f"the query holds more than {MAX_QUERY_ITEMS} items")
        stack.extend((child, depth + 1) for child in children)
