"""Issue 26 item 1: the docs' code blocks run as written, against the shop example.

Every ```console block's commands run and print what the page shows under them; every
```python block runs, and prints the ```text block that follows it. A shell block shown with
its output must be a console block, so nothing that looks checked is left unchecked. The
conventions are in tests/kit/docrun.py and docs/development.md ("Docs that run").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docrun import (
    REPO,
    blocks,
    commands,
    make_workspace,
    matches,
    output_block,
    pages,
    parse_problem,
    run_command,
    run_python,
    shown_dosi_commands,
)

from dosi.errors import ExecuteError

#: Pages whose shell blocks another test runs with its own conventions.
OWN_TESTS = {"docs/guide/first-model.md": "tests/guide/test_first_model.py"}

ALL_BLOCKS = [b for page in pages() for b in blocks(page)]
CONSOLE = [b for b in ALL_BLOCKS if b.lang == "console" and not b.skipped]
CONSOLE_PAGES = sorted({b.page for b in CONSOLE})
PYTHON_PAGES = sorted({b.page for b in ALL_BLOCKS if b.lang == "python" and not b.skipped})


@pytest.fixture
def workspace(tmp_path: Path, shop_db: Path) -> Path:
    """A fresh scratch folder per page: a page's commands see the files its earlier blocks
    wrote, never another page's."""
    return make_workspace(tmp_path, shop_db)


@pytest.mark.parametrize("page", CONSOLE_PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_console_blocks_print_what_the_page_shows(page: Path, workspace: Path) -> None:
    for block in (b for b in CONSOLE if b.page == page):
        for command in commands(block):
            code, output = run_command(command.text, workspace)
            assert command.fails is None or (code != 0) == command.fails, (
                f"{block.where}: `{command.text}` exited {code}:\n{output}"
            )
            assert matches(command.expected, output), (
                f"{block.where}: `{command.text}` printed:\n{output}\n--- the page shows:\n"
                f"{command.expected}"
            )


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_python_blocks_print_what_the_page_shows(page: Path, workspace: Path) -> None:
    try:
        checked = run_python(blocks(page), workspace)
    except ModuleNotFoundError as err:  # an optional engine or frontend, as in tests/engines
        pytest.skip(f"{page.name} needs the {err.name} package (the test command installs it)")
    except ExecuteError as err:
        if err.code != "missing_driver":
            raise
        pytest.skip(f"{page.name}: {err.message}")
    for block, expected, printed in checked:
        assert matches(expected, printed), (
            f"{block.where} printed:\n{printed}\n--- the page shows:\n{expected}"
        )


def test_shown_output_is_checked() -> None:
    """A shell block followed by a text block shows a command's output: it must be a console
    block (run by this file), or on a page another test runs, or say why it is not run."""
    unchecked = []
    for page in pages():
        rel = str(page.relative_to(REPO))
        if rel in OWN_TESTS:
            continue
        page_blocks = blocks(page)
        for i, block in enumerate(page_blocks):
            shell = block.lang in ("bash", "sh", "shell")
            if shell and not block.skipped and output_block(page_blocks, i) is not None:
                unchecked.append(block.where)
    assert not unchecked, (
        "shell blocks shown with output but not run (make them ```console blocks, or add "
        "`<!-- not run: REASON -->` before them): " + ", ".join(unchecked)
    )


def test_the_conventions_are_exercised() -> None:
    """The key pages hold console blocks, and the Python API page runs its examples."""
    with_console = {b.page.relative_to(REPO).as_posix() for b in CONSOLE}
    for page in ("docs/getting-started.md", "docs/cli.md", "docs/query.md"):
        assert page in with_console, f"{page} has no console block"
    assert REPO / "docs" / "python-api.md" in PYTHON_PAGES
    assert sum(len(commands(b)) for b in CONSOLE) >= 20


def test_commands_shown_without_output_parse() -> None:
    """A `dosi` command shown in a plain shell block (a server, the reader's own project) is
    not run, but it must still be a command line dosi takes: its command, options and
    values as the CLI defines them today."""
    problems = []
    for block in ALL_BLOCKS:
        if block.lang in ("bash", "sh", "shell"):
            for command in shown_dosi_commands(block):
                why = parse_problem(command)
                if why is not None:
                    problems.append(f"{block.where}: `{command}`: {why}")
    assert not problems, "\n".join(problems)
