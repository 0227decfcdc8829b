"""Execution: connection profiles, one `Runner` per engine (run -> Arrow, cancel, timeout,
close) and the one result shape every engine answers.

Layer: execution, the top of the pipeline below the facade (`dosi.engine`). It may import
`dosi.errors` and `dosi.udf` (DuckDB registers the window functions); it runs SQL text and
never builds it, so nothing of `dosi.query`, `dosi.plan` or `dosi.sql`. Engine drivers are
imported only when a profile of their type is used (`runner.require`).

* `connections` – profiles and the connection type -> dialect table; `engines` – type ->
  runner; `options` – timeouts, memory, extensions;
* one runner per engine: `duckdb_runner`, `sqlite_runner`, `postgres_runner`,
  `mysql_runner`, `chdb_runner` (ClickHouse), `datafusion_runner`, `spark_runner`;
* `rows`, `values`, `shape` – Arrow -> rows, one result shape; `cancel` – cancellation;
* `result_cache` (answers in memory) and `data_version` (what they are stamped with);
  `rollup_store` – built rollups in a DuckDB file, written then swapped;
* `budget` – a request's row, byte and time limits (a cancellation token);
* `connection_loss` – a broken connection told from a refused statement; `recovery` – the
  runner wrapper that reconnects with a bounded backoff and retries a read once.
"""
