"""What the server keeps about a player beyond one room: a unique name and ratings.

:class:`Players`: a guest's chosen display name, unique across players whatever its case or
width ("Anna", "anna" and "ＡＮＮＡ" are one name: :func:`name_key`), claimed and changed
atomically by one script (keys in the ``{players}`` slot). Names are validated by the caller
(``server.edge.auth.validate_name``); this module only decides who holds which.

:class:`Ratings`: a Glicko-2 rating per player and category (:mod:`server.core.ratings`), its
history, and a leaderboard per category (keys in the ``{ratings}`` slot). A finished rated
game is applied by :meth:`Ratings.apply_result` exactly once, however many processes call it
at the same time: read both ratings, compute the update in Python with the library, then one
script writes only if the game is not yet marked applied and both ratings are still those read
(compare-and-set); a player's other game that landed in between makes it read again. The mark
lives until 30 days after the game's end (as long as a finished room is kept); a game older
than that is refused rather than risk applying it twice, so marks never pile up.

Leaderboards list only established players (not provisional): a rating built on a handful of
games would top the board by luck.
"""

from __future__ import annotations

import json
import logging
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import redis.asyncio as aioredis

from ..core.computer import NAMES as COMPUTER_NAMES
from ..core.ratings import CATEGORIES, DEFAULT, SCORES, Rating, rate_game
from . import scripts
from .keys import (
    NAMES,
    player_key,
    rated_game_key,
    rating_board_key,
    rating_history_key,
    ratings_key,
)

log = logging.getLogger("mineduel.players")

DAY_MS = 86_400_000
MARK_TTL_MS = 30 * DAY_MS
"""How long after its end a game's result stays marked applied (the finished room's retention)."""
HISTORY_KEEP = 1000
ATTEMPTS = 16


# ---------------------------------------------------------------------- names


class NameRefused(Exception):
    """A name change that did not happen; ``code`` is machine-readable for the edges."""

    code = "name_refused"


class NameTaken(NameRefused):
    """Another player holds this name (in some case or width). The edges answer 409."""

    code = "name_taken"


class UnknownPlayer(NameRefused):
    """A rename of a player who never registered a name."""

    code = "unknown_player"


def name_key(name: str) -> str:
    """The form under which a name is unique: NFKC, casefolded, NFKC again (Unicode's
    NFKC_Casefold, near enough), spaces collapsed. ``"ＡＮＮＡ"``, ``"Anna"`` and ``"anna"``
    share one key; ``"Straße"`` and ``"STRASSE"`` too.

    >>> name_key("ＡＮＮＡ") == name_key("Anna") == "anna"
    True
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return " ".join(folded.split())


LOOKALIKES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ѕ": "s", "і": "i", "ј": "j", "к": "k", "м": "m", "н": "h", "о": "o",
    "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    # Greek
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "ϲ": "c",
    # Latin and digits that pass for letters in a name
    "ı": "i", "ɡ": "g", "0": "o", "1": "l", "|": "l",
})
"""Letters that look like Latin ones in the site's font, as the Latin letter (lower case: it
is applied to :func:`name_key`'s casefolded form). Only reserved names are compared through
it (:func:`lookalike_key`): a short table rather than Unicode's confusables data (UTS #39, a
dependency) for the handful of names it guards."""


def lookalike_key(name: str) -> str:
    """:func:`name_key` with :data:`LOOKALIKES` made Latin: "Cоmputer (easy)" with a Cyrillic
    ``о``, or "C0mputer (easy)", has the key of "Computer (easy)"."""
    return name_key(name).translate(LOOKALIKES)


RESERVED: tuple[str, ...] = tuple(COMPUTER_NAMES.values())
"""The names no person may register by default: the computers' (:data:`server.core.computer.NAMES`).
The server passes more to :class:`Players` (their names in every language the pages speak,
the empty seats' "Player 1"/"Player 2": ``server.edge.guests.reserved_names``)."""


class Players:
    """Player records: a unique display name per player id."""

    def __init__(self, redis: aioredis.Redis, reserved: Iterable[str] = RESERVED) -> None:
        self.redis = redis
        self.reserved = frozenset(lookalike_key(name) for name in reserved)
        """Names nobody may take, in any case, width or look-alike spelling: a person called
        "Computer (easy)" (or "Computer (mittel)", or with a Cyrillic ``о``) would pass for one."""
        self._claim = redis.register_script(scripts.NAME_CLAIM)

    async def register(self, player_id: str, name: str) -> str:
        """Give ``player_id`` the name ``name`` (already validated); returns it. Registering
        again is a rename. Raises :class:`NameTaken` if another player holds it."""
        await self._set_name(player_id, name, must_exist=False)
        return name

    async def rename(self, player_id: str, new_name: str) -> str:
        """Change a registered player's name: the old one stays theirs (nobody else may take it:
        their games show it; ``scripts.players.NAME_CLAIM``). Another case of one's own name is
        fine. Raises :class:`NameTaken` or :class:`UnknownPlayer`."""
        await self._set_name(player_id, new_name, must_exist=True)
        return new_name

    async def name_of(self, player_id: str) -> str | None:
        raw = await self.redis.hget(player_key(player_id), "name")
        return None if raw is None else raw.decode()

    async def names_of(self, player_ids: Sequence[str]) -> dict[str, str]:
        """The registered names among ``player_ids``, in one round trip (no entry for a player
        without one)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player_id in player_ids:
                pipe.hget(player_key(player_id), "name")
            found = await pipe.execute()
        return {pid: raw.decode() for pid, raw in zip(player_ids, found, strict=True) if raw is not None}

    async def holder_of(self, name: str) -> str | None:
        """The id of the player holding ``name`` (in any case or width), or ``None``."""
        raw = await self.redis.hget(NAMES, name_key(name))
        return None if raw is None else raw.decode()

    async def _set_name(self, player_id: str, name: str, must_exist: bool) -> None:
        key = name_key(name)
        if not key:
            raise ValueError("an empty name cannot be claimed")
        if lookalike_key(name) in self.reserved:
            raise NameTaken(f"the name {name!r} is reserved (a computer's, or an empty seat's)")
        answer = await self._claim(keys=[player_key(player_id), NAMES],
                                   args=[player_id, name, key, "1" if must_exist else "0"])
        if answer == b"taken":
            raise NameTaken(f"the name {name!r} is taken")
        if answer == b"unknown":
            raise UnknownPlayer(f"player {player_id!r} has no name to change")


# ---------------------------------------------------------------------- ratings


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A player's rating in one category right after one rated game."""

    ended_ms: int
    rating: float
    game_id: str


class RatingBusy(Exception):
    """Every attempt lost its compare-and-set to another game of the same players."""


class Ratings:
    """Ratings per player and category, their history and leaderboards."""

    def __init__(self, redis: aioredis.Redis, history_keep: int = HISTORY_KEEP, mark_ttl_ms: int = MARK_TTL_MS,
                 attempts: int = ATTEMPTS) -> None:
        self.redis = redis
        self.history_keep = history_keep
        self.mark_ttl_ms = mark_ttl_ms
        self.attempts = attempts
        self.conflicts = 0
        """Compare-and-sets lost to another game of the same player (read again), for metrics."""
        self._result = redis.register_script(scripts.RATING_RESULT)

    # ------------------------------------------------------------------ reading

    async def ratings_of(self, player_id: str) -> dict[str, Rating]:
        """The player's rating in every category (:data:`~server.core.ratings.DEFAULT` where
        it has played no rated game)."""
        return (await self.ratings_many([player_id]))[player_id]

    async def ratings_many(self, player_ids: Sequence[str]) -> dict[str, dict[str, Rating]]:
        """:meth:`ratings_of` for many players in one round trip, each aged to now
        (:meth:`~server.core.ratings.Rating.aged`: what the rating is worth after the time
        nobody played it)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player_id in player_ids:
                pipe.hgetall(ratings_key(player_id))
            found = await pipe.execute()
        now = time.time_ns() // 1_000_000
        return {pid: _all_categories(stored, now) for pid, stored in zip(player_ids, found, strict=True)}

    async def history(self, player_id: str, category: str, count: int = HISTORY_KEEP) -> list[RatingPoint]:
        """The player's last ``count`` ratings in ``category``, oldest first."""
        raw = await self.redis.lrange(rating_history_key(player_id, category), -count, -1)
        return [RatingPoint(*json.loads(entry)) for entry in raw]

    async def histories(self, player_id: str, categories: Sequence[str], count: int = HISTORY_KEEP
                        ) -> dict[str, list[RatingPoint]]:
        """:meth:`history` of several categories in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for category in categories:
                pipe.lrange(rating_history_key(player_id, category), -count, -1)
            found = await pipe.execute()
        return {category: [RatingPoint(*json.loads(entry)) for entry in raw]
                for category, raw in zip(categories, found, strict=True)}

    async def changes(self, game_id: str, category: str, player_ids: Sequence[str]
                      ) -> dict[str, tuple[Rating, float]] | None:
        """What the rated game ``game_id`` did to each of ``player_ids``: their rating now and
        how far the game moved it (its history's entry against the one before, or the start
        rating before a first game). ``None`` until the game is applied for every one of them
        (the last entry of each history names it). One round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player_id in player_ids:
                pipe.hgetall(ratings_key(player_id))
                pipe.lrange(rating_history_key(player_id, category), -2, -1)
            found = await pipe.execute()
        now = time.time_ns() // 1_000_000
        out: dict[str, tuple[Rating, float]] = {}
        for i, player_id in enumerate(player_ids):
            points = [RatingPoint(*json.loads(entry)) for entry in found[2 * i + 1]]
            if not points or points[-1].game_id != game_id:
                return None
            before = points[-2].rating if len(points) == 2 else DEFAULT.rating
            out[player_id] = (_all_categories(found[2 * i], now)[category], points[-1].rating - before)
        return out

    async def leaderboard(self, category: str, count: int = 50) -> list[tuple[str, Rating]]:
        """The ``count`` highest rated established players of ``category``, best first: a
        player whose rating idled back to provisional is left out (they are on the board's set
        until their next game, which writes them back or off), so a few more are read."""
        ids = [raw.decode() for raw in
               await self.redis.zrevrange(rating_board_key(category), 0, count + count // 2 - 1)]
        ratings = await self.ratings_many(ids)
        return [(pid, ratings[pid][category]) for pid in ids if not ratings[pid][category].provisional][:count]

    # ------------------------------------------------------------------ applying a game

    async def apply_result(self, game_id: str, category: str, players: tuple[str, str], score_p0: float,
                           ended_ms: int) -> bool:
        """Rate the finished game ``game_id`` of ``category`` between ``players`` (seat 0, seat
        1), in which seat 0 scored ``score_p0`` (1, 0.5 or 0). True if this call applied it;
        False if it was applied before (by any process) or ended too long ago to tell (logged).
        Raises :class:`RatingBusy` if every attempt lost to the same players' other games."""
        _check_game(category, players, score_p0)
        for _ in range(self.attempts):
            answer = await self._attempt(game_id, category, players, score_p0, ended_ms)
            if answer == "applied":
                return True
            if answer == "expired":
                log.warning("rating: game %s ended too long ago to rate (ended_ms=%s)", game_id, ended_ms)
            if answer != "stale":
                return False
            self.conflicts += 1
        raise RatingBusy(f"game {game_id}: the ratings kept changing; not applied")

    async def _read(self, category: str, players: tuple[str, str]) -> tuple[bytes | None, bytes | None]:
        """Both players' stored ratings in ``category`` (the compare-and-set's expected values)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player_id in players:
                pipe.hget(ratings_key(player_id), category)
            first, second = await pipe.execute()
        return first, second

    async def _attempt(self, game_id: str, category: str, players: tuple[str, str], score_p0: float,
                       ended_ms: int) -> str:
        read = await self._read(category, players)
        before = [DEFAULT if raw is None else Rating.from_data(json.loads(raw)) for raw in read]
        after = rate_game(before[0], before[1], score_p0, ended_ms)  # aged to the end, then the game
        answer = await self._result(
            keys=[rated_game_key(game_id), *(ratings_key(p) for p in players),
                  *(rating_history_key(p, category) for p in players), rating_board_key(category)],
            args=[category, *(raw or b"" for raw in read), *(_text(r.to_data()) for r in after),
                  *(_text([ended_ms, r.rating, game_id]) for r in after),
                  *("" if r.provisional else repr(r.rating) for r in after),
                  *players, self.history_keep, ended_ms, self.mark_ttl_ms])
        return answer.decode()


def _check_game(category: str, players: tuple[str, str], score_p0: float) -> None:
    if category not in CATEGORIES:
        raise ValueError(f"not a rating category: {category!r}")
    if len(players) != 2 or players[0] == players[1]:
        raise ValueError(f"a rated game has two different players, not {players!r}")
    if score_p0 not in SCORES:
        raise ValueError(f"a score is 0, 0.5 or 1, not {score_p0!r}")


def _all_categories(stored: dict[bytes, bytes], now_ms: int) -> dict[str, Rating]:
    found = {k.decode(): Rating.from_data(json.loads(v)).aged(now_ms) for k, v in stored.items()}
    return {category: found.get(category, DEFAULT) for category in CATEGORIES}


def _text(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))
