"""Classic boards in a real browser, and the server's loop while no-guess boards are made.

Two figures issue 13 asks for, printed and never asserted:

1. **Click to painted board.** A fresh server (``bench/serve.py``), Chromium through
   Playwright, a guest, then per board size (Expert 30×16/99 and custom 60×40/480) ``--games``
   seeded games (the test hook seeds the layout): the first click, which always cascades, is
   timed from the page's click event to the moment the board in the page shows the opened
   cells (polled in the page each animation frame), and the websocket frame that carried it
   is measured in bytes. Median / p99 / max per size, with the cells each first click opened.
2. **Loop lag while making no-guess boards.** The same server is asked for ``--boards``
   Expert no-guess games at once over the API, each to its first click (the layout is made
   then, in the worker process), while
   a probe times ``GET /healthz`` every 10 ms: the probe's median / p99 / max beside the same
   probe on the idle server. A generator that blocked the loop would show as the difference.

    python bench/solo_browser.py --games 20 --boards 20

The load average is printed beside the figures: run it alone (no test suite, no other browser).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.serve import BenchServer, gauge_s  # noqa: E402
from server.client import GameSocket  # noqa: E402

SIZES = {"expert 30x16/99": (30, 16, 99), "custom 60x40/480": (60, 40, 480)}
CLICK_PROBE = """() => document.addEventListener('click', () => { window.__clicked = performance.now(); },
                                      {capture: true, once: true})"""
PAINTED = """([before, deadline]) => new Promise(resolve => {
  const tick = () => {
    const open = document.querySelectorAll('#board .cell.open').length;
    if (open > before || performance.now() > deadline) resolve([open, performance.now()]);
    else requestAnimationFrame(tick);
  };
  tick();
})"""


def spread(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return f"median {statistics.median(ordered):8.1f}  p99 {p99:8.1f}  max {ordered[-1]:8.1f}"


def click_to_paint(base: str, games: int, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": 1600, "height": 1200})
        page = context.new_page()
        frames: list[tuple[int, bool]] = []  # (bytes, a snapshot)
        page.on("websocket", lambda ws: ws.on("framereceived", lambda p: frames.append(
            (len(p), isinstance(p, str) and p.startswith("<!--snapshot-->")))))
        page.goto(base + "/")
        page.fill("#guest-name", f"Bench{os.getpid()}")
        page.click("#guest-go")
        for label, (width, height, mines) in SIZES.items():
            times, sizes, opened = [], [], []
            for seed in range(games):
                response = context.request.post(base + "/solo", form={"width": str(width), "height": str(height),
                                                                       "mines": str(mines), "seed": str(seed)},
                                                 headers={"origin": base})
                seen = len(frames)
                page.goto(response.url)
                page.wait_for_function("document.querySelector('#board') !== null")
                while not any(snap for _, snap in frames[seen:]):  # the socket's first snapshot...
                    page.wait_for_timeout(20)
                page.wait_for_timeout(200)  # ...swapped in and settled
                before = page.locator("#board .cell.open").count()
                seen = len(frames)
                # the bench's own probe (the app has no script): when the page saw the click
                page.evaluate(CLICK_PROBE)
                page.click(f"#cell-{height // 2}-{width // 2}")
                start = page.evaluate("window.__clicked")
                count, painted = page.evaluate(PAINTED, [before, start + 10_000])
                times.append(painted - start)
                sizes.append(max((n for n, _ in frames[seen:]), default=0) / 1024)
                opened.append(count - before)
                page_kib = len(page.content()) / 1024
                snapshot_kib = max((n for n, snap in frames if snap), default=0) / 1024
            print(f"  {label:18s} click→painted ms  {spread(times)}   (page: {page_kib:.0f} KiB, snapshot frame "
                  f"{snapshot_kib:.0f} KiB)")
            print(f"  {'':18s} frame KiB         {spread(sizes)}   cells opened: median {statistics.median(opened):.0f}")
        browser.close()


def server_push_ms(base: str) -> float:
    """The server's mean time from a move's arrival to its push (``mineduel_move_to_push_seconds``)."""
    text = httpx.get(base + "/metrics").text
    found = dict(line.split(" ", 1) for line in text.splitlines()
                 if line.startswith(("mineduel_move_to_push_seconds_sum", "mineduel_move_to_push_seconds_count")))
    count = float(found.get("mineduel_move_to_push_seconds_count", "0"))
    return 1000 * float(found.get("mineduel_move_to_push_seconds_sum", "0")) / count if count else float("nan")


async def probe(base: str, seconds: float) -> list[float]:
    """``GET /healthz`` every 10 ms for ``seconds``: each answer's time in ms."""
    out: list[float] = []
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            t = time.perf_counter()
            await client.get("/healthz")
            out.append((time.perf_counter() - t) * 1000)
            await asyncio.sleep(0.01)
    return out


async def loop_lag(base: str, boards: int) -> None:
    idle = await probe(base, 3)
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        guest = (await client.post("/api/v1/guests", json={})).json()["token"]
        headers = {"Authorization": f"Bearer {guest}"}

        async def make() -> float:
            """A no-guess Expert game to its first click: the layout is made then (in the worker)."""
            r = await client.post("/api/v1/solo", json={"preset": "expert", "no_guess": True}, headers=headers)
            assert r.status_code == 201, r.text
            async with await GameSocket.connect(base, r.json()["id"], guest) as sock:
                await sock.until(lambda f: f["t"] == "snapshot")
                t = time.perf_counter()
                await sock.move("reveal", (8, 15))
                await sock.until(lambda f: f["t"] == "update", timeout_s=60)
                return (time.perf_counter() - t) * 1000

        making = asyncio.gather(*(make() for _ in range(boards)))
        busy = await probe(base, 3)
        made = await making
    print(f"  /healthz ms, idle              {spread(idle)}")
    print(f"  /healthz ms, making {boards:3d} boards {spread(busy)}")
    print(f"  first click → update ms, no-guess expert (layout made then) {spread(made)}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20, help="seeded games per board size")
    ap.add_argument("--boards", type=int, default=20, help="no-guess Expert boards asked for at once")
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args(argv)
    print(f"python bench/solo_browser.py --games {args.games} --boards {args.boards}")
    print(f"load average before: {os.getloadavg()}; gauge {gauge_s():.3f} s")
    with BenchServer({"MINEDUEL_TEST_HOOKS": "1", "SECRET_KEY": "bench"}) as server:
        click_to_paint(server.url, args.games, args.chromium)
        print(f"  server's share: move→push mean {server_push_ms(server.url):.1f} ms (its /metrics; the rest "
              "is the browser: the form's serialisation, the swap, layout and paint)")
        asyncio.run(loop_lag(server.url, args.boards))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
