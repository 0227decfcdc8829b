"""Semantic SQL (query layer): a SQL SELECT over the model's virtual table, translated into
one dosi query. May import `dosi.ir`, `dosi.query` and `dosi.errors`; never plan, sql or
execute (the engine runs the translated query like any other)."""

from dosi.query.semantic_sql.shape import SCHEMA, VirtualColumn, VirtualTable, virtual_table
from dosi.query.semantic_sql.translate import Output, SqlPlan, parse, translate

__all__ = [
    "SCHEMA",
    "Output",
    "SqlPlan",
    "VirtualColumn",
    "VirtualTable",
    "parse",
    "translate",
    "virtual_table",
]
