"""Browser-test fixtures: the system Chromium through Playwright (sync API) and live servers.

Chromium is Debian's (``/usr/bin/chromium``, installed by ``scripts/setup.sh test``); the tests
fail, never skip, when it is missing. Each page records the websocket frames it received and
the console errors it logged, so tests can check what a viewer was *sent*, not only what the
DOM shows.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from itsdangerous import URLSafeSerializer

from tests.conftest import ROOT, LiveServer, launch_server
from tests.names import unique

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts" / "web"
WAIT_MS = 15_000
"""Upper bound for any single wait on the page (a bound, not an expectation)."""


def chromium_path() -> str:
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    raise RuntimeError("the browser tests need Chromium: apt-get install chromium (scripts/setup.sh test does)")


TURN = re.compile("Your turn|to move")
"""A seat's status while the game is on: its own turn, or the other's ("Anna to move")."""

@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def web_server(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = launch_server(redis_url, tmp_path_factory.mktemp("web"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


# ---------------------------------------------------------------------- a person at a browser


@dataclass
class Person:
    """One browser context (its own cookies) with one page, and what that page received."""

    name: str | None
    context: object
    page: object
    base: str
    frames: list[str] = field(default_factory=list)
    csp_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, browser: object, base: str, name: str | None, **context_args: object) -> "Person":
        context = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **context_args})
        context.set_default_timeout(WAIT_MS)
        page = context.new_page()
        name = None if name is None else unique(name)  # names are unique on a server
        person = cls(name, context, page, base)
        page.on("websocket", person._on_socket)
        page.on("console", person._on_console)
        page.on("pageerror", lambda exc: person.page_errors.append(str(exc)))
        if name is not None:
            page.goto(base + "/")
            page.fill("#guest-name", name)
            page.click("#guest-go")
            page.wait_for_selector("#create-form")
        return person

    def _on_socket(self, ws: object) -> None:
        ws.on("framereceived", lambda payload: self.frames.append(payload if isinstance(payload, str) else repr(payload)))

    def _on_console(self, message: object) -> None:
        if "Content Security Policy" in message.text:
            self.csp_errors.append(message.text)

    # ------------------------------------------------------------------ helpers

    @property
    def token(self) -> str:
        """This context's guest token, for the API: its cookie is the token signed, readable
        without the key, as any client reads its own cookie."""
        cookie = next(c["value"] for c in self.context.cookies() if c["name"] == "mineduel_guest")
        _ok, token = URLSafeSerializer("unused", salt="mineduel-cookie").loads_unsafe(cookie)
        return token

    def create_game(self, seed: int, ruleset: str = "brettspielnetz", seat: str = "0", clock: str = "none") -> str:
        """Create a game with a seeded layout (test hook) through the same form POST the page
        makes, with this context's cookie; returns the room id and opens the room."""
        response = self.context.request.post(
            self.base + "/games",
            form={"ruleset": ruleset, "clock": clock, "seat": seat, "seed": str(seed)},
            headers={"origin": self.base},
        )
        assert response.ok, response.status
        room_id = response.url.rsplit("/g/", 1)[1]
        self.goto_room(room_id)
        return room_id

    def assert_clean(self) -> None:
        """No CSP violation and no script error on this page."""
        assert self.csp_errors == [] and self.page_errors == [], (self.name, self.csp_errors, self.page_errors)

    def goto_room(self, room_id: str) -> None:
        seen = len(self.frames)
        self.page.goto(f"{self.base}/g/{room_id}")
        self.wait_live(seen)

    def reload(self) -> None:
        seen = len(self.frames)
        self.page.reload()
        self.wait_live(seen)

    def wait_live(self, seen: int) -> None:
        """Wait (bounded) until the page's websocket delivered its first snapshot after frame
        number ``seen``: from then on the page shows the live room."""
        deadline = time.monotonic() + WAIT_MS / 1000
        while time.monotonic() < deadline:
            if any(f.startswith("<!--snapshot-->") for f in self.frames[seen:]):
                return
            self.page.wait_for_timeout(25)
        raise AssertionError(f"{self.name}: no snapshot arrived on the page's websocket")

    def html(self, selector: str) -> str:
        return self.page.inner_html(selector)

    def text(self, selector: str) -> str:
        return self.page.inner_text(selector)

    def wait_move(self, number: int) -> None:
        self.page.wait_for_selector(f"#move-{number}", state="attached")

    def shot(self, path: Path, full_page: bool = True) -> None:
        # caret="initial": Playwright's caret hiding injects an inline style, which our CSP refuses
        self.page.screenshot(path=str(path), full_page=full_page, caret="initial", animations="allow")

    def close(self) -> None:
        self.context.close()


def same_place(before: dict[str, float] | None, after: dict[str, float] | None) -> bool:
    """Whether two bounding boxes are the same place to within a pixel: what moves a target
    out from under a pointer is a layout shift (a line, tens of pixels), not a pressed
    button's 1 px nudge (``.btn:active``, eased in over 60 ms, so read at any fraction of it)
    or the browser re-rounding a fractional position (seen in CI: 1/4096 px)."""
    assert before is not None and after is not None, (before, after)
    return all(abs(after[k] - before[k]) <= 1.01 for k in ("x", "y", "width", "height"))


def wait_healthy(url: str, proc: subprocess.Popen[bytes], bound_s: float = 30) -> None:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError("server did not become healthy")


def relaunch(server: LiveServer, redis_url: str) -> LiveServer:
    """Start a new server process on the SAME port as ``server`` (which must be dead)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "HOST": "127.0.0.1",
        "PORT": str(server.port),
        "SECRET_KEY": "test-secret",
        "MINEDUEL_TEST_HOOKS": "1",
        "MINEDUEL_DATA": str(server.log_path.parent / "data"),
        "LOG_LEVEL": "warning",
        "REDIS_URL": redis_url,
    }
    log_path = server.log_path.with_name(f"server-{server.port}-again.log")
    with open(log_path, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "server"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    again = LiveServer(server.url, server.port, proc, log_path)
    try:
        wait_healthy(again.url, proc)
    except Exception:
        again.kill()
        raise
    return again


def start_duel(host: Person, guest: Person, seed: int, **game: str) -> str:
    """``host`` creates a seeded game (``game``: create_game's other fields), ``guest`` opens it
    and joins; returns the room id."""
    room_id = host.create_game(seed, **game)
    guest.goto_room(room_id)
    guest.page.click("#join")
    return room_id


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to its end in a thread of its own (Playwright's sync API holds an event loop
    in the test's thread): the JSON API and msgpack socket client from a browser test."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result(timeout=120)
