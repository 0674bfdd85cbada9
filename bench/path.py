"""The server's whole move path in one process, per move: CPU time, and instructions by step.

What runs is what ``python -m server`` runs for a move on the msgpack socket, minus the
websocket itself: the move frame parsed (``wire.parse_msgpack``), ``RoomService.act`` (cache,
``decide`` with the auto-reveal, the stored form, the commit message, the lean RESP client's
``EVALSHA`` to a real embedded Valkey with ``appendfsync always`` on tmpfs), the commit's
new version handed to the ``RoomFeed`` (no pub/sub message goes out: nobody else listens, so
``RoomFeed.committed_here``; with an older checkout, its message read back and claimed in
``RoomFeed.dispatch``), the ``Fanout`` rendering the msgpack update frame once per viewer class
and writing it to five
``Outbox``es (2 players + 3 spectators per room, as the load bench) whose send does nothing.
uvloop, logging at ``warning`` (as ``bench/serve.py``), automatic GC off while measuring (the
server runs it on a timer; its passes are not part of a move here).

Moves (``--moves``): ``explore`` (a random hidden cell explored: the load bench's bots),
``bot`` (``engine.bots.choose_move``), ``random`` (a random hidden cell, marked with p = 0.4,
as ``bench/move_path.py``). Every room's whole game is worked out beforehand with a fixed seed
(the client's choice costs nothing in the measured part), then played by ``--rooms`` rooms at
once, one move per room per round (a round's moves pipeline on the one Redis connection, as
under load), each round ending when all its frames were sent. ``--repeats`` fresh sets of rooms
play the same games; figures are the fastest pass.

    python bench/path.py --moves explore --rooms 200 --repeats 3           # CPU us per move
    python bench/path.py --moves explore --rooms 200 --repeats 3 --steps   # and us per step
    python bench/path.py --moves explore --rooms 40 --callgrind            # instructions per step
    python bench/path.py --moves explore --rooms 200 --repeats 1 --young   # the GC's young objects
    python bench/path.py --root /tmp/base ...                              # another checkout

``--young`` also takes a census of what each round of moves leaves in the cyclic GC's young
generation (GC-tracked objects still alive, by type; for dicts, lists and tuples by what they
hold, ``*`` marking tracked members) and times one young pass after each round: what any pass
over recent objects traverses per move (the server's timed young passes did until the
nineteenth session; ``server/gc_policy.py`` now runs full passes on heap growth only). Its CPU
figures include the census: take them from a run without.

``--steps`` times the steps with Python wrappers (which add ~0.3 us per wrapped call to the
total). ``--callgrind`` runs the same under ``valgrind --tool=callgrind`` (instrumentation on
only while the moves are played) with each step called through a C trampoline of its own name
(``bench/cgsteps.c``, compiled on first use into ``bench/out/``), and prints instructions per
move by step from ``callgrind_annotate --inclusive=yes``: exact counts of user-space
instructions, the same whatever else the machine runs. Steps are inclusive (indented ones are
part of the step above); ``rest`` is what no step covers (asyncio, uvloop, the awaits, the
client loop of this bench). The kernel's share (socket writes) is in neither figure.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
WORKLOADS = ("explore", "bot", "random")
MAX_MOVES = 400  # per game, bounded (refused moves are never planned)

# (step, parent, what it is); the order is the table's
STEP_TABLE = (
    ("parse", None, "the move frame parsed (wire.parse_msgpack)"),
    ("decide", None, "core.decide: copy, apply with the auto-reveal, new Room"),
    ("copy", "decide", "Duel.copy"),
    ("apply", "decide", "Duel.apply"),
    ("reveal", "apply", "the auto-reveal (Duel._auto_reveal: RevealCache)"),
    ("evolve", "decide", "Room.evolve"),
    ("stored", None, "StoredForm.pack (the stored room)"),
    ("announce", None, "RoomCache.announce"),
    ("message", None, "messages.commit_message (events as data, packed)"),
    ("encode", None, "resp.encode (the EVALSHA command)"),
    ("write", None, "the command written (_Protocol.request)"),
    ("reply", None, "the reply read (_Protocol.data_received)"),
    ("logline", None, "logs.event for the commit (off at warning)"),
    ("pubsub", None, "pub/sub bytes parsed (ReplyBuffer.feed)"),
    ("dispatch", None, "RoomFeed: the new version fanned out (committed_here, or dispatch of its message)"),
    ("publish", "dispatch", "Fanout.publish"),
    ("render", "publish", "MsgpackCodec.update (3 viewer classes, frames reused)"),
    ("view", "render", "Room.view"),
    ("diff", "render", "Game.diff"),
    ("pack", "render", "msgpack of the frame"),
    ("send", "publish", "Outbox.send x5"),
)


# ---------------------------------------------------------------------------------------------
# the plan: every room's game, worked out beforehand
# ---------------------------------------------------------------------------------------------


def plan_games(kind: str, rooms: int, seed: int) -> list[list[tuple[int, bytes]]]:
    """Per room, its game's moves as (seat, msgpack move frame), from its first to its end."""
    import msgpack

    # beside this script (not bench.workloads: --root puts another checkout first on sys.path)
    from workloads import play

    from engine import Duel, Mark

    plans = []
    for i in range(rooms):
        duel = Duel.new(random.Random(f"setup-{seed}-{i}"), "brettspielnetz", first=0)
        rng = random.Random(f"{kind}-{seed}-{i}")
        moves: list[tuple[int, bytes]] = []
        for seat, move in play(duel, kind, rng, MAX_MOVES):
            action = "mark" if isinstance(move, Mark) else "explore"
            frame = msgpack.packb({"t": "move", "v": 1 + len(moves), "action": action, "cell": list(move.cell)})
            moves.append((seat, frame))
        plans.append(moves)
    return plans


# ---------------------------------------------------------------------------------------------
# steps: each wrapped function called through a named trampoline
# ---------------------------------------------------------------------------------------------


class Timers:
    """Python trampolines that time each step (``--steps`` without callgrind)."""

    def __init__(self) -> None:
        self.spent = {name: 0.0 for name, _, _ in STEP_TABLE}
        clock = time.perf_counter
        for name in self.spent:
            def step(f, *args, _name=name, **kwargs):  # noqa: ANN001, ANN202
                t0 = clock()
                try:
                    return f(*args, **kwargs)
                finally:
                    self.spent[_name] += clock() - t0
            setattr(self, "step_" + name, step)


def load_cgsteps():  # noqa: ANN201 - the extension module
    """bench/cgsteps.c, compiled into bench/out/ when missing or older than its source."""
    src = HERE / "cgsteps.c"
    so = OUT / ("cgsteps" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not so.exists() or so.stat().st_mtime < src.stat().st_mtime:
        OUT.mkdir(exist_ok=True)
        include = sysconfig.get_paths()["include"]
        subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-fno-ipa-icf", "-fno-optimize-sibling-calls",
                        "-fno-inline", f"-I{include}", str(src), "-o", str(so)], check=True)
    spec = importlib.util.spec_from_file_location("cgsteps", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_INSTALLED: set[bool] = set()


def install_steps(s, parts, codec) -> list[str]:  # noqa: ANN001
    """Route each step's function through ``s.step_<name>`` (functions and classes once, this
    pass's objects each time); returns the steps not found (an older checkout may lack a
    seam)."""
    import server.edge.codec_msgpack as codec_mod
    import server.store.resp as resp_mod
    import server.store.service as service_mod
    from engine.duel import Duel

    try:  # a decision's commit (the commit message, its log line) has its own module since the 26th session
        import server.store.committer as committer_mod
    except ImportError:
        committer_mod = None
    from server.core.room import Room
    from server.edge.outbox import Outbox
    from server.store.resp import ReplyBuffer, _Protocol

    missing = []
    P = functools.partial
    first = not _INSTALLED
    _INSTALLED.add(True)

    def module_attr(step, module, attr):  # noqa: ANN001, ANN202
        if not first:
            return
        if not hasattr(module, attr):
            missing.append(step)
            return
        setattr(module, attr, P(getattr(s, "step_" + step), getattr(module, attr)))

    def method(step, cls, attr):  # noqa: ANN001, ANN202
        if not first:
            return
        orig = cls.__dict__.get(attr)
        if orig is None:
            missing.append(step)
            return
        tramp = getattr(s, "step_" + step)
        if isinstance(orig, staticmethod):
            setattr(cls, attr, staticmethod(P(tramp, orig.__func__)))
        else:
            def wrapper(self, *args, **kwargs):  # noqa: ANN001, ANN202
                return tramp(orig, self, *args, **kwargs)
            wrapper.__wrapped__ = orig
            setattr(cls, attr, wrapper)

    def instance(step, obj, attr):  # noqa: ANN001, ANN202
        if not hasattr(obj, attr):
            missing.append(step)
            return
        setattr(obj, attr, P(getattr(s, "step_" + step), getattr(obj, attr)))

    module_attr("decide", service_mod, "decide")
    method("copy", Duel, "copy")
    method("apply", Duel, "apply")
    method("reveal", Duel, "_auto_reveal")
    method("evolve", Room, "evolve")
    instance("stored", getattr(parts.rooms, "committer", parts.rooms).stored, "pack")  # (older checkouts: on the service)
    instance("announce", parts.cache, "announce")
    module_attr("message", committer_mod or service_mod, "commit_message")
    module_attr("encode", resp_mod, "encode")
    method("write", _Protocol, "request")
    method("reply", _Protocol, "data_received")
    module_attr("logline", committer_mod or service_mod, "event")
    if hasattr(parts.hub, "feed"):  # the messages' handling in its own object (server/store/room_feed.py)
        if hasattr(parts.hub.feed, "committed_here"):  # a commit nobody else hears: no message
            instance("dispatch", parts.hub.feed, "committed_here")
        else:
            instance("dispatch", parts.hub.feed, "dispatch")
            parts.hub.link.on_message = parts.hub.feed.dispatch  # the link took the unwrapped one
    else:  # an older checkout (--root)
        instance("dispatch", parts.hub, "_dispatch")
    instance("publish", parts.hub.fanout, "publish")
    instance("render", codec, "update")
    method("view", Room, "view")
    method("diff", Duel, "diff")
    module_attr("pack", codec_mod, "pack")
    method("send", Outbox, "send")

    # the hub's pub/sub buffer only (the commit reply's parse is inside "reply")
    ps = parts.hub._ps
    if hasattr(ps, "_buffer"):
        tramp = s.step_pubsub
        feed = ReplyBuffer.feed

        class TimedBuffer(ReplyBuffer):
            __slots__ = ()

            def feed(self, data):  # noqa: ANN001, ANN202
                return tramp(feed, self, data)

        ps._buffer = TimedBuffer()
    else:
        missing.append("pubsub")
    return missing


# ---------------------------------------------------------------------------------------------
# one pass
# ---------------------------------------------------------------------------------------------


def _kind(obj: object) -> str:
    """A young object's kind for the census: its type, and for a dict, list or tuple what it holds
    (``*``: a tracked member, which keeps the container tracked)."""
    def names(items) -> str:  # noqa: ANN001
        return ",".join(sorted({type(x).__name__ + ("*" if gc.is_tracked(x) else "") for x in items}))
    if type(obj) is dict:
        return f"dict[{names(obj)}: {names(obj.values())}]"
    if type(obj) in (list, tuple):
        return f"{type(obj).__name__}[{names(obj)}]"
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def young_census(census: dict, moves: int) -> None:
    """Adds what the young generation holds now to ``census`` (objects and references by kind,
    ``moves`` played since the last call), then empties it with one timed young pass."""
    young = gc.get_objects(0)
    for obj in young:
        kind = _kind(obj)
        census.setdefault(kind, [0, 0])
        census[kind][0] += 1
        census[kind][1] += len(gc.get_referents(obj))
    del young
    started = time.perf_counter()
    gc.collect(0)
    census.setdefault("", [0, 0.0])
    census[""][0] += moves
    census[""][1] += time.perf_counter() - started


async def one_pass(url: str, plans, seed: int, steps, cg, census: dict | None = None) -> dict:  # noqa: ANN001
    """Fresh rooms play every planned game; CPU (and instructions) only while moves are played."""
    from engine import SPECTATOR, Duel
    from server.app import Parts
    from server.config import Settings
    from server.core.commands import Play
    from server.core.room import Player
    from server.edge import wire
    from server.edge.codec_msgpack import MsgpackCodec
    from server.edge.outbox import Outbox
    from server.metrics import Metrics

    settings = Settings(redis_url=url, waitaof=False)
    codec = MsgpackCodec()
    parts = Parts.build(url, settings, {"msgpack": codec}, Metrics())
    await parts.hub.start()
    missing = install_steps(steps, parts, codec) if steps is not None else []
    players = (Player("a" * 12, "Anna"), Player("b" * 12, "Ben"))
    sent = [0]
    target = [0]
    done = asyncio.Event()

    async def send(_frame) -> None:  # noqa: ANN001 - a socket that takes everything at once
        sent[0] += 1
        if sent[0] == target[0]:
            done.set()

    async def close(_code, _reason) -> None:  # noqa: ANN001
        pass

    rooms = []
    for i, plan in enumerate(plans):
        game = Duel.new(random.Random(f"setup-{seed}-{i}"), "brettspielnetz", first=0)
        room = await parts.rooms.create(game, players)
        for viewer in (0, 1, SPECTATOR, SPECTATOR, SPECTATOR):
            box = Outbox(viewer, "msgpack", players[viewer].id if viewer != SPECTATOR else None, send, close,
                         maxsize=settings.send_queue, inline=settings.inline_send)
            await parts.hub.attach(room.id, box)
        rooms.append((room.id, plan))
    await asyncio.sleep(0.2)  # presence messages and snapshots settle
    parse = steps.step_parse if steps is not None else (lambda f, x: f(x))
    rounds = max(len(plan) for _, plan in rooms)

    async def one(room_id: str, seat: int, frame: bytes) -> None:
        started = time.perf_counter()
        msg = parse(wire.parse_msgpack, frame)
        await parts.rooms.act(room_id, players[seat], Play(msg.move), msg.v, started)

    gc.collect()
    gc.freeze()
    gc.disable()
    moves = 0
    if cg is not None:
        cg.start()
    by_round: list[tuple[int, float]] = []  # (moves, CPU s) of each round: the k-th move of every game
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for k in range(rounds):
        batch = [(room_id, *plan[k]) for room_id, plan in rooms if k < len(plan)]
        sent[0] = 0
        target[0] = 5 * len(batch)
        done.clear()
        before = time.process_time()
        await asyncio.gather(*(one(*move) for move in batch))
        await asyncio.wait_for(done.wait(), 600)
        by_round.append((len(batch), time.process_time() - before))
        moves += len(batch)
        if census is not None:
            young_census(census, len(batch))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    if cg is not None:
        cg.dump("moves")
        cg.stop()
    gc.enable()
    gc.unfreeze()
    stats = {"moves": moves, "cpu": cpu, "wall": wall, "missing": missing, "by_round": by_round,
             "cache_hits": parts.rooms.stats["cache_hits"], "loads": parts.rooms.stats["loads"],
             "decoded": parts.hub.stats["decoded"]}
    await parts.hub.stop()
    await parts.store.close()
    return stats


async def run(args, steps, cg, census: dict | None = None) -> list[dict]:  # noqa: ANN001
    from server import logs
    from server.embedded_redis import EmbeddedRedis

    logs.configure("warning")
    plans = plan_games(args.moves, args.rooms, args.seed)
    results = []
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as d:
        redis = EmbeddedRedis(Path(d)).start()
        try:
            for _ in range(args.repeats):
                if isinstance(steps, Timers):
                    steps.spent = dict.fromkeys(steps.spent, 0.0)
                result = await one_pass(redis.url, plans, args.seed, steps, cg, census)
                if isinstance(steps, Timers):
                    result["steps"] = dict(steps.spent)
                results.append(result)
        finally:
            redis.stop()
    return results


# ---------------------------------------------------------------------------------------------
# callgrind
# ---------------------------------------------------------------------------------------------


def callgrind(args) -> None:  # noqa: ANN001
    """Run this bench under callgrind (one pass) and print instructions per move by step."""
    load_cgsteps()  # compile before valgrind starts
    OUT.mkdir(exist_ok=True)
    tag = f"{args.moves}-{args.rooms}-{os.getpid()}"
    out = OUT / f"callgrind.{tag}.out"
    child = [sys.executable, str(Path(__file__).resolve()), "--child-callgrind", "--moves", args.moves,
             "--rooms", str(args.rooms), "--seed", str(args.seed), "--repeats", "1"]
    if args.root:
        child += ["--root", args.root]
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", *child]
    proc = subprocess.run(cmd, env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(proc.returncode)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    dump = Path(f"{out}.1")
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(dump)],
                               capture_output=True, text=True, check=True).stdout
    inclusive = {}
    total = None
    for line in annotated.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$", line)
        if not m:
            continue
        count, what = int(m.group(1).replace(",", "")), m.group(2)
        if "PROGRAM TOTALS" in what:
            total = count
        n = re.search(r"\bstep_(\w+)\b", what)
        if n and n.group(1) not in inclusive:
            inclusive[n.group(1)] = count
    moves = result["moves"]
    print(f"# {' '.join(sys.argv)}")
    print(f"# callgrind, {args.moves} moves, {args.rooms} rooms: {moves} moves; dump {dump}")
    if result["missing"]:
        print(f"# steps not found in this checkout: {', '.join(result['missing'])}")
    top = 0
    rows = []
    for name, parent, what in STEP_TABLE:
        ir = inclusive.get(name, 0)
        depth = 0
        p = parent
        while p is not None:
            depth += 1
            p = next(q for n, q, _ in STEP_TABLE if n == p)
        if parent is None:
            top += ir
        rows.append((("  " * depth) + name, ir / moves, what))
    print(f"{'step':<14} {'instr/move':>12}  ")
    for label, per, what in rows:
        print(f"{label:<14} {per:>12,.0f}  {what}")
    if total is not None:
        print(f"{'rest':<14} {(total - top) / moves:>12,.0f}  asyncio, uvloop, awaits, this bench's loop")
        print(f"{'total':<14} {total / moves:>12,.0f}  per move, everything in the process (user space)")
    print(json.dumps({"moves": moves, "total": total, "steps": {k: v / moves for k, v in inclusive.items()},
                      "per_move_total": total / moves if total else None}))


# ---------------------------------------------------------------------------------------------


def print_census(census: dict, top: int = 16) -> None:
    played, pass_s = census.pop("")
    objects = sum(n for n, _ in census.values())
    refs = sum(r for _, r in census.values())
    print(f"young generation after each round, per move: {objects / played:.1f} objects, {refs / played:.1f} "
          f"references; a young pass {1e6 * pass_s / played:.2f} us (the CPU figures above include the census)")
    print(f"{'refs':>7} {'objects':>7}  kind (per move, by references)")
    for kind, (n, r) in sorted(census.items(), key=lambda item: -item[1][1])[:top]:
        print(f"{r / played:>7.1f} {n / played:>7.2f}  {kind[:110]}")


def print_by_move_number(results: list[dict], span: int = 10) -> None:
    """CPU per move by the move's number in its game (the fastest pass of each span): what a
    bench that only meets the openings of games misses."""
    rounds = len(results[0]["by_round"])
    cells = []
    for start in range(0, rounds, span):
        moves = sum(n for n, _ in results[0]["by_round"][start:start + span])
        cpu = min(sum(c for _, c in r["by_round"][start:start + span]) for r in results)
        cells.append(f"{start + 1}-{min(start + span, rounds)}: {1e6 * cpu / moves:.0f} ({moves})")
    print("CPU per move (us) by move number (moves): " + ", ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", choices=WORKLOADS, default="explore")
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", action="store_true", help="time each step (Python wrappers)")
    parser.add_argument("--callgrind", action="store_true", help="instructions per step under callgrind")
    parser.add_argument("--young", action="store_true", help="a census of the GC's young generation after each round")
    parser.add_argument("--root", help="another checkout to measure (its engine/ and server/)")
    parser.add_argument("--child-callgrind", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.rooms <= 2000 or not 1 <= args.repeats <= 20:
        parser.error("--rooms 1..2000, --repeats 1..20")
    if os.environ.get("PYTHONHASHSEED") != "0":  # the same dict and set layouts in every run
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    sys.path.insert(0, args.root or str(HERE.parent))
    if args.callgrind:
        callgrind(args)
        return
    import uvloop

    if args.child_callgrind:
        cg = load_cgsteps()
        results = uvloop.run(run(args, cg, cg))
        print(json.dumps(results[0]))
        return
    steps = Timers() if args.steps else None
    census: dict | None = {} if args.young else None
    results = uvloop.run(run(args, steps, None, census))
    moves = results[0]["moves"]
    best = min(results, key=lambda r: r["cpu"])
    print(f"# {' '.join(sys.argv)}")
    print(f"# {args.moves} moves, {args.rooms} rooms, {moves} moves a pass; cache hits {best['cache_hits']}, "
          f"loads {best['loads']}, decoded {best['decoded']}")
    print("process CPU per move (us), each pass: " + ", ".join(f"{1e6 * r['cpu'] / moves:.1f}" for r in results)
          + f"; wall {1e6 * best['wall'] / moves:.1f}")
    print_by_move_number(results)
    if args.steps:
        print(f"{'step':<14} {'us/move':>8}  (fastest pass per step)")
        for name, parent, what in STEP_TABLE:
            depth = 0
            p = parent
            while p is not None:
                depth += 1
                p = next(q for n, q, _ in STEP_TABLE if n == p)
            per = min(r["steps"][name] for r in results) * 1e6 / moves
            print(f"{('  ' * depth) + name:<14} {per:>8.1f}  {what}")
    if census:
        print_census(census)
    if best["missing"]:
        print(f"# steps not found in this checkout: {', '.join(best['missing'])}")


if __name__ == "__main__":
    main()
