"""Load benchmark: our server against a baseline fan-out app, open loop, in the same run.

One command per figure (each prints itself at the top, with the machine-speed gauge and the
load average before and after; servers listen on loopback only, every loop is bounded):

    # the 500-room figure: ours (data on tmpfs) and the baseline, ratios of p99 and CPU/message
    python bench/load.py play --rooms 500 --spectators 3 --rate 1 --duration 30 --warmup 10
    #   ... --disk              also ours with its data on the disk (what appendfsync always costs)
    #   ... --compare main      also another commit's server, same client and load, alternated
    #   ... --repeat 3          three rounds, the order of the targets alternating
    #   ... --profile           also where ours' CPU went, from py-spy samples of the window
    #                           (bench/profile_share.py: the auto-reveal's share, the edge's, ...)
    #   ... --cpu-shares        also the auto-reveal's (and a few other pieces') share of ours'
    #                           CPU by the thread's CPU clock (bench/cpu_share.py: exact, where
    #                           py-spy also counts the time a preempted process waits for a CPU)
    #   ... --with-store        also the baseline in its store mode (baseline+store): each message
    #                           committed through an embedded Valkey with our COMMIT script and
    #                           fanned out from its publication; ours / baseline+store is then our
    #                           own code's share, the store's round trip taken out
    # the highest rate (moves/s) with p99 <= 25 ms: rooms stepped up at 1 move/s each
    python bench/load.py ceiling --rooms 600 --step 100 --steps 8 --compare main
    #   ... --repeat 3          three runs per step and target; the medians decide the step
    # N idle spectator sockets, then the server's RSS (closed loop, websockets client)
    python bench/load.py idle --serve --conns 10000 --rooms 100 --duration 20

Method (``play`` and ``ceiling``)
----------------------------------

*Targets.* Each run starts a fresh server and stops it afterwards (:mod:`bench.serve`):

- ``ours``: ``python -m server`` of this tree (one app process unless ``--env WORKERS=2``), with
  its embedded Valkey (``appendfsync always``) and its data directory on tmpfs (``/dev/shm``):
  the baseline writes nothing, so the ratio compares code paths, not this VM's disk (whose
  fsyncs took 5-150 ms in many seconds). ``--disk`` adds a run with the data on the disk.
- ``--compare COMMIT``: that commit's tree (``git archive`` into a temporary directory), its
  ``python -m server`` with ``PYTHONPATH`` on it, the same venv, client and load (tmpfs too).
- ``baseline``: ``bench/baseline_app.py``, a minimal Starlette app that sends each message a
  socket sends, the same bytes, to the room's other sockets; no Redis, no game, no disk. It is
  run by uvicorn with exactly the arguments ``python -m server`` passes (same websocket
  implementation, ping interval, max size, loop, HTTP parser).
- ``baseline+store`` (``--with-store``): the same app with ``BASELINE_STORE=1``: an embedded
  Valkey started as ours is (tmpfs, ``appendfsync always``), each message committed with our
  ``COMMIT`` script through our lean clients (a 4.5 KB state, the message appended to the log,
  a clock deadline, published on the room's channel) and sent to the other sockets when this
  process's subscription delivers it. What a durable move costs before any of our code.

Per round every target runs once, in alternating order (ABC, CBA, ...), each on the same rooms
× (2 players + K spectators), the same rate, the same client processes.

*Client* (:mod:`bench.openloop`): ``--procs`` processes, each a uvloop loop with picows
websockets (Cython), GC off while measuring. (In one comparison at 300 moves/s the old
``websockets`` client took 10 % of a core and its own stalls made a p99 of 24 ms; this one took
7 % and measured 4 ms. A client's CPU includes the kernel's loopback work for what it sends.)
Each room has a timetable, one move every ``1/rate`` s from a random phase (open loop). A move
whose mover has not yet seen the previous version waits and is sent the moment it can be; its
latency still counts from its slot, so a server that falls behind shows it instead of the
client quietly slowing down (no coordinated omission). Latency = arrival of the move's push at
a socket − its slot (or its send, if that came first: timers are armed 1 ms early because
uvloop's fire up to 1.5 ms late), both ``time.monotonic_ns()`` in that client process, over
every recipient: for ours the update at all 2 + K sockets (the mover's own too), for the
baseline the message at the 1 + K others. The client does the same for both (msgpack-decode
every frame, look the version up, build each move with ``msgpack.packb``); for ours seat 0's
socket also keeps the game state from each diff. Games that end (about one in 50 moves) are
replaced by their rematch (an offer and an accept: the socket's ``rematch`` frames, or two HTTP
calls with a commit that does not know them; the 2 + K sockets follow the game
there, or, with a commit that cannot move them, 2 + K new sockets: part of our load, counted as
"restarts"); slots that come meanwhile, or were queued, wait for the new game (so the offered
load and any backlog carry over); a slot is "skipped" only if its room's replacement failed.

*Window.* Slots in the first ``--warmup`` seconds warm up; those of the next ``--duration``
seconds are measured. After it no slot is made, the window's queued moves still go out, and the
bench waits (at most ``--drain`` s) for every push of every measured move; pushes that never came
are "undelivered" and rank above every latency (a p99 that reaches them prints as ``inf``).

*Printed per run*: offered moves/s and messages/s served; latency p50/p90/p99/p99.9/max;
late slots (had to wait for the mover) with how late (p50/p99/max) and the client's timer lag
for slots sent on time (a busy machine or client shows here first: a p99 over 2 ms is
flagged); skipped slots, restarts, refused moves, error frames, sockets closed early,
undelivered pushes; the p99 of each 5 s of the window; CPU over the window (from /proc) of the
app process(es) with their worker processes (the analyses', the no-guess layouts': part of the
server's CPU, also shown alone), Valkey and all client processes, as a share of one core and per message (a
move with its pushes; a baseline message with its fan-out). Then, per round, **ours/baseline
for p99 and for app CPU per message** (also with Valkey's CPU added), ours/``--compare`` and
disk/tmpfs. A ratio from one run on this shared 2-vCPU VM still moves; ``--repeat`` gives its
spread (the median of each round's ratio is printed). With ``--profile``, ours' runs also print
each piece of the move path's share of the app's CPU from py-spy samples of the window
(:mod:`bench.profile_share`); those runs' own figures include the sampler's cost. py-spy also
keeps the samples of a process that is runnable but waiting for a CPU (here, often right after
it woke another by writing to its socket), so its shares are of more than the CPU used; with
``--cpu-shares`` ours runs through :mod:`bench.cpu_share`, which reads the thread's CPU clock
around a few functions (the auto-reveal among them) and prints their exact share of the app's
CPU over the window.

``ceiling``: for each target (ours, and ``--compare``'s), rooms from ``--rooms`` up by
``--step`` (at most ``--steps`` steps), each at ``--rate`` moves/s, a fresh server per run; a
target's steps stop at its first run whose p99 exceeds ``--p99-ms`` (25), or that left a push
undelivered or had a move refused, or whose clients could not open the rooms (their errors are
printed). Prints each run's figures and, per target, the rate served
(moves/s in the window) of its best passing run, and the ratio of ours to ``--compare``'s.

Against a server already running (no fresh start; the baseline is still started):
``play --url http://127.0.0.1:<port> --pid <app pid> [--redis-pid <valkey pid>]``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing as mp
import os
import queue
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cpu_share, profile_share
from bench.openloop import Plan, raise_fd_limit
from bench.openloop import worker as openloop_worker
from bench.serve import BenchServer, children, gauge_s, longest_bucket, loop_lag_buckets

ROOT = Path(__file__).resolve().parent.parent
TMPFS = "/dev/shm"
DISK = " disk"  # the label's suffix of a target whose data is on the disk
STORED = "baseline+store"  # the label of the baseline in its store mode (``--with-store``)
SERVED_BY = {"ours": "python -m server", "baseline": "bench/baseline_app.py",
             "stored": "bench/baseline_app.py (BASELINE_STORE=1)"}
LAG_WARN_MS = 2.0  # a client timer lag p99 above this is flagged: the client could not keep its timetable


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
    """CPU seconds used so far by ``pid`` (summed over comma-separated pids): the sum over its
    live threads of ``/proc/PID/task/TID/schedstat``'s time on a CPU (nanoseconds; user +
    system), or, where that is missing, ``/proc/PID/stat``'s utime + stime (10 ms ticks)."""
    if not pid:
        return None
    if isinstance(pid, str):
        found = [cpu_s(int(p)) for p in pid.split(",")]
        return None if None in found else sum(found)  # type: ignore[arg-type]
    try:
        total = 0
        for task in Path(f"/proc/{pid}/task").iterdir():
            total += int((task / "schedstat").read_text().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None


def descendants(pids: str | None, leave_out: int | None) -> list[int]:
    """The processes started by ``pids`` (comma-separated) and by those, ``leave_out`` (Valkey)
    and its own not included: the server's worker processes (the analyses', the no-guess
    layouts'), started on first use."""
    found: list[int] = []
    todo = [int(p) for p in str(pids).split(",")] if pids else []
    while todo:
        for child in children(todo.pop()):
            if child != leave_out and child not in found:
                found.append(child)
                todo.append(child)
    return found


def workers_cpu_s(pids: str | None, leave_out: int | None, since: dict[int, float]) -> tuple[float, dict[int, float]]:
    """CPU seconds the server's worker processes used since ``since`` (their readings then; a
    worker started meanwhile counts from 0), and their readings now."""
    now = {child: cpu_s(child) or 0.0 for child in descendants(pids, leave_out)}
    return sum(used - since.get(child, 0.0) for child, used in now.items()), now


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def percentile(sorted_ms: list[float], p: float) -> float:
    if not sorted_ms:
        return float("nan")
    k = min(len(sorted_ms) - 1, max(0, int(round(p / 100 * (len(sorted_ms) - 1)))))
    return sorted_ms[k]


def fmt_ms(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    if x == float("inf"):
        return "inf"
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0 or math.isnan(a) or math.isnan(b):
        return "n/a"
    if a == float("inf"):
        return "inf"
    return f"{a / b:.2f}x"


# ---------------------------------------------------------------------- targets


@dataclass
class Target:
    label: str
    kind: str  # "ours" | "baseline" | "stored" (the baseline in its store mode, ``--with-store``)
    root: Path | None = None  # source tree of ``python -m server``
    data_parent: str | None = TMPFS  # None: the system's temporary directory (the disk here)
    url: str = ""  # a server already running (``--url``)
    pid: str | None = None
    redis_pid: int | None = None


def git(*argv: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def tree_label() -> str:
    try:
        sha = git("rev-parse", "--short", "HEAD")
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "server", "engine"], cwd=ROOT,
                               check=False).returncode != 0
        return f"{sha}{'+dirty' if dirty else ''}"
    except (OSError, subprocess.CalledProcessError):
        return "this tree"


def checkout(commit: str) -> tuple[Path, str]:
    """That commit's files in a new temporary directory (``git archive``; no worktree is
    registered), with this tree's ``web/node_modules`` linked in (gitignored, needed by pages)."""
    sha = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    where = Path(tempfile.mkdtemp(prefix="mineduel-compare-"))
    archive = subprocess.Popen(["git", "archive", sha], cwd=ROOT, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(where)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {sha} failed")
    modules = ROOT / "web" / "node_modules"
    if modules.exists() and (where / "web").is_dir() and not (where / "web" / "node_modules").exists():
        (where / "web" / "node_modules").symlink_to(modules.resolve())
    return where, sha[:7]


# ---------------------------------------------------------------------- one run


class SetupFailed(RuntimeError):
    """The clients could not open their rooms (the server refused or timed out): a failing
    step for the ceiling, with the clients' errors."""


def drive(kind: str, url: str, pid: str | None, redis_pid: int | None, rooms: int, args: argparse.Namespace,
          shares_path: Path | None = None) -> dict:
    """Play ``rooms`` rooms against the server at ``url`` from ``--procs`` client processes;
    the figures of the measured window. ``shares_path``: the server runs through
    ``bench/cpu_share.py`` and writes there when signalled at the window's start and end."""
    ctx = mp.get_context("fork")
    procs_n = max(1, min(args.procs, rooms))
    barrier = ctx.Barrier(procs_n + 1)
    start_value = ctx.Value("q", 0)
    results = ctx.Queue()
    shares = [rooms // procs_n + (1 if i < rooms % procs_n else 0) for i in range(procs_n)]
    procs = []
    first = 0
    for i, share in enumerate(shares):
        plan = Plan(kind=kind, url=url, rooms=share, first_room=first, spectators=args.spectators, rate=args.rate,
                    warmup=args.warmup, duration=args.duration, drain=args.drain, seed=args.seed * 1000 + i,
                    preplay=args.preplay)
        first += share
        procs.append(ctx.Process(target=openloop_worker, args=(plan, barrier, start_value, results)))
    for p in procs:
        p.start()
    outs: list[dict] = []
    try:
        t_setup = time.monotonic()
        try:
            barrier.wait(timeout=args.setup_timeout)
        except Exception:
            errs = []
            try:  # (a queue's item shows up a little after its put: wait for the first)
                while True:
                    errs.append(results.get(timeout=5 if not errs else 0.5).get("error", ""))
            except queue.Empty:
                pass
            raise SetupFailed("client setup failed:\n" + "\n".join(errs)) from None
        setup_s = time.monotonic() - t_setup
        start_ns = time.monotonic_ns() + 300_000_000
        start_value.value = start_ns
        rss0 = rss_mb(pid)
        barrier.wait(timeout=60)
        warm_ns = start_ns + int(args.warmup * 1e9)
        end_ns = warm_ns + int(args.duration * 1e9)
        time.sleep(max(0.0, (warm_ns - time.monotonic_ns()) / 1e9))
        app_pid = int(str(pid).split(",")[0]) if pid else None  # the first app process
        lag0 = loop_lag_buckets(url) if kind == "ours" else None  # (read before the CPU clocks)
        t0 = time.monotonic()
        _, workers0 = workers_cpu_s(pid, redis_pid, {})
        cpu0 = (cpu_s(pid), cpu_s(redis_pid), sum(cpu_s(p.pid) or 0.0 for p in procs))
        if shares_path is not None and app_pid:
            os.kill(app_pid, signal.SIGUSR1)
        profiling = None
        if args.profile and kind == "ours" and app_pid:
            out = ROOT / "bench" / "out" / f"profile-{kind}-{rooms}-{os.getpid()}.raw"
            profiling = (profile_share.start(app_pid, args.duration, out), out)
        time.sleep(max(0.0, (end_ns - time.monotonic_ns()) / 1e9))
        cpu1 = (cpu_s(pid), cpu_s(redis_pid), sum(cpu_s(p.pid) or 0.0 for p in procs))
        workers_used, _ = workers_cpu_s(pid, redis_pid, workers0)
        if cpu1[0] is not None:  # the app: its process(es) and their worker processes
            cpu1 = (cpu1[0] + workers_used, cpu1[1], cpu1[2])
        if shares_path is not None and app_pid:
            os.kill(app_pid, signal.SIGUSR1)
        wall = time.monotonic() - t0
        lag1 = loop_lag_buckets(url) if lag0 is not None else None
        profile = profile_share.finish(*profiling) if profiling else None
        rss1 = rss_mb(pid)
        for _ in procs:
            outs.append(results.get(timeout=args.drain + 120))
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    bad = [o["error"] for o in outs if "error" in o]
    if bad:
        raise RuntimeError("client failed:\n" + "\n".join(bad))

    def total(key: str) -> int:
        return sum(o[key] for o in outs)

    undelivered = total("undelivered")
    lat = sorted(x / 1e6 for o in outs for x in o["lat"])
    lat_all = lat + [float("inf")] * undelivered
    late = sorted(x / 1e6 for o in outs for x in o["late"])
    lag = sorted(x / 1e6 for o in outs for x in o["timer_lag"])
    errors: dict[str, int] = {}
    for o in outs:
        for k, n in o["errors"].items():
            errors[k] = errors.get(k, 0) + n
    messages = total("messages")

    def per_msg(i: int) -> float | None:
        if cpu0[i] is None or cpu1[i] is None or not messages:
            return None
        return 1000 * (cpu1[i] - cpu0[i]) / messages

    def share(i: int) -> float | None:
        if cpu0[i] is None or cpu1[i] is None:
            return None
        return 100 * (cpu1[i] - cpu0[i]) / wall

    windows: dict[int, list[float]] = {}
    for o in outs:
        for x, sched in zip(o["lat"], o["lat_sched"]):
            windows.setdefault(int((sched - o["warm_ns"]) / 5e9), []).append(x / 1e6)
    return {
        "kind": kind, "rooms": rooms, "conns": total("conns"), "recipients": outs[0]["recipients"],
        "window_s": wall, "setup_s": setup_s, "procs": procs_n,
        "slots": total("slots"), "sent": total("sent"), "messages": messages, "deliveries": total("deliveries"),
        "measured": len(lat), "undelivered": undelivered, "unsent": total("unsent"),
        "p50": percentile(lat_all, 50), "p90": percentile(lat_all, 90), "p99": percentile(lat_all, 99),
        "p999": percentile(lat_all, 99.9), "max": lat_all[-1] if lat_all else float("nan"),
        "late": len(late), "late_p50": percentile(late, 50), "late_p99": percentile(late, 99),
        "late_max": late[-1] if late else 0.0,
        "lag_p50": percentile(lag, 50), "lag_p99": percentile(lag, 99), "lag_min": lag[0] if lag else float("nan"),
        "skipped": total("skipped"), "across_restart": total("across_restart"), "refused": total("refused"),
        "restarts": total("restarts"), "restart_failures": total("restart_failures"),
        "followed_restarts": total("followed_restarts"),
        "socket_restarts": total("socket_restarts"),
        "errors": errors, "closed_early": total("closed_early"),
        "cpu_app": share(0), "cpu_valkey": share(1), "cpu_client": share(2),
        "cpu_workers": 100 * workers_used / wall,
        "app_ms": per_msg(0), "valkey_ms": per_msg(1), "client_ms": per_msg(2),
        "rss0": rss0, "rss1": rss1,
        "p99_5s": [percentile(sorted(windows[k]), 99) for k in sorted(windows)],
        "loop_lag": loop_lag_in_window(lag0, lag1),
        "client_loop_lag": client_loop_lag([1000 * x for o in outs for x in o.get("loop_lag", [])], procs_n),
        "profile": profile,
        "cpu_shares": window_shares(shares_path),
    }


def loop_lag_in_window(before: dict[float, float] | None, after: dict[float, float] | None) -> str | None:
    """The app's event-loop lag over the window, from its histogram read at the start and the
    end: how often its 20 ms timer ran late by more than 10, 25 and 100 ms, and the longest."""
    if not before or not after:
        return None
    got = {le: after[le] - before.get(le, 0.0) for le in sorted(after)}
    total = got[math.inf]
    longest = longest_bucket(got.items())
    return (f"app event loop: {total:.0f} wake-ups of its 20 ms timer in the window, late by > 10 ms "
            f"{total - got.get(0.01, 0.0):.0f}, > 25 ms {total - got.get(0.025, 0.0):.0f}, > 100 ms "
            f"{total - got.get(0.1, 0.0):.0f} (longest "
            + (f"<= {longest:g} s)" if longest < math.inf else f"> {max(le for le in got if le < math.inf):g} s)"))


def client_loop_lag(lags_ms: list[float], procs: int) -> str | None:
    """The client processes' event-loop lag over the window (``server.loop_lag`` in each)."""
    if not lags_ms:
        return None
    return (f"client event loops ({procs}): {len(lags_ms)} wake-ups of their 20 ms timers in the window, late by "
            f"> 10 ms {sum(x > 10 for x in lags_ms)}, > 25 ms {sum(x > 25 for x in lags_ms)} "
            f"(longest {max(lags_ms):.1f} ms)")


def window_shares(path: Path | None) -> dict[str, float] | None:
    """The pieces' shares of the app's CPU over the window (the server writes its second line
    when it next runs Python after the signal: wait for it, bounded)."""
    if path is None:
        return None
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = cpu_share.shares(str(path))
        if found is not None:
            return found
        time.sleep(0.1)
    return None


def run_target(target: Target, rooms: int, args: argparse.Namespace) -> dict:
    """One run of ``target`` (a fresh server unless it is ``--url``'s) with ``rooms`` rooms."""
    env = dict(item.split("=", 1) for item in args.env)
    if target.kind != "ours" and env.pop("WORKERS", "1") != "1":
        # its rooms live in one process's memory: sockets of a room on two processes would not hear
        # each other. One process, then; the ratio is against that.
        print("(the baseline runs one process: WORKERS applies to ours only)", flush=True)
    if target.url:
        figs = drive(target.kind, target.url, target.pid, target.redis_pid, rooms, args)
        figs["label"] = target.label
        return figs
    shares = args.cpu_shares and target.kind == "ours"
    if shares and env.get("WORKERS", "1") != "1":
        raise SystemExit("--cpu-shares measures one app process: not with WORKERS > 1")
    with BenchServer(env, root=target.root, data_parent=target.data_parent, baseline=target.kind != "ours",
                     store=target.kind == "stored", cpu_shares=shares) as server:
        figs = drive(target.kind, server.url, server.pid_list, server.valkey_pid, rooms, args,
                     server.cpu_shares_path)
        figs["served_by"] = (f"{SERVED_BY[target.kind]} "
                             f"in {server.root if target.kind == 'ours' else 'this tree'}, pid(s) {server.pid_list}, "
                             f"data in {server.data_dir}")
        if target.kind != "baseline":  # ours, and the baseline's store mode: each with its Valkey
            try:
                figs["valkey_report"] = server.valkey_report()
                if target.kind == "ours":
                    passes = server.gc_passes()
                    figs["gc"] = ", ".join(f"gen{gen} {n} ({total:.2f} s, longest <= {longest:g} s)"
                                           for gen, (n, total, longest) in passes.items()) or "none"
            except Exception as exc:  # an older commit's server may lack a metric
                figs["valkey_report"] = f"(valkey/metrics report unavailable: {exc})"
    figs["label"] = target.label
    return figs


def print_run(f: dict, args: argparse.Namespace) -> None:
    w = f["window_s"]
    print(f"--- {f['label']}: {f['rooms']} rooms x {f['conns'] // max(1, f['rooms'])} sockets ({f['conns']}), "
          f"{args.rate:g} move/s per room ({f['rooms'] * args.rate:g}/s offered), window {w:.1f} s "
          f"(after {args.warmup:g} s warm-up; set up in {f['setup_s']:.1f} s, {f['procs']} client processes"
          + (f"; each game first played 0..{args.preplay} moves" if args.preplay and f["kind"] == "ours" else "")
          + ")")
    print(f"  slots {f['slots']}, moves sent {f['sent']}; served {f['messages']} messages ({f['messages'] / w:.0f}/s) "
          f"and {f['deliveries']} pushes ({f['deliveries'] / w:.0f}/s) in the window")
    print(f"  latency over {f['measured']} pushes to {f['recipients']} sockets per move (+ {f['undelivered']} undelivered): "
          f"p50 {fmt_ms(f['p50'])}  p90 {fmt_ms(f['p90'])}  p99 {fmt_ms(f['p99'])}  p99.9 {fmt_ms(f['p999'])}  "
          f"max {fmt_ms(f['max'])} ms")
    print("  p99 per 5 s of the window: " + " ".join(fmt_ms(x) for x in f["p99_5s"]) + " ms")
    print(f"  late slots {f['late']} ({100 * f['late'] / max(1, f['slots']):.1f} %), late by p50 {fmt_ms(f['late_p50'])} "
          f"p99 {fmt_ms(f['late_p99'])} max {fmt_ms(f['late_max'])} ms; client timer lag of on-time slots "
          f"p50 {fmt_ms(f['lag_p50'])} p99 {fmt_ms(f['lag_p99'])} ms (min {fmt_ms(f['lag_min'])})")
    print(f"  restarts {f['restarts']} (failed {f['restart_failures']}; sockets followed the game "
          f"{f['followed_restarts']}, reopened {f['restarts'] - f['followed_restarts']}; rematch by socket frames "
          f"{f['socket_restarts']}, by HTTP {f['restarts'] - f['socket_restarts']}), slots that waited for a restart "
          f"{f['across_restart']}, skipped slots {f['skipped']} (replacement failed), refused moves {f['refused']}, "
          f"queued never sent {f['unsent']}, errors {f['errors'] or 0}, sockets closed early {f['closed_early']}")

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.0f}%"

    def ms(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f} ms"

    valkey = f"; valkey {pct(f['cpu_valkey'])} = {ms(f['valkey_ms'])}/msg" if f["cpu_valkey"] is not None else ""
    if f.get("cpu_workers"):
        valkey = f" (of it its worker processes {pct(f['cpu_workers'])}: the analyses, no-guess layouts)" + valkey
    print(f"  CPU of one core: app {pct(f['cpu_app'])} = {ms(f['app_ms'])}/msg{valkey}; "
          f"client {pct(f['cpu_client'])} = {ms(f['client_ms'])}/msg (all processes)")
    if not math.isnan(f["lag_p99"]) and f["lag_p99"] > LAG_WARN_MS:
        print(f"  NOTE: the client fired its own timers late (p99 {fmt_ms(f['lag_p99'])} ms past the slot): the "
              f"machine was busy (other processes, or the client itself); this run's latency is not the server's alone")
    if "served_by" in f:
        print(f"  server: {f['served_by']}")
    rss = f"  app RSS {f['rss0']:.0f} -> {f['rss1']:.0f} MB" if f["rss0"] and f["rss1"] else ""
    memory = [part for part in (rss.strip(), f"GC passes {f['gc']}" if "gc" in f else "") if part]
    if memory:
        print("  " + "; ".join(memory))
    if "valkey_report" in f:
        print(f"  {f['valkey_report']}")
    for key in ("loop_lag", "client_loop_lag"):
        if f.get(key):
            print(f"  {f[key]}")
    if f.get("profile") is not None:
        print("\n".join(f["profile"].lines()))
        print("  NOTE: py-spy sampled this run: its latency and CPU figures include the sampler's cost; take the "
              "ratios from a run without --profile")
    if f.get("cpu_shares") is not None:
        print("\n".join(cpu_share.lines(f["cpu_shares"])))
        print("  NOTE: the clock reads cost a little CPU (bench/cpu_share.py); take the ratios from a run without "
              "--cpu-shares")
    sys.stdout.flush()


def app_valkey_ms(f: dict) -> float | None:
    if f["app_ms"] is None:
        return None
    return f["app_ms"] + (f["valkey_ms"] or 0.0)


def per_client(f: dict) -> float | None:
    """The app's CPU a message over the client's in the same run. Two of our servers give the
    client the same work a message, so this ratio between them leaves out what the machine did
    to both processes in that run: a neighbour slowing the whole VM raises the client's CPU a
    message as much as the app's (docs/PERFORMANCE.md, twenty-fifth session)."""
    if not f["app_ms"] or not f["client_ms"]:
        return None
    return f["app_ms"] / f["client_ms"]


def print_round(figs: list[dict], baseline: dict | None) -> None:
    print(f"{'target':<28} {'p50':>7} {'p99':>7} {'max':>7} {'undeliv':>7} {'late':>5} "
          f"{'app ms/msg':>10} {'+valkey':>8} {'client ms/msg':>13} {'client %':>8} {'lag p99':>7} "
          f"{'p99/base':>8} {'cpu/base':>8} {'+valkey/base':>12}")
    for f in figs:
        b = baseline if baseline is not None and f is not baseline else None
        client = "n/a" if f["cpu_client"] is None else f"{f['cpu_client']:.0f}%"
        print(f"{f['label']:<28} {fmt_ms(f['p50']):>7} {fmt_ms(f['p99']):>7} {fmt_ms(f['max']):>7} "
              f"{f['undelivered']:>7} {f['late']:>5} {fmt_ms(f['app_ms']):>10} {fmt_ms(app_valkey_ms(f)):>8} "
              f"{fmt_ms(f['client_ms']):>13} {client:>8} {fmt_ms(f['lag_p99']):>7} "
              f"{ratio(f['p99'], b['p99']) if b else '':>8} {ratio(f['app_ms'], b['app_ms']) if b else '':>8} "
              f"{ratio(app_valkey_ms(f), b['app_ms']) if b else '':>12}")
    def line(a: dict, b: dict, name: str, same_client: bool = True) -> None:
        text = (f"{name}: p99 {ratio(a['p99'], b['p99'])}, app CPU/msg {ratio(a['app_ms'], b['app_ms'])}, "
                f"app+valkey CPU/msg {ratio(app_valkey_ms(a), app_valkey_ms(b))}")
        if same_client:
            text += f", app CPU/msg over the client's {ratio(per_client(a), per_client(b))}"
        print(text)

    by_label = {f["label"]: f for f in figs}
    first = figs[0]
    for f in figs[1:]:
        if f["kind"] == "stored":
            line(first, f, f"{first['label']} / {f['label']} (our own code's share)", same_client=False)
        if f["kind"] != "ours":
            continue
        if f["label"].endswith(DISK):
            tmpfs = by_label.get(f["label"][: -len(DISK)])
            if tmpfs is not None:
                line(f, tmpfs, f"{tmpfs['label']}: disk / tmpfs (what durability costs)")
        else:
            line(first, f, f"{first['label']} / {f['label']}")
    sys.stdout.flush()


# ---------------------------------------------------------------------- modes


def build_targets(args: argparse.Namespace, with_baseline: bool) -> tuple[list[Target], list[Path]]:
    here = tree_label()
    temp: list[Path] = []
    if args.url:
        targets = [Target(f"ours@{args.url}", "ours", url=args.url, pid=args.pid, redis_pid=args.redis_pid)]
    else:
        targets = [Target(f"ours@{here}", "ours", ROOT, TMPFS)]
        if args.disk:
            targets.append(Target(f"ours@{here}{DISK}", "ours", ROOT, None))
        if args.compare and Path(args.compare).is_dir():  # a tree on disk (say, a scratch build), as it is
            targets.append(Target(f"{args.compare}", "ours", Path(args.compare).resolve(), TMPFS))
        elif args.compare:
            where, sha = checkout(args.compare)
            temp.append(where)
            targets.append(Target(f"{args.compare}@{sha}", "ours", where, TMPFS))
            if args.disk:
                targets.append(Target(f"{args.compare}@{sha}{DISK}", "ours", where, None))
    if with_baseline:
        targets.append(Target("baseline", "baseline"))
    if args.with_store:
        targets.append(Target(STORED, "stored"))
    return targets, temp


def mode_play(args: argparse.Namespace) -> None:
    targets, temp = build_targets(args, with_baseline=not args.no_baseline)
    rounds: list[list[dict]] = []
    try:
        for r in range(args.repeat):
            order = targets if r % 2 == 0 else targets[::-1]
            print(f"\n=== round {r + 1} of {args.repeat}: " + ", ".join(t.label for t in order), flush=True)
            done: dict[str, dict] = {}
            for t in order:
                print(f"(gauge {gauge_s():.2f} s, load average {loadavg()} before {t.label})", flush=True)
                done[t.label] = run_target(t, args.rooms, args)
                print_run(done[t.label], args)
            figs = [done[t.label] for t in targets]
            rounds.append(figs)
            print(f"\n--- round {r + 1}: ratios against the same round's baseline")
            print_round(figs, done.get("baseline"))
    finally:
        for where in temp:
            shutil.rmtree(where, ignore_errors=True)
    if args.repeat > 1:
        print(f"\n=== medians over {args.repeat} rounds (ratios: the median of each round's ratio)")
        base_i = next((i for i, t in enumerate(targets) if t.kind == "baseline"), None)
        store_i = next((i for i, t in enumerate(targets) if t.kind == "stored"), None)
        for i, t in enumerate(targets):
            p99 = statistics.median(rd[i]["p99"] for rd in rounds)
            cpu = [rd[i]["app_ms"] for rd in rounds if rd[i]["app_ms"] is not None]
            line = f"{t.label:<28} p99 {fmt_ms(p99):>7} ms (runs: {', '.join(fmt_ms(rd[i]['p99']) for rd in rounds)})"
            line += f"  app CPU/msg {fmt_ms(statistics.median(cpu)) if cpu else 'n/a'} ms"
            if base_i is not None and i != base_i:
                rp = [rd[i]["p99"] / rd[base_i]["p99"] for rd in rounds]
                rc = [rd[i]["app_ms"] / rd[base_i]["app_ms"] for rd in rounds if rd[i]["app_ms"] and rd[base_i]["app_ms"]]
                line += f"  p99/baseline {statistics.median(rp):.2f}x ({', '.join(f'{x:.2f}' for x in rp)})"
                if rc:
                    line += f"  CPU/baseline {statistics.median(rc):.2f}x ({', '.join(f'{x:.2f}' for x in rc)})"
            if store_i is not None and t.kind == "ours":
                rs = [rd[i]["app_ms"] / rd[store_i]["app_ms"] for rd in rounds
                      if rd[i]["app_ms"] and rd[store_i]["app_ms"]]
                if rs:
                    line += f"  CPU/{STORED} {statistics.median(rs):.2f}x ({', '.join(f'{x:.2f}' for x in rs)})"
            if i != 0 and t.kind == "ours" and targets[0].kind == "ours":
                rn = [per_client(rd[0]) / per_client(rd[i]) for rd in rounds if per_client(rd[0]) and per_client(rd[i])]
                if rn:
                    line += (f"  {targets[0].label} / it, over the client's CPU {statistics.median(rn):.2f}x "
                             f"({', '.join(f'{x:.2f}' for x in rn)})")
            print(line)


def step_verdict(runs: list[dict], p99_ms: float) -> tuple[bool, float, float]:
    """A ceiling step's verdict from its runs: (passed, p99, moves/s served), the medians of the
    runs (``--repeat``: one noisy 15-s run near the limit no longer decides the step), and a
    run that lost or refused a move fails it."""
    p99 = statistics.median(f["p99"] for f in runs)
    rate = statistics.median(f["messages"] / f["window_s"] for f in runs)
    clean = all(f["undelivered"] == 0 and f["refused"] == 0 for f in runs)
    return clean and p99 <= p99_ms, p99, rate


def mode_ceiling(args: argparse.Namespace) -> None:
    targets, temp = build_targets(args, with_baseline=args.with_baseline)
    best: dict[str, float] = {t.label: 0.0 for t in targets}  # moves/s served in the best passing run
    best_rooms: dict[str, int] = {t.label: 0 for t in targets}
    alive = {t.label for t in targets}
    try:
        for step in range(args.steps):
            rooms = args.rooms + step * args.step
            order = [t for t in (targets if step % 2 == 0 else targets[::-1]) if t.label in alive]
            if not order:
                break
            print(f"\n=== step {step + 1} of at most {args.steps}: {rooms} rooms = {rooms * args.rate:g} moves/s offered; "
                  + ", ".join(t.label for t in order), flush=True)
            runs: dict[str, list[dict]] = {t.label: [] for t in order}
            for r in range(args.repeat):  # each target's runs alternate with the others'
                for t in (order if r % 2 == 0 else order[::-1]):
                    if t.label not in alive:
                        continue
                    print(f"(gauge {gauge_s():.2f} s, load average {loadavg()} before {t.label})", flush=True)
                    try:
                        f = run_target(t, rooms, args)
                    except SetupFailed as exc:  # a step the server could not even set up fails it
                        print(f"--- {t.label}: {exc}".rstrip())
                        print(f"  => FAIL: the clients could not open {rooms} rooms", flush=True)
                        alive.discard(t.label)
                        continue
                    print_run(f, args)
                    runs[t.label].append(f)
            for t in order:
                if t.label not in alive:
                    continue
                ok, p99, rate = step_verdict(runs[t.label], args.p99_ms)
                many = f"median of {len(runs[t.label])} runs: " if len(runs[t.label]) > 1 else ""
                print(f"  => {t.label}: {'PASS' if ok else 'FAIL'}: {many}p99 {fmt_ms(p99)} ms "
                      f"{'<=' if ok else 'not <='} {args.p99_ms:g} ms, served {rate:.0f} moves/s", flush=True)
                if ok and rate > best[t.label]:
                    best[t.label], best_rooms[t.label] = rate, rooms
                else:
                    alive.discard(t.label)
    finally:
        for where in temp:
            shutil.rmtree(where, ignore_errors=True)
    print(f"\n=== highest rate (moves/s served) with p99 <= {args.p99_ms:g} ms (nothing undelivered, no move refused)")
    for t in targets:
        note = " (still passing at the last step: the ceiling is higher)" if t.label in alive else ""
        print(f"{t.label:<28} {best[t.label]:.0f} moves/s ({best_rooms[t.label]} rooms x {args.rate:g}/s offered){note}")
    if len(targets) > 1 and best[targets[0].label]:
        for t in targets[1:]:
            print(f"{targets[0].label} / {t.label}: {ratio(best[targets[0].label], best[t.label])}")


# ---------------------------------------------------------------------- idle (closed loop, websockets)


async def setup_rooms(url: str, rooms: int, concurrency: int = 16) -> list[str]:
    from server.client import Api

    out: list[str] = []
    sem = asyncio.Semaphore(concurrency)
    async with Api(url, timeout_s=60) as api:
        async def one(i: int) -> None:
            async with sem:
                a, b = await api.guest(), await api.guest()
                game = await api.create_game(a.token, seat=0)
                await api.join(b.token, game["id"])
                out.append(game["id"])
        await asyncio.gather(*(one(i) for i in range(rooms)))
    return out


async def run_idle(args: argparse.Namespace, conns_n: int, barrier, results) -> None:
    from websockets.asyncio.client import connect

    from server.client import ws_url

    rooms = await setup_rooms(args.url, max(1, args.rooms // args.procs))
    sem = asyncio.Semaphore(128)
    opened: list = []
    failed = 0

    async def open_ws(i: int) -> None:
        nonlocal failed
        async with sem:
            try:
                ws = await connect(ws_url(args.url, rooms[i % len(rooms)]), open_timeout=60, ping_interval=None)
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


def idle_worker(args: argparse.Namespace, share: int, barrier, results) -> None:
    raise_fd_limit()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(run_idle(args, share, barrier, results))


def idle(args: argparse.Namespace) -> None:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(args.procs + 1)
    results = ctx.Queue()
    total = args.conns
    shares = [total // args.procs + (1 if i < total % args.procs else 0) for i in range(args.procs)]
    rss_before = rss_mb(args.pid)
    procs = [ctx.Process(target=idle_worker, args=(args, s, barrier, results)) for s in shares]
    for p in procs:
        p.start()
    barrier.wait(timeout=600)  # everybody connected
    t0 = time.monotonic()
    outs = [results.get(timeout=args.duration + 600) for _ in procs]
    print(f"idle connections: opened={sum(o['opened'] for o in outs)} failed={sum(o['failed'] for o in outs)} "
          f"alive after {args.duration:.0f}s={sum(o['alive'] for o in outs)}")
    print(f"server RSS: before={rss_before} MB, holding={rss_mb(args.pid)} MB; valkey RSS={rss_mb(args.redis_pid)} MB")
    barrier.wait(timeout=600)
    for p in procs:
        p.join(timeout=60)
    print(f"idle wall time {time.monotonic() - t0:.1f}s")


def mode_idle(args: argparse.Namespace) -> None:
    if not args.serve:
        idle(args)
        return
    env = dict(item.split("=", 1) for item in args.env)
    with BenchServer(env) as server:
        args.url, args.pid, args.redis_pid = server.url, server.pid_list, server.valkey_pid
        print(f"fresh server {server.url}: app pid(s) {server.pid_list}, valkey pid {server.valkey_pid}", flush=True)
        idle(args)
        print(server.valkey_report())


# ---------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["play", "ceiling", "idle"])
    ap.add_argument("--rooms", type=int, default=100, help="rooms (ceiling: at the first step)")
    ap.add_argument("--spectators", type=int, default=3)
    ap.add_argument("--rate", type=float, default=1.0, help="moves per second per room")
    ap.add_argument("--duration", type=float, default=20.0, help="measured seconds")
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--preplay", type=int, default=0, metavar="N",
                    help="ours: each room first plays 0..N of its moves (uniformly, unmeasured), so that the games "
                         "are spread over their phases when the timetable starts (default 0: every game at its start)")
    ap.add_argument("--drain", type=float, default=5.0, help="seconds to wait for the window's last pushes")
    ap.add_argument("--procs", type=int, default=2, help="client processes")
    ap.add_argument("--seed", type=int, default=1, help="the bots' and the timetables' random seed")
    ap.add_argument("--setup-timeout", type=float, default=600.0)
    ap.add_argument("--disk", action="store_true", help="also run ours with its data on the disk")
    ap.add_argument("--profile", action="store_true",
                    help="play: sample ours with py-spy over the window and print where its CPU went (bench/profile_share.py)")
    ap.add_argument("--cpu-shares", action="store_true",
                    help="play: run ours through bench/cpu_share.py and print each piece's share of its CPU "
                         "by the thread's CPU clock")
    ap.add_argument("--compare", metavar="COMMIT", help="also run this commit's server (or the tree in this "
                    "directory, as it is), alternating")
    ap.add_argument("--repeat", type=int, default=1, help="play: rounds (each runs every target once); "
                    "ceiling: runs per step and target (the step is decided by their medians)")
    ap.add_argument("--no-baseline", action="store_true", help="play: skip the baseline (no ratio)")
    ap.add_argument("--with-store", action="store_true",
                    help="also the baseline in its store mode (each message committed and published through an "
                         "embedded Valkey with our COMMIT script before its fan-out): what a durable move costs "
                         "before any of our own code; prints ours / baseline+store")
    ap.add_argument("--step", type=int, default=100, help="ceiling: rooms added per step")
    ap.add_argument("--steps", type=int, default=6, help="ceiling: at most this many steps")
    ap.add_argument("--p99-ms", type=float, default=25.0, help="ceiling: the p99 a step must stay under")
    ap.add_argument("--with-baseline", action="store_true", help="ceiling: also step the baseline")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for every server started (repeatable), e.g. WORKERS=2")
    ap.add_argument("--url", default="", help="play/idle: a running server (loopback) instead of a fresh one")
    ap.add_argument("--pid", help="with --url: the server's process id(s), comma-separated, for RSS and CPU")
    ap.add_argument("--redis-pid", type=int, help="with --url: its valkey's pid")
    ap.add_argument("--serve", action="store_true", help="idle: start a fresh server for the run")
    ap.add_argument("--conns", type=int, default=10_000, help="idle mode: connections")
    args = ap.parse_args()
    raise_fd_limit()
    if args.url and not args.url.startswith(("http://127.", "http://localhost", "http://[::1]")):
        sys.exit("load.py only targets loopback servers")
    if args.mode == "idle" and not args.url and not args.serve:
        args.url = "http://127.0.0.1:8000"
    if args.url and (args.compare or args.disk) and args.mode != "idle":
        sys.exit("--compare and --disk start their own servers: leave out --url")
    print("command: " + shlex.join(["python", "bench/load.py", *sys.argv[1:]]))
    print(f"tree {tree_label()}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"before: machine-speed gauge (sum(range(3e7)), best of 3) {gauge_s():.2f} s, load average {loadavg()}",
          flush=True)
    t0 = time.monotonic()
    {"play": mode_play, "ceiling": mode_ceiling, "idle": mode_idle}[args.mode](args)
    print(f"\nafter: machine-speed gauge {gauge_s():.2f} s, load average {loadavg()}; "
          f"bench wall time {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
