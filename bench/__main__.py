"""Run every ``bench/bench_*.py`` module's ``main()`` in name order, or only the ones named on the command line:
``python -m bench`` or ``python -m bench poll review``. Exit status 1 when any benchmark reports a missed target
(a ``main()`` returning a non-zero int) or fails."""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).parent


def available() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))


def run(names: list[str]) -> int:
    known = available()
    unknown = [n for n in names if n.removeprefix("bench_") not in known]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(known)}", file=sys.stderr)
        return 2
    failed: list[str] = []
    for name in [n.removeprefix("bench_") for n in names] or known:
        print(f"\n=== bench_{name} ===", flush=True)
        started = time.monotonic()
        try:
            result = importlib.import_module(f"bench.bench_{name}").main()
        except Exception:
            traceback.print_exc()
            result = 1
        print(f"=== bench_{name}: {time.monotonic() - started:.0f} s ===", flush=True)
        if isinstance(result, int) and result != 0:
            failed.append(name)
    if failed:
        print(f"\ntargets missed or errors in: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
