"""The commented YAML writer: whatever the document holds, PyYAML reads back exactly the
document without its comments (a property over arbitrary text, numbers and nesting)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dosi.importers.yaml_writer import COMMENT, strip_comments, to_yaml

_text = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="\x85\u2028\u2029\ufeff"),
    max_size=30,
)
_scalar = st.one_of(
    _text, st.integers(-10**12, 10**12), st.booleans(), st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)  # fmt: skip
_key = st.one_of(
    st.text(min_size=1, max_size=12, alphabet=st.characters(exclude_categories=("Cs",))).filter(
        lambda k: k != COMMENT
    ),
    st.sampled_from(["expression", "dimension", "name"]),
)


def _tree(depth: int) -> st.SearchStrategy[Any]:
    if depth == 0:
        return _scalar
    inner = _tree(depth - 1)
    mapping = st.dictionaries(_key, inner, max_size=4)
    commented = st.tuples(mapping, st.one_of(st.none(), _text)).map(
        lambda pair: {COMMENT: pair[1], **pair[0]} if pair[1] else pair[0]
    )
    return st.one_of(_scalar, commented, st.lists(inner, max_size=4))


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(_key, _tree(3), max_size=5), st.one_of(st.none(), _text))
def test_round_trip(doc: dict[str, Any], header: str | None) -> None:
    text = to_yaml(doc, header)
    assert yaml.safe_load(text) == (strip_comments(doc) or None)
