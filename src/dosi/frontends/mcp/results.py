"""MCP tool results: a value as JSON (text content plus structured content), and every failure,
bugs included, as an `is_error` result whose JSON is the error contract (`code`, `message`,
`candidates`, `hint`, `suggested_retry`), the same as REST's."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp_types import CallToolResult, TextContent

from dosi.errors import OsiError
from dosi.frontends.contract import OsiErrorBody, error_body, json_safe, osi_error_body


def ok_result(value: Any) -> CallToolResult:
    data = json_safe(value)
    structured = data if isinstance(data, dict) else {"result": data}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
        structured_content=structured,
    )


def error_result(body: dict[str, Any]) -> CallToolResult:
    body = json_safe(body)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def guarded(fn: Callable[[], Any]) -> CallToolResult:
    """`fn()` as a tool result: its value, or its failure as the error contract."""
    try:
        return ok_result(fn())
    except OsiErrorBody as err:
        return error_result(err.body)
    except OsiError as err:
        return error_result(osi_error_body(err))
    except Exception as exc:  # the contract holds for bugs too
        return error_result(
            error_body(
                "internal",
                f"the engine failed ({type(exc).__name__}: {exc})",
                hint="this is a bug in dosi; please report it",
                kind="internal_error",
            )
        )
