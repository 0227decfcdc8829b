"""Profiles of model load and compile (issue 27): cProfile summaries and flame data.

    python bench/flame.py                    # writes bench/profiles/<name>.txt / .folded
    python bench/flame.py --load 5000 --out /tmp/profiles

For each case it writes `<case>.txt` (cProfile, the top functions by own and by cumulative
time) and `<case>.folded` (sampled stacks, one `frame;frame;... count` line each, what
flamegraph.pl, speedscope or inferno draw as a flame graph). The sampler is a thread reading
the main thread's frame every millisecond, so it needs no extra package.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import io
import pstats
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench import MODEL, compile_families  # noqa: E402
from big_model import big_model_text  # noqa: E402

import dosi  # noqa: E402


def _frame_name(frame: Any) -> str:
    code = frame.f_code
    path = Path(code.co_filename)
    where = "/".join(path.parts[-2:]) if "dosi" in path.parts else path.name
    return f"{code.co_name} ({where})"


def sampled(fn: Callable[[], Any], interval: float = 0.001) -> collections.Counter[str]:
    """Folded stacks of the calling thread while `fn` runs, sampled every `interval` s."""
    target = threading.get_ident()
    stacks: collections.Counter[str] = collections.Counter()
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            frame = sys._current_frames().get(target)
            names = []
            while frame is not None:
                names.append(_frame_name(frame))
                frame = frame.f_back
            if names:
                stacks[";".join(reversed(names))] += 1
            time.sleep(interval)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        fn()
    finally:
        done.set()
        thread.join()
    return stacks


def profiled(fn: Callable[[], Any], top: int = 40) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def cases(load: int) -> dict[str, Callable[[], Any]]:
    text = big_model_text(load)
    families = compile_families()

    def compile_all() -> None:
        engine = dosi.Engine(model_path=MODEL)
        for q in families["distinct"] + families["window"]:
            engine.compile(q)

    def literals() -> None:
        engine = dosi.Engine(model_path=MODEL)
        for q in families["literals"]:
            engine.compile(q)

    return {
        f"load_{load}": lambda: dosi.Engine(model_text=text),
        "compile_distinct": compile_all,
        "compile_literals": literals,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", type=int, default=5000, help="metrics of the loaded model")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "profiles")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    dosi.Engine(model_path=MODEL)  # imports and first-use caches out of the figures
    for name, fn in cases(args.load).items():
        (args.out / f"{name}.txt").write_text(profiled(fn))
        stacks = sampled(fn)
        lines = [f"{stack} {n}" for stack, n in stacks.most_common()]
        (args.out / f"{name}.folded").write_text("\n".join(lines) + "\n")
        print(f"{name}: {sum(stacks.values())} samples -> {args.out}/{name}.txt, .folded")


if __name__ == "__main__":
    main()
