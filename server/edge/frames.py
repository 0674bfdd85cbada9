"""The frames a client sends on a websocket, within its limits.

The one place both websocket edges apply the frame size limit and the per-connection flood
control (:class:`~server.edge.limits.MessageLimit`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Protocol

from starlette.websockets import WebSocket

from ..config import Settings
from .limits import MessageLimit

POLICY_CLOSE = 1008


class Closable(Protocol):
    viewer: int
    closed: bool

    def close(self, code: int, reason: str = "") -> None: ...


async def client_frames(websocket: WebSocket, settings: Settings, conn: Closable,
                        solo: bool = False) -> AsyncIterator[bytes | str]:
    """Every frame the client sends, until it leaves or breaks a policy: an oversized frame or
    a frame over budget (``solo``: a classic game's, see :class:`MessageLimit`) closes ``conn``
    with 1008 and ends the iteration, so the edge only ever sees frames it may parse."""
    limit = MessageLimit(settings, solo)
    while not conn.closed:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        frame = message.get("bytes")
        if frame is None:
            frame = message.get("text") or ""
        if frame_size(frame) > settings.max_frame_bytes:
            conn.close(POLICY_CLOSE, "frame too large")
            return
        if not limit.allow(conn.viewer, time.monotonic()):
            conn.close(POLICY_CLOSE, "rate limit exceeded")
            return
        yield frame


def frame_size(frame: bytes | str) -> int:
    """The frame's size in bytes as it came over the wire: a text frame's UTF-8 bytes, not its
    characters (``"é" * 4000`` is 8,000 bytes; counted as characters it passed a 4,096-byte
    limit). ``str.isascii`` is a flag CPython keeps, so an ASCII text frame is not encoded."""
    if isinstance(frame, bytes) or frame.isascii():
        return len(frame)
    return len(frame.encode())
