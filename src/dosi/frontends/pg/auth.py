"""Who may connect: a pluggable check of the startup user and the password message.

`TokenAuth` is the REST token (`DOSI_TOKEN`) over PostgreSQL: the password is the token, the
user name is only a label. `AccessAuth` checks the access file's users (issue 30 item 1): the
user name and its password (or one of its API tokens as the password); the identity then
carries the user the session answers as (docs/access-policies.md).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Protocol

from dosi.access import UserContext
from dosi.access.audit import TOKEN_USER_NAME
from dosi.access.policy import AccessSource
from dosi.errors import AccessError

TOKEN_USER = UserContext(TOKEN_USER_NAME, ("token",))


@dataclass(frozen=True)
class Identity:
    """The authenticated caller: the startup user, how it proved itself, and the access
    file's user it is (None without an access file)."""

    user: str
    method: str  # "trust", "token", "password"
    context: UserContext | None = None


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


class AccessAuth:
    """The access file's users: `user` + its password (scrypt or sha256 hash), or one of its
    API tokens; the shared token (if any) is the user `token`. An access file that does not
    read refuses everyone (fail closed)."""

    needs_password = True

    def __init__(self, source: AccessSource, token: str | None = None) -> None:
        self.source = source
        self._token = token.encode() if token else None

    def check(self, user: str, password: str | None, database: str) -> Identity | None:
        if password is None:
            return None
        if self._token is not None and hmac.compare_digest(password.encode(), self._token):
            return Identity(user, "token", TOKEN_USER)
        try:
            ids = self.source.current().identities
        except AccessError:
            return None
        found = ids.by_password(user, password)
        if found is not None:
            return Identity(user, "password", found)
        by_token = ids.by_token(password)
        if by_token is not None and by_token.name == user:
            return Identity(user, "token", by_token)
        return None


def authenticator(token: str | None, access: AccessSource | None = None) -> Authenticator:
    if access is not None:
        return AccessAuth(access, token)
    return TokenAuth(token) if token else TrustAuth()
