"""Running a query from the command line: on a worker thread, so Ctrl-C reaches the main
thread at once and cancels the statement through the engine's cancellation token (DuckDB's
interrupt, the other runners' own cancel), and so the main thread can show progress.

Progress goes to stderr, and only when stderr is a terminal (never into a pipe or a file,
never between the rows on stdout): DuckDB's own query progress in percent where the engine
reports it, an elapsed-time spinner elsewhere. `DOSI_NO_PROGRESS=1` turns it off.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from dosi.execute.cancel import CancellationToken

T = TypeVar("T")

#: how long a cancelled statement may take to stop before the command exits anyway
CANCEL_GRACE_SECS = 5.0
#: no progress line for work shorter than this
PROGRESS_AFTER_SECS = 0.5
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def progress_wanted() -> bool:
    """Progress only on a terminal, and not when DOSI_NO_PROGRESS (or the older
    DOSI_NO_SPINNER) is set."""
    if os.environ.get("DOSI_NO_PROGRESS") or os.environ.get("DOSI_NO_SPINNER"):
        return False
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def progress_line(label: str, elapsed: float, percent: float | None, tick: int) -> str:
    """One frame: `⠙ querying… 42% 3.1s` where the engine reports progress, else the spinner
    and the elapsed time."""
    frame = _FRAMES[tick % len(_FRAMES)]
    done = f" {min(percent, 100.0):3.0f}%" if percent is not None else ""
    return f"{frame} {label}…{done} {elapsed:5.1f}s"


def run_query(
    call: Callable[[CancellationToken], T],
    label: str = "querying",
    progress: Callable[[], float | None] | None = None,
) -> T:
    """`call(token)` on a worker thread. Ctrl-C cancels `token` (the engine stops the
    statement), waits up to CANCEL_GRACE_SECS for it to stop, and raises KeyboardInterrupt
    (the command line exits 130 with "interrupted"). `progress()` reads the engine's
    percentage (None: not reported)."""
    token = CancellationToken()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = call(token)
        except BaseException as exc:  # handed to the main thread, raised there
            box["error"] = exc

    worker = threading.Thread(target=work, name="dosi-query", daemon=True)
    show = progress_wanted()
    started = time.monotonic()
    worker.start()
    width = 0
    tick = 0
    try:
        while worker.is_alive():
            worker.join(0.1)
            elapsed = time.monotonic() - started
            if show and worker.is_alive() and elapsed >= PROGRESS_AFTER_SECS:
                line = progress_line(label, elapsed, _percent(progress), tick)
                width = max(width, len(line))
                sys.stderr.write("\r" + line.ljust(width))
                sys.stderr.flush()
                tick += 1
    except KeyboardInterrupt:
        token.cancel()
        worker.join(CANCEL_GRACE_SECS)
        raise
    finally:
        if width:
            sys.stderr.write("\r" + " " * width + "\r")
            sys.stderr.flush()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _percent(progress: Callable[[], float | None] | None) -> float | None:
    if progress is None:
        return None
    try:
        value = progress()
    except Exception:  # progress is best effort: a failing probe shows the spinner
        return None
    return value if value is not None and value >= 0 else None
