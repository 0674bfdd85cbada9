"""A game as a player's list of games shows it, pure: what the games index keeps per room.

The shell keeps, per player, the games being played or waiting and the finished ones
(:mod:`server.store.player_games`), written after every commit that changes what such a list
says (:func:`index_changed`: the status, who is seated). What it writes is
:func:`summary_of` the committed Room: one plain, JSON-ready dict for both players, with no
secret (players, status, whose turn, the outcome, the clock's terms, when the mover must move).
:func:`for_player` adds what one player sees in it: their seat, the opponent, whether it is
their turn, and their result.

Only duels between a person and anybody are listed, and only for people: a computer player
(``@bot<n>``) has no list, and the classic game (one player, many short games) has its own
bests and leaderboards instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.clock import Clock
from engine.duel import Duel
from engine.events import ABORTED

from .computer import level_of
from .due import clock_due, first_move_due
from .ratings import rated_category
from .room import Room, Status

WON, LOST, DRAWN, ABORTED_RESULT = "won", "lost", "drawn", "aborted"
"""A finished game's result for one player."""


def indexed_players(room: Room) -> list[str]:
    """The ids of the people whose game lists show ``room`` (none for a game that is not a duel)."""
    if room.kind != Duel.kind:
        return []
    return [p.id for p in room.players if p is not None and level_of(p) is None]


def index_changed(old: Room | None, new: Room) -> bool:
    """Whether the commit from ``old`` to ``new`` changes what a game list keeps of it (a new
    room; a join; the end). A move does not: whose turn it is and when it is due are read from
    the rooms themselves when a list is read (:meth:`server.store.player_games.PlayerGames.ongoing`),
    so a move costs no write of the lists; scores are kept once the game is over."""
    if old is None:
        return True
    return old.status is not new.status or old.players != new.players


def clock_terms(clock: Clock | None) -> dict[str, int] | None:
    """A clock's terms as the API writes them: ``{"initial_ms", "increment_ms"}``, ``{"days"}``
    (correspondence) or ``None`` (untimed)."""
    if clock is None:
        return None
    if clock.per_move:
        return {"days": clock.days or 0}
    return {"initial_ms": clock.initial_ms, "increment_ms": clock.increment_ms}


def due_ms(room: Room) -> int | None:
    """When the seat to move must have moved (its flag, or its first-move window), if ever."""
    times = [t for t in (clock_due(room), first_move_due(room)) if t is not None]
    return min(times) if times else None


def summary_of(room: Room) -> dict[str, Any]:
    """What every list that shows ``room`` keeps of it (the same for both players)."""
    game: Any = room.game
    over = room.status is Status.OVER
    outcome = game.outcome
    changed = [t for t in (room.created_ms, room.seated_ms, room.moved_ms, room.ended_ms) if t is not None]
    return {
        "id": room.id,
        "v": room.version,
        "kind": room.kind,
        "status": room.status.value,
        "players": [p.to_data() if p else None for p in room.players],
        "to_move": game.to_move if room.status is Status.PLAYING else None,
        "outcome": outcome.to_data() if outcome is not None else None,
        "scores": list(game.scores) if over and hasattr(game, "scores") else None,
        "ruleset": room.ruleset,
        "clock": clock_terms(room.clock),
        "rated": room.rated,
        "category": rated_category(room.kind, room.rated, room.clock),
        "created_ms": room.created_ms,
        "started_ms": room.started_ms,
        "ended_ms": room.ended_ms,
        "due_ms": due_ms(room) if room.status is Status.PLAYING else None,
        "changed_ms": max(changed),
    }


def result_of(summary: dict[str, Any], seat: int | None) -> str | None:
    """``won``, ``lost``, ``drawn`` or ``aborted`` for ``seat`` in a finished game, else ``None``."""
    outcome = summary.get("outcome")
    if outcome is None or seat is None:
        return None
    termination, winner = outcome
    if termination == ABORTED:
        return ABORTED_RESULT
    if winner is None:
        return DRAWN
    return WON if winner == seat else LOST


def for_player(summary: dict[str, Any], player_id: str) -> dict[str, Any]:
    """``summary`` as ``player_id``'s list shows it: plus ``seat``, ``opponent`` (``{"id",
    "name"}`` or ``None`` while the seat is open), ``result`` and, while the game is not over,
    ``your_turn``."""
    players = summary["players"]
    seat = next((i for i, p in enumerate(players) if p is not None and p["id"] == player_id), None)
    opponent = players[1 - seat] if seat is not None and len(players) == 2 else None
    entry = {**summary, "seat": seat, "opponent": opponent, "result": result_of(summary, seat)}
    if summary["status"] != Status.OVER.value:
        entry["your_turn"] = summary["status"] == Status.PLAYING.value and summary["to_move"] == seat
    return entry


def ongoing_order(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """A player's ongoing games as their list shows them: those where it is their turn first
    (the soonest due first), then those being played (the latest change first), then the ones
    waiting for an opponent (the newest first)."""
    def key(entry: dict[str, Any]) -> tuple[int, int]:
        if entry.get("your_turn"):
            due = entry.get("due_ms")
            return 0, due if due is not None else 2**62
        if entry["status"] == Status.PLAYING.value:
            return 1, -entry["changed_ms"]
        return 2, -entry["changed_ms"]

    return sorted(entries, key=key)
