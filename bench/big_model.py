"""Large models for the load benchmark (issue 27 item 2): 1k / 5k / 20k metrics over 20
datasets, with windows, derives and D-LOD fields, built from the shop example.

    python bench/big_model.py 5000 > /tmp/shop-5000.yaml

The shop model is kept whole (its own metrics and fields: a D-LOD field names one as its
base), the `orders` dataset is copied until the model has `datasets` datasets (each copy
reads the same table, joins `customers` and carries its own D-LOD field and the row-level
fields reading it), and every metric of the shop that reads `orders` alone (plain
aggregates, D-DERIVE filters and composes, D-WINDOW metrics, the D-PARAM moving average)
is copied in groups until the model has `n` metrics. A group's copies name each other (a
derive's base, a window's base) and read one dataset's copy, so each group is the shop's
`orders` metrics over again: the model a real team of many subject areas writes, which both
engines load.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "examples" / "shop" / "model.yaml"


def _reads(metric: dict[str, Any]) -> set[str]:
    """The datasets a metric's expression names (`dataset.field`)."""
    text = json.dumps(metric["expression"])
    return set(re.findall(r"\b([a-z_]+)\.[a-z_]+", text))


def _renamer(names: dict[str, str]) -> Any:
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names), key=len)[::-1]) + r")\b")
    return lambda text: pattern.sub(lambda m: names[m.group(1)], text)


def _qualify(metric: dict[str, Any], dataset: str) -> dict[str, Any]:
    """A D-DERIVE filter's `where` names `status` alone: with many copies of `orders` the
    column is ambiguous, so it is qualified with the dataset the metric reads."""
    for ext in metric.get("custom_extensions") or []:
        ext["data"] = re.sub(r"(?<![.\w])status\b", f"{dataset}.status", ext["data"])
    return metric


def _rewrite(node: Any, rename: Any) -> Any:
    """Rename metric and dataset references in expressions and DATUS payloads (not in
    descriptions)."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in ("expression", "data") and isinstance(value, str):
                out[key] = rename(value)
            elif key in ("description", "ai_context", "name"):
                out[key] = copy.deepcopy(value)
            else:
                out[key] = _rewrite(value, rename)
        return out
    if isinstance(node, list):
        return [_rewrite(v, rename) for v in node]
    return node


def big_model(n: int, datasets: int = 20) -> dict[str, Any]:
    """The shop model grown to `n` metrics over `datasets` datasets (as a YAML document)."""
    doc = yaml.safe_load(MODEL.read_text())
    sm = doc["semantic_model"][0]
    orders = next(d for d in sm["datasets"] if d["name"] == "orders")
    own: list[dict[str, Any]] = sm["metrics"]
    template = [m for m in own if _reads(m) == {"orders"}]
    names = {m["name"] for m in template}
    copies = [f"orders_{k}" for k in range(1, datasets - len(sm["datasets"]) + 1)]
    for name in copies:
        # the copy's D-LOD field names the base metric of the copy's first group
        rename = _renamer({"orders": name, "first_order_date": f"first_order_date__{name}"})
        ds = _rewrite(orders, rename)
        ds["name"] = name
        sm["datasets"].append(ds)
        sm["relationships"].append(
            {
                "name": f"{name}_to_customers",
                "from": name,
                "to": "customers",
                "from_columns": ["customer_id"],
                "to_columns": ["customer_id"],
            }
        )
    metrics = [_qualify(m, "orders") if m in template else m for m in own]
    group = 0
    while len(metrics) < n:
        target = copies[group % len(copies)]
        suffix = f"__{target}" if group < len(copies) else f"__g{group}"
        rename = _renamer({"orders": target, **{m: m + suffix for m in names}})
        for m in template:
            if len(metrics) >= n:
                break
            new = _qualify(_rewrite(m, rename), target)
            new["name"] = m["name"] + suffix
            metrics.append(new)
        group += 1
    sm["metrics"] = metrics
    return doc


def big_model_text(n: int, datasets: int = 20) -> str:
    return yaml.safe_dump(big_model(n, datasets), sort_keys=False)


if __name__ == "__main__":
    sys.stdout.write(big_model_text(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
