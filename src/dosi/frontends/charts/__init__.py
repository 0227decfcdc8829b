"""Charts of a query result (`dosi query --chart FILE`, `--spark`): `data` picks the chart (a
time series is a line per metric, anything else bars), `svg` draws it without a dependency,
`png` through matplotlib, `spark` as terminal sparklines, and `write` picks SVG or PNG by the
file's suffix. The web explorer draws the same chart in the browser by the same rule
(`web/explorer.js`, `chartModel`).

Layer: frontends, presentation only. May import `dosi.frontends.extras` and its own modules;
nothing of the engine: a chart reads a result dict ({columns, rows, outputs}) and nothing else.
"""
