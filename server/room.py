"""The Room value: one duel plus what the server adds around it (players, clock, status, version).

A :class:`Room` is treated as immutable: the room service builds a *new* Room (with a new
:class:`~engine.Duel`) for every committed change and never mutates one it has handed out, so
the hub can keep the previous Room next to the new one and render the difference.

The stored form (:meth:`Room.to_data`) contains the duel's secrets (mines, salt, every wrong
mark). It goes to Redis and between server processes only; clients get views
(:meth:`Room.view`) rendered by a codec, never this.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from typing import Any, Sequence

from engine import (
    CellsRevealed,
    Duel,
    Event,
    GameEnded,
    MineShown,
    MovePlayed,
    Outcome,
    TurnChanged,
    View,
    WrongMarkPlaced,
)
from engine.clock import Clock
from engine.rules import Action, Claim, Verdict
from engine.view import public_rows

ROOM_FORMAT = 1
_PUBLIC = -1  # key of the public rows in Room._views


class Status(StrEnum):
    """A room's phase. The one place it is decided is :attr:`Room.status`."""

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


@dataclass(frozen=True)
class Room:
    id: str
    version: int
    """Grows by one with every committed change (join, move, timeout, rematch offer)."""
    duel: Duel
    """The engine game. Never mutate it: build a new Room instead (see :mod:`server.rooms`)."""
    players: tuple[Player | None, Player | None]
    clock: Clock | None
    """``None`` for an untimed game. Times are wall-clock milliseconds shared by all processes."""
    created_ms: int
    rematch: str | None = None
    """Room id of the rematch offered after the end, or ``None``."""
    _views: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)
    """Views by viewer, and under ``_PUBLIC`` the rows every view starts from."""

    # ------------------------------------------------------------------ what renderers read

    @property
    def status(self) -> Status:
        if self.duel.outcome is not None:
            return Status.OVER
        if self.players[0] is None or self.players[1] is None:
            return Status.WAITING
        return Status.PLAYING

    @property
    def ruleset(self) -> str:
        return self.duel.setup.ruleset

    @property
    def commitment(self) -> str:
        return self.duel.commitment

    def view(self, viewer: int) -> View:
        """The engine's view for seat 0, seat 1 or a spectator (2); computed once per Room,
        the board everybody sees painted once for all three."""
        cached = self._views.get(viewer)
        if cached is None:
            public = self._views.get(_PUBLIC)
            if public is None:
                public = self._views[_PUBLIC] = public_rows(self.duel)
            cached = self._views[viewer] = self.duel.view(viewer, public)
        return cached

    def seat_of(self, player_id: str | None) -> int | None:
        """The seat ``player_id`` holds here, or ``None`` (a spectator)."""
        if player_id is None:
            return None
        for seat, player in enumerate(self.players):
            if player is not None and player.id == player_id:
                return seat
        return None

    def clock_data(self, now_ms: int) -> dict[str, Any] | None:
        """The clock as a client should show it at ``now_ms`` (``server_ms`` is that reference)."""
        c = self.clock
        if c is None:
            return None
        return {
            "initial_ms": c.initial_ms,
            "increment_ms": c.increment_ms,
            "remaining_ms": [c.remaining(0, now_ms), c.remaining(1, now_ms)],
            "running": c.running,
            "server_ms": now_ms,
        }

    def meta_data(self, now_ms: int) -> dict[str, Any]:
        """Public facts about the room (no secrets): id, status, players, clock, rematch."""
        return {
            "id": self.id,
            "status": self.status.value,
            "ruleset": self.ruleset,
            "players": [p.to_data() if p else None for p in self.players],
            "clock": self.clock_data(now_ms),
            "rematch": self.rematch,
            "created_ms": self.created_ms,
        }

    def evolve(self, **changes: Any) -> "Room":
        """A copy with ``changes`` and a fresh view cache (the version is the caller's business)."""
        return replace(self, _views={}, **changes)

    # ------------------------------------------------------------------ stored form (secret!)

    def to_data(self) -> dict[str, Any]:
        return {
            "format": ROOM_FORMAT,
            "id": self.id,
            "v": self.version,
            "duel": self.duel.snapshot(),
            "players": [p.to_data() if p else None for p in self.players],
            "clock": self.clock.to_data() if self.clock else None,
            "created_ms": self.created_ms,
            "rematch": self.rematch,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any], previous: "Room | None" = None) -> "Room":
        """Inverse of :meth:`to_data`. ``previous``, an earlier version of the same room, makes
        it cost what was added since (see ``Duel.from_snapshot``); the result is the same."""
        if data.get("format") != ROOM_FORMAT:
            raise ValueError(f"unknown room format {data.get('format')!r}")
        players = tuple(Player(p["id"], p["name"]) if p else None for p in data["players"])
        return cls(
            id=data["id"],
            version=data["v"],
            duel=Duel.from_snapshot(data["duel"], previous.duel if previous is not None else None),
            players=(players[0], players[1]),
            clock=Clock.from_data(data["clock"]) if data["clock"] else None,
            created_ms=data["created_ms"],
            rematch=data["rematch"],
        )


def clone_duel(duel: Duel) -> Duel:
    """An independent copy of ``duel``, so applying a move to it leaves ``duel`` untouched.

    Cheaper than the snapshot round-trip (which costs as much as a move): every container
    attribute is copied one level deep; everything inside them (cells, lines, moves, setup)
    is immutable. Generic over the attributes, so a new engine field is copied too
    (tests/server/test_room.py checks the copy against ``from_snapshot``).
    """
    new = Duel.__new__(Duel)  # what copy.copy does, without its reduce protocol (~10 us)
    attributes = new.__dict__
    for name, value in vars(duel).items():
        if isinstance(value, (list, dict, set)):
            value = value.copy()
        elif isinstance(value, tuple) and any(isinstance(x, (list, dict, set)) for x in value):
            value = tuple(x.copy() if isinstance(x, (list, dict, set)) else x for x in value)
        attributes[name] = value
    return new


# ---------------------------------------------------------------------- events between processes

_EVENT_TYPES: dict[str, type] = {
    "move_played": MovePlayed,
    "wrong_mark_placed": WrongMarkPlaced,
    "cells_revealed": CellsRevealed,
    "mine_shown": MineShown,
    "turn_changed": TurnChanged,
    "game_ended": GameEnded,
}


_TAGS = {cls: tag for tag, cls in _EVENT_TYPES.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value


def event_data(event: Event) -> dict[str, Any]:
    """Exactly ``engine.event_to_data(event)``, several times faster (no ``dataclasses.asdict``
    deep copy; this runs for every event of every move, per viewer class). A test compares the
    two on every event of whole games."""
    data: dict[str, Any] = {"t": _TAGS[type(event)]}
    for name in event.__slots__:  # type: ignore[union-attr]
        if name == "audience":
            continue
        value = getattr(event, name)
        data[name] = value.to_data() if isinstance(value, Outcome) else _plain(value)
    return data


def events_to_data(events: Sequence[Event]) -> list[list[Any]]:
    """``[[audience, event_data(e)], ...]`` for the internal pub/sub message (may hold secrets)."""
    return [[e.audience, event_data(e)] for e in events]


def _cell(value: Any) -> tuple[int, int]:
    return (value[0], value[1])


def events_from_data(items: list[list[Any]]) -> list[Event]:
    """Inverse of :func:`events_to_data`."""
    out: list[Event] = []
    for audience, d in items:
        t = d["t"]
        if t == "move_played":
            e: Event = MovePlayed(d["number"], d["seat"], Action(d["action"]),
                                  _cell(d["cell"]) if d["cell"] is not None else None,
                                  Verdict(d["verdict"]), d["points"], d["auto_revealed"], audience)
        elif t == "wrong_mark_placed":
            e = WrongMarkPlaced(d["seat"], _cell(d["cell"]), audience)
        elif t == "cells_revealed":
            e = CellsRevealed(tuple((r, c, n) for r, c, n in d["cells"]), d["cause"], audience)
        elif t == "mine_shown":
            e = MineShown(_cell(d["cell"]), d["seat"], Claim(d["claim"]), audience)
        elif t == "turn_changed":
            e = TurnChanged(d["to_move"], audience)
        elif t == "game_ended":
            e = GameEnded(Outcome.from_data(d["outcome"]), (d["scores"][0], d["scores"][1]),
                          tuple(_cell(m) for m in d["mines"]), d["salt"],
                          (tuple(_cell(m) for m in d["wrong_marks"][0]),
                           tuple(_cell(m) for m in d["wrong_marks"][1])), audience)
        else:
            raise ValueError(f"unknown event {t!r}")
        out.append(e)
    return out
