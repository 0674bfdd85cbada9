"""The lobby's per-process feed: read once a second while anybody watches, pushed to every
lobby socket of this process (``server/edge/ws_lobby.py``) as the sections that changed.

:class:`LobbyFeed` reads the lobby (:func:`.lobby.read_lobby`) every ``interval_s`` while
anybody watches it, renders it once per language (the challenges once more per viewer who has
one: their row says Cancel, not Accept) and sends each socket the sections that changed since
its last frame; with nobody watching it still writes this process's count of connected players
every :data:`ONLINE_REPORT_S`, so other processes' lobbies count them. Why a poll and not a
channel: a listed room's changes already travel on its own channel, and subscribing every
process to every listed room to learn what one read a second gives would cost more than the
read; the lobby is allowed a second of delay, the game is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..outage import redis_down
from . import i18n
from .lobby import Lobby, read_lobby

log = logging.getLogger("mineduel.lobby")

ONLINE_ALIVE_MS = 10_000
"""A process's count of connected players counts this long after it was written."""
ONLINE_REPORT_S = ONLINE_ALIVE_MS / 3_000
"""How often a process with nobody watching the lobby still writes its count (well within
:data:`ONLINE_ALIVE_MS`), so a lobby read elsewhere counts this process's players."""


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
