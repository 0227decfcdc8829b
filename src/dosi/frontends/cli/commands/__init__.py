"""The `dosi` subcommands, one module per command group: `catalog` (validate, list, info),
`query` (compile, explain, query), `analysis` (select, lineage, attribute), `serve` (serve,
mcp), `sql` (sql, pg: semantic SQL and the PostgreSQL wire server), `authoring` (the
`import` and `export` groups: other tools' models in and out, one subcommand per tool) and
`demo`. `dosi.frontends.cli.app` registers them on the group.

Layer: frontends. A command module may import the CLI's shared modules (`options`,
`engine_input`, `query_input`, `results`, `output`, `epilog`), the facade (`dosi`,
`dosi.engine`, `dosi.errors`), `dosi.frontends.extras`, `dosi.frontends.contract`,
`dosi.frontends.pg` (which needs no extra), and `dosi.importers` / `dosi.exporters` with
`dosi.model.loader` (authoring); never another command module or `app`.
"""
