"""The PostgreSQL wire frontend (`dosi pg`, `dosi serve --pg-port`): BI tools reach the
model's semantic tables as a PostgreSQL database.

Layer: frontends, a thin transport. May import the facade (`dosi`, `dosi.engine`,
`dosi.errors`), `dosi.query.semantic_sql` (the virtual table and the statement parser),
`dosi.execute.cancel` and `dosi.frontends.contract`; no optional extra (asyncio, pyarrow,
numpy and DuckDB only), so the CLI (`commands.sql`, `commands.serve`) imports it directly;
nothing else imports it."""

from dosi.frontends.pg.auth import Authenticator, Identity, TokenAuth, TrustAuth, authenticator
from dosi.frontends.pg.server import DEFAULT_PORT, PgOptions, PgServer, serve, start_background

__all__ = [
    "DEFAULT_PORT",
    "Authenticator",
    "Identity",
    "PgOptions",
    "PgServer",
    "TokenAuth",
    "TrustAuth",
    "authenticator",
    "serve",
    "start_background",
]
