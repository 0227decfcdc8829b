"""D-WINDOW stage SQL (window-metrics-extension.md, "Compilation semantics"). Layer: SQL tree
(`dosi.sql`); imports the plan nodes and records, `dosi.ext.window` specs and `dosi.sql`'s
renderer and builders, never `dosi.sql.dialects` by name (the dialect comes with the renderer).

* `render`   – `render_window` (the `win` CTE) and `trim_predicates`;
* `stage`    – what every family renderer works with (`base AS c`, order keys, masks);
* `offset`, `frame`, `rank`, `value` – one renderer per family;
* `families` – renderer per family name, checked complete against `dosi.ext.window.families`.
"""

from dosi.sql.window.render import render_window, trim_predicates
from dosi.sql.window.stage import BASE, WIN

__all__ = ["BASE", "WIN", "render_window", "trim_predicates"]
