"""Runs the code blocks of docs/ pages as a reader would (issue 26 item 1).

The conventions (docs/development.md, "Docs that run"):

- a ```console block is a shell session: each line starting with `$ ` is a command (a line
  ending in a backslash continues it; a heredoc runs to its terminator), and the lines up to
  the next `$ ` are what it prints, stdout and stderr together. A command exits 0 unless its
  output shows an `error:` line (then it exits non-zero), or it prints `$?` itself. A line `...` in an output stands for any number of lines;
  nothing else is normalised beyond trailing spaces and blank lines at either end.
- every ```python block of a page runs, in page order, in one namespace; when a ```text
  block follows it directly (only blank lines between), that is what the Python block prints.
- an HTML comment `<!-- not run: REASON -->` on the line before a block leaves it out (a
  server, another warehouse), with the reason in the page's source.

Everything runs in a scratch folder laid out like the repository's root (`examples/` with the
shop database the demo builds), so the pages' paths work as written.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import duckdb
from click.testing import CliRunner, Result

from dosi.engine import Engine
from dosi.frontends.cli.app import cli

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

_FENCE = re.compile(
    r"^(?P<fence>```+)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
_NOT_RUN = re.compile(r"<!--\s*not run:[^>]*-->[ \t]*\n[ \t]*\n?\Z")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
#: Commands run from the scratch folder see this environment: wide, uncoloured, no
#: progress, and none of the user's defaults.
ENV_SET = {"COLUMNS": "200", "NO_COLOR": "1", "DOSI_NO_PROGRESS": "1", "LC_ALL": "C.UTF-8"}
ENV_DROP = ("DOSI_MODEL", "DOSI_DB", "DOSI_TOKEN", "DOSI_DEBUG")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    info: str
    body: str
    skipped: bool
    #: only blank lines between this block and the one before it on the page
    follows_directly: bool = False

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


@dataclass(frozen=True)
class Command:
    block: Block
    text: str
    expected: str

    @property
    def fails(self) -> bool | None:
        """Whether the command must exit non-zero: when its output shows a structured error
        (`error:`). None when the command prints its own exit status (`echo "exit $?"`),
        which the output then checks."""
        if "$?" in self.text:
            return None
        return any(line.startswith("error:") for line in self.expected.splitlines())


def pages() -> list[Path]:
    """The README and every page of docs/."""
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    previous_end = None
    for m in _FENCE.finditer(text):
        info = m.group("info").strip()
        lang = info.split()[0] if info else ""
        skipped = bool(_NOT_RUN.search(text[: m.start()]))
        line = text.count("\n", 0, m.start()) + 1
        direct = previous_end is not None and not text[previous_end : m.start()].strip()
        out.append(Block(page, line, lang, info, m.group("body"), skipped, direct))
        previous_end = m.end()
    return out


def output_block(page_blocks: list[Block], i: int) -> Block | None:
    """The ```text block right under block i (only blank lines between): its output."""
    following = page_blocks[i + 1] if i + 1 < len(page_blocks) else None
    if following is not None and following.lang == "text" and following.follows_directly:
        return following
    return None


def commands(block: Block) -> list[Command]:
    """The commands of a console block, each with the output shown under it."""
    lines = block.body.splitlines()
    out: list[Command] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise AssertionError(f"{block.where}: a console block starts with a `$ ` command")
        cmd = [lines[i][2:]]
        i += 1
        while cmd[-1].endswith("\\") and i < len(lines):
            cmd.append(lines[i])
            i += 1
        heredoc = _HEREDOC.search("\n".join(cmd))
        if heredoc:
            while i < len(lines):
                cmd.append(lines[i])
                i += 1
                if cmd[-1].strip() == heredoc.group(2):
                    break
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        out.append(Command(block, "\n".join(cmd), "\n".join(expected)))
    return out


def normalise(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected`, where a line `...` stands for any number of lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + r"\n"
        for line in normalise(expected)
    )
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in normalise(actual))) is not None


# ------------------------------------------------------------------------------ the folder


def make_workspace(folder: Path, shop_db: Path) -> Path:
    """A folder like the repository's root: a copy of every example's files, the shop
    database where the demo puts it, and `dosi` / `python` on a `bin/` the shell commands see first."""
    for example in sorted((REPO / "examples").iterdir()):
        if not example.is_dir():
            continue
        dest = folder / "examples" / example.name
        dest.mkdir(parents=True)
        for item in example.iterdir():  # copies: a generator writes beside its own file
            if item.is_file():
                shutil.copy2(item, dest / item.name)
    data = folder / "examples" / "shop" / "data"
    data.mkdir()
    shutil.copyfile(shop_db, data / "shop.duckdb")
    # the Parquet files `python examples/shop/generate.py` writes beside it, written the way
    # it writes them (COPY of each table)
    con = duckdb.connect(str(data / "shop.duckdb"), read_only=True)
    try:
        tables = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
        for (name,) in tables:
            target = (data / f"{name}.parquet").as_posix()
            con.execute(f"COPY main.{name} TO '{target}' (FORMAT parquet, COMPRESSION zstd)")
    finally:
        con.close()
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (folder / ".venv").mkdir()
    (folder / ".venv" / "bin").symlink_to(bin_dir)  # the pages also say `.venv/bin/dosi`
    # scripts, not symlinks: a virtual environment's python finds its packages only when
    # started by its own path
    for name, line in (
        ("python", f'exec "{sys.executable}" "$@"'),
        ("python3", f'exec "{sys.executable}" "$@"'),
        # this checkout's dosi even for a child started with a bare environment (MCP's stdio
        # client passes only PATH, HOME and a few more)
        ("dosi", f'PYTHONPATH="{REPO / "src"}" exec "{sys.executable}" -m dosi "$@"'),
    ):
        (bin_dir / name).write_text(f"#!/bin/sh\n{line}\n")
        (bin_dir / name).chmod(0o755)
    return folder


def environment(workspace: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
    env.update(ENV_SET)
    env["PATH"] = f"{workspace / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "src"), env.get("PYTHONPATH", "")) if p
    )
    return env


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


#: The shell endings a plain `dosi ...` may have and still run in this process: both
#: streams (`2>&1`), stdout only (`2> /dev/null`), and the exit status printed after it.
_ENDINGS = (
    (re.compile(r'\s+2>&1;\s*echo\s+"exit \$\?"$'), "status"),
    (re.compile(r"\s+2>&1$"), "both"),
    (re.compile(r"\s+2>\s*/dev/null$"), "stdout"),
)


def _plain_dosi(command: str) -> tuple[list[str], str] | None:
    """The arguments of a `dosi ...` command that needs no shell, and which of its output a
    terminal shows ("both", "stdout", or "status": both and `exit N`), else None."""
    flat = command.replace("\\\n", " ").strip()
    if "\n" in flat:
        return None
    shows = "both"
    for pattern, kind in _ENDINGS:
        if pattern.search(flat):
            flat, shows = pattern.sub("", flat), kind
            break
    lexer = shlex.shlex(flat, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    argv = list(lexer)
    if not argv or argv[0] != "dosi" or "$" in flat or "`" in flat:
        return None
    if any(a and set(a) <= set("|&;<>()") for a in argv):
        return None
    return argv[1:], shows


def run_command(command: str, workspace: Path) -> tuple[int, str]:
    """(exit code, stdout and stderr as a terminal shows them). A plain `dosi ...` runs in
    this process (click's runner: a second of interpreter start saved per command); anything
    else runs in bash, with `dosi` and `python` found on PATH."""
    env = environment(workspace)
    head, bar, tail = command.partition(" | ")
    piped = _plain_dosi(head) if bar and "\n" not in command else None
    if piped is not None and piped[1] == "both":
        # `dosi ... | filter`: dosi here, its stdout through the filter in bash
        result = _invoke(piped[0], workspace, env)
        done = subprocess.run(
            ["bash", "-c", tail],
            input=result.stdout,
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        return done.returncode, result.stderr + done.stdout  # a pipeline's status: its last
    plain = _plain_dosi(command)
    if plain is not None:
        argv, shows = plain
        result = _invoke(argv, workspace, env)
        if shows == "stdout":
            return result.exit_code, result.stdout
        if shows == "status":
            return 0, f"{result.output}exit {result.exit_code}\n"
        return result.exit_code, result.output
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout


def _invoke(argv: list[str], workspace: Path, env: dict[str, str]) -> Result:
    with inside(workspace):
        result = CliRunner().invoke(cli, argv, prog_name="dosi", env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def run_python(page_blocks: list[Block], workspace: Path) -> list[tuple[Block, str, str]]:
    """Runs a page's Python blocks in one namespace: (block, expected, printed) for each one
    a ```text block follows."""
    namespace: dict[str, object] = {"__name__": "__docs__"}
    checked = []
    with inside(workspace), contextlib.ExitStack() as closing:
        closing.callback(_close_engines, namespace)
        for i, block in enumerate(page_blocks):
            if block.lang != "python" or block.skipped:
                continue
            out = io.StringIO()
            code = compile(block.body, block.where, "exec")
            with contextlib.redirect_stdout(out):
                exec(code, namespace)
            shown = output_block(page_blocks, i)
            if shown is not None:
                checked.append((block, shown.body, out.getvalue()))
    return checked


def _close_engines(namespace: dict[str, object]) -> None:
    """The page's engines release the scratch database before the next page runs."""
    for value in namespace.values():
        if isinstance(value, Engine):
            value.close()


def shown_dosi_commands(block: Block) -> list[str]:
    """The `dosi ...` command lines of a shell block (continuations joined), for the
    blocks that are shown but not run."""
    text = block.body.replace("\\\n", " ")
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip().startswith(("dosi ", ".venv/bin/dosi "))
    ]


def parse_problem(command: str) -> str | None:
    """Why `command` would not get past the command line's parser (an unknown command or
    option, a bad value, a missing argument), else None. A path that does not exist here is
    the reader's own file, not a problem; a line with shell syntax is not checked."""
    argv = shlex.split(command, comments=True)
    if any(a in ("|", "||", "&&", ";", "&") or a.startswith((">", "<", "2>")) for a in argv):
        return None
    ctx = cli.make_context("dosi", argv[1:])
    cmd: click.Command = cli
    rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    try:
        while isinstance(cmd, click.Group):
            name, sub, rest = cmd.resolve_command(ctx, rest)
            assert sub is not None and name is not None
            ctx = sub.make_context(name, rest, parent=ctx)
            cmd = sub
            rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    except click.exceptions.Exit:
        return None
    except click.BadParameter as err:
        return None if "does not exist" in err.format_message() else err.format_message()
    except click.ClickException as err:
        return err.format_message()
    return None
