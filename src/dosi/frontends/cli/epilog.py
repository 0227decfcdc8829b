"""The help epilogs of the `dosi` command line: exit codes (`output.EXIT_*`), where errors
go, the environment variables, and examples."""

from __future__ import annotations

COMMAND_EPILOG = """\b
Exit codes:
  0  success
  1  internal error (a bug in dosi; DOSI_DEBUG=1 shows the traceback)
  2  bad query (query_error) or bad usage (usage_error)
  3  bad model (model_error; `dosi validate` of an invalid model)
  4  execution failure (execute_error: database missing, SQL rejected, query_timeout;
     output_error: the output file could not be written, e.g. a full disk)
  130  interrupted (Ctrl-C cancels the running query)
  Bad input of any kind (hostile model, query, path, encoding) exits 2, 3
  or 4 with a structured error, never 1 and never a traceback.

\b
Errors are printed to stderr as code, message, candidates, hint and
suggested retry; with --format json they are printed to stdout as
{"error": {...}} instead.
"""

EPILOG = (
    COMMAND_EPILOG
    + """
\b
Environment:
  DOSI_MODEL  default for --model
  DOSI_DB     default for --db (DuckDB database file)

\b
Examples:
  dosi demo
  dosi validate -m examples/shop/model.yaml
  dosi list dimensions -m examples/shop/model.yaml --metric revenue
  dosi query -m examples/shop/model.yaml --db examples/shop/data/shop.duckdb \\
      -M revenue,revenue_mom -g metric_time:month --start 2025-01-01
  dosi compile -m examples/shop/model.yaml --query '{"metrics": ["revenue"]}' --pretty
"""
)
