"""The Room value: one game plus what the server adds around it (players, clock, version).

A :class:`Room` is immutable: every committed change is a *new* Room (with a new game, copied
from the previous one before the move), so the hub can keep the previous Room next to the new
one and render the difference. The room holds any :class:`engine.game.Game`; nothing here
names a particular game.

The stored form (:meth:`Room.to_data`) contains the game's secrets (a duel's mines, salt and
wrong marks). It goes to Redis and between server processes only; clients get views
(:meth:`Room.view`), rendered by a codec, never this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from engine import SPECTATOR, Game, GameView, restore
from engine.clock import Clock

ROOM_FORMAT = 2
"""2: the game under ``"game"`` with its kind. 1 (read only): a duel under ``"duel"``."""


class Status(StrEnum):
    """A room's phase, decided in one place: :attr:`Room.status`."""

    WAITING = "waiting"
    """A seat is empty; no move is accepted yet."""
    PLAYING = "playing"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class Player:
    """A seated guest as others may see it (the token never lives here)."""

    id: str
    name: str

    def to_data(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name}

    @classmethod
    def from_data(cls, data: dict[str, Any] | None) -> "Player | None":
        return cls(data["id"], data["name"]) if data else None


def open_seat(players: Sequence[Player | None]) -> int | None:
    """The first empty seat, or ``None`` when every seat is taken. Tested by identity: ``None in
    players`` asks each seated Player's dataclass ``__eq__`` first (two Python calls a seat),
    and a room's status is read several times a move."""
    for seat, player in enumerate(players):
        if player is None:
            return seat
    return None


@dataclass(frozen=True)
class Room:
    id: str
    version: int
    """Grows by one with every committed change (join, move, timeout, rematch offer)."""
    game: Game
    """The engine game. Never mutate it: a change is a new Room with a copy (server.core.decide)."""
    players: tuple[Player | None, ...]
    """One entry per seat of the game; ``None`` while that seat is empty."""
    clock: Clock | None
    """``None`` for an untimed game. Times are wall-clock milliseconds shared by all processes."""
    created_ms: int
    rematch: str | None = None
    """Room id of the rematch both players agreed to after the end, or ``None``."""
    started_ms: int | None = None
    """When the move that started the game was committed (``Game.started``: a duel's first move,
    a classic game's first click that opens a cell; its timer runs from there)."""
    ended_ms: int | None = None
    """When the game ended."""
    rated: bool = False
    """Whether the result moves the players' ratings (``server.core.ratings``)."""
    seated_ms: int | None = None
    """When the last seat was taken: the first move is due from then."""
    moved_ms: int | None = None
    """When the last move was committed (a computer player answers a while after it)."""
    rematch_offer: int | None = None
    """The seat that offered a rematch the other has not answered yet, or ``None``."""
    rematch_declined: int | None = None
    """The seat that declined the last rematch offer (until the next offer), or ``None``."""
    listed: bool = True
    """Whether the lobby may list it: a private challenge (sent by its link) is not, nor are its
    rematches (``server.store.aftermath``)."""
    _views: dict[int, GameView] = field(default_factory=dict, compare=False, repr=False)

    # ------------------------------------------------------------------ what renderers read

    @property
    def status(self) -> Status:
        if self.game.outcome is not None:
            return Status.OVER
        if open_seat(self.players) is not None:
            return Status.WAITING
        return Status.PLAYING

    @property
    def kind(self) -> str:
        return self.game.kind

    @property
    def ruleset(self) -> str | None:
        """The duel's ruleset (``None`` for a game without one)."""
        return self.game.settings.get("ruleset")

    @property
    def commitment(self) -> str:
        return self.game.commitment

    def view(self, viewer: int) -> GameView:
        """The game's view for ``viewer`` (a seat, or :data:`~engine.SPECTATOR`), computed once
        per Room (a Room is rendered for every viewer class of every connection)."""
        cached = self._views.get(viewer)
        if cached is None:
            cached = self._views[viewer] = self.game.view(viewer)
        return cached

    def seat_of(self, player: Player | str | None) -> int | None:
        """The seat ``player`` (or a player id) holds here, or ``None``."""
        player_id = player.id if isinstance(player, Player) else player
        if player_id is None:
            return None
        for seat, held in enumerate(self.players):
            if held is not None and held.id == player_id:
                return seat
        return None

    def viewer_of(self, player: Player | str | None) -> int:
        """``player``'s viewer class: its seat, or :data:`~engine.SPECTATOR`."""
        seat = self.seat_of(player)
        return SPECTATOR if seat is None else seat

    def clock_data(self, now_ms: int) -> dict[str, Any] | None:
        """The clock as a client should show it at ``now_ms`` (``server_ms`` is that reference)."""
        c = self.clock
        if c is None:
            return None
        data = {
            "initial_ms": c.initial_ms,
            "increment_ms": c.increment_ms,
            "remaining_ms": [c.remaining(seat, now_ms) for seat in range(len(c.remaining_ms))],
            "running": c.running,
            "server_ms": now_ms,
        }
        if c.per_move:  # docs/PROTOCOL.md: initial_ms is then each move's time
            data["per_move"] = True
        return data

    def meta_data(self, now_ms: int) -> dict[str, Any]:
        """Public facts about the room (no secrets): id, kind, status, settings, players, clock."""
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status._value_,  # the value without the enum's Python-level property
            **self.game.settings,
            "players": [p.to_data() if p else None for p in self.players],
            "clock": self.clock_data(now_ms),
            "rematch": self.rematch,
            "rematch_offer": self.rematch_offer,
            "rematch_declined": self.rematch_declined,
            "rated": self.rated,
            "created_ms": self.created_ms,
            "started_ms": self.started_ms,
            "ended_ms": self.ended_ms,
        }

    def elapsed_ms(self, now_ms: int) -> int | None:
        """Time played: from the first move to the end (or to ``now_ms`` while it goes on)."""
        if self.started_ms is None:
            return None
        return (self.ended_ms if self.ended_ms is not None else now_ms) - self.started_ms

    def evolve(self, **changes: Any) -> "Room":
        """A copy with ``changes`` and a fresh view cache (the version is the caller's business).

        The same Room ``dataclasses.replace`` makes (which refuses a name that is not a field,
        and so does this, through it), with the attributes copied instead of passed through
        ``__init__`` by keyword: ~32k instructions a move before, ~4k now (bench/path.py)."""
        if not changes.keys() <= _FIELDS:
            return replace(self, _views={}, **changes)
        new = object.__new__(self.__class__)
        state = new.__dict__
        state.update(self.__dict__)
        state.update(changes)
        state["_views"] = {}
        return new

    # ------------------------------------------------------------------ stored form (secret!)

    def to_data(self) -> dict[str, Any]:
        return {**self.stored_fields(), "game": {"kind": self.kind, "state": self.game.snapshot()}}

    def stored_fields(self) -> dict[str, Any]:
        """The stored form but for the game (``server.store.stored_form`` packs the game apart)."""
        return {
            "format": ROOM_FORMAT,
            "id": self.id,
            "v": self.version,
            "players": [p.to_data() if p else None for p in self.players],
            "clock": self.clock.to_data() if self.clock else None,
            "created_ms": self.created_ms,
            "rematch": self.rematch,
            "started_ms": self.started_ms,
            "ended_ms": self.ended_ms,
            "rated": self.rated,
            "seated_ms": self.seated_ms,
            "moved_ms": self.moved_ms,
            "rematch_offer": self.rematch_offer,
            "rematch_declined": self.rematch_declined,
            **_UNLISTED[self.listed],
        }

    @classmethod
    def from_data(cls, data: dict[str, Any], previous: "Room | None" = None) -> "Room":
        """Inverse of :meth:`to_data`; raises ``ValueError`` on malformed data. ``previous``, an
        earlier version of the same room, makes it cost what was added since (see
        ``Duel.from_snapshot``); the result is the same."""
        try:
            fmt = data.get("format")
            if fmt == ROOM_FORMAT:
                kind, state = data["game"]["kind"], data["game"]["state"]
            elif fmt == 1:
                kind, state = "duel", data["duel"]
            else:
                raise ValueError(f"unknown room format {fmt!r}")
            game = restore(kind, state, previous.game if previous is not None else None)
            return cls(
                id=data["id"],
                version=data["v"],
                game=game,
                players=tuple(Player.from_data(p) for p in data["players"]),
                clock=Clock.from_data(data["clock"]) if data["clock"] else None,
                created_ms=data["created_ms"],
                rematch=data["rematch"],
                started_ms=data.get("started_ms"),
                ended_ms=data.get("ended_ms"),
                rated=bool(data.get("rated", False)),
                seated_ms=data.get("seated_ms"),
                moved_ms=data.get("moved_ms"),
                rematch_offer=data.get("rematch_offer"),
                rematch_declined=data.get("rematch_declined"),
                listed=data.get("listed", True) is not False,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed room: {exc!r}") from exc


_UNLISTED: dict[bool, dict[str, bool]] = {True: {}, False: {"listed": False}}
"""The stored form says ``listed`` only when false: every room stored before it is listed."""

_FIELDS = frozenset(f.name for f in fields(Room) if f.init and f.name != "_views")
"""What :meth:`Room.evolve` may change."""
