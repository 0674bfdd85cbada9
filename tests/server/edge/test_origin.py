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


def conn(scheme: str = "http", **headers: str) -> HTTPConnection:
    raw = [(b"host", b"mineduel.test")] + [(k.encode(), v.encode()) for k, v in headers.items()]
    return HTTPConnection({"type": "http", "scheme": scheme, "path": "/", "headers": raw})


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


@pytest.mark.parametrize(("scheme", "origin", "ok"), [
    ("https", "https://mineduel.test", True),
    ("https", "http://mineduel.test", False),  # a plain page of our host on the TLS site
    ("wss", "https://mineduel.test", True),
    ("wss", "http://mineduel.test", False),
    ("http", "http://mineduel.test", True),
    ("http", "https://mineduel.test", True),  # behind a TLS proxy the server may not know its scheme
    ("ws", "https://mineduel.test", True),
    ("https", "ftp://mineduel.test", False),
    ("http", "chrome-extension://mineduel.test", False),
])
def test_a_tls_site_takes_only_tls_pages_of_its_host(scheme: str, origin: str, ok: bool) -> None:
    request = conn(scheme, origin=origin)
    assert form_origin_ok(request, SETTINGS) is ok
    assert websocket_origin_ok(request, SETTINGS) is ok


def test_a_trusted_tls_proxy_makes_the_site_a_tls_one() -> None:
    trusting = dataclasses.replace(SETTINGS, trusted_proxy=True)
    plain_page = conn(origin="http://mineduel.test", **{"x-forwarded-proto": "https"})
    assert not form_origin_ok(plain_page, trusting)
    assert form_origin_ok(plain_page, SETTINGS)  # the header of an untrusted client says nothing
    assert form_origin_ok(conn(origin="https://mineduel.test", **{"x-forwarded-proto": "https"}), trusting)
