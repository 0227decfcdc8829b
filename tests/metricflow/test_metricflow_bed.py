"""MetricFlow's own integration questions, answered by a model `dosi import dbt` wrote.

Every case of MetricFlow's tests_metricflow/integration/test_cases (vendored with its licence
in tests/fixtures/metricflow) is listed in cases.yaml with the dosi features it needs. Each case
whose needs are all met runs here: the importer translates MetricFlow's query (dbt group-by
names, Jinja where filters, order, limit, time constraint), dosi answers it on DuckDB, and every
value must equal the one MetricFlow's hand-written check query computes over the same fixture
tables (floats to 1e-6 relative, as MetricFlow's own comparison). Requirement IDs: CORE-MOD-01
(an imported model loads), CORE-FAN-03 (measures of several datasets merge), DRV-FIL-02 and
DRV-CMP-01 (filter and compose metrics), WIN-OFF-01 (offsets).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mfbed import MODELS, bed_entries, mf_cases, run_case, runnable

from dosi.importers.dbt.queries import NEEDS

ENTRIES = bed_entries()
CASES = {c.id: c for c in mf_cases()}


@pytest.mark.parametrize("case_id", runnable(ENTRIES))
def test_metricflow_case(case_id: str, mf_db: Path) -> None:
    outcome = run_case(CASES[case_id], mf_db)
    assert outcome.status == "pass", f"{case_id}: {outcome.detail} (query {outcome.query})"


def test_every_metricflow_case_is_listed() -> None:
    """cases.yaml covers MetricFlow's test cases exactly, each with a list of needs."""
    assert set(ENTRIES["cases"]) == set(CASES)
    assert all(isinstance(e.get("needs"), list) for e in ENTRIES["cases"].values())
    assert {c.model for c in CASES.values()} <= set(MODELS)


def test_needs_are_named_and_explained() -> None:
    """Every need a case lists is explained in the file; the translator's own codes keep the
    meaning queries.NEEDS gives them."""
    explained = ENTRIES["needs"]
    for cid, entry in ENTRIES["cases"].items():
        for need in entry["needs"]:
            assert need in explained, f"{cid}: need `{need}` is not explained"
            assert need != "unclassified", f"{cid}: an unexplained difference"
    for code, text in explained.items():
        if code in NEEDS:
            assert text == NEEDS[code]


def test_a_case_with_needs_does_not_silently_pass(mf_db: Path) -> None:
    """A case listed as needing a feature dosi lacks is refused, or answers differently: the
    needs are measured, not guessed (one case per need)."""
    met = set(ENTRIES.get("met") or ())
    seen: set[str] = set()
    for cid, entry in ENTRIES["cases"].items():
        needs = set(entry["needs"]) - met
        if not needs or needs <= seen:
            continue
        seen |= needs
        assert run_case(CASES[cid], mf_db).status != "pass", cid
