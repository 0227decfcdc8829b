"""Oracle (compile only)."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering

ORACLE = Dialect("oracle", null_ordering=sqlglot_null_ordering("oracle"))
