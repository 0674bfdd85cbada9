"""How much a client may ask: per-IP limits of one process, and per-connection flood control.

- :class:`Guard` (``app.state.guard``): credit buckets per client address for guest and game
  creation (429 with ``Retry-After``; a duel's and a classic game's apart, a rematch's charged
  like the others) and a cap on concurrent websockets;
- :class:`MessageLimit`: one websocket's frames, a bucket for while it is a player's and a
  smaller one for while it is a spectator's.

The limits live in the process, not in Redis: with N processes behind a balancer a client
gets at most N times each limit, which is still a bound (docs/RELIABILITY.md).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

from starlette.requests import HTTPConnection
from starlette.responses import PlainTextResponse, Response

from engine import SPECTATOR, Game

from ..config import Rate, Settings
from ..core.room import Room
from .peer import client_ip
from .ratelimit import Bucket, Counter, KeyedLimiter


class Limited(Exception):
    """A per-IP limit refused the request; ``retry_after_s`` says when to come back."""

    def __init__(self, what: str, retry_after_s: int) -> None:
        super().__init__(f"too many {what} from your address; try again in {retry_after_s} s")
        self.what = what
        self.retry_after_s = retry_after_s


def _limiter(rate: Rate) -> KeyedLimiter | None:
    return KeyedLimiter(rate[0], rate[1]) if rate is not None else None


class Guard:
    """The per-IP limits of one process. ``now`` is injectable for tests of the arithmetic."""

    def __init__(self, settings: Settings, now: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.now = now
        self.guests = _limiter(settings.ip_guest_rate)
        self.games = _limiter(settings.ip_game_rate)
        self.classic_games = _limiter(settings.ip_classic_rate)
        self.sockets = Counter(settings.ip_max_sockets) if settings.ip_max_sockets > 0 else None

    def _spend(self, limiter: KeyedLimiter | None, what: str, conn: HTTPConnection) -> None:
        if limiter is None:
            return
        ip = client_ip(conn, self.settings)
        now = self.now()
        if not limiter.allow(ip, now):
            raise Limited(what, max(1, math.ceil(limiter.retry_after(ip, now))))

    def new_guest(self, conn: HTTPConnection) -> None:
        """Spend one guest creation of the client's IP; raises :class:`Limited`."""
        self._spend(self.guests, "new guests", conn)

    def new_game(self, conn: HTTPConnection, *, classic: bool = False) -> None:
        """Spend one game creation of the client's IP: a duel's (``ip_game_rate``), or with
        ``classic`` a classic game's, from its own larger bucket (``ip_classic_rate``: a speed
        player restarts every few seconds). Raises :class:`Limited`, having spent nothing."""
        self._spend(self.classic_games if classic else self.games, "new games", conn)

    def charged(self, conn: HTTPConnection, make: Callable[[Room], Game]) -> Callable[[Room], Game]:
        """``make`` (a rematch's game: ``new_game.rematch_of``) spending a game creation of the
        client's IP first, from the bucket of the old room's kind. The way every route hands
        ``RoomService.rematch`` its ``new_game``: the service calls it only when this client
        makes the new room (accepting an offer, a rematch against the computer, a classic
        game's restart), just before it does, so an offer costs nothing, and a refusal
        (:class:`Limited`) leaves no room made and the old room as it was (an offer standing)."""

        def charge_then_make(room: Room) -> Game:
            self.new_game(conn, classic=room.kind == "classic")
            return make(room)

        return charge_then_make

    def open_socket(self, conn: HTTPConnection) -> str | None:
        """Count a websocket of the client's IP: its key (pass it to :meth:`close_socket`), or
        ``None`` when the IP already holds ``ip_max_sockets``."""
        ip = client_ip(conn, self.settings)
        if self.sockets is not None and not self.sockets.acquire(ip):
            return None
        return ip

    def close_socket(self, key: str) -> None:
        if self.sockets is not None:
            self.sockets.release(key)


class MessageLimit:
    """One websocket's flood control: a credit bucket for while it is a player's and a smaller
    one for while it is a spectator's (the hub may reseat a connection, so the class is read
    per message). ``solo``: the socket of a classic game, whose player clicks without waiting
    for anybody (``Settings.solo_rate``)."""

    __slots__ = ("player", "spectator")

    def __init__(self, settings: Settings, solo: bool = False) -> None:
        rate = settings.solo_rate if solo else settings.player_rate
        self.player = Bucket(*rate) if rate else None
        self.spectator = Bucket(*settings.spectator_rate) if settings.spectator_rate else None

    def allow(self, viewer: int, now: float) -> bool:
        bucket = self.spectator if viewer == SPECTATOR else self.player
        return bucket is None or bucket.allow(now)


def guard_of(conn: HTTPConnection) -> Guard:
    """The app's :class:`Guard` (``create_app`` makes one per app)."""
    return conn.app.state.guard


def too_many(exc: Limited, *, json_body: bool) -> Response:
    """The 429 answer: JSON for the API, plain text for the browser edge (pages render their own)."""
    headers = {"retry-after": str(exc.retry_after_s)}
    if json_body:
        body = {"error": {"code": "rate_limited", "message": str(exc)}}
        return Response(json.dumps(body), status_code=429, media_type="application/json", headers=headers)
    return PlainTextResponse(str(exc), status_code=429, headers=headers)


