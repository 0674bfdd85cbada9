"""The players' pages over the real server (HTTP, no browser): a player's page after a rated
game, "My games" with the player's turn first, the ratings leaderboards, the ratings beside
the names of a rated room, the private challenge form. Guests are made through the API and
carry their token in the page cookie, signed as the test server signs it."""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import AsyncIterator

import httpx
import pytest
import redis.asyncio as aioredis
from itsdangerous import URLSafeSerializer
from websockets.asyncio.client import connect

from server.client import Api, Guest
from server.core.ratings import BLITZ, BULLET, DEFAULT, rate_game
from server.store.keys import LOBBY
from server.store.players import Players, Ratings
from server.web.clock_choices import CLOCK_CHOICES, CLOCKS
from tests.conftest import LiveServer
from tests.names import unique
from tests.server.helpers import both_move, finished_games
from tests.web.markup import section

BLITZ_CLOCK = {"initial": 180, "increment": 2}


def cookie_of(token: str) -> dict[str, str]:
    """The page cookie of an API guest (the test servers' ``SECRET_KEY`` is ``test-secret``)."""
    return {"mineduel_guest": URLSafeSerializer("test-secret", salt="mineduel-cookie").dumps(token)}


@pytest.fixture
async def api(web_server: LiveServer) -> AsyncIterator[Api]:
    async with Api(web_server.url) as client:
        yield client


async def page(server: LiveServer, path: str, guest: Guest | None = None, htmx: bool = False) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.url, cookies=cookie_of(guest.token) if guest else None,
                                 follow_redirects=False, timeout=10) as http:
        return await http.get(path, headers={"hx-request": "true"} if htmx else None)


async def rated_game_won_by(api: Api, winner: Guest, loser: Guest, seed: int, base_url: str) -> str:
    game = await api.create_game(winner.token, seat=0, seed=seed, clock=BLITZ_CLOCK, rated=True)
    await api.join(loser.token, game["id"])
    await both_move(base_url, game["id"], seed, (winner.token, loser.token))  # (a game rates once both moved)
    await api.resign(loser.token, game["id"])
    return game["id"]


async def test_a_players_page_after_a_rated_game(api: Api, web_server: LiveServer) -> None:
    anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
    game_id = await rated_game_won_by(api, anna, ben, 51, web_server.url)
    after = dict(zip((anna.id, ben.id), rate_game(DEFAULT, DEFAULT, 1.0), strict=True))
    for me, opponent, result in ((anna, ben, "Won"), (ben, anna, "Lost")):
        html = (await page(web_server, f"/p/{me.id}")).text
        assert f'<h1 id="player-name">{me.name}' in html
        assert f'<td class="r-value">{after[me.id].display}</td>' in section(html, f"rating-{BLITZ}")
        assert f'<td class="r-value">{DEFAULT.display}</td>' in section(html, f"rating-{BULLET}")
        won = "1 / 0 / 0" if me is anna else "0 / 0 / 1"  # won / drawn / lost
        assert f'<td class="r-record">{won}</td>' in section(html, f"rating-{BLITZ}")
        assert '<td class="r-record"></td>' in section(html, f"rating-{BULLET}")  # no games: nothing to count
        history = section(html, f"history-{BLITZ}")
        assert str(round(after[me.id].rating)) in history and f'href="/g/{game_id}"' in history
        row = section(html, f"game-{game_id}")
        assert result in row and f'href="/p/{opponent.id}"' in row and opponent.name in row
        assert f'id="replay-{game_id}"' in row and f'href="/g/{game_id}"' in row
        assert "3+2" in row and "rated" in row and "resignation" in row
        assert "ongoing-none" in html  # nothing going on
    missing = await page(web_server, "/p/gNobodyAtAll")
    assert missing.status_code == 404 and "No such player" in missing.text
    assert (await page(web_server, "/p/..%2Fetc")).status_code == 404


async def test_the_challenge_form_and_private_games(api: Api, web_server: LiveServer, redis_url: str) -> None:
    anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
    own = (await page(web_server, f"/p/{anna.id}", anna)).text
    assert 'id="challenge-form"' not in own and "(you)" in own
    theirs = (await page(web_server, f"/p/{anna.id}", ben)).text
    form = section(theirs, "challenge-form")
    assert 'action="/games"' in form and 'name="private" value="on"' in form
    for value, _label in CLOCK_CHOICES:
        assert f'value="{value}"' in form and (value == "none" or value in CLOCKS)  # the home page's clocks
    anonymous = (await page(web_server, f"/p/{anna.id}")).text
    assert 'id="challenge-form"' not in anonymous and f"/?next=/p/{anna.id}" in anonymous

    async with httpx.AsyncClient(base_url=web_server.url, cookies=cookie_of(ben.token), timeout=10) as http:
        made = await http.post("/games", data={"private": "on", "seat": "random", "ruleset": "coan",
                                               "clock": "3d", "rated": "on"}, headers={"origin": web_server.url})
    assert made.status_code == 303
    room_id = made.headers["location"].rsplit("/g/", 1)[1]
    room = (await page(web_server, f"/g/{room_id}", ben)).text
    assert f'value="{web_server.url}/g/{room_id}"' in room  # the link to send
    r = aioredis.Redis.from_url(redis_url)
    try:
        assert await r.zscore(LOBBY, room_id) is None  # not listed in the lobby
    finally:
        await r.aclose()
    # the waiting challenge: on Ben's own pages, on nobody else's
    assert f"game-{room_id}" in (await page(web_server, f"/p/{ben.id}", ben)).text
    assert f"game-{room_id}" in (await page(web_server, "/me", ben)).text
    assert f"game-{room_id}" not in (await page(web_server, f"/p/{ben.id}", anna)).text
    assert f"game-{room_id}" not in (await page(web_server, f"/p/{ben.id}")).text
    info = await api.game(room_id)
    assert info["room"]["rated"] is True and info["room"]["clock"]["initial_ms"] == 3 * 86_400_000
    # played to the end and played again: the rematch goes by the players' link too, never listed
    await api.join(anna.token, room_id)
    await api.resign(ben.token, room_id)
    await api.rematch(anna.token, room_id)
    rematch_id = (await api.rematch(ben.token, room_id))["id"]
    await api.resign(anna.token, rematch_id)
    await api.rematch(anna.token, rematch_id)
    third_id = (await api.rematch(ben.token, rematch_id))["id"]  # the rematch's rematch (a stored room's)
    assert (await api.game(third_id))["room"]["status"] == "playing"
    r = aioredis.Redis.from_url(redis_url)
    try:
        assert [await r.zscore(LOBBY, game) for game in (rematch_id, third_id)] == [None, None]
    finally:
        await r.aclose()


async def test_my_games_lists_the_games_where_it_is_my_turn_first(api: Api, web_server: LiveServer) -> None:
    anna, ben, cleo = await api.guest(unique("Anna")), await api.guest(unique("Ben")), await api.guest(unique("Cleo"))
    mine = await api.create_game(anna.token, seat=0, seed=52)  # Anna moves first here
    await api.join(cleo.token, mine["id"])
    await asyncio.sleep(0.01)
    theirs = await api.create_game(ben.token, seat=0, seed=53)  # Ben moves first (newer)
    await api.join(anna.token, theirs["id"])
    finished = await rated_game_won_by(api, anna, ben, 54, web_server.url)

    assert (await page(web_server, "/me")).headers["location"] == "/?next=/me"
    html = (await page(web_server, "/me", anna)).text
    ongoing = section(html, "ongoing")
    assert ongoing.index(f'id="game-{mine["id"]}"') < ongoing.index(f'id="game-{theirs["id"]}"')
    first = section(html, f"game-{mine['id']}")
    assert "your-turn" in first and "Your turn" in first and cleo.name in first
    second = section(html, f"game-{theirs['id']}")
    assert "your-turn" not in second and "Their turn" in second
    assert 'id="your-turn-count">1 your turn' in html
    assert f'id="game-{finished}"' in section(html, "finished") and "Won" in section(html, f"game-{finished}")
    assert 'hx-get="/me/ongoing"' in html and 'hx-trigger="every 30s"' in html
    assert 'href="/me"' in html  # in the site header
    fragment = await page(web_server, "/me/ongoing", anna, htmx=True)
    assert fragment.text.startswith('<section class="card wide" id="my-ongoing"') and mine["id"] in fragment.text
    assert (await page(web_server, "/me/ongoing", htmx=True)).status_code == 401
    assert (await page(web_server, "/me/ongoing", anna)).headers["location"] == "/me"  # opened as a page
    # Cleo's list shows the same game as Anna's turn
    html = (await page(web_server, "/me", cleo)).text
    assert "Their turn" in section(html, f"game-{mine['id']}")
    # every page's header counts the games that wait for the visitor's move (Anna: one; Cleo: none)
    header = (await page(web_server, "/ratings", anna)).text.split("</header>")[0]
    assert '<span aria-hidden="true">1</span>' in header and "(1 game waits for your move)" in header
    assert 'id="nav-turns"' not in (await page(web_server, "/ratings", cleo)).text
    # ... but for the game a page shows (its page says whose turn it is; the count went stale)
    assert 'id="nav-turns"' not in (await page(web_server, f"/g/{mine['id']}", anna)).text.split("</header>")[0]
    assert '<span aria-hidden="true">1</span>' in (await page(web_server, f"/g/{theirs['id']}", anna)).text
    # Anna's page, seen by Cleo or by nobody signed in: whose turn by name, no "Play"
    for visitor in (cleo, None):
        row = section((await page(web_server, f"/p/{anna.id}", visitor)).text, f"game-{mine['id']}")
        assert f"{anna.name} to move" in row and "Your turn" not in row and "your-turn" not in row
        assert f'id="open-{mine["id"]}">Open<' in row


async def test_the_ratings_page_lists_established_players_best_first(web_server: LiveServer, redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    try:
        players, ratings = Players(client), Ratings(client)
        strong, weak, newcomer = ("g" + secrets.token_hex(5) for _ in range(3))
        names = {strong: unique("Ursa"), weak: unique("Vera"), newcomer: unique("Nils")}  # no word the pages say (tests/web/test_i18n.py)
        for pid, name in names.items():
            await players.register(pid, name)
        now = time.time_ns() // 1_000_000
        for i in range(20):  # two of three won: enough close games for both to be established
            await ratings.apply_result(f"lb{secrets.token_hex(6)}", BULLET, (strong, weak), 1.0 if i % 3 else 0.0, now)
        await ratings.apply_result(f"lb{secrets.token_hex(6)}", BULLET, (newcomer, weak), 1.0, now)
        found = await ratings.ratings_many([strong, weak, newcomer])
    finally:
        await client.aclose()
    assert not found[strong][BULLET].provisional and not found[weak][BULLET].provisional
    html = (await page(web_server, "/ratings")).text
    board = section(html, f"leaders-{BULLET}")
    assert board.index(names[strong]) < board.index(names[weak])
    assert f'href="/p/{strong}"' in board and found[strong][BULLET].display in board
    assert re.search(rf'id="leader-{BULLET}-{strong}"><th scope="row">\d+</th>', board)  # the rank heads its row
    assert names[newcomer] not in html  # provisional: not listed
    for category in ("blitz", "rapid", "correspondence"):
        assert f'id="board-{category}"' in html


async def test_a_rated_room_shows_the_ratings_beside_the_names(api: Api, web_server: LiveServer) -> None:
    anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
    await rated_game_won_by(api, anna, ben, 55, web_server.url)
    game = await api.create_game(anna.token, seat=0, seed=56, clock=BLITZ_CLOCK, rated=True)
    await api.join(ben.token, game["id"])
    new_anna, new_ben = rate_game(DEFAULT, DEFAULT, 1.0)
    html = (await page(web_server, f"/g/{game['id']}", ben)).text
    name0, name1 = section(html, "name-0"), section(html, "name-1")
    assert f'<a href="/p/{anna.id}">{anna.name}</a> <span class="rating">({new_anna.display})</span>' in name0
    assert f'<a href="/p/{ben.id}">{ben.name}</a> <span class="rating">({new_ben.display})</span>' in name1
    casual = await api.create_game(anna.token, seat=0, seed=57, clock=BLITZ_CLOCK)
    await api.join(ben.token, casual["id"])
    html = (await page(web_server, f"/g/{casual['id']}", ben)).text
    assert 'class="rating"' not in section(html, "players") and f'href="/p/{anna.id}"' in html


async def test_older_finished_games_are_a_link_away(api: Api, web_server: LiveServer) -> None:
    """A page shows the newest 20 finished games; "Older games" leads to the next ones (an outside
    probe could not reach games beyond the newest 20), "Newest games" back."""
    anna = await api.guest(unique("Anna"))
    ended = await finished_games(api, anna, 21)
    for path, visitor in ((f"/p/{anna.id}", None), ("/me", anna)):
        first = (await page(web_server, path, visitor)).text
        assert ended[-1] in first and ended[1] in first and ended[0] not in first
        older = re.search(r'href="\?before=([0-9A-Za-z._-]+)#[a-z-]+" id="finished-older"', first)
        assert older is not None and 'id="finished-newest"' not in first, path
        second = (await page(web_server, f"{path}?before={older.group(1)}", visitor)).text
        assert ended[0] in second and ended[1] not in second
        assert 'id="finished-older"' not in second and 'id="finished-newest"' in second


async def test_a_rated_game_s_cards_say_what_it_did_to_the_ratings(api: Api, web_server: LiveServer) -> None:
    """An outside probe saw "(1500?)" beside both names after a rated game until a reload, and
    never the change: a watching socket gets the cards with each new rating and its change once
    the result is applied, and the page of the finished game shows them."""
    anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
    game = await api.create_game(anna.token, seat=0, seed=58, clock=BLITZ_CLOCK, rated=True)
    await api.join(ben.token, game["id"])
    await both_move(web_server.url, game["id"], 58, (anna.token, ben.token))
    ws_url = web_server.url.replace("http", "ws", 1) + f"/g/{game['id']}/ws"
    lost, won = rate_game(DEFAULT, DEFAULT, 0.0)  # Anna resigns
    anna_said = f"({lost.display}, \u2212{round(DEFAULT.rating - lost.rating)})"
    ben_said = f"({won.display}, +{round(won.rating - DEFAULT.rating)})"
    async with connect(ws_url, origin=web_server.url, open_timeout=10) as ws:
        await api.resign(anna.token, game["id"])
        frames: list[str] = []
        deadline = time.monotonic() + 10
        while not any(anna_said in f and ben_said in f for f in frames):
            assert time.monotonic() < deadline, [f[:200] for f in frames if 'id="players"' in f]
            frames.append(await asyncio.wait_for(ws.recv(), 10))
    html = (await page(web_server, f"/g/{game['id']}")).text
    assert anna_said in section(html, "players") and ben_said in section(html, "players")
