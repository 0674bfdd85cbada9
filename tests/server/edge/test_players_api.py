"""The players' routes over the real server: a player's ratings and games, the lists after a
join, a move and the end, what others may not see, and the errors."""

from __future__ import annotations

import pytest

from engine import Explore
from server.client import ApiError, GameSocket
from server.core.ratings import BLITZ, CATEGORIES, DEFAULT, rate_game
from tests.names import unique
from tests.server.helpers import finished_games, referee

BLITZ_CLOCK = {"initial": 180, "increment": 2}


async def test_unknown_players_and_bad_queries_are_refused(api) -> None:
    for player_id in ("gNobody00000", "@bot2", "a.b"):
        with pytest.raises(ApiError) as refused:
            await api.player(player_id)
        assert refused.value.status == 404 and refused.value.code == "unknown_player"
    with pytest.raises(ApiError) as refused:
        await api.player_games("gNobody00000", "over")
    assert refused.value.status == 404 and refused.value.code == "unknown_player"
    me = await api.guest(unique("Anna"))
    for status, limit in (("bogus", None), ("", None), ("over", 0), ("over", 101)):
        with pytest.raises(ApiError) as refused:
            await api.player_games(me.id, status, limit=limit)
        assert refused.value.status == 400 and refused.value.code == "bad_field"
    for before in ("-1", "x", "1e3", "9" * 16):
        with pytest.raises(ApiError) as refused:
            await api.request("GET", f"/api/v1/players/{me.id}/games?status=over&before={before}", None)
        assert refused.value.status == 400 and refused.value.code == "bad_field", before


async def test_a_new_player_has_default_ratings_and_no_games(api) -> None:
    me = await api.guest(unique("Anna"))
    found = await api.player(me.id)
    assert found["id"] == me.id and found["name"] == me.name and found["games"] == []
    assert set(found["ratings"]) == set(CATEGORIES)
    for rating in found["ratings"].values():
        assert rating == {"rating": 1500.0, "deviation": 350.0, "games": 0, "won": 0, "drawn": 0, "lost": 0,
                          "provisional": True, "display": "1500?"}
    assert (await api.player_games(me.id))["games"] == []
    assert (await api.player_games(me.id, "over")) == {"id": me.id, "status": "over", "games": [], "older": None}


async def test_the_lists_after_a_join_a_move_and_the_end(api, live_server) -> None:
    anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
    game = await api.create_game(anna.token, seat=0, seed=41, clock=BLITZ_CLOCK, rated=True)
    game_id = game["id"]

    # waiting: on Anna's own list only (the link is an invitation)
    [waiting] = (await api.player_games(anna.id, token=anna.token))["games"]
    assert waiting["id"] == game_id and waiting["status"] == "waiting" and waiting["your_turn"] is False
    assert waiting["players"] == [{"id": anna.id, "name": anna.name}, None] and waiting["opponent"] is None
    assert waiting["rated"] is True and waiting["category"] == BLITZ
    assert waiting["clock"] == {"initial_ms": 180_000, "increment_ms": 2_000}
    assert (await api.player_games(anna.id))["games"] == []
    assert (await api.player_games(anna.id, token=ben.token))["games"] == []
    assert [g["id"] for g in (await api.player(anna.id, anna.token))["games"]] == [game_id]
    assert (await api.player(anna.id))["games"] == []

    await api.join(ben.token, game_id)
    lists = {p.id: (await api.player_games(p.id))["games"] for p in (anna, ben)}
    assert [g["your_turn"] for g in lists[anna.id]] == [True] and [g["your_turn"] for g in lists[ben.id]] == [False]
    assert lists[anna.id][0]["status"] == "playing" and lists[anna.id][0]["seat"] == 0
    assert lists[ben.id][0]["opponent"] == {"id": anna.id, "name": anna.name}
    assert lists[anna.id][0]["due_ms"] is not None  # the first move is due

    duel = referee(41)
    safe = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as ws:
        await ws.next()
        await ws.move("explore", safe)
        await ws.until_version(3)
    assert [g["your_turn"] for g in (await api.player_games(anna.id))["games"]] == [False]
    assert [g["your_turn"] for g in (await api.player_games(ben.id))["games"]] == [True]
    duel.apply(0, Explore(safe))
    answer = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
    async with await GameSocket.connect(live_server.url, game_id, ben.token) as ws:  # both have moved: rated
        await ws.next()
        await ws.move("explore", answer)
        await ws.until_version(4)

    await api.resign(ben.token, game_id)
    for p, result in ((anna, "won"), (ben, "lost")):
        assert (await api.player_games(p.id))["games"] == []
        [over] = (await api.player_games(p.id, "over"))["games"]
        assert over["id"] == game_id and over["status"] == "over" and over["result"] == result
        assert "your_turn" not in over and over["ended_ms"] is not None and over["outcome"] == ["resignation", 0]
        assert over["scores"] is not None and over["rated"] is True
    expected = dict(zip((anna.id, ben.id), rate_game(DEFAULT, DEFAULT, 1.0), strict=True))
    for p in (anna, ben):
        found = await api.player(p.id)
        assert [g["id"] for g in found["games"]] == [game_id]
        blitz = found["ratings"][BLITZ]
        assert blitz["rating"] == round(expected[p.id].rating, 2) and blitz["games"] == 1
        assert blitz["deviation"] == round(expected[p.id].deviation, 2) and blitz["provisional"] is True
        assert blitz["display"] == expected[p.id].display
        assert (blitz["won"], blitz["drawn"], blitz["lost"]) == ((1, 0, 0) if p is anna else (0, 0, 1))
        assert all(r["games"] == 0 for c, r in found["ratings"].items() if c != BLITZ)


async def test_finished_games_come_a_page_at_a_time(api) -> None:
    """``older`` is the next page's ``before``: every finished game once, newest first, then null."""
    anna = await api.guest(unique("Anna"))
    ended = await finished_games(api, anna, 5)
    seen, before, pages = [], None, 0
    while pages < 10:  # (bounded)
        page = await api.player_games(anna.id, "over", limit=2, before=before)
        seen += [g["id"] for g in page["games"]]
        pages += 1
        if page["older"] is None:
            break
        assert page["older"] == f'{page["games"][-1]["ended_ms"]}.{page["games"][-1]["id"]}'
        before = page["older"]
    assert seen == list(reversed(ended)) and pages == 3
