"""Commented YAML for generated models.

PyYAML cannot write comments, and a model a person will edit next should say where each part
came from. This writer emits the Ossie document shape in the house style of `examples/`:
block mappings and lists, `expression` in flow style on one line, and any mapping's `"#"`
entry printed as `# ...` lines above the mapping (the key itself is never written). Every
scalar is rendered by PyYAML, so quoting is always valid YAML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

COMMENT = "#"

#: Mappings written in flow style on one line (short, and easier to read that way).
_FLOW_KEYS = frozenset({"expression", "dimension"})


_BREAKS = re.compile("[\x85\u2028\u2029\ufeff]")
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")


def _special(value: str) -> bool:
    """Text PyYAML would write over several lines or with characters YAML misreads."""
    return bool(
        _BREAKS.search(value)
        or _UNPRINTABLE.search(value)
        or any(ch.isspace() and ch != " " for ch in value)  # \n, \t, NBSP and the like
    )


def _unicode_ok(value: Any) -> bool:
    """PyYAML writes characters YAML reads as line breaks (NEL, LS, PS) raw when it may use
    Unicode; such scalars are written escaped instead."""
    return not (isinstance(value, str) and _BREAKS.search(value))


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _one_line(value: str) -> str:
    """A string as a one-line YAML double-quoted scalar: printable characters as they are,
    everything else (line breaks, controls) as YAML escapes."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif _BREAKS.match(ch) or _UNPRINTABLE.match(ch) or (ch.isspace() and ch != " "):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def scalar(value: Any) -> str:
    """One scalar as YAML text (quoted when YAML would otherwise misread it), on one line."""
    if isinstance(value, str) and _special(value):
        return _one_line(value)
    text = yaml.safe_dump(
        value, default_flow_style=True, allow_unicode=_unicode_ok(value), width=10**9
    )
    text = text.strip()
    if text.endswith("\n..."):
        text = text[: -len("\n...")]
    if text.endswith("..."):
        text = text[:-3].rstrip()
    return text


def flow_scalar(value: Any) -> str:
    """One scalar as YAML text inside a flow collection, where `,`, `[]` and `{}` are
    indicators: rendered as the only item of a flow list, so PyYAML quotes it as needed."""
    if isinstance(value, str) and _special(value):
        return _one_line(value)
    text = yaml.safe_dump(
        [value], default_flow_style=True, allow_unicode=_unicode_ok(value), width=10**9
    )
    return text.strip()[1:-1]


def flow(value: Any) -> str:
    """A small mapping or list in flow style (`{dialects: [{dialect: ANSI_SQL, ...}]}`)."""
    if isinstance(value, Mapping):
        inner = ", ".join(f"{flow_scalar(k)}: {flow(v)}" for k, v in value.items() if k != COMMENT)
        return "{" + inner + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return flow_scalar(value)


def _comment_lines(comment: Any, indent: str) -> list[str]:
    """`# ...` lines; characters YAML forbids even in comments are written as `\\xNN`."""
    text = "\n".join(comment) if isinstance(comment, (list, tuple)) else str(comment)
    text = _BREAKS.sub("\n", text)
    text = _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return [f"{indent}# {line}".rstrip() for line in text.splitlines()]


def _keys(obj: Mapping[str, Any]) -> list[str]:
    return [k for k in obj if k != COMMENT]


def _is_simple_list(value: Sequence[Any]) -> bool:
    return all(not isinstance(v, (Mapping, list, tuple)) for v in value)


def _mapping(obj: Mapping[str, Any], indent: str, first_prefix: str | None = None) -> list[str]:
    """Lines of a block mapping; `first_prefix` replaces the indent of the first key (the
    `- ` of a list item)."""
    lines: list[str] = []
    first = True
    for key, value in obj.items():
        if key == COMMENT:
            continue
        lead = first_prefix if first and first_prefix is not None else indent
        first = False
        head = f"{lead}{scalar(key)}:"
        if isinstance(value, Mapping) and (key in _FLOW_KEYS or not _keys(value)):
            lines.append(f"{head} {flow(value)}")
        elif isinstance(value, Mapping):
            if COMMENT in value:
                lines.extend(_comment_lines(value[COMMENT], indent + "  "))
            lines.append(head)
            lines.extend(_mapping(value, indent + "  "))
        elif isinstance(value, (list, tuple)):
            if not value or _is_simple_list(value):
                lines.append(f"{head} {flow(list(value))}")
            else:
                lines.append(head)
                lines.extend(_sequence(value, indent + "  "))
        else:
            lines.append(f"{head} {scalar(value)}")
    return lines


def _sequence(items: Sequence[Any], indent: str) -> list[str]:
    lines: list[str] = []
    for item in items:
        if isinstance(item, Mapping):
            if COMMENT in item:
                lines.extend(_comment_lines(item[COMMENT], indent))
            if not _keys(item):
                lines.append(f"{indent}- {{}}")
                continue
            lines.extend(_mapping(item, indent + "  ", first_prefix=indent + "- "))
        elif isinstance(item, (list, tuple)):
            lines.append(f"{indent}- {flow(list(item))}")
        else:
            lines.append(f"{indent}- {scalar(item)}")
    return lines


def to_yaml(document: Mapping[str, Any], header: str | Sequence[str] | None = None) -> str:
    """The document as commented YAML text; `header` becomes the file's opening comment."""
    lines: list[str] = []
    if header:
        lines.extend(_comment_lines(header, ""))
        lines.append("")
    if COMMENT in document:
        lines.extend(_comment_lines(document[COMMENT], ""))
    lines.extend(_mapping(document, ""))
    return "\n".join(lines) + "\n"


def strip_comments(value: Any) -> Any:
    """The document without its `"#"` entries (what a loader sees)."""
    if isinstance(value, Mapping):
        return {k: strip_comments(v) for k, v in value.items() if k != COMMENT}
    if isinstance(value, (list, tuple)):
        return [strip_comments(v) for v in value]
    return value
