"""Catalog layer: what a compiled model offers, as JSON-able dicts for the facade and frontends.

`views.Catalog` answers `Engine.metrics()`, `metric()`, `datasets()`, `dataset()` and
`dimensions()`; `conform` adds the D-CONFORM columns and `params` the D-PARAM `params` and
`param_schema` of a metric.

Layer: below the facade (`dosi.engine`) and `dosi.analysis`, above query resolution. May
import `dosi.errors`, `dosi.ext` (spec records), `dosi.ir`, `dosi.query` and `dosi.plan`
(join reach, window grains, attribution strategy); never `dosi.engine`, `dosi.analysis`,
`dosi.pipeline`, `dosi.sql`, `dosi.execute` or `dosi.frontends`.
"""
