"""Reading a REST request body: JSON that the engine and the response encoder can take.

A caller's mistake in the body is a 400 `invalid_json` naming the fix, never a 500 from deep
inside the decoder or the response encoder (issue 29, item 3): nesting deeper than
`MAX_DEPTH` levels, a lone UTF-16 surrogate (`"\\ud800"`, which no UTF-8 response can carry),
an integer of more digits than Python converts, or bytes that are not UTF-8 JSON."""

from __future__ import annotations

import json
from typing import Any

from dosi.frontends.contract import OsiErrorBody, error_body

#: No query, select, attribute or validate body needs more; a deeper one is a mistake or a probe.
MAX_DEPTH = 64


def _invalid(message: str, hint: str | None = None) -> OsiErrorBody:
    return OsiErrorBody(400, error_body("invalid_json", message, hint=hint))


def parse_body(raw: bytes) -> Any:
    """The JSON value of a request body, or OsiErrorBody(400, invalid_json)."""
    if not raw.strip():
        raise _invalid(
            "the request body is empty; send a JSON object",
            hint='the body is the query object, e.g. {"metrics": ["revenue"]}',
        )
    try:
        value = json.loads(raw)
    except RecursionError:
        raise _too_deep() from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _invalid(
            f"the request body is not valid JSON: {exc}",
            hint="send one JSON object encoded as UTF-8 (Content-Type: application/json)",
        ) from None
    except ValueError:  # int() refuses more than sys.get_int_max_str_digits() digits
        raise _invalid(
            "the request body holds an integer with too many digits",
            hint="send numbers of at most a few dozen digits (a limit, a parameter)",
        ) from None
    check_value(value)
    return value


def _too_deep() -> OsiErrorBody:
    return _invalid(
        f"the request body is nested deeper than {MAX_DEPTH} levels",
        hint="send the query object with its lists and objects at their usual depth",
    )


def check_value(value: Any) -> None:
    """Walk the parsed body without recursion: bounded depth, strings encodable as UTF-8."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                raise _too_deep()
            if isinstance(item, dict):
                for key, inner in item.items():
                    _check_text(key)
                    stack.append((inner, depth + 1))
            else:
                stack.extend((inner, depth + 1) for inner in item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _invalid(
            f"the request body holds a lone UTF-16 surrogate (\\u{ord(text[exc.start]):04x}) "
            f"at character {exc.start} of a string",
            hint="send text as valid Unicode: escape pairs like \\ud83d\\ude00 together, "
            "never half of one",
        ) from None
