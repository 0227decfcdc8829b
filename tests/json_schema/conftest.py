"""Every model the test session compiles is also validated against the JSON Schema.

Loaded when this folder is collected (so a full run checks the whole suite's models): the
loader's `read_document` is wrapped to record each model text it reads; at the end of the
session every recorded document the schema rejects is compiled again, and one the engine
accepts fails the session (the schema must never reject a model the engine loads)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from schemakit import schema_errors

from dosi.compiler import model_compiler
from dosi.errors import ModelError

_SEEN: dict[str, None] = {}
_read = model_compiler.read_document


def _recording(text: str) -> Any:
    if isinstance(text, str) and len(text) < 1_000_000 and len(_SEEN) < 50_000:
        _SEEN.setdefault(text, None)
    return _read(text)


model_compiler.read_document = _recording


def _misses() -> list[str]:
    out = []
    for text in _SEEN:
        try:
            doc = yaml.safe_load(text)
        except (yaml.YAMLError, ValueError, RecursionError):
            continue
        if not isinstance(doc, dict) or doc.get("version") != "0.2.0.dev0":
            continue  # not a document of the current version: the loader's own business
        if "semantic_model" not in doc:
            continue  # a flat document: the loader wraps it (model_document_wrapped warning)
        errors = schema_errors(doc)
        if not errors:
            continue
        try:
            model_compiler.compile_model_text(text, "datus", trust_sql=True)
        except (ModelError, RecursionError):
            continue
        except Exception:  # a model the engine cannot load in any case
            continue
        out.append(f"{errors[0]}\n--- model ---\n{text[:2000]}")
    return out


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _SEEN:
        return
    misses = _misses()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(
            f"JSON Schema: {len(_SEEN)} models read by the suite checked, {len(misses)} "
            "accepted by the engine but rejected by the schema"
        )
    if misses:
        if reporter is not None:
            for miss in misses[:3]:
                reporter.write_line(miss)
            for miss in misses[3:30]:
                reporter.write_line(miss.split("\n", 1)[0])
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
