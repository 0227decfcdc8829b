"""The access file: identities and policies (issue 30 item 2, docs/access-policies.md).

A policy names the groups (or users) it applies to, which metrics, dimensions and datasets
they see (`"*"`, glob includes, excludes) and row filters over dataset fields with
`{user.<attribute>}` placeholders. A user whose groups match no policy sees nothing (deny by
default); several matching policies add up (members: union, rows: OR)."""

from __future__ import annotations

import fnmatch
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dosi.access.identity import IdentityStore, UserContext, read_users
from dosi.errors import AccessError

MAX_ACCESS_FILE_BYTES = 4_000_000
_POLICY_KEYS = frozenset({"name", "groups", "users", "metrics", "dimensions", "datasets", "rows"})
_FILE_KEYS = frozenset({"version", "users", "policies"})


def _invalid(message: str) -> AccessError:
    return AccessError(
        "access_config_invalid",
        message,
        hint="fix the access file (docs/access-policies.md); until then every request of a "
        "policed surface is refused",
    )


@dataclass(frozen=True)
class MemberRule:
    """`include` patterns (fnmatch globs, `"*"` all) minus `exclude` patterns."""

    include: tuple[str, ...] = ("*",)
    exclude: tuple[str, ...] = ()

    def allows(self, name: str) -> bool:
        hit = any(fnmatch.fnmatchcase(name, p) for p in self.include)
        return hit and not any(fnmatch.fnmatchcase(name, p) for p in self.exclude)


def _names(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise _invalid(f"{where} must be a name or a list of names")


def _rule(value: Any, where: str) -> MemberRule:
    if value is None:
        return MemberRule()
    if isinstance(value, (str, list)):
        return MemberRule(_names(value, where))
    if isinstance(value, dict) and set(value) <= {"include", "exclude"}:
        include = _names(value.get("include", "*"), f"{where}.include")
        exclude = (
            _names(value.get("exclude", []), f"{where}.exclude") if value.get("exclude") else ()
        )
        return MemberRule(include, exclude)
    raise _invalid(f'{where} must be "*", a list of names, or {{include, exclude}}')


@dataclass(frozen=True)
class RowRule:
    """One row filter: its text, and the dataset it restricts when that is not the dataset
    its fields belong to (`{dataset: orders, filter: "customers.region = ..."}`: the orders
    whose customer passes, through the many-to-one relationships)."""

    text: str
    dataset: str | None = None


def _row_rule(name: str, entry: Any) -> RowRule:
    if isinstance(entry, str) and entry.strip():
        return RowRule(entry)
    if (
        isinstance(entry, dict)
        and set(entry) == {"dataset", "filter"}
        and isinstance(entry["dataset"], str)
        and isinstance(entry["filter"], str)
        and entry["filter"].strip()
    ):
        return RowRule(entry["filter"], entry["dataset"])
    raise _invalid(f"policy `{name}`: each of `rows` is a filter text or {{dataset, filter}}")


@dataclass(frozen=True)
class Policy:
    name: str
    groups: tuple[str, ...]
    users: tuple[str, ...]
    metrics: MemberRule
    dimensions: MemberRule
    datasets: MemberRule
    rows: tuple[RowRule, ...]

    def matches(self, user: UserContext) -> bool:
        if user.name in self.users:
            return True
        return "*" in self.groups or any(g in self.groups for g in user.groups)


def _policy(i: int, entry: Any) -> Policy:
    where = f"policies[{i}]"
    if not isinstance(entry, dict):
        raise _invalid(f"{where} must be a mapping")
    unknown = set(entry) - _POLICY_KEYS
    if unknown:
        raise _invalid(f"{where}: unknown keys {', '.join(sorted(map(str, unknown)))}")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid(f"{where} needs a `name`")
    groups = _names(entry["groups"], f"{where}.groups") if "groups" in entry else ()
    users = _names(entry["users"], f"{where}.users") if "users" in entry else ()
    if not groups and not users:
        raise _invalid(f"policy `{name}` names no `groups` or `users`: it would apply to nobody")
    rows = entry.get("rows") or []
    if isinstance(rows, str):
        rows = [rows]
    if not isinstance(rows, list):
        raise _invalid(f"policy `{name}`: `rows` must be a list of filters")
    return Policy(
        name,
        groups,
        users,
        _rule(entry.get("metrics"), f"{where}.metrics"),
        _rule(entry.get("dimensions"), f"{where}.dimensions"),
        _rule(entry.get("datasets"), f"{where}.datasets"),
        tuple(_row_rule(name, r) for r in rows),
    )


@dataclass(frozen=True)
class PolicySet:
    policies: tuple[Policy, ...]

    def for_user(self, user: UserContext) -> tuple[Policy, ...]:
        return tuple(p for p in self.policies if p.matches(user))


@dataclass(frozen=True)
class AccessConfig:
    """One reading of the access file: the policies (None: no `policies` key, so identities
    only authenticate) and the identities."""

    policies: PolicySet | None
    identities: IdentityStore
    stamp: tuple[float, int] = (0.0, 0)


def parse_access(data: Any, stamp: tuple[float, int] = (0.0, 0)) -> AccessConfig:
    if not isinstance(data, dict):
        raise _invalid("the access file must be a mapping with `users` and / or `policies`")
    unknown = set(data) - _FILE_KEYS
    if unknown:
        raise _invalid(f"unknown top-level keys {', '.join(sorted(map(str, unknown)))}")
    if data.get("version", 1) != 1:
        raise _invalid(f"access file version {data.get('version')!r} is not 1")
    raw = data.get("policies")
    policies = None
    if raw is not None:
        if not isinstance(raw, list):
            raise _invalid("`policies` must be a list")
        items = tuple(_policy(i, p) for i, p in enumerate(raw))
        names = [p.name for p in items]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise _invalid(f"policy names appear twice: {', '.join(dupes)}")
        policies = PolicySet(items)
    return AccessConfig(policies, read_users(data.get("users")), stamp)


def _stamp(path: Path) -> tuple[float, int]:
    st = path.stat()
    return (st.st_mtime, st.st_size)


def load_access(path: str | Path) -> AccessConfig:
    """Read and check the whole file; any problem is `access_config_invalid` (fail closed)."""
    p = Path(path)
    try:
        stamp = _stamp(p)
        if stamp[1] > MAX_ACCESS_FILE_BYTES:
            raise _invalid(f"the access file is larger than {MAX_ACCESS_FILE_BYTES} bytes")
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(f"the access file {p.name} cannot be read ({type(exc).__name__})") from None
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        raise _invalid(f"the access file {p.name} is not valid YAML") from None
    return parse_access(data, stamp)


class AccessSource:
    """The access file, re-read when it changes. A change is read whole and swapped in at
    once; a file that no longer reads is an error for every request until it is fixed, never
    the old policies or none (fail closed)."""

    def __init__(self, path: str | Path, check_interval: float = 0.5) -> None:
        self.path = Path(path)
        self.check_interval = check_interval
        self._lock = threading.Lock()
        self._config: AccessConfig | AccessError = load_access(self.path)  # start-up: raise
        self._checked = 0.0

    def current(self) -> AccessConfig:
        now = _monotonic()
        if now - self._checked >= self.check_interval:
            with self._lock:
                self._checked = now
                self._refresh()
        config = self._config
        if isinstance(config, AccessError):
            raise config
        return config

    def _refresh(self) -> None:
        try:
            stamp = _stamp(self.path)
        except OSError:
            self._config = _invalid(f"the access file {self.path.name} cannot be read")
            return
        old = self._config
        if isinstance(old, AccessConfig) and old.stamp == stamp:
            return
        try:
            self._config = load_access(self.path)
        except AccessError as err:
            self._config = err


def _monotonic() -> float:
    return time.monotonic()
