"""The garbage collector around a model load, and the frozen model after it.

A model load allocates hundreds of thousands of long-lived objects (parsed YAML, sqlglot
trees, IR records). Python's cyclic collector runs a full pass over everything alive each
time the long-lived generation has grown by a quarter, so a load under the collector costs
more than twice its own work and grows faster than the model (docs/performance.md, "Model
load"); afterwards every full pass walks the whole model again, which was most of the slow
compiles (the p90). So:

- `paused_collector()`: no automatic collection while a model compiles. Reference counting
  still frees what is dropped; cyclic garbage waits for the next collection. Nested and
  concurrent loads share one pause (a counter), and the collector's prior state comes back
  when the last one ends, whatever it raised.
- `freeze_model()`: after a load, a collection of the youngest generation (where everything
  the paused load allocated still sits) frees the load's cyclic garbage, then `gc.freeze()`
  moves every surviving object to the permanent generation, which later collections skip.
  The first freeze of the process runs a full collection instead, so garbage from before the
  first load is not frozen with it. Frozen objects are still freed by reference counting;
  only cycles among them wait. So an engine that is collected counts itself gone
  (`engine_gone`, from a finalizer: nothing else runs inside the collector), and the next
  load after `RELEASE_AFTER` such engines unfreezes, runs a full collection (their models'
  cycles go) and freezes again: at most that many dead models are ever kept.
  `DOSI_GC_FREEZE=0` turns freezing off.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0
_was_enabled = False


@contextmanager
def paused_collector() -> Iterator[None]:
    """No automatic cyclic collection inside the block (shared by concurrent blocks)."""
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()


#: Dead engines whose frozen models wait before a load releases them (a full collection).
RELEASE_AFTER = 4
_gone = 0
_frozen_once = False


def freeze_enabled() -> bool:
    return os.environ.get("DOSI_GC_FREEZE", "1") != "0"


def freeze_model() -> bool:
    """Collect the load's garbage, then freeze what lives (the model among it); False when
    freezing is turned off or another load is still running (it freezes when it ends)."""
    global _gone, _frozen_once
    if not freeze_enabled():
        return False
    with _lock:
        if _paused:
            return False
        if not _frozen_once or _gone >= RELEASE_AFTER:
            gc.unfreeze()
            gc.collect()
            _gone = 0
            _frozen_once = True
        else:
            gc.collect(0)
        gc.freeze()
    return True


def engine_gone() -> None:
    """An engine whose model was frozen is gone (called from its finalizer: no lock, no
    collector call here; an int increment under the GIL)."""
    global _gone
    _gone += 1
