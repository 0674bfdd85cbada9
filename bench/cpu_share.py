"""The app's CPU by piece under load, from the thread's CPU clock: ``python -m server`` with a
clock read around a few named functions.

Why not only py-spy (:mod:`bench.profile_share`): py-spy keeps a sample when the thread is
*runnable*, not only when it is on a CPU. On the 2-CPU machines four busy processes (the app,
Valkey, two client processes) share two CPUs, and a process that wakes another by writing to
its socket is often preempted right there; those waits land on the write lines of its profile
and inflate the denominator. In one sitting (docs/PERFORMANCE.md, ninth session) the auto-reveal
was 10.1% of py-spy's samples and 12.1-12.3% of the app's CPU by this clock; ``perf`` put the
kernel at 19% of the app's CPU where py-spy had 39% of its samples on the socket writes and
the event loop's own code.

This launcher wraps each function of :data:`PIECES` (those the tree under test has) with
``time.thread_time_ns()`` before and after, and runs the server's own ``main()``. On SIGUSR1
it appends one JSON line to ``$MINEDUEL_CPU_SHARES``: the process's CPU so far and the CPU
spent inside each piece. ``bench/load.py play --cpu-shares`` signals it at the start and the end
of the window and prints each piece's share of the app's CPU in between. The cost: two clock
reads per wrapped call (a syscall each, about a microsecond per move in all), counted in the
run's own CPU figures, so take the ratios from a run without ``--cpu-shares``.

    PYTHONPATH=<tree> python bench/cpu_share.py          # what bench/serve.py runs for it

``MINEDUEL_CPU_PIECES=reveal`` (``load.py ... --cpu-shares --env MINEDUEL_CPU_PIECES=reveal``)
also times the auto-reveal's own steps (:data:`REVEAL_PIECES`), and every piece's line says
its microseconds per call.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

PIECES: tuple[tuple[str, str, str, str], ...] = (
    # (name, module, attribute path, what it is); a wrapper is outside the ones listed after it
    ("decide", "server.store.service", "decide", "the room core: the duel copied, the move applied, the new Room"),
    ("auto-reveal", "engine.duel", "Duel._auto_reveal", "  the deduction auto-reveal"),
    ("stored form", "server.store.stored_form", "StoredForm.pack", "the stored room packed"),
    ("fan-out", "server.store.room_feed", "RoomFeed._deliver", "a commit's frames rendered and pushed"),
)
REVEAL_PIECES: tuple[tuple[str, str, str, str], ...] = (
    # the auto-reveal's own steps (engine/reveal_cache.py), with MINEDUEL_CPU_PIECES=reveal
    ("extension", "engine.reveal_cache", "RevealCache.extend", "    the position solved and its answer"),
    ("extend", "engine.reveal_cache", "_extend", "      a position extended (all below)"),
    ("component", "engine.reveal_cache", "RevealCache._component", "        a component solved afresh"),
    ("derive", "engine.reveal_cache", "_derive", "        a component derived from its parts"),
    ("combine", "engine.reveal_cache", "_combine", "        the components' mine counts combined"),
    ("restrict", "engine.component", "_Comp.rest", "        a component restricted to its counts"),
    ("seen", "engine.restriction", "_Rest.seen", "        what a cell sees of a component"),
    ("several", "engine.reveal_cache", "_several_vary", "        a verdict over several varying parts"),
    ("answer", "engine.reveal_cache", "_State.answer", "      the found cells as a dict"),
)
ENV = "MINEDUEL_CPU_SHARES"
SET_ENV = "MINEDUEL_CPU_PIECES"
"""``reveal``: also time :data:`REVEAL_PIECES` (each clock read costs about a microsecond, so
the outer pieces' shares grow by the inner ones' reads)."""


def _wrap(fn: Callable[..., Any], totals: dict[str, int], calls: dict[str, int], name: str) -> Callable[..., Any]:
    clock = time.thread_time_ns

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[name] += clock() - started
            calls[name] += 1

    return timed


def pieces(which: str = "") -> tuple[tuple[str, str, str, str], ...]:
    return PIECES + REVEAL_PIECES if which == "reveal" else PIECES


def install(totals: dict[str, int], calls: dict[str, int], which: str = "") -> None:
    """Wrap every piece the tree has (an older tree may lack some); ``totals`` and ``calls``
    get a counter for each piece wrapped."""
    for name, module_name, path, _what in pieces(which):
        try:
            owner: Any = importlib.import_module(module_name)
            *parents, attr = path.split(".")
            for part in parents:
                owner = getattr(owner, part)
            fn = getattr(owner, attr)
        except (ImportError, AttributeError):
            continue
        totals[name] = calls[name] = 0
        setattr(owner, attr, _wrap(fn, totals, calls, name))


def shares(path: str) -> dict[str, float] | None:
    """Each piece's per cent of the process's CPU between the first two lines of ``path``, and
    (as ``<piece> us``) its microseconds per call."""
    try:
        with open(path) as fh:
            lines = [json.loads(line) for line in fh if line.strip()]
    except (OSError, ValueError):
        return None
    if len(lines) < 2:
        return None
    a, b = lines[0], lines[1]
    cpu = b["process"] - a["process"]
    if cpu <= 0:
        return None
    found = {name: 100 * (b["pieces"][name] - a["pieces"][name]) / cpu for name in a["pieces"]}
    for name in a.get("calls", {}):
        n = b["calls"][name] - a["calls"][name]
        if n:
            found[f"{name} us"] = (b["pieces"][name] - a["pieces"][name]) / n / 1000
    return found


def lines(found: dict[str, float]) -> list[str]:
    out = ["  CPU by piece (the thread's CPU clock inside each function / the app's CPU, over the window):"]
    for name, _module, path, what in pieces("reveal"):
        if name in found:
            per_call = found.get(f"{name} us")
            each = f", {per_call:.1f} us a call" if per_call is not None else ""
            out.append(f"    {found[name]:5.1f}%  {name:<12} {what} ({path}{each})")
    return out


def main() -> int:
    # this file's folder (bench/) must not shadow the tree's packages (bench/engine.py)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    totals: dict[str, int] = {}
    calls: dict[str, int] = {}
    install(totals, calls, os.environ.get(SET_ENV, ""))
    out = os.environ[ENV]

    def dump(_signum: int, _frame: object) -> None:
        with open(out, "a") as fh:
            fh.write(json.dumps({"process": time.process_time_ns(), "pieces": totals, "calls": calls}) + "\n")

    signal.signal(signal.SIGUSR1, dump)
    from server.__main__ import main as serve

    return serve([])


if __name__ == "__main__":
    sys.exit(main())
