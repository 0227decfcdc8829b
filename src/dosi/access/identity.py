"""Identities: users and API tokens with groups and attributes (issue 30 item 1).

Secrets are stored only as hashes (`sha256:<hex>` for high-entropy API tokens, `scrypt:...`
for passwords) and compared with `hmac.compare_digest`, every stored hash checked so the time
taken does not tell which entry came close."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dosi.errors import AccessError

#: A user attribute value: a scalar the row filters bind as a typed literal, or a list of them
ATTRIBUTE_SCALARS = (str, int, float, bool)
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


def _invalid(message: str, hint: str | None = None) -> AccessError:
    return AccessError(
        "access_config_invalid",
        message,
        hint=hint or "fix the identities file (docs/access-policies.md)",
    )


def check_attribute(name: str, value: Any) -> Any:
    """An attribute value as stored: a scalar, or a tuple of scalars (never a nested value)."""
    if isinstance(value, ATTRIBUTE_SCALARS):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, ATTRIBUTE_SCALARS) for v in value):
        return tuple(value)
    raise _invalid(
        f"attribute `{name}` must be a string, number, boolean or a list of them",
    )


@dataclass(frozen=True)
class UserContext:
    """The caller as policies see it: a name, groups and attributes (`region: EMEA`)."""

    name: str
    groups: tuple[str, ...] = ()
    attributes: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise _invalid("a user needs a non-empty `name`")
        groups = (self.groups,) if isinstance(self.groups, str) else tuple(self.groups)
        if not all(isinstance(g, str) and g for g in groups):
            raise _invalid(f"user `{self.name}`: `groups` must be a list of names")
        object.__setattr__(self, "groups", groups)
        if not isinstance(self.attributes, Mapping):
            raise _invalid(f"user `{self.name}`: `attributes` must be a mapping")
        attrs = {str(k): check_attribute(str(k), v) for k, v in self.attributes.items()}
        object.__setattr__(self, "attributes", MappingProxyType(attrs))

    def key(self) -> str:
        """A stable text of everything a policy reads (the scope cache key)."""
        attrs = {k: list(v) if isinstance(v, tuple) else v for k, v in self.attributes.items()}
        return json.dumps([self.name, sorted(self.groups), attrs], sort_keys=True, default=str)


def hash_secret(secret: str, scheme: str = "sha256") -> str:
    """The stored form of a token or password: `sha256:<hex>` or
    `scrypt:<n>:<r>:<p>:<salt hex>:<hash hex>` (what `dosi access hash` prints)."""
    raw = secret.encode("utf-8")
    if scheme == "sha256":
        return "sha256:" + hashlib.sha256(raw).hexdigest()
    if scheme == "scrypt":
        salt = os.urandom(16)
        digest = hashlib.scrypt(raw, salt=salt, dklen=32, **_SCRYPT)
        n, r, p = _SCRYPT["n"], _SCRYPT["r"], _SCRYPT["p"]
        return f"scrypt:{n}:{r}:{p}:{salt.hex()}:{digest.hex()}"
    raise _invalid(f"unknown hash scheme {scheme!r}", hint="use sha256 or scrypt")


def _check_hash(stored: str, what: str) -> str:
    parts = stored.split(":") if isinstance(stored, str) else []
    ok = (len(parts) == 2 and parts[0] == "sha256" and len(parts[1]) == 64) or (
        len(parts) == 6 and parts[0] == "scrypt" and all(parts[1:])
    )
    if not ok:
        raise _invalid(
            f"{what} is not a stored hash (`sha256:<hex>` or `scrypt:...`)",
            hint="store the hash, never the secret: `dosi access hash` prints it",
        )
    try:
        for piece in parts[1:]:
            int(piece, 16)
    except ValueError:
        raise _invalid(f"{what} is not a valid hash") from None
    return stored


def verify_secret(secret: str, stored: str) -> bool:
    """`secret` against a stored hash, in constant time for the digest comparison."""
    raw = secret.encode("utf-8")
    scheme, _, rest = stored.partition(":")
    if scheme == "sha256":
        return hmac.compare_digest(hashlib.sha256(raw).hexdigest(), rest)
    n, r, p, salt, want = rest.split(":")
    digest = hashlib.scrypt(
        raw, salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=len(want) // 2
    )
    return hmac.compare_digest(digest.hex(), want)


@functools.cache
def _dummy_scrypt() -> str:
    return hash_secret("dosi-no-such-user", "scrypt")


@dataclass(frozen=True)
class Credential:
    user: UserContext
    token_hashes: tuple[str, ...] = ()
    password_hash: str | None = None


class IdentityStore:
    """Every configured user; `by_token` for bearer tokens (REST, MCP), `by_password` for the
    SQL interface's user name and password."""

    def __init__(self, credentials: Iterable[Credential] = ()) -> None:
        self.credentials = tuple(credentials)
        names = [c.user.name for c in self.credentials]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise _invalid(f"user names appear twice: {', '.join(dupes)}")

    def __bool__(self) -> bool:
        return bool(self.credentials)

    def by_token(self, token: str) -> UserContext | None:
        found = None
        for c in self.credentials:  # every entry is checked: no early exit on a match
            for stored in c.token_hashes:
                if verify_secret(token, stored) and found is None:
                    found = c.user
        return found

    def by_password(self, name: str, password: str) -> UserContext | None:
        for c in self.credentials:
            if c.user.name == name and c.password_hash is not None:
                return c.user if verify_secret(password, c.password_hash) else None
        verify_secret(password, _dummy_scrypt())  # about the same work for an unknown name
        return None

    def user(self, name: str) -> UserContext | None:
        return next((c.user for c in self.credentials if c.user.name == name), None)


def read_users(entries: Any) -> IdentityStore:
    """The `users:` list of an access file (docs/access-policies.md "Identities")."""
    if entries is None:
        return IdentityStore()
    if not isinstance(entries, list):
        raise _invalid("`users` must be a list of users")
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise _invalid(f"users[{i}] must be a mapping")
        unknown = set(entry) - {
            "name",
            "groups",
            "attributes",
            "token_hash",
            "token_hashes",
            "password_hash",
        }
        if unknown:
            raise _invalid(f"users[{i}]: unknown keys {', '.join(sorted(map(str, unknown)))}")
        user = UserContext(
            str(entry.get("name") or ""),
            tuple(entry.get("groups") or ()),
            entry.get("attributes") or {},
        )
        tokens = list(entry.get("token_hashes") or ())
        if entry.get("token_hash") is not None:
            tokens.insert(0, entry["token_hash"])
        hashes = tuple(_check_hash(t, f"users[{i}] token hash") for t in tokens)
        pw = entry.get("password_hash")
        out.append(
            Credential(
                user,
                hashes,
                _check_hash(pw, f"users[{i}].password_hash") if pw is not None else None,
            )
        )
    return IdentityStore(out)
