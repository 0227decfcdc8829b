"""Packages that say what they are, and modules small enough to read (issue 19, Deliver items
1 and 3): every package of src/dosi has an `__init__.py` whose docstring names its layer and
what it may import, and no module in ext/ or compiler/ runs above about 300 lines."""

from __future__ import annotations

import ast

import pytest
from archkit import PACKAGE, relpath, tree

MAX_LINES = 300  # "about 300": one idea per module
SMALL_PACKAGES = ("ext", "compiler")


def _packages() -> list:
    """Every directory of src/dosi holding Python modules (web assets alone are not one)."""
    dirs = [PACKAGE, *sorted(d for d in PACKAGE.rglob("*") if d.is_dir())]
    return [d for d in dirs if d.name != "__pycache__" and any(d.glob("*.py"))]


def test_every_package_has_an_init_docstring() -> None:
    missing = []
    for d in _packages():
        init = d / "__init__.py"
        if not init.exists():
            missing.append(f"{relpath(d)}/: no __init__.py")
        elif not ast.get_docstring(tree(init)):
            missing.append(f"{relpath(init)}: no docstring")
    if missing:
        pytest.fail(
            f"{len(missing)} packages without a docstring naming their layer and what they may "
            "import:\n" + "\n".join(missing),
            pytrace=False,
        )


def test_no_long_modules_in_ext_and_compiler() -> None:
    long = []
    for name in SMALL_PACKAGES:
        for path in sorted((PACKAGE / name).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES:
                long.append(f"{relpath(path)}: {lines} lines")
    if long:
        pytest.fail(
            f"{len(long)} modules above {MAX_LINES} lines in "
            + " and ".join(f"{PACKAGE.name}/{n}/" for n in SMALL_PACKAGES)
            + " (split by idea):\n"
            + "\n".join(long),
            pytrace=False,
        )
