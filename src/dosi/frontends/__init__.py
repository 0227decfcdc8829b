"""Frontends: thin transports over the public Engine API. `cli` (the `dosi` command), `rest`
(FastAPI, `dosi serve`), `mcp` (`dosi mcp`), `pg` (the PostgreSQL wire server, `dosi pg`),
the web explorer's static files in `web/`, and what they share: `contract` (the error and
result contract as JSON), `holder` (the served model's pool of engines, kept current by a
watcher thread, and connection health), `limits` (row, byte, time and memory limits of
serving), `encode` (answers encoded under a request's budget), `charts` (drawing a result)
and `extras` (loading the modules that need an optional extra).

They hold no semantics of their own: every answer is what `dosi.Engine` returns, and every
error is its structured error as JSON (`contract`).

Layer: the top. May import the facade (`dosi`, `dosi.engine`, `dosi.errors`) and what the
facade's answers are made of (`dosi.ext` capabilities, `dosi.model.loader`, `dosi.query.spec`,
`dosi.query.bounds`, `dosi.query.semantic_sql` (the SQL surface's virtual table),
`dosi.execute.connections` / `cancel` / `budget` / `engines` / `recovery` / `values`), and the authoring packages
(`dosi.importers`, `dosi.exporters`, `dosi.scaffold`); nothing below imports a frontend.
"""
