"""The compiled model IR: what query resolution and the planner see (never raw YAML, never a
DATUS payload). Frozen dataclasses of sqlglot trees, built once by `dosi.compiler`.

Layer: compiled model IR, above `dosi.ext` (whose typed specs, e.g. window specs and params,
it holds). It may import `dosi.errors`, `dosi.ext` and sqlglot; nothing of `dosi.compiler`,
`dosi.query` or any layer above.

* `model`  – `ModelIr`, `DatasetIr`, `FieldIr`, `MetricIr`, `RelationshipIr`;
* `graph`  – the many-to-one relationship graph;
* one module per extension: `calendar` (week start, fiscal / retail years, calendar table),
  `conform`, `derive`, `lod_field` (+ `lod_field_catalog`), `lod_metric` (+
  `lod_metric_catalog`), `semi_additive` (D-SEMI), `conversion` (D-CONVERSION); `rollup`
  (declared pre-aggregations, a DOSI file beside the model).
"""
