"""The PostgreSQL wire frontend (frontends layer): BI tools reach the model's semantic tables
as a PostgreSQL database. May import everything below it (engine, query, errors) and the
shared frontend contract; nothing imports it but the CLI."""

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
