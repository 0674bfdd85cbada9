"""Engine benchmark: exact deduction (engine.deduce) on duel, classic expert and stress positions.

Prints figures; asserts nothing.  Record results in docs/PERFORMANCE.md ("Engine").

    python bench/engine.py --games 2000 --classic-games 100 --seed 1

Duel positions come from seeded 11x11/15 games played by a simple bot (certain mine -> mark
it; else a certain-safe cell -> explore; else the lowest mine probability), with the duel's
auto-reveal after every move.  Classic expert positions (30x16/99, first click safe in its
3x3, zeros flood, no flags) come from the same bot; there our ``analyze`` and ms_toollib's
``cal_probability_onboard`` are timed on the same positions.  The simulation lives here on
purpose: it is the minimum the bot needs, not the game engine.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.deduce import analyze, revealable  # noqa: E402

STRESS = ROOT / "bench" / "positions" / "stress-21x10-75.json"


def neighbours(width, height, r, c):
    for rr in (r - 1, r, r + 1):
        for cc in (c - 1, c, c + 1):
            if (rr != r or cc != c) and 0 <= rr < height and 0 <= cc < width:
                yield rr, cc


def number_at(width, height, mines, cell):
    return sum((y in mines) for y in neighbours(width, height, *cell))


def timed(fn, *args):
    t0 = time.perf_counter_ns()
    out = fn(*args)
    return out, time.perf_counter_ns() - t0


class Timings(list):
    """Nanosecond timings of one function, keeping the arguments of the slowest calls so
    they can be timed again: on a shared machine a lone slow call is often the machine."""

    def __init__(self, fn, keep=10):
        super().__init__()
        self.fn = fn
        self.keep = keep
        self.slowest: list = []  # heap of (ns, serial, args)

    def __call__(self, *args):
        out, dt = timed(self.fn, *args)
        self.append(dt)
        if len(self.slowest) < self.keep or dt > self.slowest[0][0]:
            # copy: the games go on mutating their numbers and mine lists
            snapshot = tuple(a.copy() if isinstance(a, (dict, list)) else a for a in args)
            item = (dt, len(self), snapshot)
            if len(self.slowest) < self.keep:
                heapq.heappush(self.slowest, item)
            else:
                heapq.heapreplace(self.slowest, item)
        return out

    def retimed_max(self, repeats=5):
        """Max over the slowest calls of the best of ``repeats`` new timings."""
        return max(
            min(timed(self.fn, *args)[1] for _ in range(repeats)) for _, _, args in self.slowest
        )


def pick(a, hidden, use_mines):
    """The bot: certain mine, else certain safe cell, else lowest probability."""
    if use_mines:
        mines = sorted(a.mines)
        if mines:
            return "mark", mines[0]
    safe = sorted(a.safe)
    if safe:
        return "explore", safe[0]
    return "explore", min(hidden, key=lambda x: (a.probabilities[x], x))


# ---------------------------------------------------------------------------------------------
# Duel
# ---------------------------------------------------------------------------------------------


def duel_game(rng, analyze, revealable, width=11, height=11, total=15):
    """Play one bot-vs-itself duel; ``analyze``/``revealable`` are the (timed) deduction."""
    centre = (height // 2, width // 2)
    opening = {(centre[0] + dr, centre[1] + dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)}
    cells = [(r, c) for r in range(height) for c in range(width)]
    mines = set(rng.sample([x for x in cells if x not in opening], total))
    numbers = {centre: 0}
    visible: list = []
    while len(visible) < total:
        hidden = [x for x in cells if x not in numbers and x not in visible]
        a = analyze(width, height, total, numbers, visible)
        action, cell = pick(a, hidden, True)
        if action == "mark" or cell in mines:
            visible.append(cell)
        else:
            numbers[cell] = number_at(width, height, mines, cell)
        rev = revealable(width, height, total, numbers, visible)
        for x, n in rev.items():
            assert x not in mines and n == number_at(width, height, mines, x)
            numbers[x] = n


# ---------------------------------------------------------------------------------------------
# Classic expert
# ---------------------------------------------------------------------------------------------


def classic_game(rng, positions, width=30, height=16, total=99):
    """Play one no-flag classic game; append every position met (numbers dict) to positions."""
    cells = [(r, c) for r in range(height) for c in range(width)]
    first = rng.choice(cells)
    block = {(first[0] + dr, first[1] + dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)}
    mines = set(rng.sample([x for x in cells if x not in block], total))
    numbers: dict = {}

    def open_cell(cell):
        stack = [cell]
        while stack:
            x = stack.pop()
            if x in numbers:
                continue
            n = numbers[x] = number_at(width, height, mines, x)
            if n == 0:
                stack.extend(y for y in neighbours(width, height, *x) if y not in numbers)

    open_cell(first)
    safe_total = width * height - total
    while len(numbers) < safe_total:
        positions.append(dict(numbers))
        a = analyze(width, height, total, numbers, [])
        hidden = [x for x in cells if x not in numbers]
        _, cell = pick(a, hidden, False)
        if cell in mines:
            return False
        open_cell(cell)
    return True


def ms_board(width, height, numbers):
    board = [[10] * width for _ in range(height)]
    for (r, c), n in numbers.items():
        board[r][c] = n
    return board


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------


def pct(sorted_ns, q):
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))]


def fmt(ns):
    if ns >= 1_000_000:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.0f} µs"


def summary(label, ns):
    s = sorted(ns)
    line = (
        f"  {label:<22} n={len(s):>7}  median {fmt(statistics.median(s)):>9}  "
        f"p99 {fmt(pct(s, 0.99)):>9}  max {fmt(s[-1]):>9}"
    )
    if isinstance(ns, Timings):
        line += f"  (slowest {ns.keep} re-timed, best of 5: max {fmt(ns.retimed_max())})"
    print(line)
    return s


def machine():
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()} ({platform.python_implementation()})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000, help="duel games (11x11/15)")
    ap.add_argument("--classic-games", type=int, default=100, help="classic expert games")
    ap.add_argument("--stress-repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"# engine bench  {time.strftime('%Y-%m-%d %H:%M')}  {machine()}")
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# {' '.join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:]))}")

    if args.games:
        t_an = Timings(analyze)
        t_rev = Timings(revealable)
        t0 = time.perf_counter()
        for g in range(args.games):
            duel_game(random.Random(f"duel-{args.seed}-{g}"), t_an, t_rev)
        print(f"duel 11x11/15: {args.games} games, {time.perf_counter() - t0:.1f} s wall")
        summary("analyze", t_an)
        summary("revealable", t_rev)

    if args.classic_games:
        try:
            import ms_toollib
        except ImportError:
            ms_toollib = None
            print("(ms_toollib not installed: pip install .[bench])")
        positions: list = []
        won = 0
        for g in range(args.classic_games):
            won += classic_game(random.Random(f"classic-{args.seed}-{g}"), positions)
        t_ours = Timings(analyze)
        t_ms = Timings(ms_toollib.cal_probability_onboard) if ms_toollib else []
        for numbers in positions:
            t_ours(30, 16, 99, numbers, [])
            if ms_toollib is not None:
                t_ms(ms_board(30, 16, numbers), 99)
        print(f"classic expert 30x16/99: {args.classic_games} games ({won} won), no flags")
        ours = summary("analyze (ours)", t_ours)
        if t_ms:
            theirs = summary("ms_toollib onboard", t_ms)
            print(f"  p99 ratio ours/ms_toollib: {pct(ours, 0.99) / pct(theirs, 0.99):.2f}")

    if args.stress_repeats:
        data = json.loads(STRESS.read_text())
        w, h, total = data["width"], data["height"], data["total_mines"]
        numbers = {(r, c): n for r, c, n in data["numbers"]}
        visible = [tuple(x) for x in data["visible_mines"]]
        t_ours = [timed(analyze, w, h, total, numbers, visible)[1] for _ in range(args.stress_repeats)]
        t_rev = [timed(revealable, w, h, total, numbers, visible)[1] for _ in range(args.stress_repeats)]
        print(f"stress {STRESS.name}: {args.stress_repeats} repeats")
        summary("analyze (ours)", t_ours)
        summary("revealable (ours)", t_rev)
        try:
            import ms_toollib
        except ImportError:
            return
        board = ms_board(w, h, numbers)
        t_ms = [timed(ms_toollib.cal_probability_onboard, board, total)[1] for _ in range(args.stress_repeats)]
        summary("ms_toollib onboard", t_ms)
    print(f"# load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
