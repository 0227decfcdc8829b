"""The `dosi` subcommands, one module per command group: `catalog` (validate, list, info),
`query` (compile, explain, query), `analysis` (select, lineage, attribute), `serve` (serve,
mcp), `sql` (sql, pg: semantic SQL and the PostgreSQL wire server), `authoring` (the
`import` and `export` groups: other tools' models in and out, one subcommand per tool),
`init` (init, schema: scaffolding a model from a warehouse, the JSON Schema for editors) and
`demo`. `dosi.frontends.cli.app` registers them on the group.

Layer: frontends. A command module may import the CLI's shared modules (`options`,
`engine_input`, `query_input`, `results`, `output`, `writing`, `epilog`), the facade (`dosi`,
`dosi.engine`, `dosi.errors`), `dosi.frontends.extras`, `dosi.frontends.contract`,
`dosi.frontends.pg` (which needs no extra), and the authoring packages `dosi.importers` /
`dosi.exporters` / `dosi.scaffold` with `dosi.model.loader`; never another command module or `app`.
"""
