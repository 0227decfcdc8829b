"""Which format a result is written in, and writing it to a file honestly.

The format follows `--output`'s extension unless `--format` names one; a `--format` that
contradicts a known extension is `format_conflicts_with_output` (exit 2), never a Parquet
file holding a text table. A path that cannot be written (missing folder, a folder, no
permission) is found before the query runs and is a usage error naming it (exit 2); a write
that fails on the way (a full disk, an I/O error) is `output_write_failed` (exit 4), and the
partial file it left is removed. Binary formats: `parquet`, `arrow` (the Arrow IPC file
format, what pandas.read_feather and polars.read_ipc open) and `arrows` (the IPC stream).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dosi.errors import OsiError
from dosi.frontends.cli.output import CliError, OutputWriteError

#: file extension -> the format it implies
EXTENSION_FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
    ".arrows": "arrows",
    ".txt": "table",
}
BINARY_FORMATS = ("parquet", "arrow", "arrows")
#: errno values that mean the medium failed, not the path: exit 4
_MEDIUM_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EROFS}


def normalise(fmt: str) -> str:
    fmt = fmt.lower()
    return "table" if fmt == "text" else fmt


def resolve_format(fmt: str | None, output: str | None, choices: Sequence[str]) -> str:
    """The format to write: `--format` when given (checked against `--output`'s extension),
    else the one the extension implies, else `table`."""
    implied = None
    if output not in (None, "-"):
        implied = EXTENSION_FORMATS.get(Path(str(output)).suffix.lower())
        if implied is not None and implied not in {normalise(c) for c in choices}:
            implied = None  # an extension this command cannot write: --format decides
    if fmt is None:
        return implied or "table"
    fmt = normalise(fmt)
    if implied is not None and implied != fmt:
        raise CliError(
            "format_conflicts_with_output",
            f"--format {fmt} contradicts --output {output}, whose extension means {implied}",
            hint=f"drop --format (the extension decides), pass --format {implied}, or name "
            f"the file for {fmt}",
            detail={"path": str(output), "format": fmt, "extension_format": implied},
        )
    return fmt


def check_output_path(output: str | None) -> None:
    """Fail before any work when `output` cannot be written: a missing folder, a folder, or
    no permission (exit 2, naming the path)."""
    if output in (None, "-"):
        return
    path = Path(str(output)).expanduser()
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise _path_error("output_is_directory", path, "is a directory")
    if not parent.is_dir():
        raise _path_error(
            "output_folder_missing",
            path,
            f"is in {parent}, which does not exist",
            hint=f"create the folder first (mkdir -p {parent}) or choose another --output",
        )
    target = path if path.exists() else parent
    if not os.access(target, os.W_OK):
        raise _path_error("output_permission_denied", path, "cannot be written (permission)")


def _path_error(code: str, path: Path, why: str, hint: str | None = None) -> CliError:
    return CliError(
        code,
        f"cannot write the output {path}: it {why}",
        hint=hint or "choose another --output, or write to stdout and redirect it",
        detail={"path": str(path)},
    )


def write_output(output: str, data: bytes | str) -> None:
    """Write `data` to `output`; an OSError becomes a structured error naming the path, and a
    file this call created is removed when the write fails half way."""
    path = Path(output).expanduser()
    existed = path.exists()
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(path, "wb") as fh:
            fh.write(payload)
    except OSError as exc:
        if not existed and path.is_file():
            path.unlink(missing_ok=True)
        raise write_error(path, exc) from None


def write_error(path: Path, exc: OSError) -> OsiError:
    reason = exc.strerror or type(exc).__name__
    if exc.errno in _MEDIUM_ERRORS:
        return OutputWriteError(
            "output_write_failed",
            f"writing the output {path} failed: {reason}",
            hint="free space on that disk or write the output elsewhere",
            detail={"path": str(path), "errno": exc.errno},
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return _path_error("output_permission_denied", path, "cannot be written (permission)")
    if exc.errno == errno.EISDIR:
        return _path_error("output_is_directory", path, "is a directory")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return _path_error("output_folder_missing", path, "is in a folder that does not exist")
    return OutputWriteError(
        "output_write_failed",
        f"writing the output {path} failed: {reason}",
        hint="check the path and the disk, or write the output elsewhere",
        detail={"path": str(path), "errno": exc.errno},
    )


def binary(table: pa.Table, fmt: str) -> bytes:
    """The table as Parquet, an Arrow IPC file (`arrow`) or an Arrow IPC stream (`arrows`)."""
    sink = pa.BufferOutputStream()
    if fmt == "parquet":
        pq.write_table(table, sink)
    elif fmt == "arrow":
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    else:
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    return sink.getvalue().to_pybytes()
