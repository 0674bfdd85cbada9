"""What replacing a finished game costs the server: the app's and Valkey's CPU per game, by step.

A game that ends is replaced by its rematch: one player offers it (``POST .../rematch``), the
other accepts (the same call: the new room), 2 + K new sockets open on the new game (each gets
its snapshot and is counted in the room's presence) and the old game's sockets close. Under
load (``bench/load.py play --preplay 40``) about one game in 50 moves ends, and py-spy put the
rematch path at a quarter of the app's CPU without naming its pieces; this bench measures them
alone, on a fresh server (tmpfs data, as ``bench/serve.py`` starts it):

    python bench/rematch.py --rooms 100 --rounds 3                 # this tree
    python bench/rematch.py --rooms 100 --rounds 3 --compare main  # and another commit, alternated
    python bench/rematch.py --rooms 100 --rounds 3 --moves 60      # games played out first

``--follow``: the sockets ask to follow their game to the rematch (``?follow=rematch``); with a
server that does, "open" is the wait for the same sockets' snapshots of the new game (the move
itself is done by the server right after the accept's link, so most of its CPU falls in
"accept") and "close" has nothing to do. A server that does not follow is measured as without.

``--frames``: the offer and the accept are the sockets' ``rematch`` frames
(seat 0's, then seat 1's) instead of the two HTTP calls; "accept" ends when seat 0's socket has
the update that links the new game.

``--moves N``: before each round's end every game first plays up to N moves (random hidden
cells, not measured), so the finished room that the rematch calls read is as long as a real
game's (about 50 moves) instead of one move long; a game that ends by its moves needs no
resignation.

``--rooms`` games are seated with 2 + ``--spectators`` sockets each; every round ends each game
(a resignation: the one step that is not part of a normal end), then plays the steps one at a
time over all rooms (16 at once), the sockets of a game opened together, as the load bench's
client does. Each step's CPU is read from ``/proc`` of the app and Valkey before and after it
(``bench.load.cpu_s``: the threads' time on a CPU, in ns; with 0.3 s to settle: the presence
writes wait up to 50 ms); figures are per game, the best
round of each step. The client (``websockets``, in this process) is not measured.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.load import checkout, cpu_s, loadavg  # noqa: E402
from bench.serve import BenchServer, gauge_s  # noqa: E402

STEPS = ("resign", "offer", "accept", "open", "close")
AT_ONCE = 16
SETTLE_S = 0.3


class Game:
    def __init__(self, room_id: str, tokens: list[str]) -> None:
        self.id = room_id
        self.tokens = tokens  # seat 0's, seat 1's
        self.sockets: list = []
        self.next_id: str | None = None
        self.old: list = []


async def limited(calls) -> None:  # noqa: ANN001 - coroutine functions
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(call) -> None:  # noqa: ANN001
        async with gate:
            await call()

    await asyncio.gather(*(one(call) for call in calls))


async def measure(server: BenchServer, rooms: int, rounds: int, spectators: int,
                  moves: int = 0, follow: bool = False, frames: bool = False) -> dict[str, tuple[float, float]]:
    """Per step, the best round's (app, Valkey) CPU seconds per game."""
    from websockets.asyncio.client import connect

    from server.client import Api, GameSocket, ws_url

    rng = random.Random(1)

    async def open_sockets(game: Game) -> list[GameSocket]:
        async def one(slot: int) -> GameSocket:
            headers = {"Authorization": f"Bearer {game.tokens[slot]}"} if slot < 2 else None
            ws = GameSocket(await connect(ws_url(server.url, game.id, follow), additional_headers=headers,
                                          ping_interval=None, open_timeout=30, max_size=2**22))
            ws.keep_frames = False
            await ws.until(lambda f: f["t"] == "snapshot", 10)
            return ws

        return list(await asyncio.gather(*(one(slot) for slot in range(2 + spectators))))

    async def drain(game: Game, v: int | None = None) -> None:
        for ws in game.sockets:  # the frames the step made (bounded: each must come)
            if v is None:
                await ws.until(lambda f: f["t"] in ("snapshot", "update"), 10)
            else:
                await ws.until_version(v, 10)

    async def play(game: Game) -> None:
        for _ in range(moves):
            watcher = game.sockets[0]
            if watcher.view.to_move is None:
                return  # the game ended by its moves
            mover = game.sockets[watcher.view.to_move]  # slot = seat
            hidden = [(r, c) for r, row in enumerate(mover.view.rows) for c, ch in enumerate(row) if ch in ".x"]
            await mover.move("explore", rng.choice(hidden))
            await drain(game, mover.v + 1)

    async with Api(server.url, timeout_s=60) as api:
        games: list[Game] = []

        async def seat() -> None:
            a, b = await api.guest(), await api.guest()
            made = await api.create_game(a.token, seat=0)
            await api.join(b.token, made["id"])
            games.append(Game(made["id"], [a.token, b.token]))

        await limited([seat] * rooms)

        async def opened(game: Game) -> None:
            game.sockets = await open_sockets(game)

        await limited([lambda g=g: opened(g) for g in games])

        async def resign(game: Game) -> None:
            if game.sockets[0].view.to_move is not None:
                await api.resign(game.tokens[0], game.id)
                await drain(game)

        async def offer(game: Game) -> None:
            if frames:
                await game.sockets[0].rematch()
            else:
                answer = await api.rematch(game.tokens[0], game.id)
                assert answer.get("offered"), answer
            await drain(game)

        async def accept(game: Game) -> None:
            if not frames:
                game.next_id = (await api.rematch(game.tokens[1], game.id))["id"]
                return
            await game.sockets[1].rematch()
            linked = await game.sockets[0].until(lambda f: f["t"] == "update" and f["room"]["rematch"] is not None, 10)
            game.next_id = linked["room"]["rematch"]

        async def open_new(game: Game) -> None:
            assert game.next_id is not None
            game.old, game.id, game.tokens = game.sockets, game.next_id, game.tokens[::-1]  # seats swapped
            if not game.old[0].follows:
                game.sockets = await open_sockets(game)
                return
            for ws in game.old:  # moved by the server: the new game's snapshot on the same sockets
                await ws.until(lambda f: f["t"] == "snapshot" and f["room"]["id"] == game.id, 10)
            game.sockets, game.old = [*game.old[1::-1], *game.old[2:]], []  # the players' slots swapped

        async def close_old(game: Game) -> None:
            for ws in game.old:
                await ws.close()
            game.old = []

        work = dict(zip(STEPS, (resign, offer, accept, open_new, close_old)))
        best: dict[str, tuple[float, float]] = {}
        for _ in range(rounds):
            await limited([lambda g=g: play(g) for g in games])
            for step in STEPS:
                app0, valkey0 = cpu_s(server.pid_list) or 0.0, cpu_s(server.valkey_pid) or 0.0
                await limited([lambda g=g, f=work[step]: f(g) for g in games])
                await asyncio.sleep(SETTLE_S)
                app = (cpu_s(server.pid_list) or 0.0) - app0
                valkey = (cpu_s(server.valkey_pid) or 0.0) - valkey0
                if step not in best or app / rooms < best[step][0]:
                    best[step] = (app / rooms, valkey / rooms)
        for game in games:
            for ws in game.sockets:
                await ws.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spectators", type=int, default=3)
    parser.add_argument("--moves", type=int, default=0, help="moves each game plays before it ends (not measured)")
    parser.add_argument("--follow", action="store_true",
                        help="the sockets ask to follow their game to the rematch (?follow=rematch)")
    parser.add_argument("--frames", action="store_true",
                        help="the offer and the accept are the sockets' rematch frames, not HTTP")
    parser.add_argument("--compare", help="also another commit's server (git archive of it), alternated")
    args = parser.parse_args()
    if (not 1 <= args.rooms <= 1000 or not 1 <= args.rounds <= 20 or not 0 <= args.spectators <= 20
            or not 0 <= args.moves <= 121):
        parser.error("--rooms 1..1000, --rounds 1..20, --spectators 0..20, --moves 0..121")
    print(f"# {' '.join(sys.argv)}")
    print(f"# gauge {gauge_s():.2f} s, load average {loadavg()}")
    targets: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.compare:
        where, sha = checkout(args.compare)
        targets.append((sha, where))
    results = {}
    for label, root in targets:
        started = time.monotonic()
        with BenchServer(data_parent="/dev/shm" if os.path.isdir("/dev/shm") else None,
                         **({"root": root} if root else {})) as server:
            results[label] = asyncio.run(measure(server, args.rooms, args.rounds, args.spectators, args.moves,
                                                      args.follow, args.frames))
        print(f"# {label}: {time.monotonic() - started:.0f} s, load average after {loadavg()}")
    print(f"CPU ms per game, the best of {args.rounds} rounds ({args.rooms} games, 2 + {args.spectators} sockets each)")
    print(f"{'step':<8}" + "".join(f"{label + ' app':>16}{'valkey':>8}" for label in results))
    for step in (*STEPS, "total"):
        row = f"{step:<8}"
        for per_step in results.values():
            app = sum(a for a, _ in per_step.values()) if step == "total" else per_step[step][0]
            valkey = sum(v for _, v in per_step.values()) if step == "total" else per_step[step][1]
            row += f"{1000 * app:>16.2f}{1000 * valkey:>8.2f}"
        print(row)
    print("(resign is how this bench ends a game; under load a game ends by its last move)"
          + (f"; games first played up to {args.moves} moves" if args.moves else ""))


if __name__ == "__main__":
    main()
