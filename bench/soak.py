"""Soak test: hours of life in minutes — churn against one server, memory and latency over time.

    python bench/soak.py                      # 10 minutes; starts its own server (embedded Valkey)
    python bench/soak.py --minutes 2 --slots 20
    python bench/soak.py --url http://127.0.0.1:8000 --pid <server pid> --redis-url redis://127.0.0.1:6379/0

``--slots`` game slots run at once, each in a loop (everything bounded by ``--minutes``):
create two guests and a game (a quarter of them with a clock), join, connect both players over
the msgpack websocket, let 0–3 spectators come and go (a third of them browser sockets on
``/g/{id}/ws``), play random explores paced ``--pace`` seconds apart per room, with churn on the
way — a player drops and reconnects (resync by snapshot), a spectator leaves or arrives, one
game in ten is resigned half-way — and at the end either a rematch (same players, seats
swapped) or everybody leaves and the slot starts afresh.

Every ``--report-s`` (30) seconds one line: server RSS, Valkey RSS, open websockets and live
rooms (from ``/metrics``), the hub's cached rooms and pending local commits, Redis keys
(``DBSIZE``), games finished, moves committed, and the move-to-push latency p50/p99 of that
window (from just before a move is sent to the arrival of its update, over every recipient:
mover, opponent, msgpack spectators; one client clock), and the GC policy's full passes in the
window with their time (``mineduel_gc_pause_seconds``: with automatic collection off, the
connections' cyclic garbage waits for them, so the RSS column shows what they let grow). The
closing summary compares the first and last windows after warm-up.

Started by the soak, the server keeps finished games for ``--finished-ttl`` seconds (default
60; production default 30 days) so that the retention policy shows within the run: a finished
game's state and log expire a minute after it ends. The key count still grows: every game the
soak seats is played by two new guests, and a guest is a player, kept (``pl:{players}:*``), and
a room's presence hash (``game:*:watchers``) outlives its last connection by a day, which in
production is shorter than a finished game's 30 days. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from websockets.exceptions import ConnectionClosed  # noqa: E402

from bench.serve import BenchServer  # noqa: E402
from server.client import Api, GameSocket  # noqa: E402

from load import rss_mb  # noqa: E402  (bench/load.py, next to this script)

MAX_MOVES = 150  # per game: a duel has at most 121 cells
WAIT_S = 10.0  # longest wait for one move's update before the room gives up on it


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


@dataclass
class Window:
    latencies: list[float] = field(default_factory=list)
    moves: int = 0
    games: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    reconnects: int = 0
    spectator_churn: int = 0
    timeouts: int = 0


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.url = args.url
        self.ws_base = args.url.replace("http://", "ws://")
        self.deadline = 0.0
        self.window = Window()
        self.total = Window()
        self.rng = random.Random(args.seed)

    def stopping(self) -> bool:
        return time.monotonic() >= self.deadline

    def error(self, code: str) -> None:
        for w in (self.window, self.total):
            w.errors[code] = w.errors.get(code, 0) + 1

    # ------------------------------------------------------------------ one slot

    async def slot(self, api: Api, n: int) -> None:
        rng = random.Random(self.args.seed * 1000 + n)
        for _game in range(100_000):
            if self.stopping():
                return
            try:
                a, b = await api.guest(), await api.guest()
                clock = {"initial": 300, "increment": 2} if rng.random() < 0.25 else None
                game = await api.create_game(a.token, seat=0, clock=clock)
                await api.join(b.token, game["id"])
            except Exception as exc:  # e.g. a 429 from a guard; try again a bit later
                self.error(type(exc).__name__)
                await asyncio.sleep(1.0)
                continue
            tokens = [a.token, b.token]
            game_id = game["id"]
            for _rematch in range(5):
                if self.stopping():
                    return
                over = await Room(self, game_id, tokens, rng).play()
                if not over or rng.random() < 0.5:
                    break
                try:  # the rematch: one player offers, the other accepts (the new game)
                    await api.rematch(tokens[0], game_id)
                    fresh = await api.rematch(tokens[1], game_id)
                except Exception as exc:
                    self.error(type(exc).__name__)
                    break
                game_id = fresh["id"]
                if fresh["seat"] == 0:  # the seats are rotated: whoever accepted sits where it says
                    tokens = tokens[::-1]

    # ------------------------------------------------------------------ reporting

    async def metrics(self) -> dict[str, float]:
        from prometheus_client.parser import text_string_to_metric_families

        import httpx

        out: dict[str, float] = {}
        try:
            async with httpx.AsyncClient(timeout=5) as http:
                text = (await http.get(self.url + "/metrics")).text
        except Exception:
            return out
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                out[s.name] = out.get(s.name, 0.0) + s.value
        return out

    def redis_keys(self) -> int | None:
        if not self.args.redis_url:
            return None
        import redis

        r = redis.Redis.from_url(self.args.redis_url, socket_timeout=5)
        try:
            return int(r.dbsize())
        except Exception:
            return None
        finally:
            r.close()


class Room:
    """One game of one slot: two players, spectators coming and going, paced random moves."""

    def __init__(self, soak: Soak, game_id: str, tokens: list[str], rng: random.Random) -> None:
        self.soak = soak
        self.id = game_id
        self.tokens = tokens
        self.rng = rng
        self.players: list[GameSocket | None] = [None, None]
        self.spectators: list[GameSocket] = []
        self.browsers: list = []
        self.readers: dict[int, asyncio.Task[None]] = {}
        self.sent_at: dict[int, int] = {}
        self.v = 0
        self.errors = 0
        self.changed = asyncio.Event()

    async def _reader(self, sock: GameSocket) -> None:
        try:
            for _ in range(1_000_000):
                frame = await sock.next(timeout_s=3600)
                now = time.monotonic_ns()
                t = frame["t"]
                if t == "update":
                    sent = self.sent_at.get(frame["v"])
                    if sent is not None:
                        self.soak.window.latencies.append((now - sent) / 1e6)
                if t in ("update", "snapshot"):
                    self.v = max(self.v, frame["v"])
                    self.changed.set()
                elif t == "error":
                    self.soak.error(frame["code"])
                    self.errors += 1
                    self.changed.set()
        except (asyncio.CancelledError, ConnectionClosed):
            pass
        except Exception as exc:  # a frame the client could not apply: a server bug, counted
            self.soak.error(f"reader:{type(exc).__name__}:{exc}"[:80])

    async def _open(self, token: str | None) -> GameSocket:
        sock = await GameSocket.connect(self.soak.url, self.id, token, ping_interval=None)
        sock.keep_frames = False
        await sock.until(lambda f: f["t"] == "snapshot")
        self.v = max(self.v, sock.v or 0)
        self.readers[id(sock)] = asyncio.create_task(self._reader(sock))
        return sock

    async def _close(self, sock) -> None:
        task = self.readers.pop(id(sock), None)
        try:
            await asyncio.wait_for(sock.close(), 5)
        except Exception:
            pass
        if task is not None:
            task.cancel()

    async def _browser(self) -> None:
        from websockets.asyncio.client import connect

        ws = await connect(f"{self.soak.ws_base}/g/{self.id}/ws", origin=self.soak.url, ping_interval=None)

        async def drain() -> None:
            try:
                async for _ in ws:
                    pass
            except Exception:
                pass

        self.browsers.append(ws)
        self.readers[id(ws)] = asyncio.create_task(drain())

    async def _spectator_churn(self) -> None:
        w = self.soak.window
        if self.spectators and self.rng.random() < 0.5:
            sock = self.spectators.pop(self.rng.randrange(len(self.spectators)))
            await self._close(sock)
            w.spectator_churn += 1
        elif len(self.spectators) + len(self.browsers) < 4:
            if self.rng.random() < 0.33:
                await self._browser()
            else:
                self.spectators.append(await self._open(None))
            w.spectator_churn += 1

    async def play(self) -> bool:
        """Play until the end (True), or until the soak stops or the room stalls (False)."""
        soak, rng = self.soak, self.rng
        try:
            for seat in (0, 1):
                self.players[seat] = await self._open(self.tokens[seat])
            for _ in range(rng.randrange(4)):
                await self._spectator_churn()
            resign_at = rng.randrange(5, 40) if rng.random() < 0.1 else None
            for step in range(MAX_MOVES):
                if soak.stopping():
                    return False
                await asyncio.sleep(rng.uniform(0.5, 1.5) * soak.args.pace)
                view_sock = max((p for p in self.players if p is not None), key=lambda p: p.v or 0)
                view = view_sock.view
                if view is None:
                    continue
                if view.outcome is not None:
                    soak.window.games += 1
                    soak.total.games += 1
                    return True
                if rng.random() < 0.04:  # a player drops and comes back: resync by snapshot
                    seat = rng.randrange(2)
                    await self._close(self.players[seat])
                    self.players[seat] = await self._open(self.tokens[seat])
                    soak.window.reconnects += 1
                    continue
                if rng.random() < 0.06:
                    await self._spectator_churn()
                seat = view.to_move
                sock = self.players[seat]
                if seat is None or sock is None or sock.v != self.v:
                    continue
                v, errors = self.v, self.errors
                self.changed.clear()
                self.sent_at[v + 1] = time.monotonic_ns()
                if resign_at is not None and step >= resign_at:
                    await sock.send({"t": "resign", "v": v})
                else:
                    hidden = [(r, c) for r, row in enumerate(view.rows) for c, ch in enumerate(row) if ch in ".x"]
                    await sock.send({"t": "move", "v": v, "action": "explore", "cell": list(rng.choice(hidden))})
                for _ in range(100):  # until the update (or an error) arrives; bounded
                    try:
                        await asyncio.wait_for(self.changed.wait(), WAIT_S)
                    except asyncio.TimeoutError:
                        soak.window.timeouts += 1
                        return False
                    self.changed.clear()
                    if self.v > v or self.errors > errors:
                        break
                if self.v > v:
                    soak.window.moves += 1
                    soak.total.moves += 1
                self.sent_at.pop(v + 1 - 4, None)
            return False
        except Exception as exc:
            soak.error(type(exc).__name__)
            return False
        finally:
            for sock in [*self.players, *self.spectators, *self.browsers]:
                if sock is not None:
                    await self._close(sock)
            for task in self.readers.values():
                task.cancel()


# ---------------------------------------------------------------------- the run


async def run(args: argparse.Namespace) -> None:
    soak = Soak(args)
    start = time.monotonic()
    soak.deadline = start + args.minutes * 60
    rows: list[dict[str, float]] = []
    async with Api(args.url, timeout_s=30) as api:
        slots = [asyncio.create_task(soak.slot(api, n)) for n in range(args.slots)]
        print(f"soak: {args.slots} slots, pace {args.pace}s, {args.minutes} min against {args.url} "
              f"(server pid {args.pid}, valkey pid {args.redis_pid})", flush=True)
        print(f"{'t':>5} {'app MB':>7} {'valkey MB':>9} {'sockets':>7} {'rooms':>5} {'cached':>6} {'pending':>7} "
              f"{'keys':>6} {'games':>5} {'moves':>6} {'p50 ms':>7} {'p99 ms':>7} {'reconn':>6} {'spect±':>6} "
              f"{'gc':>3} {'gc ms':>6} errors",
              flush=True)
        gc_seen = (0.0, 0.0)  # the GC policy's passes and their seconds, at the last report
        for _ in range(int(args.minutes * 60 / args.report_s) + 2):
            await asyncio.sleep(max(0.0, min(args.report_s, soak.deadline - time.monotonic())))
            w, soak.window = soak.window, Window()
            m = await soak.metrics()
            row = {
                "t": time.monotonic() - start,
                "app": rss_mb(args.pid) or float("nan"),
                "valkey": rss_mb(args.redis_pid) or float("nan"),
                "sockets": m.get("mineduel_connections", float("nan")),
                "rooms": m.get("mineduel_rooms_live", float("nan")),
                "cached": m.get("mineduel_hub_cached_rooms", float("nan")),
                "pending": m.get("mineduel_hub_pending_local_commits", float("nan")),
                "keys": soak.redis_keys() or float("nan"),
                "games": w.games, "moves": w.moves,
                "p50": pct(w.latencies, 50), "p99": pct(w.latencies, 99),
                "gc": m.get("mineduel_gc_pause_seconds_count", 0.0) - gc_seen[0],
                "gc_s": m.get("mineduel_gc_pause_seconds_sum", 0.0) - gc_seen[1],
            }
            gc_seen = (gc_seen[0] + row["gc"], gc_seen[1] + row["gc_s"])
            rows.append(row)
            print(f"{row['t']:5.0f} {row['app']:7.1f} {row['valkey']:9.1f} {row['sockets']:7.0f} {row['rooms']:5.0f} "
                  f"{row['cached']:6.0f} {row['pending']:7.0f} {row['keys']:6.0f} {w.games:5d} {w.moves:6d} "
                  f"{row['p50']:7.2f} {row['p99']:7.2f} {w.reconnects:6d} {w.spectator_churn:6d} "
                  f"{row['gc']:3.0f} {1000 * row['gc_s']:6.0f} {w.errors or ''}{' stalls=' + str(w.timeouts) if w.timeouts else ''}", flush=True)
            if soak.stopping():
                break
        await asyncio.gather(*slots, return_exceptions=True)
    m = await soak.metrics()
    steady = [r for r in rows if r["t"] >= min(120.0, args.minutes * 60 / 2)] or rows
    first, last = steady[0], rows[-1]
    print(f"total: {soak.total.games} games finished, {soak.total.moves} moves, errors {soak.total.errors or 0}; "
          f"server counters: commits {m.get('mineduel_moves_committed_total', 0):.0f}, "
          f"conflicts {m.get('mineduel_commit_conflicts_total', 0):.0f}, "
          f"slow consumers dropped {m.get('mineduel_slow_consumers_dropped_total', 0):.0f}, "
          f"redis errors {m.get('mineduel_redis_errors_total', 0):.0f}")
    print(f"after warm-up (t={first['t']:.0f}s → {last['t']:.0f}s): app RSS {first['app']:.1f} → {last['app']:.1f} MB, "
          f"valkey RSS {first['valkey']:.1f} → {last['valkey']:.1f} MB, Redis keys {first['keys']:.0f} → "
          f"{last['keys']:.0f}; max over the run: app {max(r['app'] for r in rows):.1f} MB, "
          f"keys {max(r['keys'] for r in rows):.0f}; GC policy: {gc_seen[0]:.0f} full passes, "
          f"{1000 * gc_seen[1]:.0f} ms in all")
    print(f"after the clients left: sockets {m.get('mineduel_connections', float('nan')):.0f}, "
          f"live rooms {m.get('mineduel_rooms_live', float('nan')):.0f}, "
          f"cached rooms {m.get('mineduel_hub_cached_rooms', float('nan')):.0f}, "
          f"pending local commits {m.get('mineduel_hub_pending_local_commits', float('nan')):.0f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="a running server (loopback); default: start one with an embedded Valkey")
    ap.add_argument("--pid", type=int, help="the server's pid, for its RSS")
    ap.add_argument("--redis-url", help="its Redis, for the key count")
    ap.add_argument("--redis-pid", type=int, help="its Valkey's pid, for its RSS")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--slots", type=int, default=40, help="game slots running at once")
    ap.add_argument("--pace", type=float, default=0.5, help="mean seconds between two moves of a room")
    ap.add_argument("--report-s", type=float, default=30.0)
    ap.add_argument("--finished-ttl", type=int, default=60, help="retention of finished games (own server only)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log-level", default="warning", help="of the server it starts (its log is kept)")
    args = ap.parse_args()
    if args.url is not None:
        if not args.url.startswith(("http://127.", "http://localhost", "http://[::1]")):
            sys.exit("soak.py only targets loopback servers")
        asyncio.run(run(args))
        return
    env = {
        "LOG_LEVEL": args.log_level,
        "MINEDUEL_FINISHED_TTL_S": str(args.finished_ttl),
        "MINEDUEL_IDLE_TTL_S": str(max(args.finished_ttl, 600)),
    }
    with BenchServer(env, keep_data=True, prefix="mineduel-soak-") as server:
        args.url, args.redis_url = server.url, server.valkey_url
        args.pid, args.redis_pid = server.app_pids[0], server.valkey_pid
        print(f"soak: started a server at {args.url} (data and log in {server.data_dir})", flush=True)
        asyncio.run(run(args))
    print(f"soak: server stopped with status {server.exit_status}", flush=True)


if __name__ == "__main__":
    main()
