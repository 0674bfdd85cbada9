"""A finished game's snapshot and the replay step a page shows (pure): the first end snapshot
a page gets brings the final position; later ones (a rematch offer, a reconnect of a page served
finished) leave the step's areas alone and bring the rest."""

from __future__ import annotations

import asyncio

from engine import SPECTATOR, Explore, Resign
from server.edge.browser_session import BrowserConn
from server.web.html_codec import HtmlCodec
from server.web.html_frames import REPLAY_MARK, keeping_step

from .test_render import after, new_room, safe_far_cell


def test_a_page_that_shows_the_end_keeps_its_step() -> None:
    codec = HtmlCodec()
    room = new_room()
    moved, _ = after(room, 0, Explore(safe_far_cell(room.game)))  # a move to replay
    over, _ = after(moved, 1, Resign())
    full = codec.snapshot(over, SPECTATOR)
    assert REPLAY_MARK in full and codec.snapshot(room, SPECTATOR).count(REPLAY_MARK) == 0
    kept = keeping_step(full)
    for area in ("board", "moves", "mines-left", "endgame", "replay"):
        assert f'id="{area}"' in full and f'id="{area}"' not in kept, area
    for area in ("status", "players", "fair", "seen-v", "rematch-area"):
        assert f'id="{area}"' in kept, area
    assert keeping_step("<p id='notice'></p>") == "<p id='notice'></p>"

    sent: list[str] = []

    async def send(frame: str) -> None:
        sent.append(frame)

    async def nothing(*_args) -> None:
        return None

    async def run(shows_end: bool) -> list[str]:
        sent.clear()
        conn = BrowserConn(codec, SPECTATOR, "html", None, send, nothing, maxsize=8)
        conn.shows_end = shows_end
        conn.send(full)
        conn.send(full)
        await conn.finish(asyncio.create_task(conn.run()))
        return list(sent)

    live = asyncio.run(run(False))  # the game ended under the page: the final position, once
    assert live == [full, kept]
    served = asyncio.run(run(True))  # the page was served finished (?at=3): its step stays
    assert served == [kept, kept]
