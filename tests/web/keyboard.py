"""Keys as a person presses them, for the browser tests.

Playwright's ``keyboard.press("Alt+n")`` sends no character event, and Chromium activates an
``accesskey`` on that event (Alt+key on Linux and Windows): :func:`access_key` sends the whole
press through the DevTools protocol, as a real keyboard does.
"""

from __future__ import annotations

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
