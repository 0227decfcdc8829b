"""D-PARAM checks on the metric itself: a `:name` bind marker is legal only in a derive filter's
`where` (PARAM-SLOT-10), never in a metric expression, where it would be a silent literal."""

from __future__ import annotations

from dosi.errors import DiagnosticSink
from dosi.ext.params import bind_markers


def check_no_bind_markers(
    sink: DiagnosticSink, metric: str, text: str, path: str, line: int | None
) -> bool:
    """False (after an `invalid_datus_extension`) when the expression holds `:name`."""
    names = bind_markers(text)
    if not names:
        return True
    sink.error(
        "invalid_datus_extension",
        f"metric `{metric}`: bind parameter :{names[0]} is only legal in a derive filter "
        "`where`; the expression is the default instantiation, with the literal written out",
        path=path,
        line=line,
        hint=f"write the default value of {names[0]} in the expression",
    )
    return False
