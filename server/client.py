"""A small asyncio client for MineDuel's HTTP API and msgpack websocket (docs/PROTOCOL.md).

    async with Api("http://127.0.0.1:8000") as api:
        me = await api.guest("Anna")
        game = await api.create_game(me.token, seat=0)
        async with await GameSocket.connect(api.base_url, game["id"], me.token) as ws:
            await ws.next()                       # the snapshot
            await ws.move("explore", (4, 4))      # uses the version last seen
            frame = await ws.next()               # the update (ws.view is kept current)

Every frame received goes through :meth:`GameSocket.apply`, which keeps ``ws.v``,
``ws.room`` and ``ws.view`` (an :class:`engine.View`, patched with each update's diff) in step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

import msgpack
from websockets.asyncio.client import ClientConnection, connect

from engine import View
from engine.classic_view import ClassicView
from engine.classic_view import patch_data as patch_classic
from engine.view import patch_data

VIEWS: dict[str, tuple[Any, Callable[[Any, dict[str, Any]], Any]]] = {
    "duel": (View, patch_data),
    "classic": (ClassicView, patch_classic),
}
"""A game kind's view type and the function that applies an update's diff to it."""


class ApiError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        err = body.get("error", {}) if isinstance(body, dict) else {}
        super().__init__(f"{status} {err.get('code')}: {err.get('message')}")
        self.status = status
        self.code = err.get("code")
        self.body = body


@dataclass(frozen=True)
class Guest:
    id: str
    name: str
    token: str


class Api:
    """HTTP JSON calls (needs ``httpx``)."""

    def __init__(self, base_url: str, timeout_s: float = 10.0, max_connections: int = 100) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout_s,
                                       limits=httpx.Limits(max_connections=max_connections))

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def request(self, method: str, path: str, token: str | None = None, json: Any = None,
                      timeout_s: float | None = None) -> Any:
        """The answer's JSON (``None`` for an empty one, e.g. 204); raises :class:`ApiError` for 4xx/5xx."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        extra: dict[str, Any] = {} if timeout_s is None else {"timeout": timeout_s}
        r = await self._http.request(method, path, headers=headers, json=json, **extra)
        body = r.json() if r.content else None
        if r.status_code >= 400:
            raise ApiError(r.status_code, body)
        return body

    async def guest(self, name: str | None = None) -> Guest:
        """A new guest called ``name`` (names are unique: ``ApiError`` 409 ``name_taken`` when
        another player has it), or ``Guest-xxxxxx`` when ``None``."""
        d = await self.request("POST", "/api/v1/guests", json={} if name is None else {"name": name})
        return Guest(d["id"], d["name"], d["token"])

    async def rename(self, token: str, name: str) -> Guest:
        """The caller's new name, and a new token carrying it (the old one keeps working)."""
        d = await self.request("POST", "/api/v1/guests/me/name", token=token, json={"name": name})
        return Guest(d["id"], d["name"], d["token"])

    async def create_game(self, token: str, *, ruleset: str = "brettspielnetz", clock: dict[str, float] | None = None,
                          seat: int | str = "random", seed: int | None = None, computer: int | None = None,
                          rated: bool = False) -> dict[str, Any]:
        """A new duel; ``computer``: play the computer at that level (1 easy, 2 medium, 3 strong)."""
        body: dict[str, Any] = {"ruleset": ruleset, "clock": clock, "seat": seat, "rated": rated}
        if computer is not None:
            body["opponent"] = {"computer": computer}
        if seed is not None:
            body["seed"] = seed
        return await self.request("POST", "/api/v1/games", token, body)

    async def pair(self, token: str, *, clock: dict[str, int] | None, ruleset: str = "brettspielnetz",
                   rated: bool = False, wait_s: int = 30, computer_after_s: int | None = None) -> dict[str, Any] | None:
        """Quick pairing: wait up to ``wait_s`` (≤ 60) for a partner in the pool of ``ruleset``,
        ``clock`` (``{"initial": s, "increment": s}`` or ``{"days": n}``) and ``rated``.
        ``{"game": id, "seat": n}`` once paired, ``None`` if nobody came. ``computer_after_s``
        (5..wait_s): after that long alone, a casual game against the medium computer instead
        (``{"game", "seat", "computer": True}``). Cancelling the call closes the request, which
        ends the seek."""
        body: dict[str, Any] = {"ruleset": ruleset, "clock": clock, "rated": rated, "wait_s": wait_s}
        if computer_after_s is not None:
            body["computer_after_s"] = computer_after_s
        return await self.request("POST", "/api/v1/pairing", token, body, timeout_s=wait_s + 10)

    async def join(self, token: str, game_id: str) -> dict[str, Any]:
        return await self.request("POST", f"/api/v1/games/{game_id}/join", token)

    async def game(self, game_id: str, token: str | None = None) -> dict[str, Any]:
        return await self.request("GET", f"/api/v1/games/{game_id}", token)

    async def record(self, game_id: str) -> dict[str, Any]:
        return await self.request("GET", f"/api/v1/games/{game_id}/record")

    async def rematch(self, token: str, game_id: str) -> dict[str, Any]:
        """Offer a rematch (``{"id": game_id, "offered": True, "v"}``) or accept the opponent's
        (``{"id": new game, "seat", "v"}``)."""
        return await self.request("POST", f"/api/v1/games/{game_id}/rematch", token)

    async def decline_rematch(self, token: str, game_id: str) -> dict[str, Any]:
        return await self.request("POST", f"/api/v1/games/{game_id}/rematch/decline", token)

    async def solo(self, token: str, *, width: int = 9, height: int = 9, mines: int = 10, no_guess: bool = False,
                   seed: int | None = None) -> dict[str, Any]:
        """A classic single-player game (``seed``: test hooks only)."""
        body: dict[str, Any] = {"width": width, "height": height, "mines": mines, "no_guess": no_guess}
        if seed is not None:
            body["seed"] = seed
        return await self.request("POST", "/api/v1/solo", token, body)

    async def leaderboard(self, preset: str, mode: str = "classic", period: str = "all") -> dict[str, Any]:
        return await self.request("GET", f"/api/v1/leaderboard?preset={preset}&mode={mode}&period={period}")

    async def player(self, player_id: str, token: str | None = None) -> dict[str, Any]:
        """A player's name, ratings per category and newest games (with ``token``, the player's
        own: their games waiting for an opponent too)."""
        return await self.request("GET", f"/api/v1/players/{player_id}", token)

    async def player_games(self, player_id: str, status: str = "playing", token: str | None = None,
                           limit: int | None = None, before: str | None = None) -> dict[str, Any]:
        """A player's games being played (``status="playing"``) or finished (``"over"``,
        newest first, ``limit`` of them; ``before``: the answer's ``older``, for the next page)."""
        query = (f"status={status}" + (f"&limit={limit}" if limit is not None else "")
                 + (f"&before={before}" if before is not None else ""))
        return await self.request("GET", f"/api/v1/players/{player_id}/games?{query}", token)

    async def resign(self, token: str, game_id: str, v: int | None = None) -> dict[str, Any]:
        return await self.request("POST", f"/api/v1/games/{game_id}/resign", token, {} if v is None else {"v": v})


def ws_url(base_url: str, game_id: str, follow: bool = False) -> str:
    """The game's socket; ``follow``: it moves to the game's rematch (docs/PROTOCOL.md)."""
    return (base_url.replace("http://", "ws://").replace("https://", "wss://").rstrip("/")
            + f"/api/v1/games/{game_id}/ws" + ("?follow=rematch" if follow else ""))


class GameSocket:
    """One websocket on one game; keeps the latest version, room facts and view."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.v: int | None = None
        self.you: int | None = None
        self.room: dict[str, Any] | None = None
        self.view: Any = None  # a View (duel) or a ClassicView
        self.spectators: int | None = None
        self.frames: list[dict[str, Any]] = []
        """Every frame received, in order (tests inspect them)."""
        self.keep_frames = True

    @classmethod
    async def connect(cls, base_url: str, game_id: str, token: str | None = None, follow: bool = False,
                      **kwargs: Any) -> GameSocket:
        """``follow``: the server moves this socket to the game's rematch (a new ``snapshot``
        with the new game's ``room.id`` and your seat there); :attr:`follows` says it agreed."""
        headers = {"Authorization": f"Bearer {token}"} if token else None
        ws = await connect(ws_url(base_url, game_id, follow), additional_headers=headers, max_size=2**22,
                           open_timeout=10, **kwargs)
        return cls(ws)

    @property
    def follows(self) -> bool:
        """Whether the server moves this socket to its game's rematch (it said so in the upgrade)."""
        response = self.ws.response
        return response is not None and response.headers.get("x-mineduel-follow") == "rematch"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.ws.close()

    # ------------------------------------------------------------------ receiving

    async def next(self, timeout_s: float = 10.0) -> dict[str, Any]:
        """The next frame (decoded and applied); raises ``TimeoutError`` or ``ConnectionClosed``."""
        raw = await asyncio.wait_for(self.ws.recv(), timeout_s)
        frame = msgpack.unpackb(raw, raw=False, strict_map_key=False)
        if self.keep_frames:
            self.frames.append(frame)
        self.apply(frame)
        return frame

    def apply(self, frame: dict[str, Any]) -> None:
        t = frame.get("t")
        if t == "snapshot":
            self.v, self.you, self.room = frame["v"], frame["you"], frame["room"]
            self.view = VIEWS[self.room.get("kind", "duel")][0].from_data(frame["view"])
        elif t == "update":
            if self.v is not None and frame["v"] != self.v + 1:
                raise AssertionError(f"update v{frame['v']} after v{self.v}")
            assert self.view is not None and self.room is not None
            self.view = VIEWS[self.room.get("kind", "duel")][1](self.view, frame["diff"])
            self.v, self.room = frame["v"], frame["room"]
        elif t == "presence":
            self.spectators = frame["spectators"]

    async def until(self, pred: Callable[[dict[str, Any]], bool], timeout_s: float = 10.0,
                    max_frames: int = 10_000) -> dict[str, Any]:
        """Read frames until ``pred(frame)``; bounded by time and count."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        for _ in range(max_frames):
            frame = await self.next(max(0.001, deadline - loop.time()))
            if pred(frame):
                return frame
        raise TimeoutError("too many frames")

    async def until_version(self, v: int, timeout_s: float = 10.0) -> None:
        if self.v is not None and self.v >= v:
            return
        await self.until(lambda f: f.get("t") in ("snapshot", "update") and f["v"] >= v, timeout_s)

    # ------------------------------------------------------------------ sending

    async def send(self, obj: Any) -> None:
        await self.ws.send(msgpack.packb(obj, use_bin_type=True))

    async def move(self, action: str, cell: tuple[int, int], v: int | None = None) -> None:
        """Send a move made on version ``v`` (default: the last version received)."""
        await self.send({"t": "move", "v": self.v if v is None else v, "action": action, "cell": list(cell)})

    async def resign(self) -> None:
        await self.send({"t": "resign", "v": self.v})

    async def rematch(self) -> None:
        """Offer a rematch, or accept the opponent's offer (the updates tell which it was)."""
        await self.send({"t": "rematch"})

    async def decline_rematch(self) -> None:
        """Decline the opponent's rematch offer, or withdraw one's own."""
        await self.send({"t": "decline_rematch"})
