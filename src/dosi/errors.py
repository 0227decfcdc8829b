"""Structured errors and diagnostics: every rejection carries a stable `code`.

Agents retry on `code` / `candidates` / `suggested_retry` without parsing prose; people read
`message` and `hint` (docs/errors.md, "The contract").
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Severity = Literal["error", "warning"]
ModelStage = Literal["io", "parse", "invalid_model", "compile_error"]

#: Error and diagnostic messages are cut to this length, issue lists to MAX_LISTED_ISSUES.
MAX_MESSAGE_CHARS = 2_000
MAX_LISTED_ISSUES = 50


@dataclass(frozen=True)
class Diagnostic:
    """One finding about a model or query: an error or a warning, with its location."""

    code: str
    message: str
    severity: Severity = "error"
    path: str | None = None
    line: int | None = None
    hint: str | None = None
    candidates: tuple[str, ...] = ()
    stage: ModelStage | None = None  # None: the stage its code implies (see `model_stage`)

    def __post_init__(self) -> None:
        if len(self.message) > MAX_MESSAGE_CHARS:
            cut = self.message[:MAX_MESSAGE_CHARS] + f"... ({len(self.message)} characters)"
            object.__setattr__(self, "message", cut)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }
        if self.path is not None:
            out["path"] = self.path
            out["location"] = self.path  # the reference engine's name for it
        if self.line is not None:
            out["line"] = self.line
        if self.hint:
            out["hint"] = self.hint
        if self.candidates:
            out["candidates"] = list(self.candidates)
        return out

    def located(self) -> str:
        """The message prefixed with where it applies: `path (line N): message`."""
        where = f"{self.path}" if self.path else ""
        if self.line is not None:
            where += f" (line {self.line})"
        return f"{where + ': ' if where else ''}{self.message}"

    def __str__(self) -> str:
        return f"[{self.code}] {self.located()}"

    def __getitem__(self, key: str) -> Any:
        """Read like the reference's issue dicts (`issue["code"]`, `issue.get("path")`)."""
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_dict().get(key, default)


STAGE_ORDER: tuple[ModelStage, ...] = ("io", "parse", "invalid_model", "compile_error")

# The reference's stages: the file cannot be read (`io`); the text is not YAML/JSON of the
# schema's shape (`parse`); the document has the shape but breaks a structural rule
# (`invalid_model`); a field, metric or extension fails to compile (`compile_error`).
_STAGE_OF_CODE: dict[str, ModelStage] = {
    "model_not_found": "io",
    "invalid_yaml": "parse",
    "invalid_model": "parse",
    "unknown_model_key": "parse",
    "missing_model_key": "parse",
    "invalid_model_value": "parse",
    "unsupported_version": "invalid_model",
    "empty_datasets": "invalid_model",
    "duplicate_name": "invalid_model",
    "column_count_mismatch": "invalid_model",
}


def model_stage(d: Diagnostic) -> ModelStage:
    """The loading stage a model diagnostic belongs to (ModelError.code). A new code raised
    while reading or parsing names its stage (`stage=`) or joins the table above."""
    return d.stage or _STAGE_OF_CODE.get(d.code, "compile_error")


def at_stage(issues: Sequence[Diagnostic], stage: ModelStage) -> list[Diagnostic]:
    """Issues raised by one loading step: those that name no stage and whose code the table
    does not know belong to that step's stage."""
    return [d if d.stage or d.code in _STAGE_OF_CODE else replace(d, stage=stage) for d in issues]


class OsiError(Exception):
    """Base of every error the public API raises."""

    kind = "error"

    def __init__(
        self,
        code: str,
        message: str,
        *,
        candidates: Iterable[str] = (),
        hint: str | None = None,
        suggested_retry: dict[str, Any] | None = None,
        detail: dict[str, Any] | None = None,
        metrics: Iterable[str] = (),
        missing_dimensions: Iterable[str] = (),
    ) -> None:
        if len(message) > MAX_MESSAGE_CHARS:  # no unbounded value is ever formatted in full
            message = message[:MAX_MESSAGE_CHARS] + f"... ({len(message)} characters)"
        super().__init__(message)
        self.code = code
        self.message = message
        self.candidates = list(candidates)
        self.hint = hint
        self.suggested_retry = suggested_retry
        self.detail = detail
        self.metrics = list(metrics)
        self.missing_dimensions = list(missing_dimensions)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "error": self.kind,
            "code": self.code,
            "message": self.message,
            "metrics": self.metrics,
            "candidates": self.candidates,
            "hint": self.hint,
            "suggested_retry": self.suggested_retry,
            "detail": self.detail,
        }
        if self.missing_dimensions:
            out["missing_dimensions"] = self.missing_dimensions
        return out

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.candidates:
            text += f" (did you mean: {', '.join(self.candidates)})"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


class ModelError(OsiError):
    """A model that cannot be loaded or compiled.

    `code` is the stage that failed, as the reference reports it (`io`, `parse`,
    `invalid_model`, `compile_error`: the earliest stage any issue belongs to); every issue,
    with its own precise code, is in `issues` (Diagnostics) and `compile_errors` (the same
    list as dicts, the reference's attribute).
    """

    kind = "model_error"

    def __init__(self, issues: Sequence[Diagnostic], warnings: Sequence[Diagnostic] = ()) -> None:
        issues = list(issues)
        first = issues[0]
        if len(issues) == 1:
            message = first.located()
        else:
            message = f"{len(issues)} problems in the model:\n" + "\n".join(
                f"  - {d}" for d in issues[:MAX_LISTED_ISSUES]
            )
            if len(issues) > MAX_LISTED_ISSUES:
                message += f"\n  ... and {len(issues) - MAX_LISTED_ISSUES} more"
        stage = min((model_stage(d) for d in issues), key=STAGE_ORDER.index)
        super().__init__(
            stage,
            message,
            candidates=first.candidates,
            hint=first.hint,
            detail={"issues": [d.to_dict() for d in issues]},
        )
        self.issues = issues
        self.warnings = list(warnings)

    @property
    def compile_errors(self) -> list[dict[str, Any]]:
        """Every issue as a dict with its precise code (reference-compatible attribute)."""
        return [d.to_dict() for d in self.issues]

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["issues"] = [d.to_dict() for d in self.issues]
        out["compile_errors"] = self.compile_errors
        return out


class QueryError(OsiError):
    """A query that cannot be resolved or planned against the model."""

    kind = "query_error"


class QueryShapeError(QueryError, ValueError):
    """A query whose JSON shape is wrong; also a ValueError, as the reference raises one."""


class AccessError(OsiError):
    """A request the caller's identity may not make (access policies, docs/access-policies.md):
    an unknown credential, a hidden member, or a policy that does not compile for this user."""

    kind = "access_error"


class ExecuteError(OsiError):
    """A compiled query that failed on the database, or a connection problem."""

    kind = "execute_error"


def closest(name: str, options: Iterable[str], n: int = 5) -> list[str]:
    """Closest valid names for a near miss (case-insensitive, then fuzzy)."""
    opts = list(dict.fromkeys(options))
    if not isinstance(name, str) or len(name) > 200:  # no fuzzy matching on huge input
        return []
    low = name.lower()
    exact_ci = [o for o in opts if o.lower() == low]
    tail = [o for o in opts if o.lower().endswith("." + low) or low.endswith("." + o.lower())]
    lowered = {o.lower(): o for o in opts}
    fuzzy = [lowered[m] for m in difflib.get_close_matches(low, list(lowered), n=n, cutoff=0.5)]
    subs = [o for o in opts if low and (low in o.lower() or o.lower() in low)]
    out: list[str] = []
    for o in exact_ci + tail + fuzzy + subs:
        if o not in out:
            out.append(o)
    return out[:n]


@dataclass
class DiagnosticSink:
    """Collects diagnostics during a pass so one run reports every problem."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, code: str, message: str, **kw: Any) -> None:
        self.items.append(Diagnostic(code, message, "error", **kw))

    def warn(self, code: str, message: str, **kw: Any) -> None:
        self.items.append(Diagnostic(code, message, "warning", **kw))

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        self.items.extend(diags)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "warning"]


class ArgumentError(OsiError, ValueError):
    """A bad argument to the public API (a mode, a timeout, a path); also a ValueError."""

    kind = "usage_error"

    def __init__(self, message: str, **kw: Any) -> None:
        super().__init__("invalid_argument", message, **kw)


def bounded(value: Any, limit: int = 80) -> str:
    """`repr(value)` cut to `limit` characters, safe on anything (huge ints, aliased YAML,
    objects whose repr fails): an error message never formats an unbounded value."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"
    if isinstance(value, (list, tuple, dict, set)):
        kind = type(value).__name__
        return f"<a {kind} of {len(value)} items>"
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
