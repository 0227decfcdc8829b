"""The MCP frontend (`dosi mcp`): the model served to AI agents as MCP tools.

`server` declares the tools and runs the SDK server (stdio or streamable HTTP), `arguments`
checks tool arguments and builds queries from them, `results` shapes values and failures as
tool results under the error contract.

Layer: frontends, a thin transport. May import `dosi.errors`, `dosi.query.spec` (the query's
key order) and `dosi.frontends.contract`; the MCP SDK (the `mcp` extra) only here, which is why
nothing imports this package with an import statement: the CLI loads `server` through
`dosi.frontends.extras`. This `__init__` imports nothing.
"""
