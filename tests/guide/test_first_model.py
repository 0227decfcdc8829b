"""docs/guide/first-model.md runs as written: every file it shows is written, every command
it shows is run in an empty folder (in order), and each command's output is the text block
printed under it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from docrun import run_command

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guide" / "first-model.md"
_FENCE = re.compile(r"^```([A-Za-z]*)([^\n]*)\n(.*?)^```$", re.S | re.M)
_TITLE = re.compile(r'title="([^"]+)"')


@dataclass
class Step:
    kind: str  # "file", "append" or "run"
    target: str = ""
    body: str = ""
    commands: list[str] = field(default_factory=list)
    expected: str | None = None


def steps(text: str) -> list[Step]:
    out: list[Step] = []
    for m in _FENCE.finditer(text):
        lang, attrs, body = m.group(1), m.group(2).strip(), m.group(3)
        # a block titled with a file name is that file (MkDocs shows the title above it);
        # "NAME (appended)" adds the block to the end of NAME
        title = _TITLE.search(attrs)
        if title and title.group(1).endswith(" (appended)"):
            out.append(Step("append", title.group(1).removesuffix(" (appended)"), body))
        elif title:
            out.append(Step("file", title.group(1), body))
        elif lang == "sh":
            cmds = [line[2:] for line in body.splitlines() if line.startswith("$ ")]
            out.append(Step("run", commands=cmds))
        elif lang == "text" and out and out[-1].kind == "run" and out[-1].expected is None:
            out[-1].expected = body
    return out


def run(command: str, cwd: Path) -> tuple[int, str]:
    argv = shlex.split(command)
    if argv[0] == "dosi":  # in this process, as the docs' console blocks run (docrun)
        return run_command(command, cwd)
    if argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("DOSI_MODEL", None)
    env.pop("DOSI_DB", None)
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)
    return done.returncode, done.stdout + done.stderr


def play(tmp: Path) -> list[tuple[Step, str, str]]:
    """(step, command, actual output) for every command, after the files before it."""
    results = []
    for step in steps(GUIDE.read_text()):
        if step.kind == "file":
            (tmp / step.target).write_text(step.body)
        elif step.kind == "append":
            with (tmp / step.target).open("a") as fh:
                fh.write(step.body)
        else:
            for cmd in step.commands:
                code, output = run(cmd, tmp)
                results.append((step, cmd, output))
                failing = step.expected is not None and step.expected.startswith("INVALID")
                assert (code != 0) == failing, f"`{cmd}` exited {code}:\n{output}"
    return results


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def test_the_guide_runs_as_written(tmp_path: Path) -> None:
    results = play(tmp_path)
    assert len(results) >= 7
    for step, cmd, output in results:
        if step.expected is None:
            continue
        assert _norm(output) == _norm(step.expected), f"`{cmd}` printed:\n{output}"


if __name__ == "__main__":  # print the actual outputs, to update the guide
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        for _step, cmd, output in play(Path(d)):
            print(f"$ {cmd}\n{output}")
