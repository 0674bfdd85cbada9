"""What one write costs the process that writes it, by who reads it: the embedded Valkey (a
command whose reply is awaited, as a commit's ``EVALSHA`` is), another process's uvloop reader
that answers each write (the same pattern without Valkey), or one that answers nothing (as a
websocket client reads a push).

Why: py-spy under load puts about 9% of the app's CPU on the one line that writes a move's
``EVALSHA`` and about 3% on each of its five pushes' writes (docs/PERFORMANCE.md, twenty-third
session), while the bytes differ little (a 1.5-3.5 KB command, a 180-byte frame). On loopback
the writer's own system call delivers the bytes to the reader's socket and wakes the reader;
``perf record -g`` of this bench shows where that goes (``sock_def_readable``'s wake-up).

Each round writes ``--writes`` times to each reader, one write at a time with a pause between
(the reader is asleep when the next write comes, as Valkey mostly is at 500 moves/s), and reads
the thread's CPU clock around the ``transport.write`` alone. Rounds alternate the readers;
figures are the median of the rounds' means, in microseconds of the writer's CPU a write.

    python bench/wakeup.py                      # 3.5 KB and 180-byte writes, 5 rounds
    perf record -e cpu-clock -g -- python bench/wakeup.py --rounds 1 --writes 20000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import uvloop  # noqa: E402

from server.edge.raw_send import frame_header  # noqa: E402
from server.embedded_redis import EmbeddedRedis  # noqa: E402
from server.store.resp import encode  # noqa: E402

SIZES = (3500, 180)


class Reader(asyncio.Protocol):
    """The writer's end: its transport, and a future for the next reply (Valkey's)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.reply: asyncio.Future[bytes] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.reply is not None and not self.reply.done():
            self.reply.set_result(data)


class Sink(asyncio.Protocol):
    """The other process's reader: takes every byte; answers each read if ``answers``."""

    def __init__(self, answers: bool) -> None:
        self.answers = answers
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.answers:
            self.transport.write(b"+OK\r\n")  # type: ignore[union-attr]


async def sink_main(port_file: Path) -> None:
    """Two readers in one process, a silent one and an answering one; their ports to ``port_file``."""
    loop = asyncio.get_running_loop()
    silent = await loop.create_server(lambda: Sink(False), "127.0.0.1", 0)
    answering = await loop.create_server(lambda: Sink(True), "127.0.0.1", 0)
    port_file.write_text(f"{silent.sockets[0].getsockname()[1]} {answering.sockets[0].getsockname()[1]}")
    await asyncio.sleep(3600)


async def write_round(conn: Reader, payload: bytes, writes: int, pause_s: float, reply: bool) -> float:
    """Mean CPU seconds of the writer's thread inside ``transport.write``."""
    loop = asyncio.get_running_loop()
    spent = 0.0
    for _ in range(writes):
        if reply:
            conn.reply = loop.create_future()
        started = time.thread_time()
        conn.transport.write(payload)  # type: ignore[union-attr]
        spent += time.thread_time() - started
        if reply:
            await conn.reply  # type: ignore[misc]
        await asyncio.sleep(pause_s)
    return spent / writes


async def measure(valkey_port: int, sink_ports: list[int], args: argparse.Namespace) -> dict[str, list[float]]:
    loop = asyncio.get_running_loop()
    _, valkey = await loop.create_connection(Reader, "127.0.0.1", valkey_port)
    _, silent = await loop.create_connection(Reader, "127.0.0.1", sink_ports[0])
    _, answering = await loop.create_connection(Reader, "127.0.0.1", sink_ports[1])
    found: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for size in SIZES:
            command = encode("SET", "wakeup", b"x" * size)
            frame = frame_header(0x2, size) + b"x" * size  # a binary websocket frame, as a push
            found.setdefault(f"valkey {size} B", []).append(
                await write_round(valkey, command, args.writes, args.pause_ms / 1000, reply=True))
            found.setdefault(f"answering {size} B", []).append(
                await write_round(answering, command, args.writes, args.pause_ms / 1000, reply=True))
            found.setdefault(f"silent {size} B", []).append(
                await write_round(silent, frame, args.writes, args.pause_ms / 1000, reply=False))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=3000)
    parser.add_argument("--pause-ms", type=float, default=0.5, help="between writes (the reader falls asleep)")
    args = parser.parse_args()
    if not 1 <= args.rounds <= 50 or not 1 <= args.writes <= 100_000 or not 0 <= args.pause_ms <= 100:
        parser.error("--rounds 1..50, --writes 1..100000, --pause-ms 0..100")
    print(f"# {' '.join(sys.argv)}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as tmp:
        port_file = Path(tmp) / "sink.port"
        pid = os.fork()
        if pid == 0:  # the reader process
            try:
                uvloop.run(sink_main(port_file))
            finally:
                os._exit(0)
        valkey = EmbeddedRedis(Path(tmp)).start()
        try:
            deadline = time.monotonic() + 10
            while not port_file.exists() or not port_file.read_text():
                if time.monotonic() > deadline:
                    raise SystemExit("the reader process did not start")
                time.sleep(0.05)
            found = uvloop.run(measure(valkey.port, [int(p) for p in port_file.read_text().split()], args))
        finally:
            valkey.stop()
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    print(f"the writer's CPU a write (us), median of {args.rounds} rounds of {args.writes} (each round's mean):")
    for name, means in found.items():
        print(f"  {name:<16} {1e6 * statistics.median(means):6.1f}   rounds: "
              + ", ".join(f"{1e6 * m:.1f}" for m in means))
    for size in SIZES:
        silent = statistics.median(found[f"silent {size} B"])
        print(f"  at {size} B: valkey / silent {statistics.median(found[f'valkey {size} B']) / silent:.2f}x, "
              f"answering / silent {statistics.median(found[f'answering {size} B']) / silent:.2f}x")
    print(f"# load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
