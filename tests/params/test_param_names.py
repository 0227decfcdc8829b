"""D-PARAM column naming (PARAM-OUT-02..05, PARAM-TOK-01..06): the value renderer, the ASCII
sanitizer and the opaque FNV-1a token rule. The hash is recomputed here by a separate plain
Python loop over the frozen constants, so the test does not read the implementation's."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from dosi.errors import DiagnosticSink
from dosi.ext.params import MetricParams, ParamDecl
from dosi.ext.params_naming import column_name, number_text, stem, string_tokens, warn_opaque


def fnv_top(text: str, bits: int = 32) -> str:
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 0x1000001B3) % (1 << 64)
    return f"h{h >> 32:08x}" if bits == 32 else f"h{h:016x}"


def s(*allowed: str) -> ParamDecl:
    return ParamDecl("r", "string", allowed[0], tuple(allowed))


def test_param_out_02_03_numbers() -> None:
    """PARAM-OUT-03: 1.5 -> 1_5; 2.0 -> 2; negatives get `neg`; no exponent notation."""
    assert [number_text(v) for v in (6, 0, -3, 1.5, 2.0, -1.5, 0.25, 1e-7, 1e20)] == [
        "6",
        "0",
        "neg3",
        "1_5",
        "2",
        "neg1_5",
        "0_25",
        "0_0000001",
        "100000000000000000000",
    ]
    n = ParamDecl("n", "int", 3, None, 1)
    t = ParamDecl("t", "float", 1.5)
    assert column_name("moving_avg", [(n, 6)]) == "moving_avg__n_6"
    assert column_name("m", [(n, 6), (t, 2.5)]) == "m__n_6__t_2_5"


def test_param_out_03_sanitizer() -> None:
    """PARAM-OUT-03: o'neil -> o_neil; runs collapse, ends trim, non-ASCII is not a letter."""
    assert stem("o'neil") == "o_neil"
    assert stem("A.B  C") == "a_b_c"
    assert stem("__a__") == "a"
    assert stem("añb") == "a_b"
    assert stem("北") == ""


def test_param_tok_01_02_opaque_tokens_for_indistinct_values() -> None:
    """PARAM-TOK-01/02/05: values the sanitizer cannot tell apart (us-east / us_east, all-CJK)
    take `h` + 8 hex digits of FNV-1a; distinct readable values keep their stems."""
    domain = ("east", "o'neil", "us-east", "us_east", "北", "南")
    tokens = string_tokens(domain)
    assert tokens["east"] == "east" and tokens["o'neil"] == "o_neil"
    for v in ("us-east", "us_east", "北", "南"):
        assert tokens[v] == fnv_top(v)
        assert re.fullmatch(r"h[0-9a-f]{8}", tokens[v])
    assert column_name("by_channel", [(s(*domain), "北")]) == f"by_channel__r_{fnv_top('北')}"


def test_param_tok_05_reserved_shape_and_empty_stem() -> None:
    """PARAM-TOK-05: a stem of the reserved h<hex> shape, or an empty one, is tokenised."""
    tokens = string_tokens(("x", "h12345678", "H1234567890ABCDEF", "h1234567", ""))
    assert tokens["h12345678"] == fnv_top("h12345678")
    assert tokens["H1234567890ABCDEF"] == fnv_top("H1234567890ABCDEF")
    assert tokens["h1234567"] == "h1234567"  # 7 digits: not the reserved shape
    assert tokens[""] == "hcbf29ce4"  # no bytes: the offset basis


@given(st.lists(st.text(max_size=6), min_size=1, max_size=8, unique=True), st.randoms())
def test_param_tok_04_token_depends_only_on_value_and_domain(
    values: list[str], rnd: object
) -> None:
    """PARAM-TOK-04: reordering `allowed` never changes a value's suffix; suffixes are unique
    within the domain."""
    shuffled = list(values)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    a, b = string_tokens(tuple(values)), string_tokens(tuple(shuffled))
    assert a == b
    assert len(set(a.values())) == len(values)


def test_param_tok_06_warning_names_values_and_tokens() -> None:
    sink = DiagnosticSink()
    warn_opaque(MetricParams((s("east", "us-east", "us_east"),)), "metrics[m]", sink)
    [w] = sink.warnings
    assert w.code == "datus_param_opaque_token"
    assert f'"us-east" → _{fnv_top("us-east")}' in w.message
    assert '"east"' not in w.message
