"""The browser's websocket ``/g/{id}/ws``: htmx JSON up, HTML fragments down.

Per connection the server keeps the player's *selection* (RULES.md: click once = explore
selected, twice = mark selected, thrice = none) and renders it to that connection only; the
room itself reaches the page through the hub, rendered once per viewer class by
:class:`server.web.html_codec.HtmlCodec`. Clicks that only select read the room this process
already holds (:meth:`~server.store.service.RoomService.latest`), not Redis. A move carries the version the page showed; a stale one
is refused with a polite notice and a fresh snapshot.

Frames down, in order, on one bounded queue (:class:`BrowserConn`, an :class:`~server.fanout.Outbox`):

- the hub's snapshot (first frame of every (re)connect) and updates;
- this connection's selection fragments and notices;
- a heartbeat every ``settings.heartbeat_s`` (1 s by default; 0 = none): a fresh ``#hb``
  element whose CSS animation shows "connection lost" only if no heartbeat replaces it for
  4.5 s, plus the clocks of a timed game.

Before the upgrade (:func:`server.edge.admission.admit`): a foreign ``Origin`` gets HTTP 403, an address
over its websocket cap 429. Close codes: 1008 for policy (unknown game, flood, oversized frame:
htmx does not reconnect, and an inert ``#reconnect`` goes first so the page does not either:
:mod:`server.web.reconnect`), 1011 for server errors, 1012 on shutdown, 1013 for slow readers (the hub's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from ..core.room import Room
from ..outage import UNAVAILABLE, UNAVAILABLE_MESSAGE, redis_down
from ..store.service import RoomRefused
from ..web import reconnect, socket_ticket, sound
from ..web.html_codec import HtmlCodec
from ..web.i18n import _
from ..web.language import lang_of
from ..web.presence_view import away_text, claim_look
from ..web.site import web_of
from . import wire
from .admission import admitted
from .browser_session import BrowserConn, Session
from .frames import client_frames
from .peer import client_ip
from .raw_send import frame_sender, frame_writer
from .refusals import refusal_notice
from .solo_session import SoloSession

log = logging.getLogger("mineduel.ws_browser")

POLICY = 1008
SERVER_ERROR = 1011
SLOW = 1013


async def _labels(conn: BrowserConn, ratings: Any, html: HtmlCodec, room: Room | None) -> str:
    """The player cards again when the ratings beside the names changed since this page got
    them: a rated room got a player whose rating this process had not read (read now, once per
    process: never per move), another page's read brought newer ones, or the game just ended
    and its result is applied (the cards then say what it did: "1512, +12")."""
    if room is None or room.kind != "duel":
        return ""
    if html.labels.change_wanted(room, time.time_ns() // 1_000_000, time.monotonic()):
        try:  # what the game did to the ratings, once it is applied (rating_labels)
            await html.labels.load_change(ratings, room, time.monotonic())
        except Exception:  # Redis away: asked again a second later
            return ""
    if html.labels.missing(room):
        try:
            await html.labels.load(ratings, room, fresh=False)
        except Exception:  # Redis away: the names go without ratings until it is back
            return ""
    labels = html.labels.of(room)
    if labels == conn.labels_shown or conn.version != room.version:
        return ""
    conn.labels_shown = labels
    return html.players(room, conn.viewer)


async def _heartbeat(conn: BrowserConn, hub: Any, html: HtmlCodec, room_id: str, period: float,
                     ratings: Any = None) -> None:
    plain = html.heartbeat()
    while not conn.closed:
        await asyncio.sleep(period)
        room = hub.room(room_id)
        reachable = hub.reachable
        if ratings is not None and reachable:
            cards = await _labels(conn, ratings, html, room)
            if cards and not conn.push(cards):
                conn.close(SLOW, "too slow: reconnect to resync")
                return
        if not reachable:  # Redis unreachable (or hanging): the banner, not a clock that may be stale
            frame = html.heartbeat(interrupted=True)
        else:
            timed = room is not None and (room.clock is not None or room.kind == "classic")
            now = time.time_ns() // 1_000_000
            frame = html.heartbeat(room, now) if timed else plain
            if room is not None and room.kind == "duel":
                attendance = hub.attendance(room_id)
                look = claim_look(room, conn.viewer, attendance, now)
                if look is not None or conn.claim_shown:  # the area: shown, counting down, or cleared once
                    frame += html.claim(look)
                conn.claim_shown = look is not None
                away = away_text(room, attendance, now)
                if away != conn.away_shown:  # who has left: said once it holds (a reload is no leaving)
                    frame += html.away(away)  # rendered only when it changes: this runs every second
                    conn.away_shown = away
        if not conn.push(frame):
            conn.close(SLOW, "too slow: reconnect to resync")
            return


async def _ticket_holds(websocket: WebSocket, state: Any) -> bool:
    """Whether the page's socket ticket (``?t=``) is fresh and unused, so this is the one socket
    of that render of ``#room``: :mod:`server.web.socket_ticket`. No ticket, or one that is not
    ours: yes (as before tickets). Redis away: yes (the room's load says what happens then)."""
    ticket = websocket.query_params.get("t")
    if ticket is None or socket_ticket.rendered_ms(ticket) is None:
        return True
    if not socket_ticket.is_fresh(ticket, state.rooms.now_ms()):  # the clock the page's render read
        return False
    try:
        return await state.store.claim_ticket(ticket, 2 * socket_ticket.TICKET_MAX_AGE_MS)
    except Exception as exc:
        if not redis_down(state.metrics, "ticket", exc):
            raise
        return True


async def _browser_socket(websocket: WebSocket) -> None:
    state = websocket.app.state
    settings, rooms, hub = state.settings, state.rooms, state.hub
    room_id = websocket.path_params["id"]
    web = web_of(websocket)
    html = web.codec_for(lang_of(websocket))  # frames in this reader's language (server/web/language.py)
    player = web.player_of(websocket)
    await websocket.accept()
    websocket.scope["mineduel.player"] = player.id if player else None
    if not await _ticket_holds(websocket, state):
        await websocket.close(socket_ticket.SUPERSEDED, "this page's socket was replaced")
        return
    try:
        room = await rooms.latest(room_id)
    except RoomRefused:
        await websocket.send_text(html.notice(_("This game does not exist."), "error") + reconnect.inert(html.m))
        await websocket.close(POLICY, "unknown game")
        return
    except Exception as exc:
        if not redis_down(state.metrics, "load", exc, room=room_id):
            raise
        await websocket.send_text(html.error(UNAVAILABLE, UNAVAILABLE_MESSAGE))
        await websocket.close(SERVER_ERROR, "service interrupted")  # htmx retries with backoff
        return

    async def close(code: int, reason: str) -> None:
        if code == POLICY:  # on purpose (flood, oversized frame, the room gone): the page must not come back
            with contextlib.suppress(Exception):
                await websocket.send_text(reconnect.inert(html.m))
        await websocket.close(code, reason)

    conn = BrowserConn(html, room.viewer_of(player), sound.codec_name(websocket, html.name),
                       player.id if player else None, frame_sender(websocket, text=True), close,
                       maxsize=settings.send_queue, inline=settings.inline_send,
                       write_now=frame_writer(websocket, text=True), latest=lambda: hub.room(room_id))
    conn.shows_end = websocket.query_params.get("end") == "1"  # the page was served finished
    writer = asyncio.create_task(conn.run(), name=f"ws-writer-{room_id}")
    beat: asyncio.Task[None] | None = None
    session: Session | SoloSession = (
        SoloSession(conn, player, room_id, state, html, source=client_ip(websocket, settings))
        if room.kind == "classic" else Session(conn, player, room_id, state, html))
    try:
        if room.kind == "duel":  # the ratings beside the names, before the snapshot renders them
            with contextlib.suppress(Exception):  # Redis away: the load below says so
                await html.labels.load(state.ratings, room, fresh=False)
        conn.labels_shown = html.labels.of(await hub.attach(room_id, conn))
        if settings.heartbeat_s > 0:
            beat = asyncio.create_task(_heartbeat(conn, hub, html, room_id, settings.heartbeat_s, state.ratings),
                                       name=f"ws-heartbeat-{room_id}")
        async for frame in client_frames(websocket, settings, conn, solo=room.kind == "classic"):
            started = time.perf_counter()
            parsed = wire.parse_browser(frame)
            if isinstance(parsed, wire.BadMessage):
                state.metrics.bad_messages.inc()
                session.notice(_("The server did not understand that click; please reload the page."), "error")
                continue
            try:
                await session.handle(parsed, started)
            except RoomRefused as exc:  # the room vanished (expired) under the page
                conn.push(html.notice(refusal_notice(exc.code, exc.message), "error"))
            except Exception as exc:  # Redis unreachable: refused (nothing half-applied), the socket stays
                if not redis_down(state.metrics, "move", exc, room=room_id, player=conn.player_id):
                    raise
                state.metrics.unavailable.inc()
                conn.push(html.error(UNAVAILABLE, UNAVAILABLE_MESSAGE))
                hub.refresh_later(room_id, conn)  # the board as it is, once Redis answers
    except RoomRefused:
        conn.close(POLICY, "unknown game")
    except Exception as exc:
        await conn.fail(exc, room_id, state.metrics, websocket.send_text, html.error(UNAVAILABLE, UNAVAILABLE_MESSAGE))
    finally:
        if beat is not None:
            beat.cancel()
        await hub.detach(room_id, conn)
        await conn.finish(writer)


browser_socket = admitted(_browser_socket)

routes = [WebSocketRoute("/g/{id}/ws", browser_socket)]
