"""The README and docs/ link only into the repository, and every link resolves.

A person who clones the project must be able to follow every link and citation: a relative
link must name a file (or folder) inside the repository, an anchor a heading of the page it
points at, and no text may point outside the repository (a URL, an absolute path, a `../`
climbing out of it, or a document the repository does not hold). Backticked paths of the
folders the code moves never change (`examples/`, `scripts/`, `bench/`, `docs/`, `.ci/`) must
exist too. docs/ is what MkDocs renders, so a link in docs/ stays inside docs/ (other files
are cited by their backticked path). Anchors follow the slugs MkDocs gives headings (lower
case, punctuation dropped, spaces to hyphens), which GitHub's agree with for these pages.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Documents the code and notes once cited that live outside the repository.
OUTSIDE_DOCUMENTS = (
    "STYLE.md",
    "PERFORMANCE.md",
    "CHECKLIST.md",
    "DEVELOPERS.md",
    "HOUSE_PLAN.md",
    "window-metrics-extension.md",
    "datus-extensions.zh.md",
    "window-udf.md",
    "osi-schema.json",
)
#: Top-level folders whose backticked paths must exist (the moves of issue 19 leave them).
STABLE_ROOTS = ("examples/", "scripts/", "bench/", "docs/", ".ci/")

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_INLINE_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
_AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]+)>")
_HTML_ATTR = re.compile(r"\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)
_BARE_URL = re.compile(r"\b(?:https?|ftp|file)://[^\s)>\]`'\"]+")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_CLIMB = re.compile(r"(?<![\w./-])((?:\.\./)+[\w.-][\w./-]*)")
_ABSOLUTE = re.compile(r"(?<![\w.:/-])(/(?:work|home|root|Users|mnt|opt|srv)/[\w./-]+)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)


@dataclass(frozen=True)
class Problem:
    file: Path
    line: int
    target: str
    why: str


def doc_files(root: Path = ROOT) -> list[Path]:
    """The pages checked: the README, everything under docs/, the examples' and bench's."""
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    files += sorted(root.glob("examples/*/README.md"))
    files += [p for p in (root / "bench" / "README.md",) if p.exists()]
    return [p for p in files if p.is_file()]


def _blank(match: re.Match[str]) -> str:
    """The match replaced by spaces, newlines kept, so offsets and line numbers stay."""
    return re.sub(r"[^\n]", " ", match.group(0))


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans (where brackets are not links)."""
    return _CODE_SPAN.sub(_blank, _FENCE.sub(_blank, text))


def slug(heading: str) -> str:
    """A heading's anchor as MkDocs writes it (markdown's toc slugify)."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub(_blank, page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out: set[str] = set()
    for m in _HEADING.finditer(text):
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}_{n}")
    return out


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def check_link(page: Path, target: str, root: Path) -> str | None:
    """Why `target`, written in `page`, is not a link into the repository (None when it is)."""
    if not target:
        return "an empty link"
    if _SCHEME.match(target) or target.startswith("//"):
        return "a URL: links point only into the repository"
    if target.startswith("/"):
        return "an absolute path: write it relative to the page"
    path_part, _, anchor = target.partition("#")
    dest = page if not path_part else (page.parent / path_part)
    if not _inside(dest, root):
        return "climbs out of the repository"
    if not dest.exists():
        return "no such file in the repository"
    docs = root / "docs"
    if _inside(page, docs) and not _inside(dest, docs):
        return "leaves docs/, which MkDocs renders alone: cite the file as a `path` instead"
    if anchor and dest.is_file() and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"no heading with the anchor #{anchor} in {dest.relative_to(root)}"
    return None


def links(text: str) -> list[tuple[int, str]]:
    """(offset, target) of every link outside code: inline, reference, autolink, HTML."""
    body = prose(text)
    found: list[tuple[int, str]] = []
    for pattern in (_INLINE_LINK, _REFERENCE_DEF, _AUTOLINK, _HTML_ATTR):
        found += [(m.start(1), m.group(1)) for m in pattern.finditer(body)]
    found += [(m.start(), m.group(0)) for m in _BARE_URL.finditer(body)]
    return sorted(set(found))


def problems_in(page: Path, root: Path = ROOT) -> list[Problem]:
    text = page.read_text(encoding="utf-8")
    out: list[Problem] = []
    for offset, target in links(text):
        why = check_link(page, target, root)
        if why is not None:
            out.append(Problem(page, _line(text, offset), target, why))
    # citations anywhere, code included: nothing may point outside the repository
    for m in _CLIMB.finditer(text):
        if not _inside(page.parent / m.group(1), root):
            out.append(
                Problem(page, _line(text, m.start()), m.group(1), "climbs out of the repository")
            )
    for m in _ABSOLUTE.finditer(text):
        out.append(
            Problem(page, _line(text, m.start()), m.group(1), "a path outside the repository")
        )
    held = {p.name for p in root.rglob("*") if ".git" not in p.parts and ".venv" not in p.parts}
    for name in OUTSIDE_DOCUMENTS:
        if name in held:
            continue
        for m in re.finditer(re.escape(name), text):
            out.append(
                Problem(
                    page, _line(text, m.start()), name, "a document the repository does not hold"
                )
            )
    for m in _CODE_SPAN.finditer(_FENCE.sub(_blank, text)):
        cited = m.group(2).strip()
        if not cited.startswith(STABLE_ROOTS) or re.search(r"[\s<>*{}$|]", cited):
            continue
        if re.match(r"examples/[^/]+/data(/|$)", cited):  # generated, git-ignored example data
            continue
        if not (root / cited.split("#")[0]).exists():
            out.append(
                Problem(page, _line(text, m.start()), cited, "no such path in the repository")
            )
    return out


def _report(problems: list[Problem], root: Path) -> str:
    return "\n".join(f"{p.file.relative_to(root)}:{p.line}: {p.target} ({p.why})" for p in problems)


def test_docs_pages_exist() -> None:
    """docs/index.md is the front page, and it links every page of docs/."""
    index = ROOT / "docs" / "index.md"
    assert index.is_file()
    text = index.read_text(encoding="utf-8")
    linked = {(index.parent / t.partition("#")[0]).resolve() for _, t in links(text)}
    pages = {p.resolve() for p in (ROOT / "docs").rglob("*.md")} - {index.resolve()}
    missing = sorted(str(p.relative_to(ROOT)) for p in pages - linked)
    assert not missing, "pages docs/index.md does not link: " + ", ".join(missing)


@pytest.mark.parametrize("page", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_links_and_citations_stay_in_the_repository(page: Path) -> None:
    found = problems_in(page)
    if found:
        pytest.fail(
            f"{len(found)} broken or outside links:\n" + _report(found, ROOT), pytrace=False
        )


# -- the checker itself, on pages written for the purpose ----------------------------------------


def _tree(tmp_path: Path, page: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## Time ranges\n", "utf-8")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "demo.sh").write_text("", "utf-8")
    target = tmp_path / "docs" / "page.md"
    target.write_text(page, "utf-8")
    return target


@pytest.mark.parametrize(
    ("page", "why"),
    [
        ("see [x](missing.md)\n", "no such file"),
        ("see [x](other.md#tagged-ranges)\n", "no heading with the anchor"),
        ("see [x](../../shared/spec/ossie/spec.md)\n", "climbs out"),
        ("see [x](https://example.com/spec)\n", "a URL"),
        ("see [x](/etc/passwd)\n", "an absolute path"),
        ("cited in window-metrics-extension.md\n", "does not hold"),
        ("```bash\ncat /work/shared/STYLE.md\n```\n", "outside the repository"),
        ("run `scripts/missing.sh`\n", "no such path"),
        ("see [the script](../scripts/demo.sh)\n", "leaves docs/"),
        ('<a href="http://example.com">x</a>\n', "a URL"),
    ],
)
def test_the_checker_finds(tmp_path: Path, page: str, why: str) -> None:
    found = problems_in(_tree(tmp_path, page), tmp_path)
    assert any(why in p.why for p in found), _report(found, tmp_path)


def test_the_checker_accepts_links_into_the_repository(tmp_path: Path) -> None:
    page = (
        "# Page\n\nSee [other](other.md), [its section](other.md#time-ranges), "
        "[here](#page) and `scripts/demo.sh`.\n\n"
        "```bash\nbash scripts/demo.sh   # [not a link](nowhere.md)\n```\n"
    )
    assert problems_in(_tree(tmp_path, page), tmp_path) == []


# -- the code, tests, scripts and examples cite only what the repository holds --------------------

#: The project notes the code once cited; the specifications may be cited by name and section.
OUTSIDE_NOTES = ("STYLE.md", "PERFORMANCE.md", "CHECKLIST.md", "DEVELOPERS.md", "HOUSE_PLAN.md")
#: The README keeps what a newcomer needs first; its old reference sections are docs/ pages now.
_README_SECTION = re.compile(r"README[,:]?\s+\"(?!Streaming windows|Level-of-detail)")
_SOURCE_SUFFIXES = {".py", ".sh", ".yaml", ".yml", ".toml", ".js", ".html", ".sql", ".txt"}


def source_files(root: Path = ROOT) -> list[Path]:
    """The files whose comments and docstrings are checked (this checker's own cases aside)."""
    files = [
        p
        for d in ("src", "tests", "bench", "examples", "scripts", ".ci")
        for p in (root / d).rglob("*")
    ]
    files += [root / "pyproject.toml"]
    own = Path(__file__).resolve()
    return sorted(
        p
        for p in files
        if p.is_file()
        and (p.suffix in _SOURCE_SUFFIXES or p.parent.name == ".ci")
        and "__pycache__" not in p.parts
        and "/data/" not in p.as_posix()
        and p.resolve() != own
    )


def citations_in(path: Path, root: Path = ROOT) -> list[Problem]:
    """Citations in a source file that a person who clones the project cannot follow."""
    text = path.read_text(encoding="utf-8", errors="replace")
    out: list[Problem] = []
    for m in _CLIMB.finditer(text):
        if not _inside(path.parent / m.group(1), root):
            out.append(
                Problem(path, _line(text, m.start()), m.group(1), "climbs out of the repository")
            )
    for m in _ABSOLUTE.finditer(text):
        out.append(
            Problem(path, _line(text, m.start()), m.group(1), "a path outside the repository")
        )
    for name in OUTSIDE_NOTES:
        for m in re.finditer(re.escape(name), text):
            out.append(
                Problem(path, _line(text, m.start()), name, "a note the repository does not hold")
            )
    for m in _README_SECTION.finditer(text):
        out.append(
            Problem(
                path,
                _line(text, m.start()),
                m.group(0),
                "a README section now in docs/: cite the page",
            )
        )
    return out


def test_source_cites_only_the_repository() -> None:
    found = [p for f in source_files() for p in citations_in(f)]
    assert not found, f"{len(found)} citations outside the repository:\n" + _report(found, ROOT)


@pytest.mark.parametrize(
    ("source", "why"),
    [
        (
            "# yaml-language-server: $schema=../../../shared/spec/ossie/osi-schema.json\n",
            "climbs out",
        ),
        ('"""Compile time (PERFORMANCE.md)."""\n', "does not hold"),
        ("hint='simplify the query (see the README, \"Limits\")'\n", "now in docs/"),
        ("# see /work/shared/spec/window-udf.md\n", "outside the repository"),
    ],
)
def test_the_source_checker_finds(tmp_path: Path, source: str, why: str) -> None:
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "module.py"
    path.write_text(source, "utf-8")
    found = citations_in(path, tmp_path)
    assert any(why in p.why for p in found), _report(found, tmp_path)


def test_the_source_checker_accepts_names_and_pages(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "module.py"
    path.write_text(
        '"""Window stage SQL (window-metrics-extension.md, "Compilation semantics"; WIN-OFF-07;\n'
        'docs/performance.md, rule 1; examples/shop/README.md, "Streaming windows")."""\n',
        "utf-8",
    )
    assert citations_in(path, tmp_path) == []
