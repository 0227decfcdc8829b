"""Network frontends over the public Engine API: REST (FastAPI), MCP, and the web explorer.

They hold no semantics of their own: every answer is what `dosi.Engine` returns, and every
error is its structured error as JSON (`contract`).
"""
