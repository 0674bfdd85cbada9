"""The lobby: what the home page lists, read once per process and pushed to every lobby socket.

Games are listed in a ZSET by creation time (:meth:`server.store.store.Store.list_room`):
open challenges made on the home page, and every game being played that was made there, by
quick pairing or against the computer. :func:`read_lobby` reads all of them (up to the list's
bound), a chunk at a time in two round trips (the rooms, then their presence hashes), and keeps:

- **open challenges**: waiting rooms whose creator is still there (connected to the room,
  or gone for less than :data:`GONE_GRACE_MS`, which covers a reload; a creator who never
  connected is given :data:`NEVER_CAME_MS`). A challenge whose creator left drops out of the
  list at once, and the room stays reachable by its link;
- **live games**: rooms being played that somebody is at (a person connected, gone less than
  the claim's grace, or not yet come since the game began), with names, ratings (rated games),
  score, time control and spectators;
- **counts**: players online over all processes, live games among the listed ones.

Finished and vanished rooms are unlisted as they are met, and so are the rooms that are not
kept by the rules above (a challenge its creator left, a game its people left): they would
otherwise stay listed for days (an untimed game, a challenge nobody takes, a correspondence
game) and fill the list. A player connecting to such a room again puts it back on the list
(:meth:`server.store.hub.Hub.attach`). :class:`LobbyFeed` is the
per-process loop: every ``interval_s`` while anybody watches the lobby it reads the lobby once,
renders it once per language (the challenges once more per viewer who has one: their row says
Cancel, not Accept) and sends each lobby socket the sections that changed since its last frame;
with nobody watching it still writes its count of connected players every
:data:`ONLINE_REPORT_S`, so other processes' lobbies count them. Why a
poll and not a channel: a listed room's changes already travel on its own channel, and
subscribing every process to every listed room to learn what one read a second gives would
cost more than the read; the lobby is allowed a second of delay, the game is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from engine import SPECTATOR
from engine.clock import Clock

from ..core.computer import level_of
from ..core.decide import LEAVE_GRACE_MS
from ..core.ratings import Rating, clock_category
from ..core.room import Room, Status
from ..outage import redis_down
from ..store.presence import attendance_of
from ..store.store import LOBBY_KEEP
from . import i18n
from .view_model import player_names, score_pair_text

log = logging.getLogger("mineduel.lobby")

SCAN = 100
"""Listed rooms read per round trip (their states, then their presence hashes)."""
LIVE_ROWS = 20
GONE_GRACE_MS = 5_000
"""A challenge stays listed this long after its creator's last connection closed (a reload)."""
NEVER_CAME_MS = 30_000
"""A challenge whose creator never opened its page is listed this long after it was made."""
ONLINE_ALIVE_MS = 10_000
"""A process's count of connected players counts this long after it was written."""
ONLINE_REPORT_S = ONLINE_ALIVE_MS / 3_000
"""How often a process with nobody watching the lobby still writes its count (well within
:data:`ONLINE_ALIVE_MS`), so a lobby read elsewhere counts this process's players."""


@dataclass(frozen=True, slots=True)
class LiveRow:
    id: str
    names: tuple[str, str]
    ratings: tuple[str, str]
    """Beside each name in a rated game ("1523", "1500?"), else empty."""
    score: str
    clock: Clock | None
    """Its time control, put in words where it is shown (in the reader's language)."""
    rated: bool
    spectators: int


@dataclass(frozen=True, slots=True)
class ChallengeRow:
    id: str
    creator: str
    """The creator's player id (their own row offers Cancel)."""
    name: str
    rating: str
    ruleset: str
    clock: Clock | None
    rated: bool


@dataclass(frozen=True, slots=True)
class Lobby:
    live: tuple[LiveRow, ...] = ()
    challenges: tuple[ChallengeRow, ...] = ()
    online: int = 0
    playing: int = 0
    read_ms: int = 0


async def read_lobby(state: Any, online: int, now_ms: int, *, chunk: int = SCAN, limit: int = LOBBY_KEEP) -> Lobby:
    """The lobby as it stands (see the module docstring); ``online`` is the count to show.

    Every listed room is read, up to ``limit`` (the list's own bound, :data:`LOBBY_KEEP`: every
    listing trims it to that many), the ids in one read and the rooms and their presence
    hashes ``chunk`` at a time (two round trips per chunk). Why all of them: every open
    challenge is shown, and "games in play" counts every game being played; why that is
    cheap: what is not worth listing any more is unlisted here (:func:`_worth_listing`), so the
    list holds the rooms people are at (and, for a grace period, those they just left)."""
    store = state.store
    ids = await store.listed_rooms(limit)
    live: list[tuple[Room, int]] = []
    challenges: list[Room] = []
    playing = 0
    stale: list[str] = []
    left: list[Room] = []
    for start in range(0, len(ids), chunk):
        part = ids[start:start + chunk]
        rooms = await state.rooms.load_many(part)
        shown = [rooms[i] for i in part if i in rooms and _listable(rooms[i])]
        stale += [i for i in part if i not in rooms or not _listable(rooms[i])]
        fields = await store.attendance_fields([room.id for room in shown])
        for room, hash_fields in zip(shown, fields, strict=True):
            attendance, ever = attendance_of(hash_fields)
            if not _worth_listing(room, attendance.away_since, ever, now_ms):
                left.append(room)
            elif room.status is Status.PLAYING:
                playing += 1
                if len(live) < LIVE_ROWS:
                    live.append((room, attendance.spectators))
            else:
                challenges.append(room)
    ratings = await _ratings(state, [room for room, _ in live] + challenges)
    if stale or left:
        with contextlib.suppress(Exception):  # the next read tries again
            await _unlist(state, stale, left, now_ms)
    return Lobby(tuple(_live_row(room, ratings, spectators) for room, spectators in live),
                 tuple(_challenge_row(room, ratings) for room in challenges), online, playing, now_ms)


async def _unlist(state: Any, stale: list[str], left: list[Room], now_ms: int) -> None:
    """Take off the list the rooms over or gone (``stale``) and those their people left
    (``left``). A player who connects to a room meanwhile puts it back (``Hub.attach``, after
    its presence write); one whose write came before the removal is seen by the read after it,
    and the room goes back here: a room its people are at is never left off."""
    await state.store.unlist(stale + [room.id for room in left])
    if not left:
        return
    fields = await state.store.attendance_fields([room.id for room in left])
    for room, hash_fields in zip(left, fields, strict=True):
        attendance, ever = attendance_of(hash_fields)
        if _worth_listing(room, attendance.away_since, ever, now_ms):
            await state.rooms.aftermath.list(room, again=True)


def _worth_listing(room: Room, away_since: tuple[int | None, ...], ever: tuple[bool, bool], now_ms: int) -> bool:
    """The one rule of what the lobby keeps (a listable room, :func:`_listable`): a game being
    played while somebody is at the board, a challenge while its creator is there. What is not
    is shown nowhere and unlisted; it comes back when one of its players connects again."""
    if room.status is Status.PLAYING:
        return _somebody_at_the_board(room, away_since, ever, now_ms)
    return _creator_here(room, away_since, ever, now_ms)


def _listable(room: Room) -> bool:
    """A room the lobby shows: a listed duel not over. A room of one seat never belongs there (one
    listed before ``Aftermath.list`` refused them took the lobby down for every reader)."""
    return room.status is not Status.OVER and len(room.players) == 2 and room.listed


def _somebody_at_the_board(room: Room, away_since: tuple[int | None, ...], ever: tuple[bool, bool],
                           now_ms: int) -> bool:
    """A game being played is live while one of its people is at it: connected, or gone less
    than :data:`LEAVE_GRACE_MS` (the claim's grace: a reload, a short drop), or not yet come
    for :data:`NEVER_CAME_MS` after both sat down (pages opening). Why: an untimed game both
    players left stays "playing" for days; listed, it is a live game nobody plays."""
    for seat, player in enumerate(room.players):
        if player is None or level_of(player) is not None:
            continue  # a computer is always there: it says nothing about a person playing
        if not ever[seat]:
            if now_ms - (room.seated_ms or room.created_ms) < NEVER_CAME_MS:
                return True
            continue
        since = away_since[seat]
        if since is None or now_ms - since < LEAVE_GRACE_MS:
            return True
    return False


def _creator_here(room: Room, away_since: tuple[int | None, ...], ever: tuple[bool, bool], now_ms: int) -> bool:
    seat = next(i for i, p in enumerate(room.players) if p is not None)
    if not ever[seat]:
        return now_ms - room.created_ms < NEVER_CAME_MS
    since = away_since[seat]
    return since is None or now_ms - since < GONE_GRACE_MS


async def _ratings(state: Any, rooms: list[Room]) -> dict[tuple[str, str], Rating]:
    """(player id, category) → rating, for the players of rated games and challenges, in one read."""
    wanted = {(p.id, category) for room in rooms if room.rated and (category := clock_category(room.clock))
              for p in room.players if p is not None}
    if not wanted:
        return {}
    by_player = await state.ratings.ratings_many(sorted({pid for pid, _ in wanted}))
    return {(pid, cat): by_player[pid][cat] for pid, cat in wanted if cat in by_player.get(pid, {})}


def _rating_text(ratings: dict[tuple[str, str], Rating], room: Room, player_id: str | None) -> str:
    category = clock_category(room.clock) if room.rated else None
    if category is None or player_id is None:
        return ""
    rating = ratings.get((player_id, category))
    return rating.display if rating is not None else Rating().display


def _live_row(room: Room, ratings: dict[tuple[str, str], Rating], spectators: int) -> LiveRow:
    names = player_names(room)
    a, b = room.view(SPECTATOR).scores
    ids = [p.id if p is not None and level_of(p) is None else None for p in room.players]
    return LiveRow(room.id, (names[0] or "", names[1] or ""),
                   (_rating_text(ratings, room, ids[0]), _rating_text(ratings, room, ids[1])),
                   score_pair_text(a, b), room.clock, room.rated, spectators)


def _challenge_row(room: Room, ratings: dict[tuple[str, str], Rating]) -> ChallengeRow:
    creator = next(p for p in room.players if p is not None)
    return ChallengeRow(room.id, creator.id, creator.name, _rating_text(ratings, room, creator.id), room.ruleset or "",
                        room.clock, room.rated)


def lobby_sections(env: Any) -> Callable[[Lobby, str | None], dict[str, str]]:
    """The renderer of the lobby's live sections (``web/templates/_lobby.html``): the same
    macros render the home page and every lobby frame."""
    macros = env.get_template("_lobby.html").module

    def render(lobby: Lobby, player_id: str | None) -> dict[str, str]:
        return {"counts": str(macros.counts(lobby)), "challenges": str(macros.challenges(lobby, player_id)),
                "live": str(macros.live(lobby))}

    return render


# ---------------------------------------------------------------------- the per-process feed


@dataclass(eq=False)
class LobbyWatcher:
    """One lobby socket: what it was last sent, per section (only changes are sent again)."""

    player_id: str | None
    push: Callable[[str], bool]
    lang: str = i18n.DEFAULT
    """The reader's language: the sections are rendered once per language."""
    sent: dict[str, str] = field(default_factory=dict)


class LobbyFeed:
    """Reads the lobby once per ``interval_s`` while somebody watches it and pushes the
    changed sections to every lobby socket of this process (``render(lobby, player_id)`` gives
    ``{section id: html}``)."""

    def __init__(self, state: Any, render: Callable[[Lobby, str | None], dict[str, str]], interval_s: float,
                 players_connected: Callable[[], set[str]], process_id: str) -> None:
        self.state = state
        self.render = render
        self.interval_s = interval_s
        self.players_connected = players_connected
        self.process_id = process_id
        self.watchers: set[LobbyWatcher] = set()
        self.latest = Lobby()
        self._wake = asyncio.Event()
        self._rendered_for: Lobby | None = None
        self._rendered: dict[tuple[str, str | None], dict[str, str]] = {}
        self._reported = 0

    def watch(self, watcher: LobbyWatcher) -> None:
        """Start sending ``watcher`` the lobby: the latest at once if it is fresh, else the read
        this wakes (the loop then sends what changes). Why not the latest whatever its age: with
        nobody watching, nothing reads it, and a socket opened after a while would first get a
        lobby older than the page it came with, which it overwrites."""
        self.watchers.add(watcher)
        if self._fresh(_now_ms()):
            self._send(watcher, self.latest)
        self._wake.set()

    def unwatch(self, watcher: LobbyWatcher) -> None:
        self.watchers.discard(watcher)

    def poke(self) -> None:
        """Something listed changed here (a challenge made or cancelled): read again now."""
        self.latest = replace(self.latest, read_ms=0)
        self._wake.set()

    async def current(self) -> Lobby:
        """The lobby for a page: the loop's latest if it is fresh, else read now."""
        if self._fresh(_now_ms()):
            return self.latest
        return await self.refresh()

    def _fresh(self, now_ms: int) -> bool:
        """The latest read is recent enough to show: within two of the loop's periods."""
        return now_ms - self.latest.read_ms <= 2_000 * self.interval_s

    async def refresh(self) -> Lobby:
        now = _now_ms()
        local = len(self.players_connected() | {w.player_id for w in self.watchers if w.player_id})
        online = await self.state.store.set_online(self.process_id, local, now, ONLINE_ALIVE_MS)
        self._reported = local
        self.latest = await read_lobby(self.state, online, now)
        return self.latest

    async def run(self) -> None:
        """Until cancelled: read and push while anybody watches; otherwise only keep this
        process's count of players online written for the other processes' lobbies."""
        while True:
            try:
                if self.watchers:
                    lobby = await self.refresh()
                    for watcher in list(self.watchers):
                        self._send(watcher, lobby)
                else:
                    await self._report_online()
            except Exception as exc:  # the lobby shows what it had, and tries again next period
                if not redis_down(getattr(self.state, "metrics", None), "lobby", exc):
                    log.exception("lobby read failed")  # not Redis: a bug, logged as one
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval_s if self.watchers else ONLINE_REPORT_S)

    async def _report_online(self) -> None:
        """Write this process's count while it has players (and once more when it drops to 0)."""
        local = len(self.players_connected())
        if local or self._reported:
            await self.state.store.set_online(self.process_id, local, _now_ms(), ONLINE_ALIVE_MS)
            self._reported = local

    def _send(self, watcher: LobbyWatcher, lobby: Lobby) -> None:
        sections = self._sections(lobby, watcher.player_id, watcher.lang)
        changed = [html for key, html in sections.items() if watcher.sent.get(key) != html]
        if changed and watcher.push("".join(changed)):
            watcher.sent.update(sections)

    def _sections(self, lobby: Lobby, player_id: str | None, lang: str = i18n.DEFAULT) -> dict[str, str]:
        """Rendered once per lobby read and language for everybody, and once more per creator of
        a listed challenge (whose row says Cancel)."""
        if self._rendered_for is not lobby:
            self._rendered_for, self._rendered = lobby, {}
        owner = player_id if any(c.creator == player_id for c in lobby.challenges) else None
        sections = self._rendered.get((lang, owner))
        if sections is None:
            with i18n.using(lang):
                sections = self._rendered[(lang, owner)] = self.render(lobby, owner)
        return sections


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
