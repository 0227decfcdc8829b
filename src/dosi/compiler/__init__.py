"""Model compile: an Ossie document and its DATUS payloads -> the frozen `ModelIr`.

Layer: model compile, above `dosi.model` (loading), `dosi.ext` (the one DATUS reader) and
`dosi.ir` (what it builds). It may import `dosi.errors`, `dosi.model`, `dosi.ext`, `dosi.ir`
and sqlglot; nothing of `dosi.query`, `dosi.plan`, `dosi.sql` or `dosi.execute`.

Entry point: `model_compiler.compile_model_text`. Every check runs in one pass and the model
fails with one `ModelError` listing all problems. One module per concern: `datasets`,
`fields`, `sources`, `keys`, `relationships`, `metrics` (with `metric_columns`,
`metric_measures`, `measures`, `measure_names`, `time_axis`, `roles`), and one per extension
in the spelling it has in every layer: `calendar`, `conform`, `derive` (the pass; `derive_filter`,
`derive_compose`, `derive_gate`, `derive_window_base`, `derive_expansion`), `lod_field`,
`lod_metric` (+ `lod_metric_compose`), `params`, `time_format`, `window`, `semi_additive`
(D-SEMI), `conversion` (D-CONVERSION), `rollup` (the rollup file's declarations). `sqlparse`
and `trusted_sql` bound the SQL a model may hold.
"""
