"""The logical plan: a `ResolvedQuery` -> plan records (`records`) -> a DAG of immutable plan
nodes (`nodes/`, one kind per file; `node` holds the base and the abstract `PlanVisitor`).

Layer: logical plan, above query resolution. It may import `dosi.errors`, `dosi.ext`,
`dosi.ir`, `dosi.compiler` (field helpers) and `dosi.query`; nothing of `dosi.sql` (the
dialect facts it needs come in through the `dialect_facts.PlanDialect` protocol) or
`dosi.execute`. SQL is rendered from the DAG by a `PlanVisitor` in `dosi.sql.to_sql`.

* `planner` – branches per fact dataset and time axis; `joins` – many-to-one join paths;
* `builder/` – records -> nodes (`dag`, per feature: `lod_field`, `stream_window`);
* one module per feature, named as in every layer: `attribution`, `conform`, `derive_series`
  and `derive_stage` (D-DERIVE), `lod_field`, `lod_metric` (+ `lod_metric_checks`),
  `time_format`, `window` (+ `window_gates`), `where_reach`; `calendar` bounds arithmetic;
  `rollup_match` – aggregate awareness (which declared rollup serves each branch).
"""
