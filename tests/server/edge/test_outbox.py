"""server/edge/outbox.py with a direct writer: a frame it takes skips the send coroutine, a frame
it refuses takes the send, frames behind a suspended send keep their order, and a writer that
fails ends the connection like a failed send."""

from __future__ import annotations

import asyncio

from server.edge.outbox import Outbox

Frame = bytes | str


class Peer:
    """What reached the peer, and by which way; ``direct`` says whether the writer takes frames."""

    def __init__(self) -> None:
        self.got: list[tuple[str, Frame]] = []
        self.direct = True
        self.gate: asyncio.Event | None = None  # while set to an unset event, sends suspend

    def write_now(self, frame: Frame) -> bool:
        if not self.direct:
            return False
        self.got.append(("direct", frame))
        return True

    async def send(self, frame: Frame) -> None:
        if self.gate is not None:
            await self.gate.wait()
        self.got.append(("send", frame))

    async def close(self, code: int, reason: str) -> None:
        self.got.append(("close", str(code)))


def box_of(peer: Peer, inline: bool = True) -> Outbox:
    return Outbox(0, "msgpack", None, peer.send, peer.close, maxsize=8, inline=inline, write_now=peer.write_now)


async def test_the_writer_takes_what_it_can_and_the_send_the_rest_in_order() -> None:
    peer = Peer()
    box = box_of(peer)
    assert box.send(b"a")
    peer.direct = False
    assert box.send(b"b")
    peer.direct = True
    assert box.send(b"c")
    assert peer.got == [("direct", b"a"), ("send", b"b"), ("direct", b"c")]


async def test_frames_behind_a_suspended_send_wait_for_it_and_do_not_jump_the_queue() -> None:
    peer = Peer()
    box = box_of(peer)
    runner = asyncio.create_task(box.run())
    peer.direct, peer.gate = False, asyncio.Event()
    box.send(b"a")  # suspends: the transport is full
    peer.direct = True  # writable again, as far as the writer can tell
    box.send(b"b")
    box.send(b"c")
    assert peer.got == []
    peer.gate.set()
    for _ in range(100):
        if len(peer.got) == 3:
            break
        await asyncio.sleep(0.01)
    assert peer.got == [("send", b"a"), ("send", b"b"), ("send", b"c")]
    box.close(1000)
    await asyncio.wait_for(runner, 5)


async def test_with_inline_sends_off_every_frame_takes_the_send() -> None:
    peer = Peer()
    box = box_of(peer, inline=False)
    runner = asyncio.create_task(box.run())
    box.send(b"a")
    box.close(1000)
    await asyncio.wait_for(runner, 5)
    assert peer.got == [("send", b"a"), ("close", "1000")]


async def test_a_writer_that_fails_ends_the_connection() -> None:
    peer = Peer()

    def broken(frame: Frame) -> bool:
        raise RuntimeError("transport closed")

    box = Outbox(0, "msgpack", None, peer.send, peer.close, write_now=broken)
    runner = asyncio.create_task(box.run())
    assert box.send(b"a")  # taken, and failed: as a failed send is
    await asyncio.wait_for(runner, 5)
    assert box.closed and not box.send(b"b")
    assert peer.got == []


async def test_a_close_after_its_frames_sends_them_first_and_a_plain_close_drops_them() -> None:
    """With sends in tasks (inline off, as with the bypasses off) frames wait behind the first:
    an edge's last words (the pairing page's answer) go out before the close; a plain close
    jumps the queue."""
    for after_frames, expected in ((True, [("send", "a"), ("send", "b"), ("send", "c"), ("close", "1000")]),
                                   (False, [("send", "a"), ("close", "1000")])):
        peer = Peer()
        box = box_of(peer, inline=False)
        runner = asyncio.create_task(box.run())
        for frame in ("a", "b", "c"):
            assert box.send(frame)
        box.close(1000, "", after_frames=after_frames)
        await asyncio.wait_for(runner, 5)
        assert peer.got == expected, after_frames
