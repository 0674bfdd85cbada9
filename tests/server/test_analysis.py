"""A finished duel's analysis over HTTP, in-process on the real Valkey: nothing before the end
(API, page fragments, the key), the API's shape and figures (the engine's, for the seeded
game), stored once with the room's retention, computed once per game."""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
import redis

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from engine import Duel, Explore, Mark, Resign
from engine.analysis import analyze_game
from engine.bots import bot_move
from server.app import create_app
from server.core.commands import OfferRematch, Play
from server.store.keys import analysis_key, state_key
from tests.conftest import app_settings
from tests.names import unique

SEED = 4242
TTL_S = 3600


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="analysis-test", test_hooks=True, finished_ttl_s=TTL_S)
    with TestClient(create_app(settings), base_url="http://testserver", follow_redirects=False) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def kv(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def planned(seed: int) -> Duel:
    """The seeded game, played to its end by the engine's bots (easy against strong: guesses,
    hits and wrong marks)."""
    rng = random.Random(seed)
    duel = Duel.new(random.Random(seed), "brettspielnetz", first=0)
    while duel.outcome is None:
        seat = duel.to_move
        duel.apply(seat, bot_move(duel.view(seat), (1, 3)[seat], rng))
    return duel


def new_game(client: TestClient, seed: int) -> tuple[str, list[Any]]:
    """A seeded game between two new guests: its id and both seats' players."""
    tokens = [client.post("/api/v1/guests", json={"name": unique(n)}).json()["token"] for n in ("Anna", "Ben")]
    game = client.post("/api/v1/games", json={"seat": 0, "seed": seed},
                       headers={"authorization": f"Bearer {tokens[0]}"}).json()
    assert client.post(f"/api/v1/games/{game['id']}/join", headers={"authorization": f"Bearer {tokens[1]}"}).json()[
        "seat"] == 1
    auth = client.app.state.auth
    return game["id"], [auth.resolve(t) for t in tokens]


def play(client: TestClient, room_id: str, players: list[Any], moves: list[tuple[int, Any]]) -> None:
    rooms = client.app.state.rooms
    for seat, move in moves:
        client.portal.call(rooms.act, room_id, players[seat], Play(move), None)


def nothing_before_the_end(client: TestClient, kv: redis.Redis, room_id: str) -> None:
    answer = client.get(f"/api/v1/games/{room_id}/analysis")
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "not_over"
    hx = {"hx-request": "true"}
    for url in (f"/g/{room_id}/replay?at=1&odds=1", f"/g/{room_id}/replay?at=1", f"/g/{room_id}/odds?at=1"):
        page = client.get(url, headers=hx)
        assert page.status_code == 409
        assert 'id="odds' not in page.text
    page = client.get(f"/g/{room_id}?at=1&odds=1").text  # the live page: no odds anywhere
    assert 'id="odds' not in page and "odds-p" not in page
    assert kv.exists(analysis_key(room_id)) == 0


def test_the_analysis_exists_only_after_the_end_and_is_the_engines(client: TestClient, kv: redis.Redis) -> None:
    duel = planned(SEED)
    room_id, players = new_game(client, SEED)
    nothing_before_the_end(client, kv, room_id)
    play(client, room_id, players, duel.log[:-1])
    nothing_before_the_end(client, kv, room_id)
    analyses = client.app.state.rooms.analyses
    before = analyses.computed
    play(client, room_id, players, duel.log[-1:])

    answer = client.get(f"/api/v1/games/{room_id}/analysis")
    assert answer.status_code == 200
    data = answer.json()
    assert data == analyze_game(duel.setup, duel.log).to_data()
    assert [m["number"] for m in data["moves"]] == [ln.number for ln in duel.lines]
    move = data["moves"][0]
    assert set(move) >= {"number", "seat", "action", "cell", "p_mine", "p_min", "safest", "certain",
                         "expected_points", "points"}
    assert all(isinstance(m["p_mine"], float) and isinstance(m["safest"], bool) for m in data["moves"])
    assert [set(p) >= {"safest_share", "excess_risk", "luck"} for p in data["players"]] == [True, True]

    # stored once, in the room's slot, expiring with the room; later reads compute nothing
    stored = kv.get(analysis_key(room_id))
    assert msgpack.unpackb(stored)["moves"] == data["moves"]
    assert 0 < kv.ttl(analysis_key(room_id)) <= kv.ttl(state_key(room_id)) <= TTL_S
    for _ in range(3):
        assert client.get(f"/api/v1/games/{room_id}/analysis").json() == data
    assert analyses.computed == before + 1
    assert kv.get(analysis_key(room_id)) == stored
    # a later commit of the room (a rematch offer) renews its retention, the analysis's too
    kv.expire(analysis_key(room_id), 60)
    kv.expire(state_key(room_id), 60)
    client.portal.call(client.app.state.rooms.act, room_id, players[0], OfferRematch(), None)
    assert kv.ttl(analysis_key(room_id)) > 60 and kv.ttl(state_key(room_id)) > 60


def test_unknown_games_and_classic_games(client: TestClient) -> None:
    answer = client.get("/api/v1/games/nosuchgame/analysis")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_room"
    token = client.post("/api/v1/guests", json={"name": unique("Solo")}).json()["token"]
    auth = {"authorization": f"Bearer {token}"}
    solo = client.post("/api/v1/solo", json={"preset": "beginner"}, headers=auth).json()
    assert client.post(f"/api/v1/games/{solo['id']}/resign", headers=auth).status_code == 200
    answer = client.get(f"/api/v1/games/{solo['id']}/analysis")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "no_analysis"


def test_a_resigned_game_is_analysed_too(client: TestClient, kv: redis.Redis) -> None:
    duel = planned(SEED + 1)
    room_id, players = new_game(client, SEED + 1)
    moves = [(s, m) for s, m in duel.log[:6] if isinstance(m, (Explore, Mark))]
    play(client, room_id, players, moves)
    client.portal.call(client.app.state.rooms.act, room_id, players[1], Play(Resign()), None)
    data = client.get(f"/api/v1/games/{room_id}/analysis").json()
    assert len(data["moves"]) == len(moves)
    assert data == analyze_game(duel.setup, [*moves, (1, Resign())]).to_data()
