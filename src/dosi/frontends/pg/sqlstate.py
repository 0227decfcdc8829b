"""dosi's structured errors as PostgreSQL ErrorResponse fields: a SQLSTATE per code, the
message prefixed with the code and followed by the candidates, the hint, and the whole error
body as JSON in the detail field (for tools that want `suggested_retry`)."""

from __future__ import annotations

import json

from dosi.errors import ExecuteError, ModelError, OsiError
from dosi.frontends.contract import osi_error_body

_BY_CODE = {
    "sql_syntax_error": "42601",
    "sql_unknown_table": "42P01",
    "sql_unknown_column": "42703",
    "unknown_dimension": "42703",
    "unknown_metric": "42703",
    "unknown_field": "42703",
    "sql_grouping_error": "42803",
    "sql_aggregate_mismatch": "42803",
    "aggregate_in_where": "42803",
    "sql_unsupported": "0A000",
    "not_implemented": "0A000",
    "unsupported_filter": "0A000",
    "filter_type_mismatch": "42804",
    "filter_too_complex": "54001",
    "timeout": "57014",
    "cancelled": "57014",
    "memory_limit": "53200",
    "result_too_large": "54000",
    "connection_lost": "08006",
    "warehouse_unavailable": "08001",
    "read_only": "25006",
    "transaction_aborted": "25P02",
    "unknown_cursor": "34000",
    "unknown_statement": "26000",
    "unknown_portal": "34000",
    "protocol_violation": "08P01",
    "invalid_password": "28P01",
    "too_many_connections": "53300",
    "unknown_setting": "42704",
    "catalog_query_failed": "42000",
    "access_denied": "42501",  # insufficient_privilege (issue 30)
    "access_attribute_missing": "42501",
    "access_attribute_type": "42501",
    "access_policy_invalid": "42501",
    "access_config_invalid": "42501",
    "unauthorized": "28000",
}


def sqlstate(err: OsiError) -> str:
    found = _BY_CODE.get(err.code)
    if found is not None:
        return found
    if isinstance(err, ModelError):
        return "XX000"
    if isinstance(err, ExecuteError):
        return "58000" if err.code != "internal" else "XX000"
    return "42000"


def error_fields(err: OsiError, severity: str = "ERROR") -> dict[str, str]:
    message = f"[{err.code}] {err.message}"
    if err.candidates:
        message += f" (did you mean: {', '.join(err.candidates[:10])})"
    fields = {"S": severity, "V": severity, "C": sqlstate(err), "M": message}
    if err.hint:
        fields["H"] = err.hint
    fields["D"] = json.dumps(osi_error_body(err), default=str)[:4000]
    return fields
