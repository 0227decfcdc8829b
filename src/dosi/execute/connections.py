"""Connection profiles: `{name: {type, uri, default?}}`, the reference engine's shape, or the
`datasources:` section of a Datus agent.yml. A profile names an engine `type` (duckdb,
postgres, mysql, mariadb, clickhouse, chdb, sqlite, datafusion, spark; compile-only warehouses
such as snowflake are kept so naming one gives a clear error), a `uri` in the engine's usual
form, and optionally `password_env` (the variable holding the password; never logged) or
`client`: an open client object the application already has (a sqlite3 connection, a
SessionContext, a SparkSession, a chDB session, a psycopg or DB-API connection). A bare client
object in place of a profile works too; its type is recognised from its class."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dosi.errors import ExecuteError, closest
from dosi.execute.chdb_runner import engine_version


@dataclass(frozen=True)
class EngineType:
    """What dosi knows of a connection type it runs on: the dialect its SQL is rendered in,
    and how a profile's `uri` reads (so no code elsewhere tests a type by name)."""

    dialect: str
    #: dosi opens the database itself, in process, as its own local database: the uri is the
    #: database file (DuckDB, the default engine)
    embedded: bool = False
    #: a relative uri is a local path, resolved against the configuration's folder
    local_file: bool = False
    #: the server release the engine runs, when dosi can know it without a round trip (the
    #: embedded chDB library), as a dialect version fact
    version: Callable[[], str | None] | None = None


#: connection type -> what dosi knows of it (the runnable types)
ENGINE_TYPES: dict[str, EngineType] = {
    "duckdb": EngineType("duckdb", embedded=True),
    "postgres": EngineType("postgres"),
    "mysql": EngineType("mysql"),
    "mariadb": EngineType("mariadb"),
    "clickhouse": EngineType("clickhouse"),
    "chdb": EngineType("clickhouse", local_file=True, version=engine_version),
    "sqlite": EngineType("sqlite", local_file=True),
    "datafusion": EngineType("datafusion", local_file=True),
    "spark": EngineType("spark"),
}
#: the type of a bare path, of a profile without a type, and of dosi's own local database
DEFAULT_TYPE = "duckdb"
# connection type -> the dosi dialect its SQL is rendered in
ENGINE_DIALECTS: dict[str, str] = {kind: t.dialect for kind, t in ENGINE_TYPES.items()}
TYPE_ALIASES = {"postgresql": "postgres", "pg": "postgres", "pyspark": "spark", "sqlite3": "sqlite"}
# a client object's top-level module -> connection type
CLIENT_MODULES = {
    "sqlite3": "sqlite",
    "_sqlite3": "sqlite",
    "duckdb": "duckdb",
    "_duckdb": "duckdb",
    "datafusion": "datafusion",
    "pyspark": "spark",
    "chdb": "chdb",
    "clickhouse_connect": "clickhouse",
    "psycopg": "postgres",
    "psycopg2": "postgres",
    "pymysql": "mysql",
    "MySQLdb": "mysql",
    "mysql": "mysql",
    "mariadb": "mariadb",
}


@dataclass(frozen=True)
class Profile:
    name: str
    type: str
    uri: str | None = None
    client: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dialect(self) -> str:
        return ENGINE_DIALECTS.get(self.type, self.type)

    @property
    def sql_dialect(self) -> str:
        """The dialect the connection's SQL is rendered in, with the server's version as a
        fact when it is known (`clickhouse@25.11`): the `server_version` option, or the
        release embedded chDB runs."""
        version = self.options.get("server_version")
        engine = ENGINE_TYPES.get(self.type)
        if version is None and engine is not None and engine.version is not None:
            version = engine.version()
        return self.dialect if version is None else f"{self.dialect}@{version}"

    @property
    def executable(self) -> bool:
        return self.type in ENGINE_DIALECTS

    @property
    def embedded_database(self) -> bool:
        """A database file dosi opens itself (not a client object handed in)."""
        engine = ENGINE_TYPES.get(self.type)
        return engine is not None and engine.embedded and self.client is None

    def password(self) -> str | None:
        """The password from the environment variable `password_env` names (never stored)."""
        var = self.options.get("password_env")
        if not var:
            return None
        value = os.environ.get(str(var))
        if value is None:
            raise ExecuteError(
                "config",
                f"connection `{self.name}` reads its password from ${var}, which is not set",
                hint=f"export {var}=... before running",
            )
        return value

    def __repr__(self) -> str:  # never print a client's or a URI's secrets
        return f"Profile(name={self.name!r}, type={self.type!r})"


@dataclass(frozen=True)
class Connections:
    profiles: dict[str, Profile] = field(default_factory=dict)
    default: str | None = None

    @property
    def duckdb(self) -> dict[str, str]:
        """name -> database path of the DuckDB file profiles."""
        return {n: p.uri or ":memory:" for n, p in self.profiles.items() if p.embedded_database}

    @property
    def other(self) -> dict[str, str]:
        """name -> type of every profile that is not a DuckDB file."""
        return {n: p.type for n, p in self.profiles.items() if not p.embedded_database}

    def profile(self, name: str | None) -> Profile | None:
        """The named profile (or the default one; None when there is none)."""
        if name is None:
            return self.profiles.get(self.default) if self.default else None
        if name in self.profiles:
            return self.profiles[name]
        names = list(self.profiles)
        raise ExecuteError(
            "config",
            f"unknown connection `{name}`",
            candidates=closest(name, names) or names,
            hint="pass connections={name: {'type': 'duckdb', 'uri': path}} to Engine",
        )

    def path_for(self, name: str | None) -> str | None:
        """The DuckDB file for a named profile (or the default one; None = in memory)."""
        p = self.profile(name)
        if p is None:
            return None
        if not p.embedded_database:
            raise ExecuteError(
                "config",
                f"connection `{p.name}` has type `{p.type}`, not a DuckDB file",
                hint="execute(connection=...) runs on it; compile() renders SQL for it",
            )
        return p.uri


def connection_dialect(kind: str = DEFAULT_TYPE) -> str:
    """The dialect a connection of type `kind` executes (ENGINE_DIALECTS)."""
    return ENGINE_DIALECTS.get(kind, kind)


def check_dialect(requested: str, connection: str | None, kind: str = DEFAULT_TYPE) -> None:
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


def client_type(client: Any) -> str | None:
    """The connection type of a client object, from the module its class lives in."""
    module = type(client).__module__.split(".")[0]
    return CLIENT_MODULES.get(module)


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
    profiles: dict[str, Profile] = {}
    default = None
    for name, cfg in section.items():
        name = str(name)
        profile = _profile(name, cfg, base_dir)
        profiles[name] = profile
        if isinstance(cfg, Mapping) and cfg.get("default"):
            default = name
    if default is None and len(profiles) == 1:
        only = next(iter(profiles.values()))
        if only.executable:
            default = only.name
    return Connections(profiles, default)


def _profile(name: str, cfg: Any, base_dir: Path | None) -> Profile:
    if isinstance(cfg, (str, Path)):
        return Profile(name, DEFAULT_TYPE, _duckdb_path(str(cfg), base_dir))
    if not isinstance(cfg, Mapping):
        kind = client_type(cfg)
        if kind is None:
            raise ExecuteError(
                "config",
                f"connection `{name}` must be an object {{type, uri}} or a client object "
                f"dosi knows (got {type(cfg).__name__})",
                hint="e.g. {'type': 'sqlite', 'client': sqlite3.connect(path)}",
            )
        return Profile(name, kind, client=cfg)
    client = cfg.get("client")
    raw_type = cfg.get("type") or (client_type(client) if client is not None else None)
    kind = str(raw_type or DEFAULT_TYPE).lower()
    kind = TYPE_ALIASES.get(kind, kind)
    options = {k: v for k, v in cfg.items() if k not in ("type", "uri", "client", "default")}
    uri = cfg.get("uri") or cfg.get("path") or cfg.get("database") or cfg.get("dsn")
    engine = ENGINE_TYPES.get(kind)
    if engine is not None and engine.embedded and client is None:
        return Profile(name, kind, _duckdb_path(str(uri or ":memory:"), base_dir), None, options)
    if engine is not None and engine.local_file and uri and base_dir is not None:
        uri = _local_path(str(uri), base_dir)
    return Profile(name, kind, None if uri is None else str(uri), client, options)


def _local_path(uri: str, base_dir: Path) -> str:
    if "://" in uri or uri.startswith(":"):
        return uri
    path = Path(uri).expanduser()
    return str(path if path.is_absolute() else base_dir / path)


def _duckdb_path(uri: str, base_dir: Path | None) -> str:
    for prefix in ("duckdb:///", "duckdb://"):
        if uri.startswith(prefix):
            uri = uri[len(prefix) :]
    if uri in ("", ":memory:"):
        return ":memory:"
    path = Path(uri).expanduser()
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    return str(path)
