"""The `dosi` subcommands, one module per command group: `catalog` (validate, list, info),
`query` (compile, explain, query), `analysis` (select, lineage, attribute), `serve` (serve,
mcp), `sql` (sql, pg: semantic SQL and the PostgreSQL wire server) and `demo`.
`dosi.frontends.cli.app` registers them on the group.

Layer: frontends. A command module may import the CLI's shared modules (`options`,
`engine_input`, `query_input`, `results`, `output`, `epilog`), the facade (`dosi`,
`dosi.engine`, `dosi.errors`), `dosi.frontends.extras`, `dosi.frontends.contract` and
`dosi.frontends.pg` (which needs no extra); never another command module or `app`.
"""
