"""The Lua scripts: each runs atomically in Redis and declares every key it touches (checked
against the cluster slots by ``tests/server/store/test_key_slots.py``), one module per family:
:mod:`.rooms` (a room's commit, its analysis, due times, presence), :mod:`.players` (names,
ratings, a player's games, the classic game's results), :mod:`.pairing` (quick pairing's pools).
"""

from .pairing import (
    PAIRING_ANNOUNCE,
    PAIRING_END,
    PAIRING_MATCH,
    PAIRING_REFRESH,
    PAIRING_SEEK,
    PAIRING_SWEEP,
)
from .players import NAME_CLAIM, PLAYER_GAME, RATING_RESULT, SOLO_RESULT
from .rooms import COMMIT, DROP_DUE, KEEP_ANALYSIS, PRESENCE

__all__ = [
    "COMMIT", "DROP_DUE", "KEEP_ANALYSIS", "NAME_CLAIM", "PAIRING_ANNOUNCE", "PAIRING_END", "PAIRING_MATCH",
    "PAIRING_REFRESH", "PAIRING_SEEK", "PAIRING_SWEEP", "PLAYER_GAME", "PRESENCE", "RATING_RESULT", "SOLO_RESULT",
]
