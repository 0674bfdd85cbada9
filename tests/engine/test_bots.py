"""The computer opponents (engine/bots.py): always legal, games finish at every level and
pairing, the bot has no way to the layout, and a seeded match shows the levels apart.

The match prints its figures (run with ``-s`` to see them; docs/ENGINE.md quotes them):

    python -m pytest tests/engine/test_bots.py -k match -s
"""

from __future__ import annotations

import ast
import dataclasses
import gc
import itertools
import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.bots
from engine import ALL_MINES, SPECTATOR, Duel, Explore, Mark, Resign, Setup, View
from engine.bots import (
    LEVELS,
    Level,
    bot_move,
    choose_move,
    hidden_cells,
    own_safe_cells,
)
from engine.geometry import geometry
from engine.memo import PrefixMemo
from engine.reveal_cache import RevealCache

RULESET_NAMES = ("brettspielnetz", "coan")
MAX_MOVES = 400
"""A bound only: without wrong marks a game cannot outlast its 120 hidden cells, and each
bot wrong-marks a cell at most once (it is then one of its safe cells)."""
PAIRINGS = list(itertools.product(Level, Level))
PROPERTY = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Player = Callable[[View, random.Random], Explore | Mark]


def level_player(level: int) -> Player:
    return lambda view, rng: bot_move(view, level, rng)


def lowest_hidden(view: View, rng: random.Random) -> Explore:
    """The scripted player: always explores the first hidden cell in reading order."""
    return Explore(hidden_cells(view)[0])


def assert_legal_for(duel: Duel, move: Explore | Mark) -> None:
    """The move is one the seat to move may make: a cell move on a cell hidden in its view,
    accepted by the duel (tried on a copy)."""
    seat = duel.to_move
    assert isinstance(move, Explore | Mark)
    assert move.cell in hidden_cells(duel.view(seat))
    duel.copy().apply(seat, move)  # raises IllegalMove otherwise


def play_out(duel: Duel, players: tuple[Player, Player], rng: random.Random,
             clock: Callable[[int, float], None] | None = None) -> Duel:
    """Play ``duel`` to its end through the normal move path; every move must be legal."""
    for _ in range(MAX_MOVES):
        if duel.outcome is not None:
            return duel
        seat = duel.to_move
        view = duel.view(seat)
        started = time.perf_counter()
        move = players[seat](view, rng)
        if clock is not None:
            clock(seat, time.perf_counter() - started)
        assert move.cell in hidden_cells(view)
        duel.apply(seat, move)
    raise AssertionError(f"no end after {MAX_MOVES} moves")


# ---------------------------------------------------------------------------------------------
# The API
# ---------------------------------------------------------------------------------------------


def test_levels_are_named_and_numbered() -> None:
    assert LEVELS == {1: "easy", 2: "medium", 3: "strong"}
    assert [int(level) for level in Level] == [1, 2, 3]


@pytest.mark.parametrize("level", [0, 4, -1, True, 2.0, "2", None])
def test_an_unknown_level_is_refused(level: object) -> None:
    duel = Duel.new(random.Random(1), first=0)
    with pytest.raises(ValueError, match="unknown bot level"):
        bot_move(duel.view(0), level, random.Random(0))  # type: ignore[arg-type]


@pytest.mark.parametrize("level", list(Level))
def test_a_view_that_may_not_move_is_refused(level: Level) -> None:
    duel = Duel.new(random.Random(1), first=0)
    for viewer in (1, SPECTATOR):
        with pytest.raises(ValueError, match="turn"):
            bot_move(duel.view(viewer), level, random.Random(0))
    duel.apply(1, Resign())
    with pytest.raises(ValueError, match="over"):
        bot_move(duel.view(0), level, random.Random(0))


def test_choose_move_is_the_medium_level() -> None:
    duel = Duel.new(random.Random(5), first=0)
    a, b = random.Random(9), random.Random(9)
    while duel.outcome is None:
        view = duel.view(duel.to_move)
        move = choose_move(view, a)
        assert move == bot_move(view, Level.MEDIUM, b)
        duel.apply(duel.to_move, move)


@pytest.mark.parametrize("level", list(Level))
def test_same_view_and_seed_same_move(level: Level) -> None:
    duel = Duel.new(random.Random(3), first=0)
    play_some(duel, random.Random(3), 10)
    view = duel.view(duel.to_move)
    for s in range(5):
        assert bot_move(view, level, random.Random(s)) == bot_move(view, level, random.Random(s))


# ---------------------------------------------------------------------------------------------
# Always legal; games finish
# ---------------------------------------------------------------------------------------------


def play_some(duel: Duel, rng: random.Random, moves: int) -> None:
    """Random moves by both seats: explores and marks of random hidden cells, own wrong marks
    played again, so views hold hits, wrong marks and re-marks that bots never make."""
    for _ in range(moves):
        if duel.outcome is not None:
            return
        view = duel.view(duel.to_move)
        own = sorted(own_safe_cells(view))
        cell = rng.choice(own) if own and rng.random() < 0.3 else rng.choice(hidden_cells(view))
        duel.apply(duel.to_move, Mark(cell) if rng.random() < 0.4 else Explore(cell))


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    ruleset=st.sampled_from(RULESET_NAMES),
    prefix=st.integers(0, 60),
    pairing=st.sampled_from(PAIRINGS),
)
def test_bots_move_legally_from_any_position_and_finish(
    seed: int, ruleset: str, prefix: int, pairing: tuple[Level, Level]
) -> None:
    rng = random.Random(seed)
    duel = Duel.new(rng, ruleset)
    play_some(duel, rng, prefix)
    if duel.outcome is None:
        for level in Level:
            assert_legal_for(duel, bot_move(duel.view(duel.to_move), level, rng))
    play_out(duel, (level_player(pairing[0]), level_player(pairing[1])), rng)
    assert duel.outcome is not None


@pytest.mark.parametrize("ruleset", RULESET_NAMES)
@pytest.mark.parametrize("pairing", PAIRINGS, ids=lambda p: f"{p[0].name}-{p[1].name}".lower())
def test_every_pairing_finishes(pairing: tuple[Level, Level], ruleset: str) -> None:
    seed = 100 * pairing[0] + 10 * pairing[1] + RULESET_NAMES.index(ruleset)
    rng = random.Random(seed)
    duel = play_out(Duel.new(rng, ruleset), (level_player(pairing[0]), level_player(pairing[1])), rng)
    assert duel.outcome is not None and duel.outcome.termination == ALL_MINES


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("level", list(Level))
def test_bots_finish_against_a_scripted_player(level: Level, seat: int) -> None:
    ruleset = RULESET_NAMES[(level + seat) % 2]
    rng = random.Random(1000 + 10 * level + seat)
    players = [lowest_hidden, lowest_hidden]
    players[seat] = level_player(level)
    duel = play_out(Duel.new(rng, ruleset, first=0), (players[0], players[1]), rng)
    assert duel.outcome is not None and duel.outcome.termination == ALL_MINES


def test_a_certain_mine_is_marked_and_never_explored() -> None:
    """A built 4x4 view with one mine: the 1 at (2, 1) has one hidden neighbour, (1, 2). The
    deducing levels mark it; easy (single-number rule) marks it or explores another cell."""
    rows = ("01..", "01..", "0111", "0000")
    view = View(viewer=0, ruleset="brettspielnetz", width=4, height=4, total_mines=1, rows=rows, scores=(0, 0),
                phase="playing", to_move=0, outcome=None, moves=(), wrong_marks=((), ()), last_opened=(),
                commitment="")
    for level in (Level.MEDIUM, Level.STRONG):
        assert bot_move(view, level, random.Random(0)) == Mark((1, 2))
    moves = {bot_move(view, Level.EASY, random.Random(s)) for s in range(40)}
    assert Mark((1, 2)) in moves
    assert moves - {Mark((1, 2))} <= {Explore((0, 2)), Explore((0, 3)), Explore((1, 3))}


def test_an_own_wrong_mark_is_a_safe_cell_never_marked_again() -> None:
    """A built 4x1 view with one mine and nothing public: the seat's own wrong mark at (0, 0)
    is the one cell it knows to be safe (RULES.md: its author may explore it)."""
    view = View(viewer=1, ruleset="coan", width=4, height=1, total_mines=1, rows=("x...",), scores=(0, -2),
                phase="playing", to_move=1, outcome=None, moves=(), wrong_marks=((), ((0, 0),)), last_opened=(),
                commitment="")
    assert bot_move(view, Level.MEDIUM, random.Random(0)) == Explore((0, 0))
    for level in Level:
        for s in range(20):
            assert bot_move(view, level, random.Random(s)) != Mark((0, 0))


def test_what_an_own_wrong_mark_proves_counts_too() -> None:
    """A built 4x1 view with one mine: the 1 at (0, 1) has two hidden neighbours, and the
    seat's own wrong mark says (0, 0) is empty, so the mine is at (0, 2): publicly a coin flip,
    certain to this seat. The deducing levels mark it (they explored a safe cell instead)."""
    view = View(viewer=0, ruleset="brettspielnetz", width=4, height=1, total_mines=1, rows=("x1..",),
                scores=(-3, 0), phase="playing", to_move=0, outcome=None, moves=(), wrong_marks=(((0, 0),), ()),
                last_opened=(), commitment="")
    for level in (Level.MEDIUM, Level.STRONG):
        for s in range(5):
            assert bot_move(view, level, random.Random(s)) == Mark((0, 2)), level


# ---------------------------------------------------------------------------------------------
# The bot has no way to the layout
# ---------------------------------------------------------------------------------------------

ALLOWED_IMPORTS = {
    "__future__", "collections.abc", "dataclasses", "enum", "functools", "random",
    ".deduce", ".encoding", ".geometry", ".moves", ".rules", ".view",
}
FORBIDDEN_NAMES = {
    "gc", "sys", "inspect", "importlib", "__import__", "globals", "vars", "eval", "exec", "open",
    "__globals__", "__subclasses__", "__closure__", "f_back", "f_globals",
}
"""Ways out of a function's arguments: the garbage collector, frames, modules, globals."""


def runtime_imports(path: Path) -> set[str]:
    """The modules a source file imports when it runs (``if TYPE_CHECKING:`` blocks left out),
    relative ones written with their leading dots."""
    tree = ast.parse(path.read_text())
    skipped = {
        id(n) for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for stmt in block.body for n in ast.walk(stmt)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is None:  # from . import x
            found.update("." * node.level + alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + node.module)
    return found


def test_the_bot_module_imports_nothing_that_holds_a_layout() -> None:
    source = Path(engine.bots.__file__)
    imports = runtime_imports(source)
    assert imports <= ALLOWED_IMPORTS, imports - ALLOWED_IMPORTS
    # and the engine modules it imports do not reach the game state either, at run time
    seen: set[str] = set()
    todo = [m for m in imports if m.startswith(".")]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        assert not {"duel", "classic", "server"} & set(module.strip(".").split(".")), module
        todo += [m for m in runtime_imports(source.parent / f"{module.strip('.')}.py") if m.startswith(".")]
    names = {n.id for n in ast.walk(ast.parse(source.read_text())) if isinstance(n, ast.Name)}
    attributes = {n.attr for n in ast.walk(ast.parse(source.read_text())) if isinstance(n, ast.Attribute)}
    assert not (names | attributes) & FORBIDDEN_NAMES


def test_bot_move_takes_a_view_a_level_and_a_random_source_only() -> None:
    import inspect

    assert list(inspect.signature(bot_move).parameters) == ["view", "level", "rng"]
    assert list(inspect.signature(choose_move).parameters) == ["view", "rng"]


def reachable_data(root: object) -> Iterator[object]:
    """Every object reachable from ``root`` through references, code (classes, modules,
    functions) left out: the data a function given ``root`` could walk to."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type | ModuleType | FunctionType | BuiltinFunctionType | MethodType):
            continue
        seen.add(id(obj))
        yield obj
        todo.extend(gc.get_referents(obj))


@pytest.mark.parametrize("ruleset", RULESET_NAMES)
def test_a_view_holds_no_reference_to_the_game(ruleset: str) -> None:
    rng = random.Random(11)
    duel = Duel.new(rng, ruleset, first=0)
    play_some(duel, rng, 25)  # wrong marks included: the view shows its seat's own
    assert duel.outcome is None
    mines = duel.setup.mines
    for seat in (0, 1):
        view = duel.view(seat)
        assert view.mines is None and view.salt is None
        for obj in reachable_data(view):
            assert not isinstance(obj, Duel | Setup | RevealCache | PrefixMemo), obj
            assert obj is not duel.numbers and obj is not duel.claims and obj is not duel.wrong_marks
            if isinstance(obj, set | frozenset | tuple | list) and len(obj) == len(mines):
                assert set(obj) != mines, "the layout is reachable from a view"


def test_the_isolation_checks_can_fail() -> None:
    """The two checks above, pointed at what they must catch: the duel module imports what a
    bot may not, and from a duel its layout is reachable."""
    assert not runtime_imports(Path(engine.bots.__file__).parent / "duel.py") <= ALLOWED_IMPORTS
    duel = Duel.new(random.Random(2), first=0)
    assert any(obj is duel.setup.mines for obj in reachable_data(duel))


def twin_games(seed: int, ruleset: str) -> tuple[Duel, Duel] | None:
    """Two games with different layouts whose seat to move sees exactly the same (but for the
    commitment, which is a hash of the layout): a mine and a safe cell swapped where nothing
    public touches them. ``None`` if this seed's position has no such pair."""
    rng = random.Random(seed)
    a = Duel.new(rng, ruleset, first=0)
    play_some(a, rng, 6)
    play_out_some(a, rng, 10)
    if a.outcome is not None:
        return None
    geo = geometry(a.setup.width, a.setup.height)
    marked = a.wrong_marks[0] | a.wrong_marks[1]
    far = [c for c in geo.cells if all(a.is_hidden(n) and n not in marked for n in geo.block(c))]
    mine = next((c for c in far if c in a.setup.mines), None)
    safe = next((c for c in far if c not in a.setup.mines), None)
    if mine is None or safe is None:
        return None
    layout = (a.setup.mines - {mine}) | {safe}
    b = Duel.replay(dataclasses.replace(a.setup, mines=layout), a.log)
    return a, b


def play_out_some(duel: Duel, rng: random.Random, moves: int) -> None:
    for _ in range(moves):
        if duel.outcome is None:
            duel.apply(duel.to_move, bot_move(duel.view(duel.to_move), Level.MEDIUM, rng))


@pytest.mark.parametrize("ruleset", RULESET_NAMES)
def test_the_move_is_a_function_of_the_view_alone(ruleset: str) -> None:
    twins = [t for t in (twin_games(seed, ruleset) for seed in range(8)) if t is not None]
    assert len(twins) >= 3
    for a, b in twins:
        seat = a.to_move
        va, vb = a.view(seat), b.view(seat)
        assert a.setup.mines != b.setup.mines
        assert va != vb and dataclasses.replace(va, commitment="") == dataclasses.replace(vb, commitment="")
        for level in Level:
            for s in range(3):
                assert bot_move(va, level, random.Random(s)) == bot_move(vb, level, random.Random(s))
                assert bot_move(dataclasses.replace(va, commitment=""), level, random.Random(s)) == \
                    bot_move(va, level, random.Random(s))


# ---------------------------------------------------------------------------------------------
# The seeded match
# ---------------------------------------------------------------------------------------------


@dataclass
class Match:
    """``level`` against ``other`` over seeded games, first move and ruleset alternating."""

    level: Level
    other: Level
    results: list[tuple[str, int, int]] = field(default_factory=list)
    """Per game: ruleset, ``level``'s margin in points, and its wrong marks."""
    seconds: list[float] = field(default_factory=list)
    """Per move of ``level``."""

    def play(self, games: int, seed: int) -> Match:
        for g in range(games):
            rng = random.Random(seed + g)
            seat = g % 2  # the seat of ``level``; seat 0 always moves first
            ruleset = RULESET_NAMES[g // 2 % 2]
            duel = Duel.new(rng, ruleset, first=0)
            players = [level_player(self.other)] * 2
            players[seat] = level_player(self.level)

            def clock(mover: int, spent: float, seat: int = seat) -> None:
                if mover == seat:
                    self.seconds.append(spent)

            play_out(duel, (players[0], players[1]), rng, clock)
            margin = duel.scores[seat] - duel.scores[1 - seat]  # the winner has more points
            self.results.append((ruleset, margin, len(duel.wrong_marks[seat])))
        return self

    @property
    def share(self) -> float:
        """Wins over decided games."""
        won = sum(1 for _, margin, _ in self.results if margin > 0)
        return won / max(1, sum(1 for _, margin, _ in self.results if margin))

    def report(self) -> str:
        me, other = self.level.name.lower(), self.other.name.lower()
        margins = [margin for _, margin, _ in self.results]
        won, lost = sum(m > 0 for m in margins), sum(m < 0 for m in margins)
        per_ruleset = ", ".join(
            f"{name} {statistics.mean(m for r, m, _ in self.results if r == name):+.1f}" for name in RULESET_NAMES
        )
        ms = sorted(s * 1000 for s in self.seconds)
        return (
            f"{me} vs {other}: {len(margins)} games (ruleset and first move alternating): "
            f"won {won}, drew {len(margins) - won - lost}, lost {lost} ({self.share:.0%} of decided games); "
            f"mean margin {per_ruleset} points; {me}'s wrong marks "
            f"{statistics.mean(w for _, _, w in self.results):.1f} per game; {me} per move: "
            f"mean {statistics.mean(ms):.2f} ms, p95 {ms[int(0.95 * (len(ms) - 1))]:.1f} ms, "
            f"max {ms[-1]:.1f} ms over {len(ms)} moves"
        )


@pytest.mark.slow
def test_match_strong_beats_easy_and_holds_medium(record_property: Callable[[str, object], None]) -> None:
    """Strong against easy (the bar: a clear majority) and against medium (not worse on
    balance); medium against easy for scale. The asserted shares are far below what the
    bots reach (docs/ENGINE.md has the figures), so that only a real regression fails."""
    easy = Match(Level.STRONG, Level.EASY).play(60, seed=20_000)
    medium = Match(Level.STRONG, Level.MEDIUM).play(30, seed=30_000)
    scale = Match(Level.MEDIUM, Level.EASY).play(60, seed=20_000)
    for match in (easy, medium, scale):
        print("\n" + match.report())
        record_property(f"{match.level.name.lower()}-vs-{match.other.name.lower()}", match.report())
    assert easy.share >= 0.6, easy.report()
    assert medium.share >= 0.45, medium.report()
    assert scale.share >= 0.6, scale.report()
