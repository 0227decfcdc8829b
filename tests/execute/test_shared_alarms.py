"""The shared deadline thread (dosi.execute.alarms; issue 27 item 3 and issue 28 item 6, per-query overhead): a
scheduled call fires after its delay, a cancelled one never fires, calls fire in deadline
order, and no thread is started per statement."""

from __future__ import annotations

import threading
import time

from dosi.execute.alarms import after


def test_issue28_6_timer_fires_in_order_and_cancel_holds() -> None:
    fired: list[str] = []
    done = threading.Event()
    after(0.15, lambda: (fired.append("late"), done.set()))
    after(0.05, lambda: fired.append("early"))
    dropped = after(0.02, lambda: fired.append("cancelled"))
    dropped.cancel()
    t = time.monotonic()
    assert done.wait(5)
    assert fired == ["early", "late"]
    assert time.monotonic() - t >= 0.1


def test_issue28_6_no_thread_per_deadline() -> None:
    after(0.01, lambda: None)
    before = threading.active_count()
    handles = [after(60, lambda: None) for _ in range(50)]
    assert threading.active_count() == before
    for h in handles:
        h.cancel()
