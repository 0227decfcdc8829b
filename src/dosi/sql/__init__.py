"""The SQL tree: the plan DAG -> one sqlglot tree, through the abstract plan visitor; the
dialect (`dialects/`) renders the text.

Layer: SQL tree, above the logical plan. It may import `dosi.errors`, `dosi.ext`, `dosi.ir`,
`dosi.compiler` (identifier helpers), `dosi.udf` (window argument rules), `dosi.query`,
`dosi.plan` and `dosi.sql.dialects`; nothing of `dosi.execute` or above. Every statement is built as a sqlglot tree, never pasted
together from text.

* `to_sql` – `ToSql`, the `PlanVisitor` (one `visit_<kind>` per node kind); `render` the
  branch SELECTs it assembles; `util` small builders;
* one module per feature, named as in every layer: `detail`, `lod_field`, `lod_metric`,
  `stream_window` (+ `stream_window_bounds`, the portable window boundaries), `window/`
  (one renderer per window family); `rollup_build` the statement that fills a rollup.
"""
