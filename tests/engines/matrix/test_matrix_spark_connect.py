"""Spark Connect (issue 14 item 1): a `sc://host:port` profile runs dosi's Spark SQL on a remote
Spark session and returns DuckDB's answers. A local Spark Connect server stands in for the
cluster; the check runs in its own process so its JVM never meets the local[2] session of the
conformance suite."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "kit" / "spark_connect_check.py"


@pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("grpc") is None,
    reason="spark connect: install dosi[spark] (pyspark[connect])",
)
@pytest.mark.skipif(shutil.which("java") is None, reason="spark connect: no Java runtime")
def test_sc_uri_matches_duckdb(tmp_path: Path) -> None:
    # run in a temporary folder: whatever the JVM writes relative to its working directory
    # (spark-warehouse/, derby.log) stays out of the repository
    done = subprocess.run(
        [sys.executable, str(_SCRIPT)], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "connect ok 5 of 5" in done.stdout
