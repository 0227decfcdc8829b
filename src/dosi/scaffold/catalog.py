"""What `dosi init` learns from a warehouse catalog: tables, typed columns and declared keys.

The readers (`readers.py`) fill these from each engine's own catalog; the builder
(`build.py`) turns them into a model. Keys are only what the database declares (a primary key,
unique constraints, foreign keys), plus what the opt-in `*_id` matching infers.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Column:
    """A column with its database type as the catalog spells it (`raw_type`)."""

    name: str
    raw_type: str
    nullable: bool = True


@dataclass(frozen=True)
class ForeignKey:
    """A declared (or, opt-in, inferred) many-to-one reference from `columns` to a table."""

    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    ref_schema: str | None = None
    inferred: bool = False


@dataclass(frozen=True)
class Table:
    """One table or view of the catalog."""

    name: str
    schema: str | None
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    unique_keys: tuple[tuple[str, ...], ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    is_view: bool = False
    pk_inferred: bool = False

    @property
    def key(self) -> tuple[str | None, str]:
        """(schema, name): tables of different schemas may share a name."""
        return self.schema, self.name

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


# Facts about the engine kinds `dosi init` reads (connection types, as `dosi.execute` names
# them), asked by membership so that no module compares an engine name.
#: Engines whose tables a model names without a schema (SQLite: one file, no schemas).
SCHEMALESS_ENGINES: frozenset[str] = frozenset({"sqlite"})
#: Engines whose database is a file: its stem names the scaffolded model.
FILE_ENGINES: frozenset[str] = frozenset({"duckdb", "sqlite"})
#: Each engine's system schemas, never scaffolded.
SYSTEM_SCHEMAS: dict[str, tuple[str, ...]] = {
    "postgres": ("pg_catalog", "information_schema", "pg_toast")
}
#: URI prefixes an engine's runner does not take (it opens the path behind them).
PATH_PREFIXES: dict[str, tuple[str, ...]] = {"duckdb": ("duckdb:///", "duckdb://")}


@dataclass(frozen=True)
class Catalog:
    """The tables `dosi init` was asked for, in catalog order, and where they came from."""

    engine: str
    tables: tuple[Table, ...]
    schema: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def table(self, name: str, schema: str | None = None) -> Table | None:
        return next(
            (t for t in self.tables if t.name == name and (schema is None or t.schema == schema)),
            None,
        )
