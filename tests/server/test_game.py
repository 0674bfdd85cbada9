"""Two players and a spectator play whole games over websockets; every frame is checked
against a local engine Duel built from the same seed (the referee)."""

from __future__ import annotations

import random

import pytest

from engine import SPECTATOR, verify
from server.client import ApiError, GameSocket
from tests.names import unique

from .helpers import assert_frame_matches, assert_view, pick_move, referee, seated_game, three_sockets, wire_move

MAX_MOVES = 200  # a duel has at most 121 cells


async def play_out(socks: dict[int, GameSocket], duel, rng: random.Random) -> None:
    """Play the referee's moves through the sockets until the end, checking every frame."""
    for _ in range(MAX_MOVES):
        if duel.outcome is not None:
            return
        seat = duel.to_move
        move = pick_move(duel, rng)
        action, cell = wire_move(move)
        await socks[seat].move(action, cell)
        events = duel.apply(seat, move)
        for viewer, sock in socks.items():
            frame = await sock.until(lambda f: f["t"] == "update")
            assert frame["v"] == sock.v
            assert_frame_matches(frame, duel, viewer, events)
            assert_view(sock, duel, viewer)
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("seed,ruleset", [(1, "brettspielnetz"), (2, "coan"), (7, "brettspielnetz")])
async def test_full_game_two_players_and_a_spectator(api, live_server, seed, ruleset):
    game_id, anna, ben = await seated_game(api, seed, ruleset=ruleset)
    duel = referee(seed, ruleset)
    socks = await three_sockets(game_id, anna, ben, live_server.url)
    try:
        for viewer, sock in socks.items():
            first = await sock.next()
            assert first["t"] == "snapshot" and first["you"] == viewer and first["v"] == 2
            assert first["room"]["status"] == "playing"
            assert_view(sock, duel, viewer)
        await play_out(socks, duel, random.Random(seed))
        final = {viewer: sock.view for viewer, sock in socks.items()}
        assert all(v.outcome == duel.outcome for v in final.values())
        assert socks[SPECTATOR].room["status"] == "over"
    finally:
        for sock in socks.values():
            await sock.close()

    record = await api.record(game_id)
    assert verify(record["commitment"], record["width"], record["height"],
                  [tuple(m) for m in record["mines"]], record["salt"])
    assert sorted(map(tuple, record["mines"])) == sorted(duel.setup.mines)
    assert len(record["moves"]) == len(duel.log)


async def test_record_is_refused_before_the_end_and_views_hide_secrets(api):
    game_id, anna, _ben = await seated_game(api, 11)
    with pytest.raises(ApiError) as err:
        await api.record(game_id)
    assert err.value.status == 409 and err.value.code == "not_over"
    spectator = await api.game(game_id)
    assert spectator["you"] == SPECTATOR and spectator["view"]["mines"] is None and spectator["view"]["salt"] is None
    assert spectator["commitment"] == referee(11).commitment
    mine = await api.game(game_id, anna.token)
    assert mine["you"] == 0


async def test_wrong_mark_stays_secret_until_the_end(api, live_server):
    seed = 5
    game_id, anna, ben = await seated_game(api, seed)
    duel = referee(seed)
    safe = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
    socks = await three_sockets(game_id, anna, ben, live_server.url)
    try:
        for sock in socks.values():
            await sock.next()
        await socks[0].move("mark", safe)
        frames = {viewer: await sock.until(lambda f: f["t"] == "update") for viewer, sock in socks.items()}
        r, c = safe
        assert socks[0].view.rows[r][c] == "x"
        for viewer in (1, SPECTATOR):
            assert socks[viewer].view.rows[r][c] == "."
            assert all((x, y) != safe for x, y, _ch in frames[viewer]["diff"]["cells"])
            assert frames[viewer]["events"][0]["cell"] is None
            assert all(e["t"] != "wrong_mark_placed" for e in frames[viewer]["events"])
        # Ben resigns: now everybody sees the wrong mark and the layout
        await socks[1].resign()
        for sock in socks.values():
            await sock.until(lambda f: f["t"] == "update" and f["room"]["status"] == "over")
        assert socks[SPECTATOR].view.wrong_marks[0] == (safe,)
        assert socks[SPECTATOR].view.outcome.winner == 0
    finally:
        for sock in socks.values():
            await sock.close()


async def test_rematch_swaps_seats(api, live_server):
    game_id, anna, ben = await seated_game(api, 3)
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as a:
        await a.next()
        with pytest.raises(ApiError) as err:
            await api.rematch(anna.token, game_id)
        assert err.value.code == "not_over"
        await a.resign()
        await a.until(lambda f: f["t"] == "update" and f["room"]["status"] == "over")
        offer = await api.rematch(ben.token, game_id)  # Ben offers; Anna sees the offer
        assert offer["id"] == game_id and offer["offered"] is True
        frame = await a.until(lambda f: f["t"] == "update" and f["room"]["rematch_offer"] is not None)
        assert frame["room"]["rematch_offer"] == 1 and frame["room"]["rematch"] is None
        await api.decline_rematch(anna.token, game_id)  # declined: no game is made
        frame = await a.until(lambda f: f["t"] == "update" and f["room"]["rematch_offer"] is None)
        assert frame["room"]["rematch"] is None
        await api.rematch(ben.token, game_id)  # offered again, and accepted
        again = await api.rematch(anna.token, game_id)
        frame = await a.until(lambda f: f["t"] == "update" and f["room"]["rematch"] is not None)
        assert frame["room"]["rematch"] == again["id"]
    assert again["seat"] == 1
    assert (await api.rematch(ben.token, game_id))["id"] == again["id"]  # idempotent
    fresh = await api.game(again["id"], anna.token)
    assert fresh["you"] == 1 and fresh["room"]["status"] == "playing"


async def test_sockets_that_ask_to_follow_are_moved_to_the_rematch(api, live_server):
    """``?follow=rematch``: after the update that links the rematch, each such socket gets the
    new game's snapshot (a player's new seat, a spectator still a spectator), its moves act on
    the new game, and the rematch of that one is followed too. A socket that did not ask stays."""
    game_id, anna, ben = await seated_game(api, 3)
    a = await GameSocket.connect(live_server.url, game_id, anna.token, follow=True)
    b = await GameSocket.connect(live_server.url, game_id, ben.token, follow=True)
    watcher = await GameSocket.connect(live_server.url, game_id, follow=True)
    stays = await GameSocket.connect(live_server.url, game_id)
    socks = (a, b, watcher, stays)
    try:
        assert a.follows and watcher.follows and not stays.follows
        for sock in socks:
            await sock.until(lambda f: f["t"] == "snapshot")
        await a.resign()
        await a.until(lambda f: f["t"] == "update" and f["room"]["status"] == "over")
        await api.rematch(ben.token, game_id)
        fresh = await api.rematch(anna.token, game_id)
        for sock, seat in ((a, 1), (b, 0), (watcher, SPECTATOR)):
            await sock.until(lambda f: f["t"] == "update" and f["room"]["rematch"] == fresh["id"])
            frame = await sock.until(lambda f: f["t"] == "snapshot")
            assert frame["room"]["id"] == fresh["id"] and frame["you"] == seat and frame["v"] == fresh["v"]
        await stays.until(lambda f: f["t"] == "update" and f["room"]["rematch"] == fresh["id"])
        counted = await watcher.until(lambda f: f["t"] == "presence")
        assert counted["spectators"] == 1 and counted["away"] == [None, None]
        # Ben is seat 0 now and moves first, on his old socket; everybody following sees it
        await b.move("explore", (0, 0))
        for sock in (a, b, watcher):
            await sock.until_version(fresh["v"] + 1)
            assert sock.room["id"] == fresh["id"]
        with pytest.raises(TimeoutError):  # the socket that stayed is on the old game
            await stays.until(lambda f: f["t"] == "update", timeout_s=0.5)
        await b.resign()  # and the rematch's rematch is followed too
        await b.until(lambda f: f["t"] == "update" and f["room"]["status"] == "over")
        await api.rematch(anna.token, fresh["id"])
        third = await api.rematch(ben.token, fresh["id"])
        frame = await a.until(lambda f: f["t"] == "snapshot" and f["room"]["id"] == third["id"])
        assert frame["you"] == 0
    finally:
        for sock in socks:
            await sock.close()


async def test_the_rematch_is_offered_declined_and_accepted_on_the_socket(api, live_server):
    """The socket's ``rematch`` and ``decline_rematch`` frames do what the HTTP calls do; the
    updates tell what happened, refusals are error frames, and a following socket is moved."""
    game_id, anna, ben = await seated_game(api, 3)
    a = await GameSocket.connect(live_server.url, game_id, anna.token, follow=True)
    b = await GameSocket.connect(live_server.url, game_id, ben.token, follow=True)
    watcher = await GameSocket.connect(live_server.url, game_id)
    socks = (a, b, watcher)
    try:
        for sock in socks:
            await sock.until(lambda f: f["t"] == "snapshot")
        await b.rematch()
        assert (await b.until(lambda f: f["t"] == "error"))["code"] == "not_over"
        await a.resign()
        over = await a.until(lambda f: f["t"] == "update" and f["room"]["status"] == "over")
        await watcher.rematch()
        assert (await watcher.until(lambda f: f["t"] == "error"))["code"] == "spectator"
        await a.decline_rematch()  # no offer to decline: nothing changes
        await b.rematch()  # Ben (seat 1) offers; Anna declines it
        frame = await a.until(lambda f: f["t"] in ("update", "error"))
        assert frame["t"] == "update" and frame["v"] == over["v"] + 1 and frame["room"]["rematch_offer"] == 1
        await a.decline_rematch()
        frame = await b.until(lambda f: f["t"] == "update" and f["room"]["rematch_declined"] is not None)
        assert frame["room"]["rematch_declined"] == 0 and frame["room"]["rematch_offer"] is None
        await a.rematch()  # Anna offers now; Ben accepts it
        await b.until(lambda f: f["t"] == "update" and f["room"]["rematch_offer"] == 0)
        await b.rematch()
        linked = await watcher.until(lambda f: f["t"] == "update" and f["room"]["rematch"] is not None)
        fresh_id = linked["room"]["rematch"]
        for sock, seat in ((a, 1), (b, 0)):
            frame = await sock.until(lambda f: f["t"] == "snapshot")
            assert frame["room"]["id"] == fresh_id and frame["you"] == seat
        assert (await api.game(fresh_id, ben.token))["you"] == 0
    finally:
        for sock in socks:
            await sock.close()


async def test_a_socket_that_follows_a_game_already_linked_moves_at_once(api, live_server):
    game_id, anna, ben = await seated_game(api, 3)
    await api.resign(anna.token, game_id)
    await api.rematch(ben.token, game_id)
    fresh = await api.rematch(anna.token, game_id)
    async with await GameSocket.connect(live_server.url, game_id, ben.token, follow=True) as late:
        first = await late.until(lambda f: f["t"] == "snapshot")
        assert first["room"]["id"] == game_id and first["room"]["rematch"] == fresh["id"]
        moved = await late.until(lambda f: f["t"] == "snapshot")
        assert moved["room"]["id"] == fresh["id"] and moved["you"] == 0


async def test_names_are_unique_and_a_rename_shows_in_new_games(api):
    name = unique("Anna")
    anna = await api.guest(name)
    with pytest.raises(ApiError) as taken:
        await api.guest(name.lower())
    assert taken.value.status == 409 and taken.value.code == "name_taken"
    for reserved in ("Computer (mittel)", "C0mputer (easy)", "Spieler 2"):  # the server's own Players
        with pytest.raises(ApiError) as theirs:
            await api.guest(reserved)
        assert theirs.value.code == "name_taken"
    with pytest.raises(ApiError) as mixed:  # a Cyrillic о among Latin letters: no name at all
        await api.guest("C\u043emputer (easy)")
    assert mixed.value.code == "bad_field"
    renamed = await api.rename(anna.token, name + "x")
    assert (renamed.id, renamed.name) == (anna.id, name + "x")
    ben = await api.guest(unique("Ben"))
    with pytest.raises(ApiError) as clash:
        await api.rename(ben.token, name + "X")
    assert clash.value.status == 409
    game = await api.create_game(anna.token, seat=0)  # the old token: same guest, current name
    assert game["room"]["players"][0] == {"id": anna.id, "name": name + "x"}
