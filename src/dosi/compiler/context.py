"""What every model-compile pass shares: the diagnostic sink, YAML lines, mode and trust.

The passes (datasets, relationships, metrics, ...) are plain functions over this context and
the IR built so far, so each concern lives in its own module and the IR is built once, from
finished pieces (issue 10, "Layers one way").
"""

from __future__ import annotations

from dataclasses import dataclass

from dosi import ext
from dosi.errors import DiagnosticSink
from dosi.model.loader import LineIndex
from dosi.model.schema import raw_extensions


@dataclass(frozen=True)
class Site:
    """Where a diagnostic points: the object path and its YAML line."""

    path: str
    line: int | None


@dataclass(frozen=True)
class CompileContext:
    mode: str
    sink: DiagnosticSink
    lines: LineIndex
    trust_sql: bool = False
    # the engine the model runs on (a dosi dialect key): an expression entry written for it
    # wins over ANSI_SQL (datus-extensions / Ossie "Multi-Dialect Field")
    target: str | None = None

    def line(self, steps: list[tuple[str, str | None]]) -> int | None:
        return self.lines.line_of_named(steps)

    def read_ext(self, carrier: str, path: str, exts: object, line: int | None) -> object:
        """The DATUS payload of one object, read only through `dosi.ext`; its diagnostics point
        at the object's line when the reader could not name one."""
        result = ext.read_extensions(carrier, path, raw_extensions(exts), self.mode)  # type: ignore[arg-type]
        for d in result.diagnostics:
            if d.line is None and line is not None:
                d = type(d)(d.code, d.message, d.severity, d.path, line, d.hint, d.candidates)
            self.sink.items.append(d)
        return result.payload

    def untrusted(self, where: str, what: str, path: str, line: int | None) -> None:
        self.sink.error(
            "untrusted_sql",
            f"{where} uses {what}; model SQL may not write, run statements or read files or "
            "settings",
            path=path,
            line=line,
            hint="remove it, or load the model with trust_sql=True (CLI --trust-sql) if you "
            "trust its author",
        )

    def check_unique(self, names: list[str], kind: str, key: str) -> None:
        """Ossie names are unique per kind; a repeat points at its own declaration."""
        seen: set[str] = set()
        for i, n in enumerate(names):
            if n in seen:
                self.sink.error(
                    "duplicate_name",
                    f"{kind} name `{n}` is declared more than once",
                    path=f"{key}[{n}]",
                    # the line of this (repeated) declaration, not of the first one
                    line=self.lines.line_of(("semantic_model", 0, key, i)),
                    hint=f"give every {kind} a unique name",
                )
            seen.add(n)
