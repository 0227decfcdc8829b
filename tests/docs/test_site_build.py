"""Issue 26 item 1: the docs site builds with `mkdocs build --strict` (every page in the nav,
no broken link or anchor, the API and CLI reference generated), and has its search index.

One build (about five seconds) serves every assertion of this file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dosi import Engine, QueryResult
from dosi.frontends.cli.app import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    for line in done.stderr.splitlines():
        assert not line.startswith(("WARNING", "ERROR")), done.stderr
    return out


def _nav_pages(items: list) -> list[str]:
    pages: list[str] = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_page_is_in_the_nav() -> None:
    """A page left out of the nav is a warning, but say which one plainly."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = set(_nav_pages(config["nav"]))
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert pages - in_nav == set(), "pages missing from mkdocs.yml's nav"
    assert in_nav - pages == set(), "nav entries without a page"


def test_strict_build_renders_every_page(site: Path) -> None:
    for page in (ROOT / "docs").rglob("*.md"):
        rel = page.relative_to(ROOT / "docs").with_suffix("")
        html = site / (rel.parent if rel.name == "index" else rel) / "index.html"
        assert html.is_file(), f"{page} was not rendered"


def test_every_fence_renders_as_code(site: Path) -> None:
    """A fence whose info string MkDocs cannot read (`yaml file=x`) renders as a paragraph
    of backticks; titles are written `title="x"`."""
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "<p>```" not in text and "<p>~~~" not in text, f"{html.relative_to(site)}"


def test_search_index_holds_the_pages(site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert {"getting-started/", "extensions/d-window/", "reference/cli/"} <= locations


def test_python_reference_is_generated_from_docstrings(site: Path) -> None:
    html = (site / "reference" / "python" / "index.html").read_text(encoding="utf-8")
    public = [f"Engine.{n}" for n in vars(Engine) if not n.startswith("_")]
    public += [f"QueryResult.{n}" for n in vars(QueryResult) if not n.startswith("_")]
    public += ["validate", "CancellationToken.cancel", "OsiError", "ExecuteError", "Diagnostic"]
    missing = [name for name in public if f'id="dosi.{name}"' not in html]
    assert not missing, f"members missing from the Python reference: {missing}"
    # the Engine docstring's first line, as written in src/dosi/engine.py
    assert (Engine.__doc__ or "").splitlines()[0].strip() in html


def test_cli_reference_is_generated_from_the_click_commands(site: Path) -> None:
    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for name in cli.commands:
        assert f"dosi {name}" in html, f"`dosi {name}` missing from the CLI reference"
    query = cli.commands["query"]
    for param in query.params:
        for opt in getattr(param, "opts", []):
            assert opt in html, f"`dosi query {opt}` missing from the CLI reference"
    assert "Sentinel" not in html  # click's internal default marker, not a default to show


def test_the_site_loads_nothing_from_outside(site: Path) -> None:
    """Fonts and the generator badge are off: a built page names no other site."""
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        for bad in ("fonts.googleapis", "fonts.gstatic", "squidfunk.github.io"):
            assert bad not in text, f"{html.relative_to(site)} loads {bad}"
