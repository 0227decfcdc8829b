"""Query resolution: query JSON (or the SQL surface) -> a frozen `Query` -> a `ResolvedQuery`
whose every name is a model object, or a structured error with candidates and a retry.

Layer: query resolution, above the compiled model. It may import `dosi.errors`, `dosi.ext`,
`dosi.ir`, `dosi.compiler` (field and SQL-snippet helpers, the filter fold) and `dosi.udf`
(streaming-window interval rules); nothing of `dosi.plan`, `dosi.sql` or `dosi.execute`.

* `spec` – the query shape (`parse_query`), with `bounds` and `request` for hostile input;
* `resolve` – names -> model objects (`resolve_query`), with `filters`,
  `predicate_allowlist`, `predicate_types` for `where_sql`;
* `semantic_sql/` – the SQL surface: a SELECT over the model's virtual table -> one query;
* one module per feature, named as in every layer: `context_filter`, `conform`, `derive`,
  `detail` (select queries), `lod_metric`, `params` (+ `params_shape`, `params_filter`,
  `params_attribution`), `stream_window`, `time_format`, `time_ranges`
  (+ `time_ranges_shape`).
"""
