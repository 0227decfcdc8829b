"""The shared bearer token (`DOSI_TOKEN`), checked once at start-up by every server that
takes it (REST, MCP over HTTP, the PostgreSQL wire server): no server extra is needed."""

from __future__ import annotations

from dosi.errors import ArgumentError


def usable_token(token: str | None) -> str | None:
    """The bearer token, checked at start-up: an empty or blank token, one with spaces or
    control characters at its edges or inside, or one not encodable as UTF-8 (a non-UTF-8
    environment) is an ArgumentError, never silently no authentication."""
    if token is None:
        return None
    fix = "set DOSI_TOKEN (or --token) to a non-empty secret of printable characters, or unset it"
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        raise ArgumentError("the token is not valid UTF-8 text", hint=fix) from None
    if not token.strip():
        raise ArgumentError("the token is empty", hint=fix)
    if any(not ch.isprintable() or ch.isspace() for ch in token):
        raise ArgumentError("the token holds a space or a control character", hint=fix)
    return token
