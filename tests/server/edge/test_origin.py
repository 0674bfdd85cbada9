"""Where a form comes from (server.edge.origin): ``Origin``, else ``Referer``; a ``null``
Origin is refused whatever the Referer says. Plain values, no server."""

from __future__ import annotations

import dataclasses

import pytest
from starlette.requests import HTTPConnection

from server.config import Settings
from server.edge.origin import form_origin_ok, websocket_origin_ok

OURS = "http://mineduel.test"
EVIL = "https://evil.example"
SETTINGS = Settings()


def conn(**headers: str) -> HTTPConnection:
    raw = [(b"host", b"mineduel.test")] + [(k.encode(), v.encode()) for k, v in headers.items()]
    return HTTPConnection({"type": "http", "headers": raw})


@pytest.mark.parametrize(("headers", "ok"), [
    ({"origin": OURS}, True),
    ({"origin": OURS, "referer": EVIL + "/x"}, True),  # Origin decides when there is one
    ({"origin": EVIL, "referer": OURS + "/"}, False),
    ({"referer": OURS + "/g/abc"}, True),  # no Origin (old browsers): the Referer decides
    ({"referer": EVIL + "/x"}, False),
    ({}, True),  # a program: it carries no cookie of a browser's
    ({"origin": "null"}, False),
    ({"origin": "null", "referer": OURS + "/"}, False),  # the browser hid the origin: no Referer vouches for it
])
def test_a_form_must_come_from_our_pages(headers: dict[str, str], ok: bool) -> None:
    assert form_origin_ok(conn(**headers), SETTINGS) is ok


def test_configured_origins_replace_the_host() -> None:
    settings = dataclasses.replace(SETTINGS, allowed_origins=("https://play.example",))
    assert form_origin_ok(conn(origin="https://play.example"), settings)
    assert not form_origin_ok(conn(origin=OURS), settings)
    assert not form_origin_ok(conn(origin="null", referer="https://play.example/"), settings)


def test_a_websocket_without_origin_is_a_program() -> None:
    assert websocket_origin_ok(conn(), SETTINGS)
    assert not websocket_origin_ok(conn(origin="null"), SETTINGS)
