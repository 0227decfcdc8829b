"""Model exporters: an Ossie model with DATUS extensions -> other tools' formats: `dbt` (dbt
semantic-layer YAML) and `ossie` (plain Ossie for consumers that ignore DATUS).

Layer: authoring, beside `dosi.importers`, below the frontends. Exporters read documents with
`dosi.model`, registry facts from `dosi.ext`, and check what they write with the compiler.
`json_schema` (with `json_schema_datus`) writes the model format itself as a JSON Schema
(`model.schema.json`, `dosi schema`); it sits here, not in `dosi.model`, because it reads the
DATUS tables of `dosi.ext`, which sits above the model loader.
"""
