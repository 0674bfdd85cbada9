"""What the room server needs from a game, and the games it can host.

The room core (``server/core``) never names a game: it applies moves, copies the state for
the next version, renders views per viewer class, stores snapshots and publishes records
through the :class:`Game` protocol. :class:`~engine.duel.Duel` is the first game; a new kind
implements the protocol and registers in :data:`GAMES`, and the store, the hub and the edges
host it unchanged.

>>> import random
>>> game = GAMES["duel"].new(random.Random(1), first=0)
>>> restore(game.kind, game.snapshot()) == game
True
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from .classic import Classic
from .duel import Duel
from .events import Event, Outcome
from .moves import Move
from .parts import SnapshotParts


class GameView(Protocol):
    """What one viewer class may see; equal views render identically."""

    viewer: int

    def to_data(self) -> dict[str, Any]: ...


class GameDiff(Protocol):
    """What changed between two views of one viewer."""

    @property
    def empty(self) -> bool: ...

    def to_data(self) -> dict[str, Any]: ...


class Game(Protocol):
    """One game's rules and state. Mutable only through :meth:`apply`, which is all-or-nothing
    (a refused move raises :class:`~engine.errors.IllegalMove` and changes nothing)."""

    kind: ClassVar[str]
    """The name a stored game is restored by (:data:`GAMES`)."""
    seats: ClassVar[int]
    """How many players it takes (seats ``0..seats-1``)."""
    viewers: ClassVar[tuple[int, ...]]
    """The viewer classes: every seat, then the spectators. Each class sees its own view."""
    outcome: Outcome | None
    """``None`` while the game is on."""
    to_move: int
    """The seat whose turn it is (meaningless once the game is over)."""
    commitment: str
    """The fairness hash published at the start."""
    log: list[tuple[int, Move]]
    """Every applied move with its seat, in order: with the setup, the whole game."""

    @property
    def every_seat_moved(self) -> bool:
        """Whether every seat has made a move of its own: until then the game may be aborted
        (:class:`~engine.moves.Abort`), and a first move that does not come ends it that way."""
        ...

    @property
    def started(self) -> bool:
        """Whether play has begun: a game's time (the classic game's timer) runs from the move
        that made this true. A duel: its first move; a classic game: its first click that opens
        a cell (it places the mines; a flag before it marks nothing yet)."""
        ...

    @property
    def settings(self) -> dict[str, Any]:
        """The public choices the game was created with (a duel's ruleset, say)."""
        ...

    def apply(self, seat: int, move: Move) -> list[Event]: ...

    def copy(self) -> "Game": ...

    def view(self, viewer: int) -> GameView: ...

    def view_class(self, viewer: int) -> int:
        """The viewer whose view ``viewer`` sees right now, but for its ``viewer`` field (a
        seat with nothing private sees the spectators' view): render once per class."""
        ...

    @staticmethod
    def diff(old: Any, new: Any) -> GameDiff: ...

    def snapshot(self) -> dict[str, Any]: ...

    def snapshot_parts(self) -> SnapshotParts:
        """The snapshot as ``fixed`` (one dict object for the whole game), ``changing`` and
        ``appended`` (append-only tuples that extend the previous version's) parts."""
        ...

    @classmethod
    def from_snapshot(cls, data: dict[str, Any], previous: Any = None) -> "Game": ...

    def record(self) -> dict[str, Any]:
        """The public record once the game is over (``ValueError`` before)."""
        ...

    def costly(self, move: Move) -> bool:
        """Applying ``move`` may take long (the classic game drawing a no-guess layout): the
        shell then has :meth:`prepared` run off its event loop."""
        ...

    def prepared(self, move: Move) -> "Game":
        """A game to which ``move`` applies at once: the costly part of applying it done ahead
        (the classic game's layout drawn for its first click), nothing else changed; ``self``
        when there is nothing to do or the move is refused anyway (applying it says why).
        Why apart from :meth:`apply`: a move is applied at the moment it is decided, and the
        time a no-guess layout takes to draw is not the player's (their timer starts then)."""
        ...

    def position(self, at: int) -> GameView:
        """The replay position after ``at`` log entries of a finished game."""
        ...


GAMES: dict[str, Any] = {Duel.kind: Duel, Classic.kind: Classic}
"""Every game kind the server can host, by :attr:`Game.kind`."""


def restore(kind: str, data: dict[str, Any], previous: Game | None = None) -> Game:
    """The game of ``kind`` from its snapshot (``previous``: an earlier version of the same
    game, which makes decoding cost what was added since). Raises ``ValueError`` for an
    unknown kind or malformed data."""
    game_type = GAMES.get(kind)
    if game_type is None:
        raise ValueError(f"unknown game kind {kind!r}")
    return game_type.from_snapshot(data, previous if isinstance(previous, game_type) else None)
