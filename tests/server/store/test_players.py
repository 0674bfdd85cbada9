"""Player names and ratings on the real Valkey: unique names under races, and each rated game
applied exactly once with the library's numbers, even when two processes apply it at once.

"Two processes" are two redis-py clients with their own connections (and their own
:class:`Players` / :class:`Ratings`), as two server processes have. The shared Valkey serves
every test, so each test uses fresh ids and names.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from server.core.computer import NAMES as COMPUTER_NAMES
from server.core.ratings import (
    BLITZ,
    BULLET,
    CATEGORIES,
    DEFAULT,
    RAPID,
    Rating,
    rate_game,
)
from server.edge.guests import reserved_names
from server.store.keys import rated_game_key, rating_board_key, ratings_key
from server.store.players import (
    MARK_TTL_MS,
    NameTaken,
    Players,
    RatingBusy,
    RatingPoint,
    Ratings,
    UnknownPlayer,
    name_key,
)
from tests.server.store.conftest import all_as_stored, as_stored


def fresh(prefix: str = "p") -> str:
    return f"{prefix}{secrets.token_hex(5)}"


def fullwidth(text: str) -> str:
    """ASCII letters and digits in their fullwidth forms (U+FF01..): "Anna" → "Ａｎｎａ"."""
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.fixture
async def clients(redis_url: str) -> AsyncIterator[tuple[aioredis.Redis, aioredis.Redis]]:
    """Two clients, as two server processes have."""
    first, second = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(redis_url)
    try:
        yield first, second
    finally:
        await first.aclose()
        await second.aclose()


class GatedRatings(Ratings):
    """Ratings whose reads wait at a barrier shared with another process's: every process has
    read before any writes, so the race the script must settle happens every time."""

    def __init__(self, redis: aioredis.Redis, barrier: asyncio.Barrier) -> None:
        super().__init__(redis)
        self.barrier = barrier
        self.gated = True

    async def _read(self, category: str, players: tuple[str, str]) -> tuple[bytes | None, bytes | None]:
        read = await super()._read(category, players)
        if self.gated:
            self.gated = False  # only the first read waits; a retry goes straight on
            await asyncio.wait_for(self.barrier.wait(), 5)
        return read


# ---------------------------------------------------------------------- names


def test_the_name_key_folds_case_and_width() -> None:
    assert name_key("Anna") == name_key("anna") == name_key("ＡＮＮＡ") == name_key(" ANNA ") == "anna"
    assert name_key("Straße") == name_key("STRASSE")
    assert name_key("Anna B") == name_key("anna  b") != name_key("annab")


async def test_names_are_unique_whatever_their_case_or_width(clients) -> None:
    players = Players(clients[0])
    anna, other, third = fresh(), fresh(), fresh()
    name = "Anna" + fresh("x")
    assert await players.register(anna, name) == name
    for variant in (name.lower(), name.upper(), fullwidth(name)):
        with pytest.raises(NameTaken) as refused:
            await players.register(other, variant)
        assert refused.value.code == "name_taken"
    assert await players.holder_of(fullwidth(name)) == anna
    assert await players.name_of(other) is None
    assert await players.register(anna, name) == name  # registering again changes nothing
    assert await players.names_of([anna, other, third]) == {anna: name}


async def test_the_computers_names_are_theirs_in_any_case_or_width(clients) -> None:
    players = Players(clients[0])
    anna = fresh()
    await players.register(anna, "Anna" + fresh("x"))
    for name in (*COMPUTER_NAMES.values(), "computer (MEDIUM)", fullwidth("Computer (strong)"), " Computer  (easy) "):
        with pytest.raises(NameTaken):
            await players.register(fresh(), name)
        with pytest.raises(NameTaken):
            await players.rename(anna, name)
        assert await players.holder_of(name) is None
    assert await players.register(fresh(), "Computer (easy) fan" + fresh("x"))  # only the names themselves


async def test_what_pages_show_for_no_person_is_nobody_s_name_in_any_language_or_look(clients) -> None:
    """The server's players refuse the computers' names in every language the pages speak
    ("Computer (mittel)" passed for the computer on German pages), the empty seats' ("Spieler
    2"), and look-alike spellings of them (a Cyrillic ``о``, a zero for an o)."""
    players = Players(clients[0], reserved_names())
    for name in ("Computer (mittel)", "COMPUTER (LEICHT)", "Computer (stark)", "Spieler 2", "player 1",
                 "C\u043emputer (easy)", "C0mputer (Easy)", "Computer (m\u0435dium)", "\u0421omputer (strong)"):
        with pytest.raises(NameTaken):
            await players.register(fresh(), name)
    for name in ("Computerfan ", "Spieler 3 ", "Anna ", "Соня "):  # others, and other scripts, are names
        name += fresh("x")
        assert await players.register(fresh(), name) == name


async def test_a_name_given_up_stays_its_player_s(clients) -> None:
    """Her games show the name she played under: nobody else may take it (an outside probe saw
    a leaderboard game credited to a name a new guest had taken since); she may take it back."""
    players = Players(clients[0])
    anna, ben = fresh(), fresh()
    old, new = "Anna" + fresh("x"), "Hanna" + fresh("x")
    await players.register(anna, old)
    await players.register(ben, "Ben" + fresh("x"))
    assert await players.rename(anna, new) == new
    assert await players.name_of(anna) == new and await players.holder_of(old) == anna
    with pytest.raises(NameTaken):
        await players.register(ben, old.upper())
    with pytest.raises(NameTaken):
        await players.register(fresh(), old)
    assert await players.rename(anna, old) == old and await players.name_of(anna) == old


async def test_renames_that_are_refused_change_nothing(clients) -> None:
    players = Players(clients[0])
    anna, ben = fresh(), fresh()
    name_a, name_b = "Anna" + fresh("x"), "Ben" + fresh("x")
    await players.register(anna, name_a)
    await players.register(ben, name_b)
    with pytest.raises(NameTaken):
        await players.rename(anna, name_b.lower())
    assert await players.names_of([anna, ben]) == {anna: name_a, ben: name_b}
    assert await players.holder_of(name_a) == anna and await players.holder_of(name_b) == ben
    with pytest.raises(UnknownPlayer) as refused:
        await players.rename(fresh(), "Nobody" + fresh("x"))
    assert refused.value.code == "unknown_player"
    with pytest.raises(ValueError):
        await players.register(anna, "   ")


async def test_another_case_of_ones_own_name_is_a_rename(clients) -> None:
    players = Players(clients[0])
    anna = fresh()
    name = "anna" + fresh("x")
    await players.register(anna, name)
    assert await players.rename(anna, name.upper()) == name.upper()
    assert await players.name_of(anna) == name.upper() and await players.holder_of(name) == anna


async def test_two_processes_registering_one_name_exactly_one_wins(clients) -> None:
    first, second = Players(clients[0]), Players(clients[1])
    for _ in range(20):
        name, a, b = "Race" + fresh("x"), fresh(), fresh()
        answers = await asyncio.gather(first.register(a, name), second.register(b, name.lower()),
                                       return_exceptions=True)
        won = [pid for pid, answer in zip((a, b), answers, strict=True) if isinstance(answer, str)]
        assert len(won) == 1 and sum(isinstance(x, NameTaken) for x in answers) == 1
        assert await first.holder_of(name) == won[0]
        assert await first.names_of([a, b]) == {won[0]: answers[(a, b).index(won[0])]}


# ---------------------------------------------------------------------- ratings


async def test_a_player_without_rated_games_has_the_default_everywhere(clients) -> None:
    ratings = Ratings(clients[0])
    nobody = fresh()
    assert await ratings.ratings_of(nobody) == dict.fromkeys(CATEGORIES, DEFAULT)
    assert await ratings.history(nobody, BLITZ) == []


async def test_a_game_stores_the_librarys_update(clients) -> None:
    ratings = Ratings(clients[0])
    anna, ben, game = fresh(), fresh(), fresh("g")
    ended = now_ms()
    assert await ratings.apply_result(game, BLITZ, (anna, ben), 1.0, ended)
    after = await ratings.ratings_many([anna, ben])
    new_anna, new_ben = rate_game(DEFAULT, DEFAULT, 1.0, ended)
    assert as_stored(after[anna][BLITZ], new_anna) and as_stored(after[ben][BLITZ], new_ben)
    assert new_anna.rating > 1500 > new_ben.rating and new_anna.games == 1
    assert after[anna][BULLET] == after[anna][RAPID] == DEFAULT  # other categories untouched


async def test_two_processes_applying_one_game_apply_it_once(clients) -> None:
    barrier = asyncio.Barrier(2)
    first, second = GatedRatings(clients[0], barrier), GatedRatings(clients[1], barrier)
    anna, ben, game, ended = fresh(), fresh(), fresh("g"), now_ms()
    applied = await asyncio.gather(first.apply_result(game, BLITZ, (anna, ben), 0.0, ended),
                                   second.apply_result(game, BLITZ, (anna, ben), 0.0, ended))
    assert sorted(applied) == [False, True]
    after = await first.ratings_many([anna, ben])
    assert all_as_stored((after[anna][BLITZ], after[ben][BLITZ]), rate_game(DEFAULT, DEFAULT, 0.0, ended))
    assert len(await first.history(anna, BLITZ)) == len(await first.history(ben, BLITZ)) == 1
    assert not await second.apply_result(game, BLITZ, (anna, ben), 0.0, ended)  # and never again
    assert (await first.ratings_of(anna))[BLITZ].games == 1


async def test_two_games_of_one_player_at_once_are_both_applied_in_some_order(clients) -> None:
    """Anna finishes a game against Ben and one against Cleo at the same moment (a
    correspondence player has many): both read Anna's rating before either writes; one
    compare-and-set fails and reads again, so the end result is one order or the other."""
    barrier = asyncio.Barrier(2)
    first, second = GatedRatings(clients[0], barrier), GatedRatings(clients[1], barrier)
    anna, ben, cleo, ended = fresh(), fresh(), fresh(), now_ms()
    applied = await asyncio.gather(first.apply_result(fresh("g"), RAPID, (anna, ben), 1.0, ended),
                                   second.apply_result(fresh("g"), RAPID, (cleo, anna), 0.5, ended))
    assert applied == [True, True] and first.conflicts + second.conflicts == 1
    after = await first.ratings_many([anna, ben, cleo])
    # order 1: anna-ben first
    a1, b1 = rate_game(DEFAULT, DEFAULT, 1.0, ended)
    c1, a1 = rate_game(DEFAULT, a1, 0.5, ended)
    # order 2: cleo-anna first
    c2, a2 = rate_game(DEFAULT, DEFAULT, 0.5, ended)
    a2, b2 = rate_game(a2, DEFAULT, 1.0, ended)
    found = (after[anna][RAPID], after[ben][RAPID], after[cleo][RAPID])
    assert all_as_stored(found, (a1, b1, c1)) or all_as_stored(found, (a2, b2, c2))
    assert found[0].games == 2 and len(await first.history(anna, RAPID)) == 2


async def test_the_attempts_are_bounded(clients) -> None:
    """A compare-and-set that always loses gives up with RatingBusy instead of looping."""

    class Unlucky(Ratings):
        async def _read(self, category: str, players: tuple[str, str]) -> tuple[bytes | None, bytes | None]:
            return b"[1,2,3,4]", None  # never what is stored

    ratings = Unlucky(clients[0], attempts=3)
    anna, ben = fresh(), fresh()
    with pytest.raises(RatingBusy):
        await ratings.apply_result(fresh("g"), BLITZ, (anna, ben), 1.0, now_ms())
    assert ratings.conflicts == 3
    assert await ratings.ratings_of(anna) == dict.fromkeys(CATEGORIES, DEFAULT)


async def test_the_mark_outlives_the_game_by_its_ttl_and_older_games_are_refused(clients) -> None:
    ratings = Ratings(clients[0])
    anna, ben, game = fresh(), fresh(), fresh("g")
    ended = now_ms() - 3_600_000
    assert await ratings.apply_result(game, BULLET, (anna, ben), 1.0, ended)
    left = await clients[0].pttl(rated_game_key(game))
    assert abs(left - (ended + MARK_TTL_MS - now_ms())) < 60_000
    too_old = now_ms() - MARK_TTL_MS - 1
    assert not await ratings.apply_result(fresh("g"), BULLET, (anna, ben), 1.0, too_old)
    assert (await ratings.ratings_of(anna))[BULLET].games == 1


async def test_a_rated_game_needs_two_players_a_category_and_a_score(clients) -> None:
    ratings = Ratings(clients[0])
    anna, ben = fresh(), fresh()
    for category, players, score in ((BLITZ, (anna, anna), 1.0), ("classical", (anna, ben), 1.0),
                                     (BLITZ, (anna, ben), 0.7)):
        with pytest.raises(ValueError):
            await ratings.apply_result(fresh("g"), category, players, score, now_ms())
    assert await ratings.ratings_of(anna) == dict.fromkeys(CATEGORIES, DEFAULT)


async def test_history_follows_every_game(clients) -> None:
    ratings = Ratings(clients[0], history_keep=3)
    anna, ben = fresh(), fresh()
    games = [fresh("g") for _ in range(4)]
    expected, a, b = [], DEFAULT, DEFAULT
    for n, (game, score) in enumerate(zip(games, (1.0, 0.5, 0.0, 1.0), strict=True)):
        ended = 1_000 * n + now_ms()
        assert await ratings.apply_result(game, BLITZ, (anna, ben), score, ended)
        a, b = rate_game(a, b, score, ended)
        expected.append((game, a.rating))
    history = await ratings.history(anna, BLITZ)
    assert [p.game_id for p in history] == [g for g, _ in expected[-3:]]  # the newest three, oldest first
    assert [p.rating for p in history] == pytest.approx([r for _, r in expected[-3:]], abs=1e-6)
    assert all(isinstance(p, RatingPoint) for p in history)
    assert [p.game_id for p in await ratings.history(anna, BLITZ, count=1)] == [games[-1]]
    assert as_stored((await ratings.ratings_of(anna))[BLITZ], a)


def same_board(found: list[tuple[str, Rating]], expected: list[tuple[str, Rating]]) -> bool:
    """The same players in the same order, each rating as read a moment apart (aged alike)."""
    return [p for p, _ in found] == [p for p, _ in expected] and all_as_stored(
        tuple(r for _, r in found), tuple(r for _, r in expected))


async def test_the_leaderboard_lists_established_players_best_first(clients) -> None:
    ratings = Ratings(clients[0])
    anna, ben, cleo = fresh(), fresh(), fresh()
    ours = {anna, ben, cleo}

    async def board() -> list[tuple[str, Rating]]:
        return [(pid, r) for pid, r in await ratings.leaderboard(BULLET, count=10_000) if pid in ours]

    for n in range(30):  # about 15 games take two new players under the provisional deviation
        stored = await ratings.ratings_many([anna, ben])
        if not stored[anna][BULLET].provisional:
            break
        assert await board() == []
        await ratings.apply_result(fresh("g"), BULLET, (anna, ben), (1.0, 0.0, 1.0)[n % 3], now_ms())
    assert 10 < stored[anna][BULLET].games < 30 and not stored[ben][BULLET].provisional
    assert stored[anna][BULLET].rating > stored[ben][BULLET].rating
    assert same_board(await board(), [(anna, stored[anna][BULLET]), (ben, stored[ben][BULLET])])
    await ratings.apply_result(fresh("g"), BULLET, (cleo, anna), 1.0, now_ms())  # cleo: provisional
    stored = await ratings.ratings_many([anna, ben, cleo])
    assert stored[cleo][BULLET].provisional
    listed = sorted(((pid, stored[pid][BULLET]) for pid in (anna, ben)), key=lambda e: -e[1].rating)
    assert same_board(await board(), listed)  # anna's entry follows her new rating; cleo is not listed
    for _ in range(5):
        await ratings.apply_result(fresh("g"), BULLET, (anna, ben), 0.0, now_ms())
    stored = await ratings.ratings_many([anna, ben])
    assert same_board(await board(), [(ben, stored[ben][BULLET]), (anna, stored[anna][BULLET])])


async def test_a_rating_nobody_played_for_a_year_reads_provisional_and_leaves_the_board(clients) -> None:
    """What is stored stays as the last game left it; reads age it to now (Rating.aged)."""
    ratings = Ratings(clients[0])
    idle, active = fresh(), fresh()
    year_ago = now_ms() - 400 * 86_400_000
    for pid, last_ms in ((idle, year_ago), (active, now_ms())):
        await clients[0].hset(ratings_key(pid), BULLET, json.dumps([2900.0, 60.0, 0.06, 40, last_ms]))
        await clients[0].zadd(rating_board_key(BULLET), {pid: 2900.0})
    read = await ratings.ratings_many([idle, active])
    assert read[idle][BULLET].provisional and read[idle][BULLET].rating == 2900.0
    assert not read[active][BULLET].provisional and read[active][BULLET].deviation == pytest.approx(60.0)
    board = [pid for pid, _ in await ratings.leaderboard(BULLET, count=10_000)]
    assert active in board and idle not in board
    assert json.loads(await clients[0].hget(ratings_key(idle), BULLET))[1] == 60.0  # the stored form untouched
