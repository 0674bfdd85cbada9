"""Solo games keep their layout secret until the end, like duels: every frame of every socket
(the player's and a spectator's, msgpack and browser) and every page and API answer during
the game is checked for the layout, the seed it is drawn from, and anything derived from it."""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter

import httpx
import msgpack
from websockets.asyncio.client import connect

from engine.geometry import geometry

from .test_secrets_codecs import write_figures
from .util import COOKIE, form_guest, ws_base

WAIT_S = 10.0
PUBLIC_CHARS = set(".F012345678")
SECRET_CLASSES = re.compile(r'class="cell [^"]*\b(mine|fatal|wrong-flag|found)\b')


class Tap:
    """One socket's frames, read in the background."""

    def __init__(self, ws) -> None:  # noqa: ANN001
        self.ws = ws
        self.frames: list[bytes | str] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                self.frames.append(message)
        except Exception:
            pass


def check_msgpack(frame: bytes, seed: str, over: bool, stats: Counter) -> None:
    data = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    stats["msgpack_frames"] += 1
    text = repr(data)
    view = data.get("view") or {}
    changed = (data.get("diff") or {}).get("changed", {})
    if over:
        return
    assert seed not in text, "the seed before the end"
    for fields in (view, changed):
        for name in ("mines", "seed", "three_bv"):
            assert fields.get(name) is None, (name, fields.get(name))
    for row in view.get("rows", []):
        assert set(row) <= PUBLIC_CHARS, row
    for _r, _c, ch in (data.get("diff") or {}).get("cells", []):
        assert ch in PUBLIC_CHARS, ch
    assert all(e["t"] != "classic_ended" for e in data.get("events", []))


def check_html(frame: str, seed: str, stats: Counter) -> None:
    stats["html_frames"] += 1
    assert seed not in frame, "the seed before the end"
    assert not SECRET_CLASSES.search(frame), SECRET_CLASSES.search(frame)


async def play_one(base: str, seed: int, token: str, cookie: str, stats: Counter) -> None:
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=WAIT_S) as http:
        size = rng.choice([(9, 9, 10), (16, 16, 40), (12, 8, 30)])
        r = await http.post("/api/v1/solo", json={"width": size[0], "height": size[1], "mines": size[2],
                                                  "seed": seed}, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 201, r.text
        game_id = r.json()["id"]
        wsb = ws_base(base)
        player = Tap(await connect(f"{wsb}/api/v1/games/{game_id}/ws",
                                   additional_headers={"Authorization": f"Bearer {token}"}, max_size=2**22))
        watcher = Tap(await connect(f"{wsb}/api/v1/games/{game_id}/ws", max_size=2**22))
        page = Tap(await connect(f"{wsb}/g/{game_id}/ws", origin=base,
                                 additional_headers={"Cookie": f"{COOKIE}={cookie}"}, max_size=2**22))
        watching_page = Tap(await connect(f"{wsb}/g/{game_id}/ws", origin=base, max_size=2**22))
        taps = (player, watcher, page, watching_page)
        geo = geometry(size[0], size[1])
        pages: list[str] = []
        version = 1
        for step in range(400):
            snapshot = (await http.get(f"/api/v1/games/{game_id}")).json()
            if snapshot["room"]["status"] == "over":
                break
            rows = snapshot["view"]["rows"]
            hidden = [c for c in geo.cells if rows[c[0]][c[1]] in ".F"]
            numbers = [c for c in geo.cells if rows[c[0]][c[1]] in "12345678"]
            roll = rng.random()
            action, cell = ("flag", rng.choice(hidden)) if roll < 0.2 else (
                ("chord", rng.choice(numbers)) if roll < 0.3 and numbers else ("reveal", rng.choice(hidden)))
            await player.ws.send(msgpack.packb({"t": "move", "v": snapshot["v"], "action": action,
                                                "cell": list(cell)}))
            for _ in range(400):  # bounded: the move's answer (an update, or a refusal)
                await asyncio.sleep(0.005)
                if any(msgpack.unpackb(f)["t"] in ("update", "error") and msgpack.unpackb(f).get("v", 0) >= version
                       for f in player.frames[-3:]):
                    break
            version = snapshot["v"] + 1
            now = await http.get(f"/api/v1/games/{game_id}")
            if step % 5 == 0 and now.json()["room"]["status"] != "over":  # (only this test moves: no race)
                pages.append(now.text)
                pages.append((await http.get(f"/g/{game_id}", headers={"Cookie": f"{COOKIE}={cookie}"})).text)
                pages.append((await http.get(f"/g/{game_id}")).text)
        await asyncio.sleep(0.3)
        final = (await http.get(f"/api/v1/games/{game_id}")).json()
        assert final["room"]["status"] == "over"
        game_seed = final["view"]["seed"]
        assert game_seed and final["view"]["mines"]  # published at the end
        final_v = final["v"]
        for tap in taps:
            await tap.ws.close()
            await tap.task
        for tap in (player, watcher):
            for frame in tap.frames:
                v = msgpack.unpackb(frame).get("v") or 0
                check_msgpack(frame, game_seed, v >= final_v, stats)
        for tap in (page, watching_page):
            frames = tap.frames
            end = next((i for i, f in enumerate(frames) if 'class="status solo-status won' in f
                        or 'class="status solo-status lost' in f), len(frames))
            for frame in frames[:end]:
                check_html(frame, game_seed, stats)
        for text in pages:
            assert game_seed not in text
            stats["pages"] += 1
        stats["games"] += 1


async def test_no_solo_frame_or_page_shows_the_layout_before_the_end(live_server):
    cookie, token = await asyncio.to_thread(form_guest, live_server.url, "Solo")
    stats: Counter[str] = Counter()
    for seed in range(6):
        await play_one(live_server.url, 500 + seed, token, cookie, stats)
    write_figures("solo_secrets", dict(stats))
    assert stats["games"] == 6 and stats["msgpack_frames"] > 50 and stats["html_frames"] > 50
