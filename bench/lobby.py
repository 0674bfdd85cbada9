"""Quick pairing under arrivals: N seekers over two server processes, arriving at random.

Two ``python -m server`` processes share one embedded Valkey (the first starts it, as
``bench/serve.py`` does; the second is pointed at it, with ``MINEDUEL_WAITAOF=0`` like the
first: the embedded Valkey fsyncs every write itself). N guests are made first (not timed).
Then each seeker arrives at a uniformly random moment of ``--arrive-s`` seconds (a Poisson-like
stream of N / arrive-s per second), picks one of ``--pools`` pools and one of the two
processes at random, and calls ``POST /api/v1/pairing`` (``wait_s`` 60). Every seeker is its
own HTTP request, kept open until the answer.

Figures:

- **pairing latency** per pair: from the moment the pair became possible (the later of the two
  seeks was sent) until *both* players hold the game (the later of the two answers arrived).
  This is the server's part; a first seeker's wait for a partner to arrive is not in it.
- **seeker wait** (for context): each seeker's own request time, partner's arrival included.
- **lobby push** (``--watchers``, after the pairing): that many lobby sockets (``/lobby/ws``)
  over both processes, then ``--challenges`` open challenges made one after another over the
  API by a creator whose socket is open: the time from the challenge's creation until every
  lobby socket has been sent it (the lobby is read once a second per process, so this is
  bounded by ``MINEDUEL_LOBBY_REFRESH_S`` by design), and the two app processes' CPU per
  lobby frame sent in that phase (``/proc`` times over the frames counted by the sockets).

Seekers left alone when arrivals stop (a pool with an odd count) have their requests closed
``--settle-s`` seconds after the last arrival, which ends their seeks; they are counted, not
timed. The run is bounded: guests, then ``arrive-s + settle-s``.

    python bench/lobby.py --seekers 1000 --arrive-s 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.serve import BENCH_ENV, BenchServer, gauge_s  # noqa: E402
from server.client import Api  # noqa: E402
from server.embedded_redis import free_port  # noqa: E402

POOLS = [
    {"clock": {"initial": 60, "increment": 1}, "ruleset": "brettspielnetz", "rated": False},
    {"clock": {"initial": 180, "increment": 2}, "ruleset": "brettspielnetz", "rated": True},
    {"clock": {"initial": 300, "increment": 3}, "ruleset": "coan", "rated": False},
    {"clock": {"initial": 600, "increment": 5}, "ruleset": "coan", "rated": True},
    {"clock": {"days": 3}, "ruleset": "brettspielnetz", "rated": False},
    {"clock": {"days": 1}, "ruleset": "coan", "rated": True},
]


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class Seek:
    token: str
    pool: int
    server: int
    at_s: float
    sent: float = 0.0
    answered: float = 0.0
    game: str | None = None
    error: str | None = None


@dataclass
class Second:
    """A second ``python -m server`` on the first one's Valkey."""

    valkey_url: str
    data_dir: Path
    process: subprocess.Popen[bytes] | None = None
    url: str = ""
    log: list[str] = field(default_factory=list)

    def __enter__(self) -> Second:
        port = free_port()
        env = {**os.environ, **BENCH_ENV, "PORT": str(port), "REDIS_URL": self.valkey_url, "MINEDUEL_WAITAOF": "0",
               "MINEDUEL_DATA": str(self.data_dir), "PYTHONPATH": str(ROOT)}
        log_path = self.data_dir / "second.log"
        with open(log_path, "w") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "server"], cwd=ROOT, env=env, stdout=out,
                                            stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the second server exited:\n{log_path.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.__exit__()
        raise RuntimeError("the second server did not become healthy")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()


async def make_guests(apis: list[Api], count: int) -> list[str]:
    tokens: list[str] = []
    for start in range(0, count, 50):
        batch = await asyncio.gather(*(apis[i % 2].guest() for i in range(start, min(count, start + 50))))
        tokens.extend(g.token for g in batch)
    return tokens


async def run_seeks(apis: list[Api], seeks: list[Seek], settle_s: float) -> None:
    t0 = time.perf_counter()

    async def one(seek: Seek) -> None:
        await asyncio.sleep(max(0.0, t0 + seek.at_s - time.perf_counter()))
        seek.sent = time.perf_counter()
        try:
            answer = await apis[seek.server].pair(seek.token, wait_s=60, **POOLS[seek.pool])
        except Exception as exc:  # noqa: BLE001 - counted and shown
            seek.error = f"{type(exc).__name__}: {exc}"[:120]
            return
        seek.answered = time.perf_counter()
        seek.game = answer["game"] if answer else None

    tasks = [asyncio.create_task(one(s)) for s in seeks]
    last = max(s.at_s for s in seeks)
    await asyncio.wait(tasks, timeout=last + settle_s)
    for task in tasks:  # left alone: closing the request ends the seek
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def figures(label: str, values_s: list[float]) -> str:
    if not values_s:
        return f"{label}: none"
    ms = sorted(v * 1000 for v in values_s)
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    return (f"{label} (n={len(ms)}): median {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, "
            f"max {ms[-1]:.1f} ms")


def report(seeks: list[Seek]) -> None:
    games: dict[str, list[Seek]] = {}
    for seek in seeks:
        if seek.game:
            games.setdefault(seek.game, []).append(seek)
    bad = [g for g, members in games.items() if len(members) != 2 or members[0].pool != members[1].pool]
    pairs = [m for m in games.values() if len(m) == 2]
    latency = [max(a.answered, b.answered) - max(a.sent, b.sent) for a, b in pairs]
    waits = [s.answered - s.sent for s in seeks if s.game]
    alone = [s for s in seeks if s.game is None and s.error is None]
    errors = [s.error for s in seeks if s.error]
    print(f"seekers {len(seeks)}: paired {2 * len(pairs)} in {len(pairs)} games, left alone {len(alone)} "
          f"(their requests closed), errors {len(errors)}, inconsistent games {len(bad)}")
    for error in sorted(set(errors))[:5]:
        print(f"  error: {error}")
    print(figures("pairing latency (later seek sent -> both answers in)", latency))
    print(figures("seeker wait (own request, partner's arrival included)", waits))


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` so far (``/proc/<pid>/stat``)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


async def lobby_push(args: argparse.Namespace, urls: list[str], apis: list[Api], pids: list[int]) -> None:
    from websockets.asyncio.client import connect

    from server.client import GameSocket

    watchers = [await connect(url.replace("http", "ws", 1) + "/lobby/ws", origin=url, open_timeout=30)
                for i in range(args.watchers) for url in [urls[i % 2]]]
    seen: list[dict[str, float]] = [{} for _ in watchers]
    frames = [0]

    async def read(i: int) -> None:
        async for frame in watchers[i]:
            frames[0] += 1
            for room_id in list(pending):
                if f'id="challenge-{room_id}"' in frame and room_id not in seen[i]:
                    seen[i][room_id] = time.perf_counter()

    pending: dict[str, float] = {}
    readers = [asyncio.create_task(read(i)) for i in range(len(watchers))]
    creator = (await apis[0].guest()).token
    delays: list[float] = []
    await asyncio.sleep(2)  # every socket had its first frames
    before, frames[0] = cpu_s(pids), 0
    try:
        for _ in range(args.challenges):
            game = await apis[0].create_game(creator, seat=0)
            made = pending[game["id"]] = time.perf_counter()
            async with await GameSocket.connect(urls[0], game["id"], creator):  # the creator is here
                deadline = made + 10
                while time.perf_counter() < deadline and not all(game["id"] in s for s in seen):
                    await asyncio.sleep(0.01)
            if all(game["id"] in s for s in seen):
                delays.append(max(s[game["id"]] for s in seen) - made)
            await apis[0].request("POST", f"/api/v1/games/{game['id']}/abort", creator, {})
    finally:
        used = cpu_s(pids) - before
        for task in readers:
            task.cancel()
        for ws in watchers:
            await ws.close()
    print(figures(f"lobby push (challenge made -> all {len(watchers)} lobby sockets have it)", delays))
    if frames[0]:
        print(f"lobby frames sent {frames[0]}, app CPU {used:.2f} s: {1e6 * used / frames[0]:.0f} µs per lobby "
              f"frame (the two processes, everything they did in that phase)")


async def bench(args: argparse.Namespace, urls: list[str], pids: list[int]) -> None:
    apis = [Api(url, timeout_s=90, max_connections=args.seekers + 50) for url in urls]
    try:
        tokens = await make_guests(apis, args.seekers)
        rng = random.Random(args.seed)
        seeks = [Seek(token, rng.randrange(args.pools), rng.randrange(2), rng.uniform(0, args.arrive_s))
                 for token in tokens]
        print(f"{args.seekers} guests made; arrivals over {args.arrive_s} s "
              f"({args.seekers / args.arrive_s:.0f}/s) in {args.pools} pools; load average {loadavg()}", flush=True)
        await run_seeks(apis, seeks, args.settle_s)
        report(seeks)
        if args.watchers:
            await lobby_push(args, urls, apis, pids)
    finally:
        for api in apis:
            await api.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seekers", type=int, default=1000)
    ap.add_argument("--arrive-s", type=float, default=20.0, help="arrivals spread over this many seconds")
    ap.add_argument("--pools", type=int, default=len(POOLS), choices=range(1, len(POOLS) + 1))
    ap.add_argument("--settle-s", type=float, default=5.0, help="after the last arrival, before closing the rest")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--watchers", type=int, default=200, help="lobby sockets for the lobby push (0: none)")
    ap.add_argument("--challenges", type=int, default=20)
    args = ap.parse_args(argv)
    print("command: " + shlex.join(["python", "bench/lobby.py", *(argv if argv is not None else sys.argv[1:])]))
    print(f"before: machine-speed gauge {gauge_s():.2f} s, load average {loadavg()}", flush=True)
    with BenchServer() as first, tempfile.TemporaryDirectory(prefix="mineduel-lobby-") as data:
        with Second(first.valkey_url, Path(data)) as second:
            asyncio.run(bench(args, [first.url, second.url], [*first.app_pids, second.process.pid]))
    print(f"after: machine-speed gauge {gauge_s():.2f} s, load average {loadavg()}")


if __name__ == "__main__":
    main()
