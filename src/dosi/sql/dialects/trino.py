"""Trino, Presto and Athena (compile only): NULLs sort last in both directions, as sqlglot's
Presto and Trino dialects state."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering

TRINO = Dialect("trino", null_ordering=sqlglot_null_ordering("trino"))
PRESTO = Dialect("presto", null_ordering=sqlglot_null_ordering("presto"))
ATHENA = Dialect("athena", null_ordering=sqlglot_null_ordering("athena"))
