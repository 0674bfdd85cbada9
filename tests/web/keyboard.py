"""Keys as a person presses them, for the browser tests.

Playwright's ``keyboard.press("Alt+n")`` sends no character event, and Chromium activates an
``accesskey`` on that event (Alt+key on Linux and Windows): :func:`access_key` sends the whole
press through the DevTools protocol, as a real keyboard does.
"""

from __future__ import annotations

import random

from engine import Duel, Explore

CODES = {",": ("Comma", 188), ".": ("Period", 190)}
ALT = 1


def access_key(page: object, key: str) -> None:
    """Press Alt+``key`` (one character) on ``page``: its ``accesskey="key"`` element acts."""
    code, vk = CODES.get(key, (f"Key{key.upper()}", ord(key.upper())))
    cdp = page.context.new_cdp_session(page)
    try:
        base = {"modifiers": ALT, "key": key, "code": code, "windowsVirtualKeyCode": vk}
        cdp.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **base})
        cdp.send("Input.dispatchKeyEvent", {"type": "char", "modifiers": ALT, "key": key, "text": key,
                                            "unmodifiedText": key})
        cdp.send("Input.dispatchKeyEvent", {"type": "keyUp", **base})
    finally:
        cdp.detach()


def seed_where(explored: tuple[int, int], still_hidden: tuple[int, int]) -> int:
    """A duel seed (Brettspielnetz, seat 0 first) whose two cells are safe and ``still_hidden``
    is not yet open after seat 0 explored ``explored``: a board the keyboard tests can walk."""
    for seed in range(1, 500):
        duel = Duel.new(random.Random(seed), "brettspielnetz", first=0)
        if explored in duel.setup.mines or still_hidden in duel.setup.mines:
            continue
        duel.apply(0, Explore(explored))
        if duel.is_hidden(still_hidden):
            return seed
    raise AssertionError("no seed")


def tab_until(page: object, reached: str, bound: int, what: str) -> int:
    """Press Tab until ``reached`` (a function of the focused element, as page.evaluate takes
    it: the CSP allows no eval of a string) holds, at most ``bound`` times; how many it took."""
    for pressed in range(1, bound + 1):
        page.keyboard.press("Tab")
        if page.evaluate(f"() => ({reached})(document.activeElement)"):
            return pressed
    raise AssertionError(f"Tab never reached {what}")


BOUND = """() => { const link = document.getElementById('replay-next');
  const data = link && link['htmx-internal-data']; return data ? data.path || null : null; }"""


def next_is_bound(page: object) -> None:
    """Wait (bounded) until the replay bar's "Next" asks for what its ``hx-get`` says: htmx binds
    a swapped or morphed link's request when the swap settles (its settle delay after it), and a
    key pressed before asked for the step just shown again (a test that pressed Enter at once saw
    its step never come, on a busy machine). Nothing to wait for at the last step (a span)."""
    wanted = page.get_attribute("#replay-next", "hx-get")
    for _ in range(500):  # at most 5 s
        if wanted is None or page.evaluate(BOUND) == wanted:
            return
        page.wait_for_timeout(10)
    raise AssertionError(f"'Next' still asks for {page.evaluate(BOUND)}, not {wanted}")
