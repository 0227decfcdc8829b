"""`dosi validate`: OK with warnings, or every issue with its path and line (exit 3)."""

from __future__ import annotations

import json

from clikit import MINI_MODEL, SHOP_MODEL

import dosi


def test_valid_model(run):
    r = run("validate", "-m", SHOP_MODEL)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("OK: ")
    assert "datus mode" in r.stdout


def test_valid_model_json_is_validate_dict(run):
    r = run("validate", "-m", SHOP_MODEL, "--format", "json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    # plus `checked`: the CLI says it looked at the model only (issue 21 item 7)
    want = dosi.validate(SHOP_MODEL.read_text(encoding="utf-8"), "datus")
    assert data == {**want, "checked": "model"}
    assert data["valid"] is True
    assert data["issues"] == []


def _broken(tmp_path):
    bad = tmp_path / "bad.yaml"
    text = MINI_MODEL.replace("SUM(orders.amount)", "SUM(orders.amont)").replace(
        "from: orders\n", "from: orderz\n"
    )
    bad.write_text(text, encoding="utf-8")
    return bad, text


def test_invalid_model_lists_every_issue(run, tmp_path):
    bad, text = _broken(tmp_path)
    expected = dosi.validate(text, "datus")
    assert not expected["valid"] and len(expected["issues"]) == 2
    r = run("validate", "-m", bad)
    assert r.exit_code == 3
    assert r.stdout.startswith("INVALID: ")
    assert "2 problem(s)" in r.stdout
    for issue in expected["issues"]:
        assert f"[{issue['code']}] {issue['path']} (line {issue['line']}): " in r.stdout
        assert issue["message"] in r.stdout
    assert "did you mean: orders.amount" in r.stdout
    assert "Traceback" not in r.output


def test_invalid_model_json(run, tmp_path):
    bad, text = _broken(tmp_path)
    r = run("validate", "-m", bad, "-f", "json")
    assert r.exit_code == 3
    data = json.loads(r.stdout)
    assert data == {**dosi.validate(text, "datus"), "checked": "model"}
    assert {i["code"] for i in data["issues"]} == {"unknown_dataset", "unknown_field"}


def test_missing_model_file(run, tmp_path):
    r = run("validate", "-m", tmp_path / "nope.yaml", "-f", "json")
    assert r.exit_code == 3
    data = json.loads(r.stdout)
    assert data["valid"] is False
    assert data["issues"][0]["code"] == "model_not_found"
    t = run("validate", "-m", tmp_path / "nope.yaml")
    assert t.exit_code == 3
    assert "[model_not_found]" in t.stdout


def test_model_from_stdin(run):
    r = run("validate", "-m", "-", input=MINI_MODEL)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("OK: stdin")


def test_basic_mode_warnings(run, mini_model):
    r = run("validate", "-m", mini_model, "--osi-basic")
    assert r.exit_code == 0, r.output
    assert "basic mode" in r.stdout
    assert "2 warning(s)" in r.stdout
    assert r.stdout.count("warning: [ignored_vendor_extension]") == 2
    assert "D-JOIN" in r.stdout and "D-FILL" in r.stdout
    j = run("validate", "-m", mini_model, "--osi-basic", "-f", "json")
    data = json.loads(j.stdout)
    assert data["valid"] is True
    assert [w["code"] for w in data["warnings"]] == ["ignored_vendor_extension"] * 2
    assert {w["path"] for w in data["warnings"]} == {
        "relationships[orders_to_customers]",
        "metrics[cancelled_revenue]",
    }


def test_datus_mode_flag_and_group_level_mode(run, mini_model):
    r = run("validate", "-m", mini_model, "--osi-datus", "-f", "json")
    assert json.loads(r.stdout)["warnings"] == []
    g = run("--osi-basic", "validate", "-m", mini_model, "-f", "json")
    assert len(json.loads(g.stdout)["warnings"]) == 2


def test_shop_in_basic_mode_is_valid_with_count_star_unavailable(run):
    """CORE-MODE-02: the same model is valid in both modes; without D-DATASET the ambiguous
    COUNT(*) metric is unavailable (a warning), not a model error."""
    r = run("validate", "-m", SHOP_MODEL, "--osi-basic", "-f", "json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["valid"] is True
    codes = [w["code"] for w in data["warnings"]]
    assert "metric_unavailable_in_basic_mode" in codes
    assert "ignored_vendor_extension" in codes
