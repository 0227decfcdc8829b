"""Charts of a query result: `spec` builds the one Vega-Lite spec of a result (lines per series
over a time key, bars over categories, two y axes or small multiples for metrics of different
scales; `columns` reads what each column is), `render` draws it to SVG/PNG/HTML with vl-convert
(the `charts` extra), `write` picks the file type by suffix (`dosi query --chart FILE`), and
`spark` prints terminal sparklines (`--spark`, from `data`). REST serves the same spec
(`/v1/chart`, `/v1/query?chart=true`) and the web explorer embeds it with the vendored
vega-embed, so every surface draws one picture.

Layer: frontends, presentation only. May import `dosi.frontends.extras` and its own modules;
nothing of the engine: a chart reads a result dict ({columns, rows, outputs}) and nothing else.
"""
