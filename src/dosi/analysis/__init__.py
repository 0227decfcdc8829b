"""Analysis layer: questions about metrics answered on top of the compile pipeline.

`attribution` explains why a metric changed between two windows, by dimension, in one
statement; `lineage` draws what a metric reads (tables -> datasets -> measures -> metrics and
the joins between datasets).

Layer: below the facade (`dosi.engine`), above the catalog and the compile pipeline. May
import `dosi.errors`, `dosi.catalog`, `dosi.pipeline`, `dosi.query`, `dosi.plan`,
`dosi.sql.dialects` and `dosi.ir`; never `dosi.engine`, `dosi.execute` (the facade runs the
SQL and hands the Arrow table in) or `dosi.frontends`.
"""
