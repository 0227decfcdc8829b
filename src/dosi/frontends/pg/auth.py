"""Who may connect: a pluggable check of the startup user and the password message.

`TokenAuth` is the REST token (`DOSI_TOKEN`) over PostgreSQL: the password is the token, the
user name is only a label. A later identity scheme plugs in as another `Authenticator`
returning the identity the session then carries.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Identity:
    """The authenticated caller: the startup user and how it proved itself."""

    user: str
    method: str  # "trust", "token", ...


class Authenticator(Protocol):
    """`needs_password`: ask the client for a password; `check` the identity or None."""

    needs_password: bool

    def check(self, user: str, password: str | None, database: str) -> Identity | None: ...


class TrustAuth:
    """No credentials configured: everyone connects (bind to localhost)."""

    needs_password = False

    def check(self, user: str, password: str | None, database: str) -> Identity | None:
        return Identity(user, "trust")


class TokenAuth:
    """The password must equal the configured token (compared in constant time)."""

    needs_password = True

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("an empty token would let anyone in")
        self._token = token.encode()

    def check(self, user: str, password: str | None, database: str) -> Identity | None:
        if password is None or not hmac.compare_digest(password.encode(), self._token):
            return None
        return Identity(user, "token")


def authenticator(token: str | None) -> Authenticator:
    return TokenAuth(token) if token else TrustAuth()
