"""Load benchmark for the realtime server over the programmatic (msgpack) websocket.

Against a RUNNING server (start one with ``python -m server``, loopback only):

    # R rooms x (2 bot players + K spectators), moves paced per room, bounded in time
    python bench/load.py play --url http://127.0.0.1:8000 --rooms 500 --spectators 3 \
        --rate 1 --duration 30 --procs 2 --pid <server pid>

    # N idle spectator connections held open, then the server's RSS
    python bench/load.py idle --url http://127.0.0.1:8000 --conns 10000 --rooms 100 --pid <pid>

With ``--serve`` instead of ``--url``, the bench starts a fresh ``python -m server`` (its own
embedded Valkey and data directory, per-IP limits off: :mod:`bench.serve`) for the run, stops
it afterwards, and also prints the machine-speed gauge, the app's GC passes, and Valkey's
slow fsyncs and AOF rewrites; ``--env WORKERS=2`` (repeatable) passes settings to that server:

    python bench/load.py play --serve --rooms 500 --spectators 3 --rate 1 --duration 30 --warmup 10

``play`` prints achieved moves/s and pushes/s, p50/p90/p99/max move-to-push latency over all
recipients (the mover, the opponent and every spectator: from just before the move is sent to
the arrival of the update carrying its version, both ``time.monotonic_ns()`` in the same
client process), error frames by code, closed sockets, and the server's RSS (``--pid``; plus
``--redis-pid`` for the embedded Valkey). The bots explore random hidden cells (a trivial
strategy: only the server's work matters here). Rooms are split over ``--procs`` client
processes so the client is not the bottleneck; every loop is bounded by ``--duration``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import multiprocessing as mp
import os
import random
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serve import BenchServer, gauge_s  # noqa: E402
from server.client import Api, ws_url  # noqa: E402


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rss_mb(pid: int | str | None) -> float | None:
    """Resident memory of ``pid`` (or the sum over comma-separated pids: ``WORKERS`` > 1)."""
    if not pid:
        return None
    if isinstance(pid, str):
        found = [rss_mb(int(p)) for p in pid.split(",")]
        return None if None in found else sum(found)  # type: ignore[arg-type]
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_s(pid: int | str | None) -> float | None:
    """User + system CPU seconds used so far by ``pid`` (from /proc; summed over comma-separated pids)."""
    if not pid:
        return None
    if isinstance(pid, str):
        found = [cpu_s(int(p)) for p in pid.split(",")]
        return None if None in found else sum(found)  # type: ignore[arg-type]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None


def cpu_share(before: float | None, after: float | None, seconds: float) -> str:
    if before is None or after is None:
        return "n/a"
    return f"{100 * (after - before) / seconds:.0f}%"


@dataclass
class Stats:
    moves_sent: int = 0
    skipped_ticks: int = 0
    updates: int = 0
    pushes: int = 0
    latencies: list[int] = field(default_factory=list)
    sent_ns: list[int] = field(default_factory=list)  # when each latency's move was sent
    recording_from_ns: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    closed: int = 0
    rooms_over: int = 0


class RoomState:
    """What the bots of one room know: the version each socket saw, hidden cells, whose turn."""

    def __init__(self, room_id: str, tokens: list[str]) -> None:
        self.id = room_id
        self.tokens = tokens
        self.v = 0
        self.to_move: int | None = None
        self.over = False
        self.hidden: set[tuple[int, int]] = set()
        self.seat_v = [0, 0]
        self.sent_at: dict[int, int] = {}  # version the move will create -> monotonic_ns at send


async def setup_rooms(url: str, rooms: int, concurrency: int = 16) -> list[RoomState]:
    out: list[RoomState] = []
    sem = asyncio.Semaphore(concurrency)
    async with Api(url, timeout_s=60) as api:
        async def one(i: int) -> None:
            async with sem:
                a, b = await api.guest(f"bot{i}a"), await api.guest(f"bot{i}b")
                game = await api.create_game(a.token, seat=0)
                await api.join(b.token, game["id"])
                out.append(RoomState(game["id"], [a.token, b.token]))
        await asyncio.gather(*(one(i) for i in range(rooms)))
    return out


async def reader(ws, room: RoomState, seat: int | None, stats: Stats, recording: list[bool]) -> None:
    """Read frames of one socket until it closes; seat 0's socket also tracks the room state."""
    try:
        async for raw in ws:
            now = time.monotonic_ns()
            f = msgpack.unpackb(raw, raw=False, strict_map_key=False)
            t = f["t"]
            if t == "update":
                v = f["v"]
                stats.pushes += 1
                sent = room.sent_at.get(v)
                if sent is not None and recording[0]:
                    stats.latencies.append(now - sent)
                    stats.sent_ns.append(sent)
                if seat is not None:
                    room.seat_v[seat] = v
                if seat == 0:
                    stats.updates += 1
                    room.v = v
                    for r, c, ch in f["diff"]["cells"]:
                        if ch in ".x":
                            room.hidden.add((r, c))
                        else:
                            room.hidden.discard((r, c))
                    changed = f["diff"]["changed"]
                    if "to_move" in changed:
                        room.to_move = changed["to_move"]
                    if f["room"]["status"] == "over" and not room.over:
                        room.over = True
                        stats.rooms_over += 1
            elif t == "snapshot":
                if seat is not None:
                    room.seat_v[seat] = f["v"]
                if seat == 0:
                    view = f["view"]
                    room.v = f["v"]
                    room.to_move = view["to_move"]
                    room.hidden = {(r, c) for r, row in enumerate(view["rows"]) for c, ch in enumerate(row) if ch in ".x"}
                    room.over = f["room"]["status"] == "over"
            elif t == "error":
                stats.errors[f["code"]] = stats.errors.get(f["code"], 0) + 1
    except Exception:
        pass
    stats.closed += 1


async def pace(room: RoomState, players: list, rate: float, stop_at: float, stats: Stats, rng: random.Random) -> None:
    """Send one move per 1/rate seconds (random phase) from the seat to move, until stop_at."""
    interval = 1.0 / rate
    loop = asyncio.get_running_loop()
    next_tick = loop.time() + rng.random() * interval
    while next_tick < stop_at and not room.over:
        await asyncio.sleep(max(0.0, next_tick - loop.time()))
        next_tick += interval
        seat = room.to_move
        if seat is None or room.seat_v[seat] != room.v or not room.hidden or (room.v + 1) in room.sent_at:
            stats.skipped_ticks += 1
            continue
        cell = rng.choice(tuple(room.hidden))
        room.sent_at[room.v + 1] = time.monotonic_ns()
        await players[seat].send(msgpack.packb({"t": "move", "v": room.v, "action": "explore", "cell": list(cell)}))
        stats.moves_sent += 1


async def run_play(args: argparse.Namespace, rooms_n: int, barrier, results) -> None:
    from websockets.asyncio.client import connect

    stats = Stats()
    rooms = await setup_rooms(args.url, rooms_n)
    sockets = []
    readers = []
    recording = [False]
    sem = asyncio.Semaphore(64)

    async def open_ws(room: RoomState, token: str | None):
        async with sem:
            headers = {"Authorization": f"Bearer {token}"} if token else None
            return await connect(ws_url(args.url, room.id), additional_headers=headers, open_timeout=60,
                                 ping_interval=None, max_size=2**22)

    players_by_room = {}
    for room in rooms:
        conns = await asyncio.gather(open_ws(room, room.tokens[0]), open_ws(room, room.tokens[1]),
                                     *(open_ws(room, None) for _ in range(args.spectators)))
        players_by_room[room.id] = conns[:2]
        sockets.extend(conns)
        for i, ws in enumerate(conns):
            readers.append(asyncio.create_task(reader(ws, room, i if i < 2 else None, stats, recording)))
    await asyncio.sleep(1.0)  # snapshots in
    # The client is the measuring instrument: its own cyclic-GC passes over thousands of
    # sockets would stall its reads and show up as server latency. The run is bounded, so
    # collection is simply off while it measures.
    gc.collect()
    gc.freeze()
    gc.disable()
    await asyncio.get_running_loop().run_in_executor(None, barrier.wait)
    loop = asyncio.get_running_loop()
    start = loop.time()
    stop_at = start + args.warmup + args.duration
    rng = random.Random(os.getpid())
    pacers = [asyncio.create_task(pace(r, players_by_room[r.id], args.rate, stop_at, stats, rng)) for r in rooms]

    async def start_recording() -> None:
        await asyncio.sleep(args.warmup)
        recording[0] = True
        stats.recording_from_ns = time.monotonic_ns()  # one clock for every process of the host
        stats.moves_sent = stats.pushes = stats.updates = 0
    await start_recording()
    await asyncio.gather(*pacers)
    recording[0] = False
    elapsed = loop.time() - start - args.warmup
    await asyncio.sleep(0.5)  # late pushes of the last moves are not counted against the window
    results.put({
        "moves": stats.updates, "sent": stats.moves_sent, "pushes": stats.pushes, "elapsed": elapsed,
        "lat": stats.latencies, "lat_sent": stats.sent_ns, "from": stats.recording_from_ns,
        "errors": stats.errors, "closed": stats.closed, "skipped": stats.skipped_ticks,
        "rooms_over": stats.rooms_over, "conns": len(sockets),
    })
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    for task in readers:
        task.cancel()


async def run_idle(args: argparse.Namespace, conns_n: int, barrier, results) -> None:
    from websockets.asyncio.client import connect

    rooms = await setup_rooms(args.url, max(1, args.rooms // args.procs))
    sem = asyncio.Semaphore(128)
    opened: list = []
    failed = 0

    async def open_ws(i: int) -> None:
        nonlocal failed
        async with sem:
            try:
                ws = await connect(ws_url(args.url, rooms[i % len(rooms)].id), open_timeout=60, ping_interval=None)
                await asyncio.wait_for(ws.recv(), 30)  # the snapshot
                opened.append(ws)
            except Exception:
                failed += 1

    await asyncio.gather(*(open_ws(i) for i in range(conns_n)))
    await asyncio.get_running_loop().run_in_executor(None, barrier.wait)  # all processes connected
    await asyncio.sleep(args.duration)
    alive = sum(1 for ws in opened if ws.close_code is None)
    results.put({"opened": len(opened), "failed": failed, "alive": alive})
    await asyncio.get_running_loop().run_in_executor(None, barrier.wait)  # parent has measured RSS
    await asyncio.gather(*(ws.close() for ws in opened), return_exceptions=True)


def worker(kind: str, args: argparse.Namespace, share: int, barrier, results) -> None:
    raise_fd_limit()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    coro = run_play(args, share, barrier, results) if kind == "play" else run_idle(args, share, barrier, results)
    asyncio.run(coro)


def percentile(sorted_ns: list[int], p: float) -> float:
    if not sorted_ns:
        return float("nan")
    k = min(len(sorted_ns) - 1, max(0, int(round(p / 100 * (len(sorted_ns) - 1)))))
    return sorted_ns[k] / 1e6


def p99_by_window(outs: list[dict], seconds: float = 5.0) -> list[float]:
    """p99 of the latencies of the moves sent in each ``seconds`` of the measured window: one
    long stall and a slow minute give the same overall p99, but not the same line here."""
    start = min(o["from"] for o in outs)
    windows: dict[int, list[int]] = {}
    for o in outs:
        for lat, sent in zip(o["lat"], o["lat_sent"]):
            windows.setdefault(int((sent - start) / (seconds * 1e9)), []).append(lat)
    return [percentile(sorted(windows[k]), 99) for k in sorted(windows)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["play", "idle"])
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--rooms", type=int, default=100)
    ap.add_argument("--spectators", type=int, default=3)
    ap.add_argument("--rate", type=float, default=1.0, help="moves per second per room")
    ap.add_argument("--duration", type=float, default=20.0, help="measured seconds")
    ap.add_argument("--warmup", type=float, default=3.0)
    ap.add_argument("--conns", type=int, default=10_000, help="idle mode: connections")
    ap.add_argument("--procs", type=int, default=2, help="client processes")
    ap.add_argument("--pid", help="server process id(s), comma-separated (WORKERS > 1), for RSS and CPU")
    ap.add_argument("--redis-pid", type=int, help="embedded valkey's pid, for its RSS")
    ap.add_argument("--serve", action="store_true", help="start a fresh server for this run (ignores --url, --pid)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="with --serve: a setting for that server (repeatable)")
    args = ap.parse_args()
    raise_fd_limit()
    if not args.serve:
        if not args.url.startswith(("http://127.", "http://localhost", "http://[::1]")):
            sys.exit("load.py only targets loopback servers")
        bench(args)
        return
    print(f"machine-speed gauge (sum(range(3e7)), best of 3): {gauge_s():.2f} s", flush=True)
    env = dict(item.split("=", 1) for item in args.env)
    with BenchServer(env) as server:
        args.url, args.pid, args.redis_pid = server.url, server.pid_list, server.valkey_pid
        print(f"fresh server {server.url}: app pid(s) {server.pid_list}, valkey pid {server.valkey_pid}"
              + (f", settings {env}" if env else ""), flush=True)
        bench(args)
        passes = server.gc_passes()
        print("app GC passes since start: " + ", ".join(
            f"{gen} {n} ({total:.2f} s in all, longest <= {longest:g} s)" for gen, (n, total, longest) in passes.items()))
        print(server.valkey_report())


def bench(args: argparse.Namespace) -> None:
    """One run against the server at ``args.url`` (printing its figures)."""
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(args.procs + 1)
    results = ctx.Queue()
    total = args.rooms if args.mode == "play" else args.conns
    shares = [total // args.procs + (1 if i < total % args.procs else 0) for i in range(args.procs)]
    rss_before = rss_mb(args.pid)
    procs = [ctx.Process(target=worker, args=(args.mode, args, s, barrier, results)) for s in shares]
    for p in procs:
        p.start()
    barrier.wait(timeout=600)  # everybody connected
    t0 = time.monotonic()
    cpu0 = (cpu_s(args.pid), cpu_s(args.redis_pid), sum(cpu_s(p.pid) or 0.0 for p in procs))
    print(f"mode={args.mode} connected in all {args.procs} client processes; server RSS {rss_mb(args.pid)} MB", flush=True)

    if args.mode == "idle":
        outs = [results.get(timeout=args.duration + 600) for _ in procs]
        print(f"idle connections: opened={sum(o['opened'] for o in outs)} failed={sum(o['failed'] for o in outs)} "
              f"alive after {args.duration:.0f}s={sum(o['alive'] for o in outs)}")
        print(f"server RSS: before={rss_before} MB, holding={rss_mb(args.pid)} MB; valkey RSS={rss_mb(args.redis_pid)} MB")
        barrier.wait(timeout=600)
    else:
        outs = [results.get(timeout=args.duration + args.warmup + 600) for _ in procs]
        peak = rss_mb(args.pid)
        lat = sorted(x for o in outs for x in o["lat"])
        elapsed = max(o["elapsed"] for o in outs)
        moves = sum(o["moves"] for o in outs)
        pushes = sum(o["pushes"] for o in outs)
        errors: dict[str, int] = {}
        for o in outs:
            for k, n in o["errors"].items():
                errors[k] = errors.get(k, 0) + n
        print(f"rooms={args.rooms} spectators/room={args.spectators} conns={sum(o['conns'] for o in outs)} "
              f"rate/room={args.rate}/s duration={elapsed:.1f}s (after {args.warmup:.0f}s warm-up)")
        print(f"moves committed={moves} ({moves / elapsed:.0f}/s), sent={sum(o['sent'] for o in outs)}, "
              f"skipped ticks (previous move not yet seen)={sum(o['skipped'] for o in outs)}, "
              f"rooms over={sum(o['rooms_over'] for o in outs)}")
        print(f"pushes received={pushes} ({pushes / elapsed:.0f}/s)")
        print(f"move-to-push latency over {len(lat)} deliveries: p50={percentile(lat, 50):.2f} ms "
              f"p90={percentile(lat, 90):.2f} ms p99={percentile(lat, 99):.2f} ms max={(lat[-1] / 1e6 if lat else float('nan')):.2f} ms")
        print("p99 per 5 s of the window: " + " ".join(f"{x:.1f}" for x in p99_by_window(outs)) + " ms")
        print(f"errors={errors or 0} sockets closed early={sum(o['closed'] for o in outs)}")
        wall = time.monotonic() - t0
        print(f"server RSS: before={rss_before} MB, end of run={peak} MB; valkey RSS={rss_mb(args.redis_pid)} MB")
        server_cpu = cpu_s(args.pid)
        client_cpu = sum(cpu_s(p.pid) or 0.0 for p in procs)
        print(f"CPU over the run (of one core): server {cpu_share(cpu0[0], server_cpu, wall)}, "
              f"valkey {cpu_share(cpu0[1], cpu_s(args.redis_pid), wall)}, "
              f"load client {cpu_share(cpu0[2], client_cpu, wall)} (all {args.procs} processes)")
        if server_cpu is not None and cpu0[0] is not None and moves:
            # moves are paced at the same rate during the warm-up, so scale the window's rate to the wall
            per_move = 1000 * (server_cpu - cpu0[0]) / (moves / elapsed * wall)
            print(f"server CPU per committed move (with its pushes): {per_move:.2f} ms")
        print(f"load average: {Path('/proc/loadavg').read_text().split()[0]} (1 min; other processes share the cores)")
    for p in procs:
        p.join(timeout=60)
    print(f"bench wall time {time.monotonic() - t0:.1f}s")


if __name__ == "__main__":
    main()
