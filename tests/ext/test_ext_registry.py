"""Capability registry (datus-extensions §2.1, §7; CHECKLIST ENV-REG-*, ENV-IMP-01, ENV-V-11)."""

from __future__ import annotations

import json

import dosi.ext as ext
from dosi.ext import DATUS_EXT, DATUS_EXT_VERSION, HISTORY, IMPACTS, REGISTRY, capabilities
from dosi.ext.payloads import PAYLOAD_FIELDS
from dosi.ext.registry import DOSI_KEYS, parse_engine_version, registry_row


def test_env_v_11_engine_reports_version_1_15() -> None:
    """ENV-V-11: the engine implements (and reports) DATUS 1.15 (1.11 semi_additive, 1.12
    conversion, 1.13 the share and streak window families, 1.14 the window roadmap's rest,
    1.15 frame.history and empty_buckets)."""
    assert DATUS_EXT_VERSION == "1.15"
    assert DATUS_EXT["version"] == "1.15"
    assert ext.DATUS_EXT_VERSION == "1.15"


def test_env_reg_03_registry_contents() -> None:
    """ENV-REG-03: key → (extension, since, impact, carriers) exactly as §7 lists them."""
    expected = {
        "join_type": ("D-JOIN", "1.0", "documented", ("relationship",)),
        "fill_nulls_with": ("D-FILL", "1.0", "documented", ("metric",)),
        "time_dimension": ("D-TIME", "1.1", "degraded", ("dataset", "metric")),
        "time_granularity": ("D-GRAIN", "1.1", "documented", ("field",)),
        "dataset": ("D-DATASET", "1.1", "degraded", ("metric",)),
        "window": ("D-WINDOW", "1.2", "documented", ("metric",)),
        "derive": ("D-DERIVE", "1.4", "degraded", ("metric",)),
        "measure": ("D-MEASURE", "1.4", "silent", ("metric",)),
        "params": ("D-PARAM", "1.5", "degraded", ("metric",)),
        "time": ("D-FORMAT", "1.6", "silent", ("field",)),
        "is_dimension": ("D-DIM", "1.7", "documented", ("field",)),
        "cardinality": ("D-CONFORM", "1.8", "silent", ("relationship",)),
        "lod": ("D-LOD", "1.10", "degraded", ("field",)),
        "semi_additive": ("D-SEMI", "1.11", "silent", ("metric",)),
        "conversion": ("D-CONVERSION", "1.12", "silent", ("metric",)),
        # dosi's own model-level key (issue 22: week start, fiscal / retail years, calendar
        # table), read at 1.10 so no model needs a newer `v`
        "calendar": ("D-CALENDAR", "1.10", "degraded", ("semantic_model",)),
        # dosi's own metric key (issue 23 bed): MetricFlow's filtered-metric buckets
        "empty_buckets": ("D-BUCKETS", "1.15", "documented", ("metric",)),
        # dosi's own dataset key (issue 20 bed): slowly changing dimensions
        "validity": ("D-VALIDITY", "1.15", "silent", ("dataset",)),
    }
    got = {k: (i.extension, i.since, i.impact, i.carriers) for k, i in REGISTRY.items()}
    assert got == expected


def test_env_reg_04_silent_keys_are_exactly_measure_time_cardinality() -> None:
    """ENV-REG-04 / ENV-REQ-03: the shipped silent keys, the only ones needing `requires`."""
    assert {k for k, i in REGISTRY.items() if i.impact == "silent"} == {
        "measure",
        "time",
        "cardinality",
        "semi_additive",
        "conversion",
        "validity",
    }
    assert all(i.requires_needed == (i.impact == "silent") for i in REGISTRY.values())


def test_registry_implemented_flags() -> None:
    """This engine implements every registered key (derive, params: issue 11; time,
    cardinality: issue 12; lod: issue 13)."""
    assert {k for k, i in REGISTRY.items() if not i.implemented} == set()


def test_registry_implemented_flag_matches_payload_fields() -> None:
    """The registry flag and the validators agree for every (carrier, key) pair."""
    for key, info in REGISTRY.items():
        for carrier in info.carriers:
            assert ((carrier, key) in PAYLOAD_FIELDS) == info.implemented, (carrier, key)
    assert {k for _, k in PAYLOAD_FIELDS} <= set(REGISTRY)


def test_env_imp_01_four_impact_levels() -> None:
    """ENV-IMP-01: inert < degraded < documented < silent."""
    assert list(IMPACTS) == ["inert", "degraded", "documented", "silent"]


def test_env_reg_01_every_key_has_fallback_text() -> None:
    """ENV-REG-01/02: fallback texts used by basic-mode warnings come from the registry."""
    for info in REGISTRY.values():
        assert info.fallback.strip()
        assert registry_row(info.key)["fallback"] == info.fallback
    assert "plain base aggregate" in REGISTRY["window"].fallback
    assert "LEFT" in REGISTRY["join_type"].fallback


def test_env_reg_06_history_matches_registry() -> None:
    """ENV-REG-05/06: every key appears in exactly one history row, at its `since` version;
    1.3 and 1.9 are in-family window growth with no new keys."""
    seen: dict[str, str] = {}
    for entry in HISTORY:
        for key in entry.keys:
            assert key not in seen
            seen[key] = entry.version
    assert seen == {k: i.since for k, i in REGISTRY.items() if k not in DOSI_KEYS}
    by_version = {h.version: h for h in HISTORY}
    assert by_version["1.3"].keys == () and by_version["1.9"].keys == ()
    assert by_version["1.13"].keys == ()  # in-family window growth: share, streak
    assert by_version["1.0"].date == "2026-07-11"
    assert by_version["1.10"].date == "2026-09-23"
    versions = [parse_engine_version(h.version) for h in HISTORY]
    assert versions == sorted(versions)
    assert HISTORY[-1].version == DATUS_EXT_VERSION


def test_datus_ext_is_json_able_and_capabilities_is_a_copy() -> None:
    """ENV-REG-06/07: `DATUS_EXT` / `capabilities()` are plain JSON data with impacts."""
    text = json.dumps(DATUS_EXT)
    assert json.loads(text) == DATUS_EXT
    assert set(DATUS_EXT) == {"vendor_name", "version", "min_version", "keys", "history"}
    caps = capabilities()
    assert caps == DATUS_EXT
    caps["keys"][0]["impact"] = "silent"
    assert registry_row("join_type")["impact"] == "documented"
    assert registry_row("measure")["requires_needed"] is True
    assert DATUS_EXT["history"][0] == {
        "version": "1.0",
        "date": "2026-07-11",
        "added": ["join_type", "fill_nulls_with"],
    }


def test_window_in_family_features_are_published() -> None:
    """§7 1.3 / 1.9: in-family window growth is listed under the window key."""
    features = registry_row("window")["features"]
    assert features["window.rank"] == "1.3"
    assert features["window.frame.scope"] == "1.9"
    assert features["window.order.nulls"] == "1.9"
