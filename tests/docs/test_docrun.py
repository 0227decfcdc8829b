"""Issue 26 item 1: the docs runner (tests/kit/docrun.py) reads the conventions as
docs/development.md states them, and a page that drifts from what dosi prints fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from docrun import (
    blocks,
    commands,
    make_workspace,
    matches,
    output_block,
    parse_problem,
    run_command,
)


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_console_commands_continuations_heredocs_and_outputs(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        "```console\n$ dosi query -m m.yaml \\\n     -M revenue\nrow 1\n"
        "$ cat > f.yaml <<'EOF'\na: 1\n$ not a command\nEOF\n$ true\n```\n",
    )
    (block,) = blocks(page)
    found = commands(block)
    assert [c.text for c in found] == [
        "dosi query -m m.yaml \\\n     -M revenue",
        "cat > f.yaml <<'EOF'\na: 1\n$ not a command\nEOF",
        "true",
    ]
    assert [c.expected for c in found] == ["row 1", "", ""]


def test_expected_failures_and_printed_status(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        '```console\n$ dosi x\nerror: [code] no\n$ dosi y; echo "exit $?"\nexit 2\n$ dosi z\nok\n```\n',
    )
    (block,) = blocks(page)
    assert [c.fails for c in commands(block)] == [True, None, False]


def test_matching_is_exact_but_for_trailing_space_and_ellipsis_lines() -> None:
    assert matches("a\nb  \n", "\na\nb\n\n")
    assert not matches("a\nb\n", "a\nB\n")
    assert not matches("a\n", "a\nextra\n")
    assert matches("first\n...\nlast\n", "first\none\ntwo\nlast\n")
    assert matches("first\n...\nlast\n", "first\nlast\n")
    assert not matches("first\n...\nlast\n", "first\none\n")


def test_not_run_marker_and_direct_output_blocks(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        "<!-- not run: a server -->\n\n```bash\ncurl x\n```\n\n```text\nout\n```\n\n"
        "```python\nprint(1)\n```\n\nprose\n\n```text\n1\n```\n",
    )
    shell, shown, code, far = blocks(page)
    assert shell.skipped and not code.skipped
    assert output_block([shell, shown, code, far], 0) is shown
    assert output_block([shell, shown, code, far], 2) is None  # prose between: not its output


def test_a_drifted_page_fails(tmp_path: Path, shop_db: Path) -> None:
    """The shop's revenue by channel, shown with one digit wrong, does not match."""
    workspace = make_workspace(tmp_path / "ws", shop_db)
    code, output = run_command(
        "dosi query -m examples/shop/model.yaml --db examples/shop/data/shop.duckdb "
        "-M revenue -g orders.channel -f csv",
        workspace,
    )
    assert code == 0
    assert matches("channel,revenue\nmobile,922944.02\nstore,340896.94\n...", output)
    assert not matches("channel,revenue\nmobile,922944.03\nstore,340896.94\n...", output)
    code, output = run_command(
        'dosi query -m examples/shop/model.yaml --db missing.duckdb -M revenue 2>&1; echo "exit $?"',
        workspace,
    )
    assert output.splitlines()[-1] == "exit 4"
    code, output = run_command(
        "dosi list metrics -m examples/shop/model.yaml -f csv | head -n 1", workspace
    )
    assert code == 0 and output.startswith("name,")


@pytest.mark.parametrize("ending", ["2> /dev/null", "2>&1"])
def test_in_process_and_bash_agree(tmp_path: Path, shop_db: Path, ending: str) -> None:
    """A plain dosi command prints the same in this process as in bash (`dosi` on PATH)."""
    workspace = make_workspace(tmp_path / "ws", shop_db)
    cmd = f"dosi query -m examples/shop/model.yaml --db examples/shop/data/shop.duckdb -M revenue {ending}"
    assert run_command(cmd, workspace) == run_command(f"{cmd} && true", workspace)


def test_shown_commands_are_parsed_as_the_cli_defines_them() -> None:
    assert parse_problem("dosi query -m m.yaml -M revenue -g orders.channel") is None
    assert "No such option" in (parse_problem("dosi query --no-such-flag") or "")
    assert "No such command" in (parse_problem("dosi quarry -M revenue") or "")
    assert "not a valid integer" in (parse_problem("dosi query -l many") or "")
    assert "unexpected extra" in (parse_problem("dosi validate -m m.yaml [--connection N]") or "")
    assert parse_problem("dosi import cube ./the-readers-own-project -o model.yaml") is None
    assert parse_problem("dosi serve -m m.yaml | tee log") is None  # shell: not checked
