"""The quick-pairing websocket (``/pair/ws?pool=<pool id>``): the socket IS the browser's seek.

The "Looking for an opponent…" page (:mod:`server.web.pair_pages`) connects with the htmx ws
extension. The handler seeks (:meth:`server.store.matchmaker.Pairing.seek`, no time limit)
for as long as the socket is open: closing the tab, leaving the page or losing the connection
cancels the seek, which removes it from its pool (a lost connection that htmx re-opens seeks
again). The page's buttons send ``{"action": "cancel"}`` or ``{"action": "computer"}``
(``ws-send`` forms): the seek is ended through the store (so a pair formed a moment before
still wins and lands the player in that game), then the page shows the way home, or the
player gets a game against the medium computer. After ``settings.pairing_computer_after_s``
alone the server adds the "Play the computer instead" button (the computer is not asked for
before: such a frame is ignored). A seek counts as a new game against the address's limit,
as the API's seeks do.

Frames down are HTML elements swapped by id: ``#pair-status`` and ``#pair-actions``. Once
paired, ``#pair-status`` carries an element that GETs ``/pair/landing?game=<id>`` on load,
answered with ``HX-Redirect: /g/<id>``: the page becomes the game's page, for both players at
once. Then the socket closes with 1000 (htmx does not reopen it). The pair is taken (told) as
that frame goes to a page still there; a socket that closed as the pair formed leaves it for
the player's next seek (the reopened socket's, or any other).

Guards as on every websocket (:func:`~server.edge.admission.admitted`: foreign ``Origin`` 403,
too many sockets 429; frames within size and budget); identity from the guest cookie. A seek
of the same player elsewhere (another tab) is taken over: it ends there, and this one seeks.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from engine import SPECTATOR

from ..core.pools import POOLS, Pool
from ..core.room import Player
from ..outage import redis_down
from ..store.matchmaker import Pairing
from ..store.seek_ends import AlreadySeeking, Paired, Unpaired
from ..tasks import stop_tasks
from ..web.i18n import _
from ..web.site import limited_text, web_of
from . import new_game
from .admission import admitted
from .frames import client_frames
from .limits import Limited, guard_of
from .outbox import Outbox
from .raw_send import frame_sender, frame_writer

log = logging.getLogger("mineduel.ws_pair")

NORMAL = 1000
POLICY = 1008
SERVER_ERROR = 1011
ACTIONS = ("cancel", "computer")
END_BOUND_S = 5.0
"""How long ending a seek may take before its task is simply cancelled."""


async def _pair_socket(websocket: WebSocket) -> None:
    state = websocket.app.state
    web = web_of(websocket)
    player = web.player_of(websocket)
    pool = POOLS.get(websocket.query_params.get("pool", ""))
    await websocket.accept()
    websocket.scope["mineduel.player"] = player.id if player else None
    if player is None or pool is None:
        reason = "pick a name first" if player is None else "unknown pool"
        await websocket.send_text(_render(web, "status", text=_("That search cannot start here."), home=True))
        await websocket.close(POLICY, reason)
        return
    try:  # a seek may end in a game (a pair's, the computer's): counted as the API's seeks are
        guard_of(websocket).new_game(websocket)
    except Limited as exc:
        await websocket.send_text(_render(web, "status", text=limited_text(exc), home=True))
        await websocket.close(POLICY, "too many new games")
        return

    async def close(code: int, reason: str) -> None:
        await websocket.close(code, reason)

    conn = Outbox(SPECTATOR, "html", player.id, frame_sender(websocket, text=True), close,
                  maxsize=state.settings.send_queue, inline=state.settings.inline_send,
                  write_now=frame_writer(websocket, text=True))
    writer = asyncio.create_task(conn.run(), name="ws-pair-writer")
    try:
        await _seek_while_open(websocket, conn, await state.guests.current(player), pool)
    except Exception as exc:  # Redis away: htmx reopens the socket later (1011), which seeks again
        if not redis_down(state.metrics, "pairing_socket", exc, player=player.id):
            log.exception("pairing socket failed")
        conn.send(_render(web, "status", text=_("The service is interrupted; trying again shortly…")))
        conn.close(SERVER_ERROR, "service interrupted")
    finally:
        await conn.finish(writer)


async def _seek_while_open(websocket: WebSocket, conn: Outbox, me: Player, pool: Pool) -> None:
    """Seek until paired, or until the page asks otherwise or goes away; then land or say so."""
    state = websocket.app.state
    pairing: Pairing = state.pairing
    seek = asyncio.create_task(_seek_taking_over(pairing, me, pool), name="ws-pair-seek")
    offered = asyncio.Event()
    asked = asyncio.create_task(_action(websocket, conn, offered), name="ws-pair-actions")
    beats = [asyncio.create_task(_heartbeat(conn, _render(web_of(websocket), "beat"), state.settings.heartbeat_s),
                                 name="ws-pair-heartbeat")] if state.settings.heartbeat_s > 0 else []
    try:
        offer_s = state.settings.pairing_computer_after_s or None
        done, _pending = await asyncio.wait({seek, asked}, timeout=offer_s, return_when=asyncio.FIRST_COMPLETED)
        if not done:  # alone for a while: offer the computer, and wait on
            offered.set()
            conn.send(_render(web_of(websocket), "actions", computer=True))
            await asyncio.wait({seek, asked}, return_when=asyncio.FIRST_COMPLETED)
        if seek.done():
            result = seek.result()
            action = None
            if isinstance(result, Paired) and _went_away(asked):  # the socket closed as the pair formed:
                return  # untold, the pair waits for the page's next seek (htmx reopens a lost socket)
        else:
            action = asked.result()
            if action is None:  # the page went away: the seek's cancel removes it from its pool
                return
            result = await _end(pairing, me, seek)
        await stop_tasks(beats)  # no beat after the answer's "off"
        await _answer(websocket, conn, me, pool, result, action)
    finally:
        await stop_tasks((seek, asked, *beats))


async def _heartbeat(conn: Outbox, frame: str, period: float) -> None:
    """The page's ``#hb`` again every ``period`` s, as a game page's: its "connection lost"
    notice shows only when none came for a few seconds (an outside probe saw the page wait on,
    "Waiting for somebody…", with the network gone)."""
    while not conn.closed:
        await asyncio.sleep(period)
        conn.send(frame)


async def _answer(websocket: WebSocket, conn: Outbox, me: Player, pool: Pool, result: Paired | Unpaired,
                  action: str | None) -> None:
    """Tell the page how the seek ended, and close normally (its heartbeat stopped first: a
    search that ended is no lost connection, an outside probe saw the notice come after it)."""
    web = web_of(websocket)
    conn.send(_render(web, "beat_off"))
    if isinstance(result, Paired):  # taken once the landing is on its way to a page still there
        if conn.send(_render(web, "landing", game=result.room_id, opponent=result.opponent.name)):
            await websocket.app.state.pairing.told(result)
    elif action == "computer":
        room, _seat = await new_game.computer_game(websocket.app.state.rooms, pool, me)
        conn.send(_render(web, "landing", game=room.id, opponent=_("the computer")))
    elif action == "cancel":
        conn.send(_render(web, "status", text=_("You stopped looking for an opponent."), home=True))
    else:  # ended elsewhere: the player's seek in another tab took over
        conn.send(_render(web, "status", text=_("This search ended: you started another one."), home=True))
    conn.send(_render(web, "actions", computer=False, over=True))
    conn.close(NORMAL, "", after_frames=True)


async def _seek_taking_over(pairing: Pairing, me: Player, pool: Pool) -> Paired | Unpaired:
    """Seek without a time limit; a seek of the same player elsewhere is ended first (the
    newest page wins: a reloaded page seeks while its old socket's seek is still being ended)."""
    for _attempt in range(3):
        try:
            return await pairing.seek(me, pool, wait_s=None)
        except AlreadySeeking:
            await pairing.cancel(me.id)
    try:
        return await pairing.seek(me, pool, wait_s=None)
    except AlreadySeeking:  # two pages taking turns: this one gives way
        return Unpaired.CANCELLED


async def _end(pairing: Pairing, me: Player, seek: asyncio.Task[Paired | Unpaired]) -> Paired | Unpaired:
    """End the seek through the store, so a pair formed a moment before still counts; asked
    again while it is not stored yet (bounded), then its task is cancelled."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + END_BOUND_S
    while loop.time() < deadline:
        await pairing.cancel(me.id)
        done, _pending = await asyncio.wait({seek}, timeout=0.1)
        if done:
            return seek.result()
    seek.cancel()
    return Unpaired.CANCELLED


def _went_away(asked: asyncio.Task[str | None]) -> bool:
    """The page's reader has ended without an action: the socket is gone."""
    return asked.done() and (asked.cancelled() or asked.exception() is not None or asked.result() is None)


async def _action(websocket: WebSocket, conn: Outbox, offered: asyncio.Event) -> str | None:
    """The first action the page sends (``cancel``, or ``computer`` once ``offered``); ``None``
    once it goes away. Anything else is read within the frame limits and ignored. Why not the
    computer before it is offered: a socket sending it at once made a computer game a moment,
    a way around the wait (and a flood of games in the lobby's live list)."""
    async for frame in client_frames(websocket, websocket.app.state.settings, conn):
        action = _action_of(frame)
        if action == "cancel" or (action == "computer" and offered.is_set()):
            return action
    return None


def _action_of(frame: bytes | str) -> str | None:
    try:
        data: Any = json.loads(frame)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    action = data.get("action") if isinstance(data, dict) else None
    return action if action in ACTIONS else None


def _render(web: Any, part: str, **context: Any) -> str:
    """One of the pairing page's elements (``web/templates/_pair.html``), as a frame."""
    macro = getattr(web.env.get_template("_pair.html").module, part)
    return str(macro(**context))


pair_socket = admitted(_pair_socket)

routes = [WebSocketRoute("/pair/ws", pair_socket)]
