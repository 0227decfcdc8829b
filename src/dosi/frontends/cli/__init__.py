"""The `dosi` command line (`dosi.frontends.cli:main`, also `python -m dosi`).

`app` is the group and registers every command once; `commands/` holds one module per command
group; `options` the option types and the state the group shares with its commands;
`engine_input` turns --model / --db / --connections into an Engine; `query_input` the query
flags, JSON text or file into a query; `results` writes a result in every `--format` (with
`--output`, `--chart`, `--spark`); `output` renders tables, CSV, JSON and structured errors
with their exit codes; `writing` writes a converted model (import, export, scaffold) or the
schema to stdout or `--output`; `epilog` is the help text they all end with.

Layer: frontends, a thin transport. May import the facade (`dosi`, `dosi.engine`,
`dosi.errors`), what the facade's answers are made of (`dosi.ext` capabilities,
`dosi.model.loader` / `versions`, `dosi.query.bounds`, `dosi.execute.connections`),
`dosi.frontends.charts` / `extras` / `contract`, the PostgreSQL server `dosi.frontends.pg`
and the authoring packages (`dosi.importers`, `dosi.exporters`, `dosi.scaffold`); the REST and MCP
servers only through `extras`.
"""

from dosi.frontends.cli.app import cli, main

__all__ = ["cli", "main"]
