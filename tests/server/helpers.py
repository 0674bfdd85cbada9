"""Helpers for server tests: seeded games mirrored by a local engine Duel ("the referee")."""

from __future__ import annotations

import random
from typing import Any

from engine import SPECTATOR, Duel, Explore, Mark, Move, event_to_data, visible_to
from server.client import Api, GameSocket, Guest
from tests.names import unique


def referee(seed: int, ruleset: str = "brettspielnetz") -> Duel:
    """The same game the server creates for ``seed`` (seat 0 moves first)."""
    return Duel.new(random.Random(seed), ruleset, first=0)


def pick_move(duel: Duel, rng: random.Random) -> Move:
    """An omniscient but varied strategy: mostly correct marks and safe explores, some hits
    and some wrong marks (the one secret), so every rule shows up in a short game."""
    seat = duel.to_move
    hidden = [c for c in duel.geo.cells if duel.is_hidden(c)]
    cell = rng.choice(hidden)
    if cell in duel.setup.mines:
        return Explore(cell) if rng.random() < 0.2 else Mark(cell)
    if rng.random() < 0.1 and cell not in duel.wrong_marks[seat]:
        return Mark(cell)
    return Explore(cell)


def wire_move(move: Move) -> tuple[str, tuple[int, int]]:
    return ("explore" if isinstance(move, Explore) else "mark", move.cell)  # type: ignore[union-attr]


async def seated_game(api: Api, seed: int | None, **create: Any) -> tuple[str, Guest, Guest]:
    """A game with Anna on seat 0 and Ben on seat 1; returns (id, anna, ben)."""
    anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
    game = await api.create_game(anna.token, seat=0, seed=seed, **create)
    joined = await api.join(ben.token, game["id"])
    assert joined["seat"] == 1
    return game["id"], anna, ben


async def both_move(base_url: str, game_id: str, seed: int, tokens: tuple[str, str]) -> Duel:
    """A safe explore of each seat in turn over its socket (``seed``'s game, both seats taken,
    nobody moved yet): a game both have moved in, which a rated game must be to count. Returns
    the referee after the two moves."""
    duel = referee(seed)
    for seat, token in enumerate(tokens):
        cell = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
        duel.apply(seat, Explore(cell))
        async with await GameSocket.connect(base_url, game_id, token) as ws:
            v = (await ws.next())["v"]
            await ws.move("explore", cell)
            await ws.until_version(v + 1)
    return duel


async def three_sockets(game_id: str, anna: Guest, ben: Guest, seat0_url: str, seat1_url: str | None = None,
                        spectator_url: str | None = None) -> dict[int, GameSocket]:
    """Anna (seat 0), Ben (seat 1) and a spectator connected to ``game_id``, each to its own
    server URL if given (else seat 0's); their first frame (the snapshot) is left unread."""
    return {0: await GameSocket.connect(seat0_url, game_id, anna.token),
            1: await GameSocket.connect(seat1_url or seat0_url, game_id, ben.token),
            SPECTATOR: await GameSocket.connect(spectator_url or seat0_url, game_id)}


def assert_frame_matches(frame: dict[str, Any], duel: Duel, viewer: int, events: list[Any]) -> None:
    """An update frame carries exactly the viewer's events and leads to the engine's view."""
    expected = [event_to_data(e) for e in events if visible_to(e, viewer)]
    assert frame["events"] == expected


def assert_view(sock: GameSocket, duel: Duel, viewer: int) -> None:
    assert sock.view is not None
    assert sock.view == duel.view(viewer), f"viewer {viewer} diverged from the engine"
    if viewer == SPECTATOR or duel.outcome is None:
        # nothing secret: no other seat's wrong marks, no layout, no salt before the end
        assert sock.view.to_data() == duel.view(viewer).to_data()


async def finished_games(api: Api, player: Guest, count: int) -> list[str]:
    """``count`` games of ``player``'s, each against a new guest who resigns it: their ids, oldest first."""
    ended = []
    for _ in range(count):
        opponent = await api.guest(unique("Ben"))
        game = await api.create_game(player.token, seat=0)
        await api.join(opponent.token, game["id"])
        await api.resign(opponent.token, game["id"])
        ended.append(game["id"])
    return ended
