"""`dosi init`: scaffold a model from a warehouse's catalog.

Layer: authoring, beside `dosi.importers`, below the frontends. It reads the catalog through
`dosi.execute` runners (tables, columns, keys), builds the model with `dosi.importers.common`
and checks it with the compiler; nothing below it imports it.
"""
