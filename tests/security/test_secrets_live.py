"""Secrets never leak, layer (a): whole games through the real server over real sockets.

Each game (seeded through the test hook, mirrored by a referee Duel) is watched by six
websockets — msgpack and browser, for seat 0, seat 1 and a spectator — and played in lock
step: after every move each socket must have received that version. Moves come from random
players and the engine bot through either socket type (msgpack moves, browser quick-mode
clicks, browser resignations), with refused moves in between (wrong turn, spectator moves,
stale versions, selection clicks). At the start, at one random version and at the end, every page and
endpoint is fetched for every viewer: ``GET /g/{id}`` (also with ``?at=``),
``/g/{id}/replay``, ``/api/v1/games/{id}`` (with each token, none, a forged one), the record,
and error answers. Every byte is inspected by :mod:`tests.security.leaks` against the
version it describes; after the end everything must be published and verify.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from typing import Any

import httpx
import msgpack
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from engine import SPECTATOR, Duel, Explore, Mark, Resign, View, verify
from engine.bots import choose_move
from engine.view import patch_data

from .leaks import Inspector, Leak, Truth, expect
from .test_secrets_codecs import write_figures
from .util import COOKIE, form_guest, ws_base

GAMES = 24
CONCURRENT = 4
MAX_MOVES = 200
WAIT_S = 15.0
"""Upper bound of any single wait (a bound, not an expectation)."""
SEEN_V = re.compile(r'id="seen-v" name="v" value="(\d+)"')
MOVE_N = re.compile(r'id="move-(\d+)"')


class Tap:
    """One websocket, read continuously; every frame kept raw with the version it belongs to."""

    def __init__(self, ws: Any, kind: str, viewer: int) -> None:
        self.ws, self.kind, self.viewer = ws, kind, viewer
        self.frames: list[tuple[int, bytes | str]] = []
        self.tag = 0
        self.view: View | None = None
        self._new = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    def _version_of(self, message: bytes | str) -> int | None:
        if self.kind == "msgpack":
            data = msgpack.unpackb(message, raw=False, strict_map_key=False)
            if data.get("t") == "snapshot":
                self.view = View.from_data(data["view"])
            elif data.get("t") == "update":
                assert self.view is not None
                self.view = patch_data(self.view, data["diff"])
            return data.get("v") if data.get("t") in ("snapshot", "update") else None
        if message.startswith("<!--snapshot-->") or 'id="seen-v"' in message:
            found = SEEN_V.search(message)
            return int(found.group(1)) if found else None
        lines = MOVE_N.findall(message)
        return 2 + max(map(int, lines)) if lines and "hx-swap-oob" in message else None

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                v = self._version_of(message)
                if v is not None:
                    self.tag = max(self.tag, v)
                self.frames.append((self.tag, message))
                self._new.set()
        except ConnectionClosed:
            pass
        finally:
            self._new.set()

    async def until(self, pred, since: int = 0) -> int:
        """Wait (bounded) until a frame after index ``since`` satisfies ``pred(tag, message)``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_S
        seen = since
        while True:
            for i in range(seen, len(self.frames)):
                if pred(*self.frames[i]):
                    return i + 1
            seen = len(self.frames)
            self._new.clear()
            left = deadline - loop.time()
            if left <= 0 or self.task.done():
                raise AssertionError(f"{self.kind} socket of viewer {self.viewer}: nothing matched")
            try:
                await asyncio.wait_for(self._new.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def reach(self, version: int) -> None:
        await self.until(lambda tag, _m: tag >= version)

    async def close(self) -> None:
        await self.ws.close()
        await self.task


class LiveGame:
    def __init__(self, base: str, seed: int, inspector: Inspector, stats: Counter[str]) -> None:
        self.base, self.seed, self.inspector, self.stats = base, seed, inspector, stats
        self.rng = random.Random(seed)
        self.http = httpx.AsyncClient(base_url=base, timeout=WAIT_S)

    # ------------------------------------------------------------------ set-up

    async def start(self) -> None:
        base = self.base
        self.cookies: dict[int, str] = {}
        self.tokens: dict[int, str | None] = {SPECTATOR: None}
        for viewer, name in ((0, "Anna"), (1, "Ben"), (SPECTATOR, "Cy")):
            self.cookies[viewer], token = await asyncio.to_thread(form_guest, base, name)
            if viewer != SPECTATOR:
                self.tokens[viewer] = token
        self.cy_token = token
        ruleset = self.rng.choice(["brettspielnetz", "coan"])
        r = await self.http.post("/api/v1/games", json={"seat": 0, "seed": self.seed, "ruleset": ruleset},
                                 headers=self.auth(0))
        assert r.status_code == 201, r.text
        self.id = r.json()["id"]
        assert (await self.http.post(f"/api/v1/games/{self.id}/join", headers=self.auth(1))).status_code == 200
        self.duel = Duel.new(random.Random(self.seed), ruleset, first=0)
        self.version = 2
        self.truths = {1: Truth.of(self.duel, 1), 2: Truth.of(self.duel, 2)}
        wsb = ws_base(base)
        self.taps: list[Tap] = []
        for viewer in (0, 1, SPECTATOR):
            headers = self.auth(viewer)
            self.taps.append(Tap(await connect(f"{wsb}/api/v1/games/{self.id}/ws", additional_headers=headers),
                                 "msgpack", viewer))
            self.taps.append(Tap(await connect(f"{wsb}/g/{self.id}/ws", origin=base,
                                               additional_headers={"Cookie": f"{COOKIE}={self.cookies[viewer]}"}),
                                 "html", viewer))
        await self.sync()

    def auth(self, viewer: int) -> dict[str, str]:
        token = self.tokens.get(viewer)
        return {"Authorization": f"Bearer {token}"} if token else {}

    def tap(self, kind: str, viewer: int) -> Tap:
        return next(t for t in self.taps if t.kind == kind and t.viewer == viewer)

    async def sync(self) -> None:
        await asyncio.gather(*(t.reach(self.version) for t in self.taps))

    # ------------------------------------------------------------------ moves

    def choose(self):
        duel, rng = self.duel, self.rng
        seat = duel.to_move
        if rng.random() < 0.02:
            return rng.randrange(2), Resign()
        if rng.random() < 0.25:
            return seat, choose_move(duel.view(seat), rng)
        hidden = [c for c in duel.geo.cells if duel.is_hidden(c)]
        own = sorted(duel.wrong_marks[seat] & set(hidden))
        theirs = sorted(duel.wrong_marks[1 - seat] & set(hidden))
        roll = rng.random()
        if own and roll < 0.15:
            cell = rng.choice(own)
        elif theirs and roll < 0.3:
            cell = rng.choice(theirs)
        elif roll < 0.7:
            cell = rng.choice(sorted(duel.hidden_mines))
        else:
            cell = rng.choice(hidden)
        return seat, (Mark(cell) if rng.random() < 0.45 else Explore(cell))

    async def refused(self) -> None:
        """A few moves the server must refuse; their answers are inspected like everything else."""
        rng, seat = self.rng, self.duel.to_move
        cell = list(rng.choice(self.duel.geo.cells))
        kind = rng.choice(["wrong_turn", "spectator", "stale", "select"])
        if kind == "wrong_turn":
            tap = self.tap("msgpack", 1 - seat)
            await tap.ws.send(msgpack.packb({"t": "move", "v": self.version, "action": "explore", "cell": cell}))
        elif kind == "spectator":
            tap = self.tap("msgpack", SPECTATOR)
            await tap.ws.send(msgpack.packb({"t": "resign", "v": self.version}))
        elif kind == "stale":
            tap = self.tap("msgpack", seat)
            await tap.ws.send(msgpack.packb({"t": "move", "v": self.version - 1, "action": "mark", "cell": cell}))
        else:
            tap = self.tap("html", rng.choice([0, 1]))
            mark = len(tap.frames)
            await tap.ws.send(f'{{"cell": "{cell[0]}-{cell[1]}", "mode": "select", "v": "{self.version}"}}')
            await tap.until(lambda _t, m: 'id="selection"' in m or 'id="notice"' in m, mark)
            self.stats["refused_select"] += 1
            return
        mark = len(tap.frames)
        await tap.until(lambda _t, m: msgpack.unpackb(m).get("t") == "error", mark)
        if kind == "stale":
            await tap.until(lambda _t, m: msgpack.unpackb(m).get("t") == "snapshot", mark)
        self.stats[f"refused_{kind}"] += 1

    async def play_one(self) -> None:
        seat, move = self.choose()
        via = "html" if self.rng.random() < 0.3 else "msgpack"
        tap = self.tap(via, seat)
        if isinstance(move, Resign):
            if via == "msgpack":
                await tap.ws.send(msgpack.packb({"t": "resign"}))
            else:
                await tap.ws.send(f'{{"a": "resign", "v": "{self.version}"}}')
                await tap.ws.send(f'{{"a": "resign-yes", "v": "{self.version}"}}')
        else:
            action = "explore" if isinstance(move, Explore) else "mark"
            r, c = move.cell
            if via == "msgpack":
                await tap.ws.send(msgpack.packb({"t": "move", "v": self.version, "action": action, "cell": [r, c]}))
            else:
                await tap.ws.send(f'{{"cell": "{r}-{c}", "mode": "{action}", "v": "{self.version}"}}')
        before = set(self.duel.wrong_marks[seat])
        self.duel.apply(seat, move)
        self.version += 1
        self.truths[self.version] = Truth.of(self.duel, self.version)
        self.stats["moves"] += 1
        self.stats[f"moves_via_{via}"] += 1
        line = self.duel.lines[-1] if self.duel.lines and not isinstance(move, Resign) else None
        if line is not None and line.verdict.name == "BLUBB":
            self.stats["wrong_marks"] += 1
            self.stats["re_marks"] += line.cell in before
        await self.sync()

    # ------------------------------------------------------------------ HTTP

    async def fetch_everything(self) -> None:
        """Every page and endpoint for every viewer, at the current version."""
        truth, inspector, v = self.truths[self.version], self.inspector, self.version
        for viewer in (0, 1, SPECTATOR, None):
            cookies = {"Cookie": f"{COOKIE}={self.cookies[viewer]}"} if viewer is not None else {}
            as_viewer = SPECTATOR if viewer is None else viewer
            for query in ("", f"?at={self.rng.randrange(0, 40)}"):
                r = await self.http.get(f"/g/{self.id}{query}", headers=cookies)
                assert r.status_code == 200
                if truth.over and query:
                    inspector.raw(r.text, truth)  # a replay position of a finished game: nothing is secret
                    self.stats["http_responses"] += 1
                else:
                    inspector.html(r.text, as_viewer, truth)
            for headers in ({}, {"hx-request": "true"}):
                r = await self.http.get(f"/g/{self.id}/replay?at=1", headers={**cookies, **headers})
                inspector.raw(r.text, truth)
                self.stats["http_responses"] += 1
                if not truth.over:
                    assert r.status_code == 409, r.status_code
            r = await self.http.get(f"/api/v1/games/{self.id}", headers=self.auth(as_viewer) if viewer is not None else {})
            assert r.status_code == 200
            inspector.raw(r.content, truth)
            inspector.json(r.json(), as_viewer, truth)
            self.stats["http_responses"] += 4
        errors = [
            await self.http.get(f"/api/v1/games/{self.id}", headers={"Authorization": "Bearer forged.token"}),
            await self.http.get(f"/api/v1/games/{self.id}?token=also-forged"),
            await self.http.post(f"/api/v1/games/{self.id}/join", headers={"Authorization": f"Bearer {self.cy_token}"}),
            await self.http.post(f"/api/v1/games/{self.id}/resign", headers={"Authorization": f"Bearer {self.cy_token}"}),
            await self.http.post(f"/api/v1/games/{self.id}/rematch", headers={"Authorization": f"Bearer {self.cy_token}"}),
        ]
        record = await self.http.get(f"/api/v1/games/{self.id}/record")
        for r in errors + ([] if truth.over else [record]):
            assert 400 <= r.status_code < 500, (r.request.url, r.status_code)
            inspector.raw(r.content, truth)
            inspector.json(r.json(), SPECTATOR, truth)
            self.stats["http_error_responses"] += 1
        if truth.over:
            assert record.status_code == 200
            data = record.json()
            assert verify(data["commitment"], data["width"], data["height"], [tuple(m) for m in data["mines"]],
                          data["salt"])
            assert sorted(map(tuple, data["mines"])) == sorted(truth.mines) and data["salt"] == truth.salt
            self.stats["records_verified"] += 1
        else:
            assert record.status_code == 409
        assert self.version == v

    # ------------------------------------------------------------------ the whole game

    async def run(self) -> None:
        try:
            await self.start()
            await self.fetch_everything()
            midway = self.rng.randrange(2, 25)
            for n in range(MAX_MOVES):
                if self.duel.outcome is not None:
                    break
                if self.rng.random() < 0.15:
                    await self.refused()
                await self.play_one()
                if n == midway and self.duel.outcome is None:
                    await self.fetch_everything()
            assert self.duel.outcome is not None
            await self.fetch_everything()
            self.check_end()
            await asyncio.sleep(0)
        finally:
            for tap in getattr(self, "taps", []):
                await tap.close()
            await self.http.aclose()
        for tap in self.taps:
            for index, (tag, message) in enumerate(tap.frames):
                expect(tag in self.truths, "a frame without a version", tap.kind, message[:200])
                try:
                    if tap.kind == "msgpack":
                        self.inspector.msgpack(message, tap.viewer, self.truths[tag])
                    else:
                        self.inspector.html(message, tap.viewer, self.truths[tag])
                except Leak as leak:
                    raise Leak(f"{leak} -- seed {self.seed}, {tap.kind} socket of viewer {tap.viewer}, frame "
                               f"{index} of {len(tap.frames)} at v{tag}; the frames around it:\n"
                               + _frames_around(tap.frames, index)) from None
            self.stats[f"{tap.kind}_socket_frames"] += len(tap.frames)
        self.stats["games"] += 1
        self.stats[f"ended_{self.duel.outcome.termination}"] += 1

    def check_end(self) -> None:
        """Everybody was sent everything: the patched msgpack views and the last html frames."""
        truth = self.truths[self.version]
        for tap in self.taps:
            if tap.kind == "msgpack":
                view = tap.view
                assert view is not None and view.salt == truth.salt
                assert sorted(view.mines) == sorted(truth.mines)
                assert [sorted(m) for m in view.wrong_marks] == [sorted(m) for m in truth.wrong_marks]
                assert verify(view.commitment, view.width, view.height, view.mines, view.salt)
            else:
                final = [m for tag, m in tap.frames if tag == self.version and m.startswith("<!--snapshot-->")]
                assert final and "fair verified" in final[-1], tap.viewer


def _frames_around(frames: list[tuple[int, bytes | str]], index: int) -> str:
    """The frames before and after ``index`` (versions and beginnings), to tell a stale frame
    from a wrong one when a check fails."""
    around = []
    for i in range(max(0, index - 4), min(len(frames), index + 3)):
        tag, message = frames[i]
        text = repr(msgpack.unpackb(message, raw=False, strict_map_key=False)) if isinstance(message, bytes) else message
        around.append(f"{'>>' if i == index else '  '} #{i} v{tag}: {text[:600]}")
    return "\n".join(around)


async def test_whole_games_over_real_sockets_leak_nothing(live_server):
    inspector, stats = Inspector(), Counter()
    seeds = iter(range(5000, 5000 + GAMES))
    lock = asyncio.Lock()

    async def worker() -> None:
        while True:
            async with lock:
                seed = next(seeds, None)
            if seed is None:
                return
            await LiveGame(live_server.url, seed, inspector, stats).run()

    await asyncio.gather(*(worker() for _ in range(CONCURRENT)))
    assert stats["games"] == GAMES
    assert stats["wrong_marks"] > GAMES and stats["moves_via_html"] and stats["moves_via_msgpack"]
    write_figures("live_games", {**stats, **inspector.counts})
