"""A finished duel's analysis (:mod:`engine.analysis`): computed once per game, off the event
loop, and kept with the room.

The engine's :func:`~engine.analysis.analyze_game` replays the game and solves every position
exactly (tens of milliseconds for a whole game, more for long ones), so it runs in a worker
process (:class:`~server.store.offload.Offload`, its own: a queue of analyses never delays a
move that the move path sends there). The worker also packs the result, so the loop only
awaits bytes. It starts right after the commit that ends a game (:meth:`Analyses.finished`,
in the background) and, failing that, on the first request (:meth:`Analyses.of`); requests in
one process share one computation. The packed form is stored once per game
(``game:{id}:analysis``, ``KEEP_ANALYSIS``: the first writer wins, expiring with the room's
state, and every later commit of the room renews both), so each later request costs one
read and one unpack.

Nothing exists for a game in progress: :meth:`Analyses.of` refuses a room that is not over
(``not_over``), and the key is written only for finished games.

The stored form (msgpack): ``{"format": 1, "moves": [...], "players": [...], "steps":
[[seat or None, permilles], ...]}``; ``moves`` and ``players`` are the API's answer
(docs/PROTOCOL.md, "Analysis"), ``steps`` the replay's overlay (``engine.analysis.StepOdds``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.analysis import NOT_HIDDEN, analyze_game
from engine.duel import Setup
from engine.moves import Move

from ..core.commands import Refused
from ..core.room import Room, Status
from ..metrics import Metrics
from ..outage import redis_down
from ..tasks import stop_tasks
from .keys import pack, unpack
from .offload import Offload
from .store import Store

log = logging.getLogger("mineduel.analyses")

FORMAT = 1


class NotAnalysed(Exception):
    """The room has no analysis: ``code`` is ``not_over`` (the game is on) or ``no_analysis``
    (not a duel)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def compute(setup: Setup, log: Sequence[tuple[int, Move]]) -> bytes:
    """The packed analysis of a game (runs in the worker process)."""
    result = analyze_game(setup, log)
    return pack({"format": FORMAT, **result.to_data(), "steps": result.steps_data()})


@dataclass(frozen=True, slots=True)
class StoredAnalysis:
    """A game's analysis as stored: plain data, each figure rounded once."""

    moves: list[dict[str, Any]]
    players: list[dict[str, Any]]
    steps: list[list[Any]]

    @classmethod
    def unpack(cls, data: bytes) -> "StoredAnalysis":
        found = unpack(data)
        if not isinstance(found, dict) or found.get("format") != FORMAT:
            raise ValueError("not a stored analysis of this format")
        return cls(found["moves"], found["players"], found["steps"])

    def to_data(self) -> dict[str, Any]:
        """The API's answer: ``{"moves", "players"}``."""
        return {"moves": self.moves, "players": self.players}

    def move(self, number: int) -> dict[str, Any] | None:
        """The figures of move-list line ``number`` (1, 2, ...)."""
        if 1 <= number <= len(self.moves) and self.moves[number - 1]["number"] == number:
            return self.moves[number - 1]
        return next((m for m in self.moves if m["number"] == number), None)

    def step(self, at: int) -> tuple[int | None, list[int]] | None:
        """Replay step ``at``'s overlay: whose knowledge (a seat, ``None`` once over) and the
        permille of every cell row by row (:data:`engine.analysis.NOT_HIDDEN` where none)."""
        if not 0 <= at < len(self.steps):
            return None
        seat, permilles = self.steps[at]
        return seat, permilles


ANALYSIS_NICE = 10
"""The analyses' worker runs this much nicer than the server: on a busy machine an analysis
(15 ms a game, one per game that ends: a fifth of a core at 500 rooms under load) waits for the
moves instead of taking a CPU from them (docs/PERFORMANCE.md, thirteenth session)."""


class Analyses:
    def __init__(self, store: Store, metrics: Metrics, offload: Offload | None = None, at_end: bool = False) -> None:
        self.store = store
        self.metrics = metrics
        self.at_end = at_end
        """:meth:`finished` starts the analysis (else the first request does)."""
        self.offload = offload or Offload(nice=ANALYSIS_NICE)
        """The analyses' own worker process (started on first use), at a lower priority."""
        self.computed = 0
        """Analyses this process computed (tests read it: one per game)."""
        self._running: dict[str, asyncio.Task[StoredAnalysis]] = {}
        self._background: set[asyncio.Task[Any]] = set()

    @staticmethod
    def check(room: Room) -> None:
        """Raises :class:`NotAnalysed` unless ``room`` is a finished duel."""
        if room.status is not Status.OVER:
            raise NotAnalysed(Refused.NOT_OVER.value, "the analysis is published when the game is over")
        if room.kind != "duel":
            raise NotAnalysed("no_analysis", "only duels are analysed")

    async def stored(self, room_id: str) -> StoredAnalysis | None:
        """The stored analysis of a game (one read), ``None`` when there is none (yet): a game
        in progress never has one. An outage counts as none."""
        try:
            found = await self.store.analysis(room_id)
        except Exception as exc:  # Redis away: compute it (a bug is raised)
            if not redis_down(self.metrics, "analysis", exc, room=room_id):
                raise
            return None
        if found is None:
            return None
        try:
            return StoredAnalysis.unpack(found)
        except (ValueError, KeyError, TypeError):
            log.warning("room %s: the stored analysis does not decode; computing it again", room_id)
            return None

    async def of(self, room: Room) -> StoredAnalysis:
        """The analysis of ``room`` (a finished duel, else :class:`NotAnalysed`): the stored
        one, else computed now (shared with a computation already running here)."""
        self.check(room)
        found = await self.stored(room.id)
        if found is not None:
            return found
        return await asyncio.shield(self._compute(room))

    def finished(self, room: Room) -> None:
        """``room``'s commit just ended its game: start its analysis in the background (a
        failure is logged; the first request computes it then)."""
        if not self.at_end or room.status is not Status.OVER or room.kind != "duel":
            return
        task = asyncio.get_running_loop().create_task(self._settle(room), name=f"analysis-{room.id}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _settle(self, room: Room) -> None:
        try:
            await self._compute(room)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("room %s: analysis failed: %r", room.id, exc)

    def _compute(self, room: Room) -> asyncio.Task[StoredAnalysis]:
        task = self._running.get(room.id)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._make(room), name=f"analyse-{room.id}")
            self._running[room.id] = task
            task.add_done_callback(lambda _: self._running.pop(room.id, None))
        return task

    async def _make(self, room: Room) -> StoredAnalysis:
        game: Any = room.game
        data = await self.offload.run(compute, game.setup, list(game.log))
        self.computed += 1
        try:
            stored = await self.store.keep_analysis(room.id, data)
        except Exception as exc:  # Redis away: serve what was computed, store it next time
            if not redis_down(self.metrics, "analysis", exc, room=room.id):
                raise
            stored = None
        return StoredAnalysis.unpack(stored if stored is not None else data)

    async def close(self) -> None:
        await stop_tasks([*self._background, *self._running.values()])
        self.offload.close()


__all__ = ["Analyses", "NOT_HIDDEN", "NotAnalysed", "StoredAnalysis", "compute"]
