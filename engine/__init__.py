"""MineDuel's rules engine: pure, deterministic, no I/O.

Everything the server needs to run a duel::

    from engine import Duel, Explore, Mark, Resign, Timeout, IllegalMove, SPECTATOR, diff
    duel = Duel.new(random.SystemRandom())
    events = duel.apply(0, Explore((4, 4)))
    view = duel.view(SPECTATOR)

Randomness comes in as an argument; nothing here reads a clock, a socket or a global RNG.
"""

from .classic import PRESETS, Classic, generate, three_bv
from .commitment import commitment, verify
from .duel import Duel, Phase, Setup, draw_setup
from .errors import IllegalCode, IllegalMove
from .events import (
    ABANDONED,
    ABORTED,
    ALL_MINES,
    RESIGNATION,
    TIMEOUT,
    CellsRevealed,
    Event,
    GameEnded,
    MineShown,
    MovePlayed,
    Outcome,
    TurnChanged,
    WrongMarkPlaced,
    event_from_data,
    event_to_data,
    visible_to,
)
from .game import GAMES, Game, GameDiff, GameView, restore
from .geometry import Cell, Geometry, cell_name, geometry, parse_cell_name
from .moves import (
    CELL_MOVES,
    Abort,
    Chord,
    ClaimAbandoned,
    Explore,
    Flag,
    Mark,
    Move,
    Resign,
    Reveal,
    Timeout,
    move_from_data,
    move_to_data,
)
from .rules import (
    BRETTSPIELNETZ,
    COAN,
    DEFAULT_RULESET,
    MARK_TABLE_BRETTSPIELNETZ,
    RULESETS,
    Action,
    Claim,
    Ruleset,
    Verdict,
)
from .view import SEAT0, SEAT1, SPECTATOR, VIEWERS, MoveLine, View, ViewDiff, diff, patch, patch_data

__all__ = [name for name in dir() if not name.startswith("_")]
