"""Playing the computer over the real server: it answers through the same move path as a
person (any process's sweeper plays it), never illegally, and finishes games at every level."""

from __future__ import annotations

import asyncio
import random

import pytest

from engine import verify
from engine.bots import Level, bot_move
from server.client import Api, ApiError, GameSocket
from server.core.computer import NAMES
from tests.names import unique


async def play_against(api, url: str, level: int, seed: int, answers: int = 200) -> GameSocket:
    """A scripted person (the medium bot's choices, from its own view) against the computer,
    until the end or ``answers`` of the computer's; returns the person's socket."""
    me = await api.guest(unique("Solo"))
    game = await api.create_game(me.token, seat=0, seed=seed, computer=level)
    assert game["room"]["players"][1]["id"] == f"@bot{level}" and game["room"]["status"] == "playing"
    sock = await GameSocket.connect(url, game["id"], me.token)
    await sock.until(lambda f: f["t"] == "snapshot")
    presence = await sock.until(lambda f: f["t"] == "presence")
    assert presence["away"] == [None, None]  # the computer plays from the server: never away
    rng = random.Random(seed)
    for _ in range(200):  # a duel has fewer moves than cells; this only bounds the loop
        if sock.view.outcome is not None or answers == 0:
            break
        answers -= sock.view.to_move == 1
        if sock.view.to_move == 0:
            move = bot_move(sock.view, 2, rng)
            await sock.move("explore" if type(move).__name__ == "Explore" else "mark", move.cell)
        await sock.until(lambda f: f["t"] == "update", timeout_s=20)  # the computer answers by itself
    return sock


@pytest.mark.parametrize("level", [1, 3])
async def test_the_computer_answers_at_every_level(api, live_server, level):
    """Each answer after a pause of its own (about a second: the whole game is the next test's)."""
    sock = await play_against(api, live_server.url, level, seed=40 + level, answers=5)
    try:
        assert sock.view.outcome is None and sock.v >= 1 + 10
        assert sock.room["players"][1]["name"] == NAMES[Level(level)]
    finally:
        await sock.close()


@pytest.mark.volume  # about 50 s of the computer's pauses: once per run, not again with the bypasses off
async def test_the_computer_finishes_a_game(api, live_server):
    level = 2
    sock = await play_against(api, live_server.url, level, seed=42)
    try:
        assert sock.view.outcome is not None and sock.view.outcome.termination == "all_mines"
        record = await api.record(sock.room["id"])
        assert verify(record["commitment"], record["width"], record["height"],
                      [tuple(m) for m in record["mines"]], record["salt"])
        bot_moves = [m for m in record["moves"] if m[0] == 1]
        assert bot_moves and all(m[1] in ("explore", "mark") for m in bot_moves)
    finally:
        await sock.close()


async def test_bad_opponents_and_rated_games_against_the_computer_are_refused(api):
    me = await api.guest()
    for opponent in ({"computer": 4}, {"computer": "2"}, {"robot": 1}, "computer"):
        with pytest.raises(ApiError) as bad:
            await api.request("POST", "/api/v1/games", me.token, {"opponent": opponent})
        assert bad.value.code == "bad_field", opponent
    with pytest.raises(ApiError) as rated:
        await api.create_game(me.token, computer=2, rated=True, clock={"initial": 180, "increment": 2})
    assert rated.value.code == "bad_field"
    with pytest.raises(ApiError) as untimed:
        await api.create_game(me.token, rated=True)
    assert untimed.value.code == "bad_field"
    for clock in ({"days": 0}, {"days": 15}, {"days": 1.5}, {"days": 3, "initial": 5}):
        with pytest.raises(ApiError) as bad_days:
            await api.create_game(me.token, clock=clock)
        assert bad_days.value.code == "bad_field", clock
    corr = await api.create_game(me.token, clock={"days": 3}, rated=True)
    assert corr["room"]["rated"] is True and corr["room"]["clock"]["initial_ms"] == 3 * 86_400_000


async def test_the_computer_takes_a_rematch_at_once(api, live_server):
    me = await api.guest()
    game = await api.create_game(me.token, seat=0, computer=1)
    await api.request("POST", f"/api/v1/games/{game['id']}/resign", me.token, {})
    again = await api.rematch(me.token, game["id"])
    assert again["id"] != game["id"] and again["seat"] == 1
    fresh = await api.game(again["id"], me.token)
    assert fresh["room"]["players"][0]["id"] == "@bot1" and fresh["room"]["status"] == "playing"
    async with await GameSocket.connect(live_server.url, again["id"], me.token) as sock:
        await sock.until(lambda f: f["t"] == "snapshot")
        if sock.v == fresh["v"]:  # the computer moves first now, by itself
            await asyncio.wait_for(sock.until(lambda f: f["t"] == "update"), 20)
        assert sock.view.to_move == 1


async def test_another_process_plays_the_computer_when_its_own_dies(start_server):
    """The computer's answer is due work in Redis, not a task of one process: with the process
    that made the game killed, the other one's sweeper answers."""
    first, second = start_server(), start_server()
    async with Api(first.url) as api_first, Api(second.url) as api_second:
        me = await api_first.guest(unique("Solo"))
        game = await api_first.create_game(me.token, seat=0, seed=7, computer=1)
        first.kill()
        async with await GameSocket.connect(second.url, game["id"], me.token) as sock:
            await sock.until(lambda f: f["t"] == "snapshot")
            move = bot_move(sock.view, 2, random.Random(7))
            await sock.move("explore" if type(move).__name__ == "Explore" else "mark", move.cell)
            await sock.until(lambda f: f["t"] == "update")  # mine
            answer = await sock.until(lambda f: f["t"] == "update", timeout_s=20)  # the computer's, from the second
            assert answer["events"][0]["seat"] == 1 and sock.view.to_move == 0
        assert (await api_second.game(game["id"], me.token))["v"] == 3
