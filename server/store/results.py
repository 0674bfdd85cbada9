"""What finished games leave behind: the classic game's leaderboards and personal bests.

The room service hands every room whose commit ended the game to :meth:`Results.finished`
(once: only one commit can end a game). A won classic game on a preset board is put on the
all-time and the day's leaderboard of its preset and mode (``classic`` or ``no-guess``),
ranked by time, and becomes the player's best if it is one: one script, idempotent (a result
is unique per game), all keys in the ``{solo}`` slot. Custom boards are not ranked.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from engine.classic import PRESETS
from engine.events import CLEARED

from ..core.room import Room
from ..metrics import Metrics
from ..outage import redis_down
from .store import Store

log = logging.getLogger("mineduel.results")

MODES = ("classic", "no-guess")
KEEP = 500
DAY_TTL_S = 3 * 86_400


@dataclass(frozen=True, slots=True)
class SoloResult:
    room: str
    player_id: str
    name: str
    preset: str
    mode: str
    time_ms: int
    three_bv: int
    clicks: int
    ended_ms: int

    @property
    def bv_per_s(self) -> float:
        return self.three_bv / max(self.time_ms, 1) * 1000

    @property
    def efficiency(self) -> float:
        """3BV per click made (1.0 = no click wasted)."""
        return self.three_bv / max(self.clicks, 1)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "SoloResult":
        return cls(**json.loads(text))


def day_of(ms: int) -> str:
    """``d<yyyymmdd>`` of a UTC time in ms (the period key of a day's leaderboard)."""
    return "d" + time.strftime("%Y%m%d", time.gmtime(ms / 1000))


def solo_result(room: Room) -> SoloResult | None:
    """The leaderboard entry of a finished classic room: a win on a preset board, else ``None``."""
    game: Any = room.game
    outcome = game.outcome
    if room.kind != "classic" or outcome is None or outcome.termination != CLEARED or room.players[0] is None:
        return None
    settings = game.settings
    if settings["preset"] not in PRESETS or room.started_ms is None or room.ended_ms is None:
        return None
    view = game.view(0)
    return SoloResult(room.id, room.players[0].id, room.players[0].name, settings["preset"],
                      "no-guess" if settings["no_guess"] else "classic", room.ended_ms - room.started_ms,
                      view.three_bv, sum(view.clicks), room.ended_ms)


class Results:
    def __init__(self, store: Store, metrics: Metrics) -> None:
        self.store = store
        self.metrics = metrics

    async def finished(self, room: Room) -> None:
        """``room``'s commit just ended its game. A Redis error is logged, not raised: the game
        is committed either way (the result misses the leaderboard)."""
        result = solo_result(room)
        if result is None:
            return
        try:
            await self.store.record_solo(result.preset, result.mode, day_of(result.ended_ms), result.player_id,
                                         result.to_json(), result.time_ms, KEEP, DAY_TTL_S)
        except Exception as exc:
            redis_down(self.metrics, "results", exc, room=room.id)

    async def leaderboard(self, preset: str, mode: str, period: str, count: int = 50) -> list[SoloResult]:
        """``period``: ``all``, ``today`` or ``d<yyyymmdd>``."""
        if period == "today":
            period = day_of(time.time_ns() // 1_000_000)
        return [SoloResult.from_json(text) for text in await self.store.solo_board(preset, mode, period, count)]

    async def bests(self, player_id: str) -> dict[tuple[str, str], SoloResult]:
        found = await self.store.solo_bests(player_id)
        return {tuple(key.split(":", 1)): SoloResult.from_json(text) for key, text in found.items()}  # type: ignore[misc]
