"""A chart of a query result as a PNG, through matplotlib (the optional `charts` extra).

matplotlib is imported here, at the top: this module is loaded only when a `.png` chart is
written (`write.write_chart`, through `dosi.frontends.extras`). It draws on a `Figure` of its
own, so the caller's pyplot state and backend are left alone."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from dosi.frontends.charts.data import chart_data


def write_png(result: Mapping[str, Any], p: Path) -> Path:
    """Draw `result` (line for time series, bars otherwise) into the PNG file `p`."""
    data = chart_data(result)
    fig = Figure(figsize=(10, 5))
    ax = fig.subplots()
    if data.kind == "line":
        for s in data.series:
            ax.plot(
                list(range(len(s.points))),
                [math.nan if v is None else v for _, v in s.points],
                marker="o",
                markersize=3,
                label=s.name,
            )
    else:
        n = max(1, len(data.series))
        for k, s in enumerate(data.series):
            ax.bar(
                [i + k / (n + 1) for i in range(len(s.points))],
                [0 if v is None else v for _, v in s.points],
                width=0.8 / n,
                label=s.name,
            )
    ticks = list(range(len(data.categories)))
    step = max(1, len(ticks) // 12)
    ax.set_xticks(ticks[::step])
    ax.set_xticklabels(data.categories[::step], rotation=40, ha="right")
    ax.set_xlabel(data.x)
    ax.legend()
    fig.tight_layout()
    fig.savefig(p)
    return p
