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
