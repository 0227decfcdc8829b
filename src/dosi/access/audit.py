"""The audit trail (issue 30 item 5): one JSON line per request on the logger `dosi.audit`,
with the user, the surface (python, rest, mcp, pg), the metrics asked for and the outcome;
never a token, password or attribute value."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterable
from typing import Any

audit_log = logging.getLogger("dosi.audit")

TOKEN_USER_NAME = "token"  # the shared DOSI_TOKEN as an identity (group `token`)


def request_metrics(body: Any) -> list[str]:
    """The metric names a request body asks for (a query, an attribution, a select)."""
    if not isinstance(body, dict):
        return []
    names = body.get("metrics")
    if isinstance(names, str):
        names = [names]
    if isinstance(names, list):
        return [n for n in names if isinstance(n, str)][:100]
    one = body.get("metric")
    return [one] if isinstance(one, str) else []


def audit(
    surface: str,
    user: str | None,
    action: str,
    metrics: Iterable[str] = (),
    outcome: str = "ok",
    **extra: Any,
) -> None:
    if not audit_log.isEnabledFor(logging.INFO):
        return
    line = {
        "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "surface": surface,
        "user": user,
        "action": action,
        "metrics": [m[:200] for m in list(metrics)[:100]],
        "outcome": outcome,
        **extra,
    }
    audit_log.info(json.dumps(line, ensure_ascii=False, default=str))


def audit_to_stderr() -> None:
    """Servers write the audit lines to stderr (once, whatever calls it first)."""
    if any(getattr(h, "_dosi_audit", False) for h in audit_log.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler._dosi_audit = True  # type: ignore[attr-defined]
    audit_log.addHandler(handler)
    audit_log.setLevel(logging.INFO)
    audit_log.propagate = False
