"""Issue 27 item 2 (model load): the direct builder of plain YAML documents
(dosi.model.yaml_build) gives exactly what PyYAML's safe constructor gives, or steps aside.

The builder skips PyYAML's constructor for mappings, sequences and strings; these tests compare
its output, value and type, with `yaml.load(..., SafeLoader)` on generated documents (every
scalar kind, anchors and aliases, flow and block style) and on the constructs it must hand
back (merge keys, sets, unhashable keys), and check that a model loads the same either way.
"""

from __future__ import annotations

import datetime

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dosi.model.loader import _Loader, parse_document
from dosi.model.yaml_build import Fallback, build_document


def _built(text: str) -> object:
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        return build_document(loader, root)
    finally:
        loader.dispose()


def _same(a: object, b: object) -> bool:
    """Equal values of equal types all the way down (1 == 1.0 == True would hide a change)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.dates(),
    st.datetimes(timezones=st.none()),
    st.sampled_from(["yes", "No", "~", "0x1F", "0o17", "1_000", "1e3", "2024-01-01", ".inf"]),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=8), st.integers(), st.booleans()), inner, max_size=4
        ),
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(documents, st.booleans())
def test_issue27_builder_matches_safe_load(doc: object, flow: bool) -> None:
    text = yaml.safe_dump(doc, default_flow_style=flow, allow_unicode=True)
    want = yaml.load(text, Loader=yaml.SafeLoader)
    assert _same(_built(text), want)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
        min_size=1,
        max_size=4,
    )
)
def test_issue27_aliases_share_one_object(items: list[dict[str, str]]) -> None:
    """PyYAML's dump of a shared object writes an anchor and aliases; both builders share it."""
    doc = {"a": items, "b": items, "c": [items[0], items[0]]}
    text = yaml.safe_dump(doc)
    got = _built(text)
    want = yaml.load(text, Loader=yaml.SafeLoader)
    assert _same(got, want)
    assert isinstance(got, dict)
    assert (got["a"] is got["b"]) == (want["a"] is want["b"])
    assert (got["c"][0] is got["c"][1]) == (want["c"][0] is want["c"][1])


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2\n",  # merge key
        "s: !!set {a, b}\n",
        "o: !!omap [{a: 1}, {b: 2}]\n",
        "? [1, 2]\n: v\n",  # a sequence as a key
        "x: !!str [1]\n",  # a tag on the wrong kind of node
        "x: !custom 1\n",
    ],
)
def test_issue27_builder_steps_aside(text: str) -> None:
    """What only PyYAML's constructor builds (or rejects) goes back to it."""
    with pytest.raises(Fallback):
        _built(text)


def test_issue27_parse_document_same_either_way() -> None:
    """parse_document falls back to PyYAML: a merge key still merges, a set is still a set,
    an unhashable key is still invalid YAML, and plain values keep their types."""
    merged = parse_document("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2\n")
    assert merged == {"base": {"x": 1}, "child": {"x": 1, "y": 2}}
    assert parse_document("s: !!set {a, b}\n") == {"s": {"a", "b"}}
    plain = parse_document("a: 1\nb: 1.5\nc: true\nd: null\ne: 2024-01-02\nf: '1'\n")
    assert plain == {
        "a": 1,
        "b": 1.5,
        "c": True,
        "d": None,
        "e": datetime.date(2024, 1, 2),
        "f": "1",
    }
    with pytest.raises(Exception) as err:
        parse_document("? [1, 2]\n: v\n")
    assert getattr(err.value, "issues", None), "an unhashable key is a structured model error"
