"""Model loading: the Ossie document read from YAML / JSON, checked against the schema's shape.

Layer: model loading, the lowest after `dosi.errors`. It may import `dosi.errors` and the
standard library, pydantic and PyYAML; nothing above (the compiler turns what it loads into the
IR, and DATUS payloads stay opaque strings here: `dosi.ext` reads them).

* `loader`   – the document's text -> `OsiDocument`, every issue at once with YAML lines
* `schema`   – the pydantic mirror of the Ossie JSON Schema
* `versions` – the Ossie 0.1.1 differences and the in-memory upgrade
"""
