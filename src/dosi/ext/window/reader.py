"""Reading a `window` payload: the diagnostics and value checks every family parser shares.

Every violation is an `invalid_datus_extension` diagnostic whose message starts with the exact
key path (e.g. `window.frame.preceding`) and whose hint says how to fix it (WM "Validation").
A parser reports through one `WindowReader` and answers None when it reported anything.
"""

from __future__ import annotations

from typing import Any

from dosi.errors import DiagnosticSink, closest
from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as _show

INVALID = "invalid_datus_extension"


def present(obj: dict[str, Any], key: str) -> bool:
    """A key counts as set when present and not JSON null (null ≡ absent)."""
    return obj.get(key) is not None


def alternatives(options: tuple[str, ...] | list[str]) -> str:
    quoted = [f'"{o}"' for o in options]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def show(value: Any) -> str:
    return _show(value)


class WindowReader:
    """The diagnostics of one `window` payload and the in-family features it uses."""

    def __init__(self, path: str | None, sink: DiagnosticSink) -> None:
        self.path = path
        self.sink = sink
        self.errors = 0
        self.features: list[str] = []

    def err(
        self, key: str, message: str, hint: str | None = None, candidates: list[str] | None = None
    ) -> None:
        self.errors += 1
        self.sink.error(
            INVALID,
            f"`{key}` {message}",
            path=self.path,
            hint=hint,
            candidates=tuple(candidates or ()),
        )

    def feature(self, name: str) -> None:
        """An in-family shape the version gate dates (`registry.WINDOW_FEATURES`)."""
        if name not in self.features:
            self.features.append(name)

    def obj(self, key: str, value: Any) -> dict[str, Any] | None:
        if isinstance(value, dict):
            return value
        self.err(key, f"must be a JSON object (got {json_type(value)} {_show(value)})")
        return None

    def deny_unknown(self, key: str, obj: dict[str, Any], allowed: tuple[str, ...]) -> None:
        """Unknown keys inside family / modifier objects are rejected (WIN-PAY-06)."""
        for k in obj:
            if k not in allowed:
                self.err(
                    f"{key}.{k}",
                    f"is not a key of `{key}`: unknown keys are rejected here so that an "
                    "in-family addition this engine predates is never silently dropped",
                    hint=f"allowed keys: {', '.join(allowed)}",
                    candidates=closest(k, allowed),
                )

    def enum(
        self, key: str, value: Any, allowed: tuple[str, ...], hint: str | None = None
    ) -> str | None:
        if isinstance(value, str) and value in allowed:
            return value
        cands = closest(value, allowed) if isinstance(value, str) else []
        self.err(key, f"must be {alternatives(allowed)} (got {_show(value)})", hint, cands)
        return None

    def int_min(self, key: str, value: Any, minimum: int, hint: str | None = None) -> int | None:
        if is_int(value) and value >= minimum:
            return int(value)
        if is_int(value):
            self.err(key, f"must be an integer >= {minimum} (got {value})", hint)
        else:
            self.err(
                key,
                f"must be an integer >= {minimum} (got {json_type(value)} {_show(value)})",
                hint,
            )
        return None

    def boolean(self, key: str, value: Any) -> bool | None:
        if isinstance(value, bool):
            return value
        self.err(key, f"must be true or false (got {json_type(value)} {_show(value)})")
        return None

    def metric_name(self, key: str, value: Any) -> str | None:
        if isinstance(value, str) and value.strip() and value == value.strip():
            return value
        self.err(
            key,
            f"must be a metric name: a non-empty string without surrounding spaces (got "
            f"{json_type(value)} {_show(value)})",
        )
        return None
