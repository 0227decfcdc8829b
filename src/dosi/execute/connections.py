"""Connection profiles: `{name: {type, uri, default?}}`, the reference engine's shape, or the
`datasources:` section of a Datus agent.yml. This release executes on DuckDB; profiles of other
types are kept so that naming one gives a clear error instead of a silent fallback."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dosi.errors import ExecuteError, closest


@dataclass(frozen=True)
class Connections:
    duckdb: dict[str, str] = field(default_factory=dict)  # name -> database path
    other: dict[str, str] = field(default_factory=dict)  # name -> type (not executable here)
    default: str | None = None

    def path_for(self, name: str | None) -> str | None:
        """The DuckDB file for a named profile (or the default one; None = in memory)."""
        if name is None:
            return self.duckdb.get(self.default) if self.default else None
        if name in self.duckdb:
            return self.duckdb[name]
        if name in self.other:
            raise ExecuteError(
                "config",
                f"connection `{name}` has type `{self.other[name]}`; this release executes on "
                "DuckDB only",
                hint="compile() renders SQL for that warehouse; run it with your own client",
            )
        names = [*self.duckdb, *self.other]
        raise ExecuteError(
            "config",
            f"unknown connection `{name}`",
            candidates=closest(name, names) or names,
            hint="pass connections={name: {'type': 'duckdb', 'uri': path}} to Engine",
        )


# The SQL dialect each executable connection type runs (this release runs DuckDB only; a new
# runner adds its type here, and `Engine.execute` then renders that dialect for it).
RUNNER_DIALECTS: dict[str, str] = {"duckdb": "duckdb"}


def connection_dialect(kind: str = "duckdb") -> str:
    """The dialect a connection of type `kind` executes."""
    return RUNNER_DIALECTS.get(kind, kind)


def check_dialect(requested: str, connection: str | None, kind: str = "duckdb") -> None:
    """`execute(query, dialect=X)` runs only on a connection of dialect X: a mismatch is an
    error, never SQL of one dialect reported as another."""
    actual = connection_dialect(kind)
    if requested == actual:
        return
    where = f"connection `{connection}`" if connection else "the local database"
    raise ExecuteError(
        "dialect_mismatch",
        f"execute(dialect={requested!r}) asks for {requested} SQL, but {where} runs {actual}",
        candidates=[actual],
        hint=f"omit dialect (execute renders {actual} SQL for this connection), or call "
        f"compile(query, dialect={requested!r}) for SQL to run on a {requested} warehouse",
    )


def datasources_section(data: Any) -> Any:
    """The profiles inside an agent.yml (`datasources:` or `agent.datasources:`), else `data`."""
    if isinstance(data, Mapping):
        agent = data.get("agent")
        for holder in (data, agent):
            if isinstance(holder, Mapping):
                for key in ("datasources", "connections"):
                    if isinstance(holder.get(key), Mapping):
                        return holder[key]
    return data


def parse_connections(raw: Any, base_dir: Path | None = None) -> Connections:
    """Normalise profiles; relative paths resolve against `base_dir` (the config's folder)."""
    if isinstance(raw, Connections):
        return raw
    section = datasources_section(raw)
    if section is None:
        return Connections()
    if isinstance(section, list):
        section = {
            str(item.get("name", i)): item
            for i, item in enumerate(section)
            if isinstance(item, Mapping)
        }
    if not isinstance(section, Mapping):
        raise ExecuteError(
            "config",
            "connections must map names to {type, uri}",
            hint="e.g. {'shop': {'type': 'duckdb', 'uri': 'shop.duckdb', 'default': True}}",
        )
    duck: dict[str, str] = {}
    other: dict[str, str] = {}
    default = None
    for name, cfg in section.items():
        name = str(name)
        if isinstance(cfg, (str, Path)):
            cfg = {"type": "duckdb", "uri": str(cfg)}
        if not isinstance(cfg, Mapping):
            raise ExecuteError("config", f"connection `{name}` must be an object {{type, uri}}")
        kind = str(cfg.get("type", "duckdb")).lower()
        if kind != "duckdb":
            other[name] = kind
        else:
            duck[name] = _duckdb_path(cfg, base_dir)
        if cfg.get("default"):
            default = name
    if default is None and len(duck) == 1 and not other:
        default = next(iter(duck))
    return Connections(duck, other, default)


def _duckdb_path(cfg: Mapping[str, Any], base_dir: Path | None) -> str:
    uri = cfg.get("uri") or cfg.get("path") or cfg.get("database") or ":memory:"
    uri = str(uri)
    for prefix in ("duckdb:///", "duckdb://"):
        if uri.startswith(prefix):
            uri = uri[len(prefix) :]
    if uri in ("", ":memory:"):
        return ":memory:"
    path = Path(uri).expanduser()
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    return str(path)
