"""The REST frontend (`dosi serve`): the HTTP API under /v1 and the web explorer at /.

`app` builds the FastAPI application (routes), `guard` is its ASGI guard (token, size limit,
request id, access log), `responses` turns results and errors into JSON / CSV / Arrow
responses, `schemas` documents the request bodies, and `server` runs it all under uvicorn.

Layer: frontends, a thin transport. May import `dosi.engine`, `dosi.errors`,
`dosi.execute.cancel` and `dosi.frontends.contract`; fastapi and uvicorn (the `serve` extra)
only here, which is why nothing imports this package with an import statement: the CLI loads
`server` through `dosi.frontends.extras`. This `__init__` imports nothing.
"""
