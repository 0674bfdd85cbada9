"""Quick pairing over the API (``POST /api/v1/pairing``, docs/PROTOCOL.md): a seek that is
one open request, answered once paired, after ``wait_s`` (nobody came), or with a game against
the computer after ``computer_after_s``; closing the request ends the seek.

A pair is taken (:meth:`~server.store.matchmaker.Pairing.told`) only once its answer was
written and the client kept the request open a moment after (:class:`PairedAnswer`); otherwise
(the client left as the pair formed: the seek cancelled at any point, the answer written to
nobody, or to a client that closed as it arrived) it waits for the player's next seek, which
answers with it (``"earlier"`` when of another pool)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..core.pools import Pool, PoolError, pool_of
from ..store.matchmaker import Pairing
from ..store.seek_ends import AlreadySeeking, Paired, Unpaired
from ..tasks import stop_tasks
from . import new_game
from .json_edge import ApiError, handles, player_of, read_body
from .limits import guard_of

DEFAULT_WAIT_S = 30
MAX_WAIT_S = 60
MIN_COMPUTER_AFTER_S = 5
SETTLE_S = 0.2
"""How long a paired answer's request stays open after its body is written, for the server to
see a client that closes as the answer arrives (and so may not have read it)."""


@handles
async def pair(request: Request) -> Response:
    """Quick pairing: ``{"ruleset", "clock": {"initial", "increment"} | {"days"}, "rated",
    "wait_s", "computer_after_s"}``. Answers ``200 {"game", "seat"}`` once paired, ``204``
    after ``wait_s`` with the seek gone, or (``computer_after_s``: nobody came that long) ``200
    {"game", "seat", "computer": true}``; a client that closes the request ends its seek."""
    state = request.app.state
    player = player_of(request)
    body = await read_body(request)
    pool, wait_s, computer_after_s = _seek_of(body)
    guard_of(request).new_game(request)
    me = await state.guests.current(player)
    try:
        paired = await _unless_disconnected(request, state.pairing.seek(me, pool, computer_after_s or wait_s))
    except AlreadySeeking as exc:
        raise ApiError(409, exc.code, "you are seeking already (one seek at a time, on any server)") from None
    if isinstance(paired, Paired):
        return PairedAnswer(paired, pool, state.pairing)
    if paired is Unpaired.TIMED_OUT and computer_after_s is not None:
        room, seat = await new_game.computer_game(state.rooms, pool, me)
        return JSONResponse({"game": room.id, "seat": seat, "computer": True})
    return Response(status_code=204)


def paired_answer(paired: Paired, asked: Pool) -> dict[str, object]:
    """The answer of a seek that ended in a game: ``{"game", "seat"}``, plus ``"earlier": true``
    when the game is the pair of the player's earlier seek of another pool (formed the instant
    that seek's request closed, and handed to this one: docs/PROTOCOL.md), so a client can tell
    that its terms are not the ones it just asked for."""
    answer: dict[str, object] = {"game": paired.room_id, "seat": paired.seat}
    if paired.pool != asked:
        answer["earlier"] = True
    return answer


class PairedAnswer(JSONResponse):
    """``200 {"game", "seat"}`` for a seek that ended in a pair, taken only when the answer
    reached a client still there. The body is written (``more_body``: its length is told, so
    the client has the whole answer at once); the request then stays open ``settle_s``: a
    client that closes meanwhile (it left before, and uvicorn dropped the answer without an
    error; or it gave up as the answer arrived, unread) leaves the pair for its next seek,
    else the pair is taken; then the response ends. The server cannot see a client read, so
    a doubt leaves the pair: a one-shot client that reads and closes at once (``curl``) is
    handed the same game by its next seek within the pair's lifetime. A next request on the
    same connection waits out the settle."""

    def __init__(self, paired: Paired, asked: Pool, pairing: Pairing, settle_s: float = SETTLE_S) -> None:
        super().__init__(paired_answer(paired, asked))
        self.paired = paired
        self.pairing = pairing
        self.settle_s = settle_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.body, "more_body": True})
        if not await client_left(receive, self.settle_s):
            await self.pairing.told(self.paired)
        await send({"type": "http.response.body", "body": b""})


async def client_left(receive: Receive, within_s: float) -> bool:
    """Whether the client closes the request (or had) within ``within_s``: the body read and
    the response not ended, ``receive`` answers only ``http.disconnect``, at once if the server
    knows it already."""
    try:
        async with asyncio.timeout(within_s):
            await _disconnect(receive)
    except TimeoutError:
        return False
    return True


def _seek_of(body: dict[str, Any]) -> tuple[Pool, int, int | None]:
    """A seek's pool, ``wait_s`` and ``computer_after_s`` (``None``: never), or the refusal."""
    if "clock" not in body:
        raise ApiError(400, "bad_field", '"clock" is required: {"initial": s, "increment": s} or {"days": n}')
    wait_s = body.get("wait_s", DEFAULT_WAIT_S)
    if type(wait_s) is not int or not 1 <= wait_s <= MAX_WAIT_S:
        raise ApiError(400, "bad_field", f'"wait_s" must be a whole number of seconds in 1..{MAX_WAIT_S}')
    after = body.get("computer_after_s")
    if after is not None and (type(after) is not int or not MIN_COMPUTER_AFTER_S <= after <= wait_s):
        raise ApiError(400, "bad_field", f'"computer_after_s" must be a whole number of seconds in '
                       f'{MIN_COMPUTER_AFTER_S}..wait_s ({wait_s})')
    try:
        pool = pool_of(body.get("ruleset", "brettspielnetz"), body["clock"], body.get("rated", False))
    except PoolError as exc:
        raise ApiError(400, exc.code, str(exc)) from None
    return pool, wait_s, after


T = TypeVar("T")
GONE = object()
"""What :func:`_unless_disconnected` returns when the client left first."""


async def _unless_disconnected(request: Request, work: Awaitable[T]) -> T | object:
    """``work``'s result, or :data:`GONE` as soon as the client closes the connection (then
    ``work`` is cancelled: its own cleanup runs). Starlette does not cancel a handler whose
    client left; the server says so on ``receive`` (``http.disconnect``), which after the body
    was read waits for exactly that: no polling."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_client_gone(request))
    try:
        await asyncio.wait((task, gone), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the server is stopping: the work stops too
        task.cancel()
        raise
    finally:
        gone.cancel()
    if task.done():
        return task.result()
    await stop_tasks((task,))  # nobody is left to answer; a failure was logged where it happened
    return GONE


async def _client_gone(request: Request) -> None:
    await _disconnect(request.receive)


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        await asyncio.sleep(0.1)  # a stray body message (none is due after the body): never a busy loop


routes = [Route("/api/v1/pairing", pair, methods=["POST"])]
