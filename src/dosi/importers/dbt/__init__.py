"""`dosi import dbt` / `dosi export dbt`: dbt's semantic layer (MetricFlow) to and from Ossie.

Parsed with dbt's own `dbt-semantic-interfaces` (the `importers` extra). `import_dbt(path)`
returns the converted document with its warnings; `dosi.exporters.dbt.export_dbt(document)`
writes dbt semantic YAML back for what maps.
"""

from dosi.importers.dbt.convert import SAVED_QUERIES_KEY, convert, import_dbt

__all__ = ["SAVED_QUERIES_KEY", "convert", "import_dbt"]
