"""Where the app's CPU goes under load: py-spy samples of the measured window, as the share of
the samples (the process on a CPU) that each named piece of the move path was on the stack for.

Why a sampling profile of the loaded server: issue 11 put the auto-reveal's cost as a share of
the server's CPU per move "in a profile under load", which takes in everything the process
does for a move (the websocket edge, the Redis round trip, the event loop, the collector), not
only the in-process path that ``bench/path.py`` counts instructions of. py-spy reads the
process from outside (no change to the server); it samples only while the process is on a CPU
(idle threads are left out), so a piece's share of the samples is its share of the app's CPU.
A sample whose stack is not rooted at the main module (torn while read, or another thread's:
the shares are of the event loop's thread) is counted apart.
Its own sampling costs CPU on the same machine, so a profiled run's latency and CPU figures
are not used for the ratios (``bench/load.py`` says so beside them).

    python bench/load.py play --rooms 500 --profile      # the shares below the run's figures
    python bench/profile_share.py bench/out/profile-ours.raw   # the shares of a saved profile
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

PIECES: tuple[tuple[str, str, str], ...] = (
    # (name, frame "function (file)" in py-spy's raw output, what it is)
    ("move", "RoomService.act (service.py)", "a move from its frame to its commit's reply (and fan-out)"),
    ("decide", "decide (decide.py)", "  the room core: the duel copied, the move applied, the new Room"),
    ("auto-reveal", "Duel._auto_reveal (duel.py)", "    the deduction auto-reveal"),
    ("stored form", "StoredForm.pack (stored_form.py)", "  the stored room packed"),
    ("commit", "Store.commit (store.py)", "  the EVALSHA: encoded, written, its reply read"),
    ("fan-out", "RoomFeed._deliver (room_feed.py)", "the new version pushed to every viewer (in move: no message)"),
    ("render", "MsgpackCodec.update (codec_msgpack.py)", "  the frames, one per viewer class"),
    ("pushes", "Outbox.send (outbox.py)", "  five frames written to their sockets"),
    ("ws read", "WebSocketsSansIOProtocol.data_received (websockets_sansio_impl.py)",
     "frames read from sockets (uvicorn, websockets)"),
    ("gc", "GcPolicy.collect (gc_policy.py)", "the cyclic collector's timed passes"),
)
LOOP = "Runner.run (runners.py)"
"""The outermost frame of every sample: its own share is time in the event loop's C code and
the kernel with no Python frame above it (epoll, socket reads, callbacks' dispatch)."""

ROOT_FRAME = "_run_module_as_main (<frozen runpy>)"
"""The bottom of every whole stack of ``python -m server``."""

_FRAME = re.compile(r"^(?P<func>.*) \((?P<path>[^()]*?):\d+\)$")


@dataclass(frozen=True)
class Shares:
    samples: int
    torn: int
    """samples left out: a stack not rooted at the main module (py-spy read it while it changed,
    or another thread's)"""
    inclusive: dict[str, float]
    """piece name -> per cent of the samples with it on the stack"""
    loop_self: float

    def lines(self) -> list[str]:
        out = [f"  profile under load (py-spy, {self.samples} samples of the app on a CPU, {self.torn} others left out: "
               f"torn or another thread's): share of the app's CPU"]
        for name, _frame, what in PIECES:
            out.append(f"    {self.inclusive[name]:5.1f}%  {name:<12} {what}")
        out.append(f"    {self.loop_self:5.1f}%  {'loop':<12} the event loop's own C code and the kernel below it")
        return out


def frame_key(frame: str) -> str:
    """``func (path:line)`` -> ``func (basename)``: the key :data:`PIECES` names frames by."""
    m = _FRAME.match(frame)
    if m is None:
        return frame
    return f"{m['func']} ({m['path'].rsplit('/', 1)[-1]})"


def shares(raw: str) -> Shares:
    """The shares from py-spy's ``--format raw`` output (one ``frame;frame;... count`` per line)."""
    wanted = {frame: name for name, frame, _ in PIECES}
    inclusive: Counter[str] = Counter()
    total = loop_self = torn = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [frame_key(f) for f in stack.split(";")]
        if frames[0] != ROOT_FRAME:
            torn += n
            continue
        total += n
        for name in {wanted[f] for f in frames if f in wanted}:
            inclusive[name] += n
        if frames[-1] == LOOP:
            loop_self += n
    pct = (lambda n: 100.0 * n / total) if total else (lambda n: float("nan"))
    return Shares(total, torn, {name: pct(inclusive[name]) for name, _, _ in PIECES}, pct(loop_self))


def py_spy() -> str:
    """The py-spy executable beside this interpreter, else on PATH (``pip install .[bench]``)."""
    here = Path(sys.executable).parent / "py-spy"
    found = str(here) if here.exists() else shutil.which("py-spy")
    if found is None:
        raise RuntimeError("--profile needs py-spy: pip install -e '.[bench]'")
    return found


def start(pid: int, seconds: float, out: Path, rate: int = 250) -> subprocess.Popen[bytes]:
    """Sample ``pid`` for ``seconds`` into ``out`` (raw format). py-spy stops the process for
    each sample (its default): with ``--nonblocking`` a quarter of the samples here were torn
    stacks (not rooted at the main module), deep ones most often, which halved the auto-reveal's
    share (5% against 11%)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [py_spy(), "record", "--pid", str(pid), "--duration", str(max(1, round(seconds))), "--rate", str(rate),
         "--format", "raw", "--output", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def finish(proc: subprocess.Popen[bytes], out: Path, timeout_s: float = 30.0) -> Shares | None:
    """Wait for the sampler; the shares, or None if it wrote nothing (no permission to trace)."""
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if not out.exists():
        return None
    return shares(out.read_text())


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(path)
        print("\n".join(shares(Path(path).read_text()).lines()))
