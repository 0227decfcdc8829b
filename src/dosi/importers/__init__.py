"""Importers and exporters: other tools' semantic models to and from Ossie documents.

Layer: a frontend-side package. It writes and reads plain Ossie documents (dicts / YAML) and
may import `dosi.errors`, `dosi.ext.registry` and `dosi.model`; the engine layers never import
it. One module (or subpackage) per source tool (`dbt`, `cube`, `lookml`); `common` holds the
model-writing helpers they share.
"""
