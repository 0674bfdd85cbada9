"""A pair is taken only once its answer went to a client still there: the API's answer
(:class:`server.edge.api_pairing.PairedAnswer`) and the pairing socket
(:func:`server.edge.ws_pair._seek_while_open`), driven with the real pairing service of two
"processes" on the real Valkey and a client stood in for by its ASGI ``receive``/``send`` (or a
socket's ``receive``), so the client leaves exactly as the pair forms. Either the answer reaches
a client still there and the pair is taken (the next seek starts afresh), or the pair waits for
the player's next seek: never neither, never both."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from engine import SPECTATOR
from server.core.pools import Pool
from server.core.room import Player
from server.edge import ws_pair
from server.edge.api_pairing import PairedAnswer, client_left
from server.store.seek_ends import Paired, Unpaired
from tests.conftest import app_settings
from tests.server.store import test_matchmaker
from tests.server.store.test_matchmaker import (
    CASUAL,
    RATED,
    Process,
    Start,
    guest,
    until,
    until_waiting,
)

processes = test_matchmaker.processes
"""The store tests' fixture: pairing services of two "processes" on one test tag."""


async def paired_pair(x: Process, y: Process) -> tuple[Player, Paired, Paired]:
    """Anna waits on ``x``, Ben pairs her from ``y``: Anna, her answer, his (Ben told)."""
    anna, _ben, annas, bens = await test_matchmaker.paired_across(x, y)
    assert await y.pairing.told(bens)
    return anna, annas, bens


SETTLE_S = 0.05


class Client:
    """An HTTP client as the ASGI app sees it: what was sent to it, and when it leaves:
    ``"before"`` the answer (``receive`` answers ``http.disconnect`` at once), ``"on_answer"``
    (it gives up as the answer's body arrives, unread: the probe's case) or ``"never"``."""

    def __init__(self, leaves: str) -> None:
        self.leaves = leaves
        self.sent: list[dict[str, Any]] = []
        self.answered = asyncio.Event()
        self.waiting = 0

    async def receive(self) -> dict[str, Any]:
        self.waiting += 1
        try:
            if self.leaves == "on_answer":
                await self.answered.wait()
            elif self.leaves == "never":
                await asyncio.Event().wait()
        finally:
            self.waiting -= 1
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body" and message.get("body"):
            self.answered.set()

    async def ask(self, answer: PairedAnswer) -> None:
        await answer({"type": "http"}, self.receive, self.send)


async def test_client_left_watches_within_its_time() -> None:
    assert await client_left(Client("before").receive, SETTLE_S) is True
    there = Client("never")
    assert await client_left(there.receive, SETTLE_S) is False
    assert there.waiting == 0  # its receive was stopped


async def test_an_answer_to_a_client_still_there_takes_the_pair(processes: Start) -> None:
    x, y = await processes(), await processes()
    anna, annas, _bens = await paired_pair(x, y)
    client = Client("never")
    await client.ask(PairedAnswer(annas, CASUAL, x.pairing, SETTLE_S))
    assert [m["type"] for m in client.sent] == ["http.response.start", "http.response.body", "http.response.body"]
    assert client.sent[1]["more_body"] is True and client.sent[2].get("more_body", False) is False
    assert b'"game"' in client.sent[1]["body"] and client.waiting == 0
    assert await x.pairing.seek(anna, RATED, 0.2) is Unpaired.TIMED_OUT  # taken: never handed again


@pytest.mark.parametrize("leaves", ["before", "on_answer"])
async def test_an_answer_to_a_client_that_left_leaves_the_pair(processes: Start, leaves: str) -> None:
    """The probe's lost pair: the answer is written after the client closed the request (the
    server drops it), or the client gives up as it arrives. Her next seek, of another pool,
    is that game, with "earlier"."""
    x, y = await processes(), await processes()
    anna, annas, bens = await paired_pair(x, y)
    await Client(leaves).ask(PairedAnswer(annas, CASUAL, x.pairing, SETTLE_S))
    handed = await x.pairing.seek(anna, RATED, 1)
    assert handed == annas and handed.room_id == bens.room_id
    answered = Client("on_answer")
    await answered.ask(PairedAnswer(handed, RATED, x.pairing, SETTLE_S))  # gone again: handed again
    assert b'"earlier":true' in answered.sent[1]["body"]
    assert await x.pairing.seek(anna, RATED, 1) == handed
    answered = Client("never")
    await answered.ask(PairedAnswer(handed, RATED, x.pairing, SETTLE_S))
    assert await x.pairing.seek(anna, RATED, 0.2) is Unpaired.TIMED_OUT  # handed once it arrived, not twice


# ---------------------------------------------------------------------- the pairing socket


class Page:
    """A pairing socket's page: ``receive`` waits at ``gate`` (None: forever), then the page
    has gone."""

    def __init__(self, state: Any, gate: asyncio.Event | None) -> None:
        self.app = SimpleNamespace(state=state)
        self.gate = gate

    async def receive(self) -> dict[str, Any]:
        await (self.gate or asyncio.Event()).wait()
        return {"type": "websocket.disconnect", "code": 1001}


class Box:
    """The socket's outbox: the frames queued for the page."""

    viewer = SPECTATOR
    closed = False

    def __init__(self) -> None:
        self.frames: list[str] = []

    def send(self, frame: str) -> bool:
        self.frames.append(frame)
        return True

    def close(self, code: int, reason: str = "", after_frames: bool = False) -> None:
        self.closed = True


@pytest.fixture
def plain_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's elements as their names: no templates needed."""
    monkeypatch.setattr(ws_pair, "web_of", lambda _conn: None)
    monkeypatch.setattr(ws_pair, "_render", lambda _web, part, **context: f"{part}:{context.get('game', '')}")


def held_seek(process: Process, returned: asyncio.Event, gate: asyncio.Event) -> None:
    """``process``'s seek returns only at ``gate``, once its answer is ready (``returned``)."""
    seek = process.pairing.seek

    async def held(player: Player, pool: Pool, wait_s: float | None = 30.0, rating: float | None = None):
        result = await seek(player, pool, wait_s, rating)
        returned.set()
        await gate.wait()
        return result

    process.pairing.seek = held  # type: ignore[method-assign]


async def test_a_socket_closing_as_the_pair_forms_leaves_the_pair(processes: Start, plain_frames: None) -> None:
    """The page goes away at the very moment its seek answers (both wake together): nothing is
    sent, nothing taken; the player's next seek is the game."""
    x, y = await processes(), await processes()
    returned, gate = asyncio.Event(), asyncio.Event()
    held_seek(x, returned, gate)
    page, box = Page(SimpleNamespace(pairing=x.pairing, settings=app_settings()), gate), Box()
    anna, ben = guest("Anna"), guest("Ben")
    socket = asyncio.create_task(ws_pair._seek_while_open(page, box, anna, CASUAL))  # type: ignore[arg-type]
    await until_waiting(x, CASUAL)
    bens = await y.pairing.seek(ben, CASUAL, 5)
    assert isinstance(bens, Paired)
    await until(returned.is_set)
    gate.set()  # the page's disconnect and the seek's answer, in one turn of the loop
    await asyncio.wait_for(socket, 2)
    assert [f for f in box.frames if f != "beat:"] == []  # nothing but heartbeats
    handed = await x.pairing.seek(anna, RATED, 1)  # (still held: the gate is open)
    assert handed == Paired(bens.room_id, 1 - bens.seat, ben, CASUAL)
    assert await x.pairing.told(handed) is True


async def test_a_socket_still_there_lands_and_takes_the_pair(processes: Start, plain_frames: None) -> None:
    x, y = await processes(), await processes()
    page, box = Page(SimpleNamespace(pairing=x.pairing, settings=app_settings()), None), Box()
    anna, ben = guest("Anna"), guest("Ben")
    socket = asyncio.create_task(ws_pair._seek_while_open(page, box, anna, CASUAL))  # type: ignore[arg-type]
    await until_waiting(x, CASUAL)
    bens = await y.pairing.seek(ben, CASUAL, 5)
    assert isinstance(bens, Paired)
    await asyncio.wait_for(socket, 2)
    news = [f for f in box.frames if not f.startswith("beat")]  # (the heartbeat's, stopped before the answer)
    assert news[0] == f"landing:{bens.room_id}" and box.closed
    assert await x.pairing.seek(anna, RATED, 0.2) is Unpaired.TIMED_OUT  # taken as it landed
