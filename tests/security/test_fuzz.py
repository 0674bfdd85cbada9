"""Hostile input on every socket type and every HTTP endpoint (hypothesis, bounded).

One server process holds three rooms: one being played (seat 1 has a secret wrong mark), one
waiting for its second player, one finished. Websockets are open on each (msgpack and browser,
seats and spectators). Hypothesis sends malformed, truncated, oversized, wrongly typed and
out-of-order frames and random HTTP requests (methods, paths, queries, headers, bodies). Every
input must get a clear answer — an error frame (msgpack), a notice or selection fragment
(browser), a 1008/1009 close (oversized), or a non-5xx HTTP answer — never a stack trace, file
path or exception repr, and no frame may leak a secret. The last test checks that no room
changed (stored state and move log byte for byte), the process still answers ``/healthz``
and logged no traceback: after every test (:func:`nothing_changed`), and once more when the
module's arena closes, which then plays the played room to its end (whatever order the tests
ran in).

Inputs that are legitimately state-changing for the socket they would go to (a legal move of
the player to move at the current version, a seated player's resignation) are replaced by a
refused variant: they are the game, not an attack on it.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import msgpack
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from engine import SPECTATOR, Duel, Explore, Mark, Resign
from server.edge import wire
from server.store.keys import log_key, state_key

from .leaks import Inspector, Truth
from .test_secrets_codecs import write_figures
from .util import COOKIE, TRACE_MARKERS, form_guest, ws_base

FIGURES: Counter[str] = Counter()
WAIT_S = 10.0
"""Upper bound of one wait for an answer (a bound, not an expectation)."""
EXCEPTION_REPRS = ("Error(", "Exception(", "Traceback", "<class '", "object at 0x")
ERROR_CODES = {"malformed", "not_a_map", "unknown_type", "bad_field", "stale", "not_your_turn", "out_of_range",
               "cell_not_hidden", "game_over", "not_playing", "spectator", "time_out", "busy", "not_a_move"}


def assert_no_trace(text: str | bytes, where: Any) -> None:
    blob = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    for marker in TRACE_MARKERS + EXCEPTION_REPRS:
        assert marker not in blob, (where, marker, blob[:300])


@dataclass
class Sock:
    kind: str  # "msgpack" | "html"
    room: str  # "playing" | "waiting" | "over"
    viewer: int
    url: str
    headers: dict[str, str]
    ws: ClientConnection | None = None

    def open(self) -> ClientConnection:
        if self.ws is None:
            ws = connect(self.url, additional_headers=self.headers, max_size=2**22, open_timeout=WAIT_S,
                         close_timeout=2)
            self.ws = ws.__enter__()  # held across examples; closed by the fixture
            FIGURES["connects"] += 1
        return self.ws


@dataclass
class Arena:
    base: str
    server: Any
    ids: dict[str, str]
    versions: dict[str, int]
    to_move: int
    truths: dict[str, Truth]
    socks: list[Sock]
    tokens: dict[str, str]
    cookies: dict[str, str]
    stored: dict[str, Any]
    duel: Duel
    redis_url: str
    inspector: Inspector = field(default_factory=Inspector)
    http: httpx.Client = field(default_factory=httpx.Client)


def stored_state(redis_url: str, ids: dict[str, str]) -> dict[str, Any]:
    client = redis.Redis.from_url(redis_url)
    try:
        return {kind: (client.hgetall(state_key(i)), client.lrange(log_key(i), 0, -1)) for kind, i in ids.items()}
    finally:
        client.close()


def play_ws(base: str, game_id: str, token: str, frame: dict) -> None:
    """One move over a short-lived msgpack socket, waiting for its update."""
    with connect(f"{ws_base(base)}/api/v1/games/{game_id}/ws",
                 additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=WAIT_S) as ws:
        v = msgpack.unpackb(ws.recv(WAIT_S))["v"]
        ws.send(msgpack.packb({**frame, "v": v}))
        for _ in range(50):
            data = msgpack.unpackb(ws.recv(WAIT_S))
            assert data["t"] != "error", data
            if data["t"] == "update":
                return


@pytest.fixture(scope="module")
def arena(make_server, redis_url) -> Arena:
    server = make_server(MINEDUEL_RATE_PLAYER="off", MINEDUEL_RATE_SPECTATOR="off")
    base = server.url
    cookies, tokens = {}, {}
    for name in ("anna", "ben", "cy"):
        cookies[name], tokens[name] = form_guest(base, name.title())
    auth = {k: {"Authorization": f"Bearer {t}"} for k, t in tokens.items()}
    ids = {}
    for kind, seed in (("playing", 21), ("waiting", 22), ("over", 23)):
        r = httpx.post(base + "/api/v1/games", json={"seat": 0, "seed": seed}, headers=auth["anna"])
        ids[kind] = r.json()["id"]
        if kind != "waiting":
            assert httpx.post(f"{base}/api/v1/games/{ids[kind]}/join", headers=auth["ben"]).status_code == 200
    duels = {kind: Duel.new(random.Random(seed), first=0) for kind, seed in (("playing", 21), ("waiting", 22), ("over", 23))}
    versions = {"playing": 2, "waiting": 1, "over": 2}
    # the played room: Anna explores a safe cell, Ben marks a safe cell (a secret wrong mark)
    duel = duels["playing"]
    safe = [c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines]
    for seat, token, move in ((0, tokens["anna"], Explore(safe[0])), (1, tokens["ben"], Mark(safe[-1]))):
        action = "explore" if isinstance(move, Explore) else "mark"
        play_ws(base, ids["playing"], token, {"t": "move", "action": action, "cell": list(move.cell)})
        duel.apply(seat, move)
        versions["playing"] += 1
    # the finished room: Anna's wrong mark, then Ben resigns
    over = duels["over"]
    cell = next(c for c in over.geo.cells if over.is_hidden(c) and c not in over.setup.mines)
    play_ws(base, ids["over"], tokens["anna"], {"t": "move", "action": "mark", "cell": list(cell)})
    over.apply(0, Mark(cell))
    play_ws(base, ids["over"], tokens["ben"], {"t": "resign"})
    over.apply(1, Resign())
    versions["over"] += 2
    truths = {kind: Truth.of(duels[kind], versions[kind]) for kind in ids}
    wsb = ws_base(base)
    socks = []
    for room, seats in (("playing", [("anna", 0), ("ben", 1), ("cy", SPECTATOR)]),
                        ("waiting", [("anna", 0), ("cy", SPECTATOR)]),
                        ("over", [("ben", 1), ("cy", SPECTATOR)])):
        for who, viewer in seats:
            bearer = auth[who] if viewer != SPECTATOR else {}
            socks.append(Sock("msgpack", room, viewer, f"{wsb}/api/v1/games/{ids[room]}/ws", bearer))
            socks.append(Sock("html", room, viewer, f"{wsb}/g/{ids[room]}/ws",
                              {"Cookie": f"{COOKIE}={cookies[who]}", "Origin": base}))
    arena = Arena(base, server, ids, versions, duel.to_move, truths, socks, tokens, cookies,
                  stored_state(redis_url, ids), duel, redis_url,
                  http=httpx.Client(base_url=base, timeout=WAIT_S))
    yield arena
    arena.http.close()
    for sock in socks:
        hang_up(arena, sock)  # everything they were sent is inspected; the game moves on now
    FIGURES.update(arena.inspector.counts)
    write_figures("fuzz", dict(FIGURES))
    assert_untouched(arena)
    play_to_the_end(arena)


@pytest.fixture(autouse=True)
def nothing_changed(arena):
    """After each test: no room changed, the process serves, its log holds no traceback."""
    yield
    assert_untouched(arena)


def assert_untouched(arena: Arena) -> None:
    assert stored_state(arena.redis_url, arena.ids) == arena.stored  # state, version and move log
    assert httpx.get(arena.base + "/healthz").status_code == 200
    assert arena.server.proc.poll() is None
    log = arena.server.log()
    assert "Traceback" not in log and "Exception" not in log, log[-2000:]


def play_to_the_end(arena: Arena) -> None:
    """The played room plays on to its end: the process and the room are fine."""
    duel, rng = arena.duel, random.Random(1)
    tokens = {0: arena.tokens["anna"], 1: arena.tokens["ben"]}
    deadline = time.monotonic() + 60  # a bound on the loop, not an expectation
    while duel.outcome is None and time.monotonic() < deadline:
        seat = duel.to_move
        cell = rng.choice(sorted(duel.hidden_mines)) if rng.random() < 0.6 else rng.choice(
            [c for c in duel.geo.cells if duel.is_hidden(c)])
        move = Mark(cell) if cell in duel.setup.mines else Explore(cell)
        play_ws(arena.base, arena.ids["playing"], tokens[seat],
                {"t": "move", "action": "mark" if isinstance(move, Mark) else "explore", "cell": list(cell)})
        duel.apply(seat, move)
    assert duel.outcome is not None
    r = httpx.get(f"{arena.base}/api/v1/games/{arena.ids['playing']}/record")
    assert r.status_code == 200 and r.json()["salt"] == duel.setup.salt


# ---------------------------------------------------------------------- strategies

scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=True)
           | st.text(max_size=12) | st.binary(max_size=12))
values = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c, max_size=4),
                      max_leaves=12)
cells = (values | st.lists(st.integers(0, 10), min_size=2, max_size=2) | st.lists(st.integers(-3, 14), max_size=3)
         | st.builds(lambda r, c: f"{r}-{c}", st.integers(-3, 120), st.integers(-3, 120))
         | st.sampled_from(["a1", "f6", "5-5", "1-2-3", "", "-", "٣-٣", "1e2-1", " 1-1"]))
versions = st.integers(-3, 12) | st.sampled_from(["2", "3", "04", "", "x", "1.5", 2**60]) | st.none() | st.booleans()
structured = st.fixed_dictionaries({}, optional={
    "t": st.sampled_from(["move", "resign", "dance", "", "MOVE"]) | values,
    "v": versions, "action": st.sampled_from(["explore", "mark", "flag", ""]) | values, "cell": cells,
    "mode": st.sampled_from(["select", "explore", "mark", "quick"]) | values,
    "a": st.sampled_from(["confirm", "clear", "resign", "resign-no", "resign-yes", "rematch"]) | values,
    "HEADERS": st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=3) | values,
})


@st.composite
def msgpack_frames(draw) -> bytes | str:
    kind = draw(st.sampled_from(["structured", "structured", "value", "bytes", "truncated", "text"]))
    if kind == "structured":
        return msgpack.packb(draw(structured), use_bin_type=True)
    if kind == "value":
        return msgpack.packb(draw(values), use_bin_type=True)
    if kind == "truncated":
        whole = msgpack.packb(draw(structured), use_bin_type=True)
        return whole[: draw(st.integers(0, max(0, len(whole) - 1)))]
    if kind == "text":
        return draw(st.text(max_size=40))
    return draw(st.binary(max_size=64))


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda o: repr(o)))


@st.composite
def browser_frames(draw) -> bytes | str:
    kind = draw(st.sampled_from(["structured", "structured", "value", "text", "bytes", "truncated"]))
    if kind in ("structured", "value", "truncated"):
        data = _json_safe(draw(structured if kind != "value" else values))
        text = json.dumps(data)
        if kind == "truncated":
            return text[: draw(st.integers(0, max(0, len(text) - 1)))]
        return text
    if kind == "text":
        return draw(st.text(max_size=60))
    return draw(st.binary(max_size=64))


# ---------------------------------------------------------------------- websockets


def changes_room(arena: Arena, sock: Sock, frame: bytes | str) -> bool:
    """Would this frame legitimately change the room (a legal move or a resignation at the
    current version, or a resignation without one)?"""
    if sock.room != "playing" or sock.viewer == SPECTATOR:
        return False
    mover = sock.viewer == arena.to_move
    v = arena.versions["playing"]
    if sock.kind == "msgpack":
        msg = wire.parse_msgpack(frame)
        return (isinstance(msg, wire.ResignMessage) and msg.v in (None, v)) or (
            isinstance(msg, wire.MoveMessage) and mover and msg.v == v)
    msg = wire.parse_browser(frame)
    if isinstance(msg, wire.Command):
        return msg.name == "resign-yes" and msg.v == v or (msg.name == "confirm" and mover and msg.v == v)
    if isinstance(msg, wire.CellClick):
        return mover and msg.mode in ("explore", "mark") and msg.v == v
    return False


def is_answer(sock: Sock, message: bytes | str) -> bool:
    if sock.kind == "msgpack":
        data = msgpack.unpackb(message, raw=False, strict_map_key=False)
        if data["t"] == "error":
            assert data["code"] in ERROR_CODES, data
            return True
        return False
    return not message.startswith("<!--snapshot-->") and ('id="notice"' in message or 'id="selection"' in message)


def inspect(arena: Arena, sock: Sock, message: bytes | str) -> None:
    assert_no_trace(message, (sock.kind, sock.room))
    truth = arena.truths[sock.room]
    if sock.kind == "msgpack":
        arena.inspector.msgpack(message, sock.viewer, truth)
    else:
        arena.inspector.html(message, sock.viewer, truth)


def hang_up(arena: Arena, sock: Sock) -> None:
    """Read (and inspect) whatever is still queued, then close: an unread queue would hold
    the server's close frame back."""
    ws, sock.ws = sock.ws, None
    if ws is None:
        return
    try:
        for _ in range(100_000):
            inspect(arena, sock, ws.recv(timeout=0))
    except (TimeoutError, ConnectionClosed):
        pass
    ws.close()


def send_and_answer(arena: Arena, sock: Sock, frame: bytes | str) -> str:
    """Send one frame; the kind of answer it got ("answer" or "closed <code>")."""
    ws = sock.open()
    try:
        ws.send(frame)
        for _ in range(200):
            message = ws.recv(WAIT_S)
            inspect(arena, sock, message)
            if is_answer(sock, message):
                return "answer"
        raise AssertionError("no answer among 200 frames")
    except ConnectionClosed:
        code = ws.close_code
        sock.ws = None
        return f"closed {code}"


def fuzz_socket(arena: Arena, sock: Sock, frames: list[bytes | str], limit: int) -> None:
    for frame in frames:
        if changes_room(arena, sock, frame):
            FIGURES["replaced_legal_inputs"] += 1
            continue
        outcome = send_and_answer(arena, sock, frame)
        size = len(frame.encode() if isinstance(frame, str) else frame)
        if size > limit:
            assert outcome in ("closed 1008", "closed 1009"), (size, outcome)
        else:
            assert outcome == "answer", (sock.kind, sock.room, sock.viewer, frame[:80], outcome)
        FIGURES[f"ws_inputs_{sock.kind}"] += 1


FUZZ = settings(max_examples=120, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])
LIMIT = 4096


@FUZZ
@given(data=st.data())
def test_fuzz_msgpack_sockets(arena, data):
    sock = data.draw(st.sampled_from([s for s in arena.socks if s.kind == "msgpack"]))
    frames = data.draw(st.lists(msgpack_frames(), min_size=1, max_size=12))
    if data.draw(st.integers(0, 30)) == 0:
        frames.append(msgpack.packb({"t": "move", "pad": "x" * data.draw(st.sampled_from([5000, 20000]))}))
    fuzz_socket(arena, sock, frames, LIMIT)


@FUZZ
@given(data=st.data())
def test_fuzz_browser_sockets(arena, data):
    sock = data.draw(st.sampled_from([s for s in arena.socks if s.kind == "html"]))
    frames = data.draw(st.lists(browser_frames(), min_size=1, max_size=12))
    if data.draw(st.integers(0, 30)) == 0:
        frames.append(json.dumps({"cell": "1-1", "pad": "x" * data.draw(st.sampled_from([5000, 20000]))}))
    fuzz_socket(arena, sock, frames, LIMIT)


def test_out_of_order_frames(arena):
    """A fixed list of frames in the wrong place or at the wrong time, on every socket."""
    v = arena.versions
    hidden = [list(c) for c in arena.duel.geo.cells if arena.duel.is_hidden(c)]
    a, b = hidden[0], hidden[-1]  # legal targets: only the version makes these moves wrong
    cases = {
        "msgpack": [msgpack.packb({"t": "move", "v": v["playing"] + 1, "action": "explore", "cell": a}),
                    msgpack.packb({"t": "move", "v": v["playing"] - 1, "action": "mark", "cell": b}),
                    msgpack.packb({"t": "move", "v": str(v["playing"] + 5), "action": "mark", "cell": a}),
                    msgpack.packb({"t": "move", "v": 0, "action": "explore", "cell": [5, 5]}),
                    msgpack.packb({"t": "resign", "v": 1}),
                    msgpack.packb({"t": "snapshot", "v": 99, "view": {}}),
                    msgpack.packb({"t": "update", "v": 99, "diff": {}})],
        "html": [f'{{"cell": "{a[0]}-{a[1]}", "mode": "explore", "v": "{v["playing"] - 1}"}}',
                 f'{{"cell": "{b[0]}-{b[1]}", "mode": "mark", "v": "{v["playing"] + 1}"}}',
                 f'{{"cell": "{a[0]}-{a[1]}", "mode": "select", "v": "1"}}', '{"a": "confirm", "v": "1"}',
                 '{"a": "confirm", "v": "2"}', '{"a": "resign-yes"}', '{"a": "clear"}', '{"a": "resign-no"}',
                 '{"cell": "0-0", "mode": "explore"}', '{"cell": "0-0", "mode": "mark", "v": "1"}',
                 '{"cell": "5-5", "mode": "select", "v": "99"}', '{"a": "confirm", "v": "99"}'],
    }
    for sock in arena.socks:
        hang_up(arena, sock)  # a fresh socket: these go in before its snapshot is read
        fuzz_socket(arena, sock, cases[sock.kind], LIMIT)


# ---------------------------------------------------------------------- HTTP

ROUTES = {  # path → the method it serves (others get 405)
    "/": "GET", "/guest": "POST", "/games": "POST", "/join": "GET", "/g/{id}": "GET", "/g/{id}/replay": "GET", "/g/{id}/odds": "GET",
    "/g/{id}/join": "POST", "/g/{id}/rematch": "POST", "/g/{id}/ws": "GET", "/static/v/{id}/app.css": "GET",
    "/static/v/x/{id}": "GET", "/api/v1/guests": "POST", "/api/v1/games": "POST", "/api/v1/games/{id}": "GET",
    "/api/v1/games/{id}/join": "POST", "/api/v1/games/{id}/record": "GET", "/api/v1/games/{id}/rematch": "POST",
    "/api/v1/games/{id}/resign": "POST", "/api/v1/games/{id}/ws": "GET", "/healthz": "GET", "/metrics": "GET",
    "/api/v2/{id}": "GET", "/{id}": "GET", "/solo": "POST", "/solo/leaderboard": "GET", "/api/v1/solo": "POST",
    "/api/v1/leaderboard": "GET", "/api/v1/games/{id}/layout": "GET", "/api/v1/games/{id}/analysis": "GET",
}
CONTENT_TYPES = ["application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                 "text/plain", "application/msgpack", "", "application/json; charset=utf-16"]


@st.composite
def requests_(draw, arena: Arena) -> dict[str, Any]:
    room = draw(st.sampled_from(["playing", "waiting", "over", "random"]))
    rid = arena.ids[room] if room != "random" else quote(draw(st.text(min_size=1, max_size=20)), safe="")
    template = draw(st.sampled_from(sorted(ROUTES)))
    path = template.replace("{id}", rid)
    method = ROUTES[template] if draw(st.integers(0, 4)) else draw(
        st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]))
    query = draw(st.dictionaries(st.sampled_from(["at", "token", "code", "next", "v", "x", "preset", "mode",
                                                  "period", "odds"]),
                                 st.text(max_size=20) | st.sampled_from(["-1", "999999999", "1e9", "../../etc"]),
                                 max_size=2))
    anna = f"Bearer {arena.tokens['anna']}"
    token = draw(st.sampled_from(["", "garbage", "Bearer", "Bearer forged.token", anna, anna, anna,
                                  "Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Bearer " + "A" * 600]))
    headers = {"content-type": draw(st.sampled_from(CONTENT_TYPES)),
               "origin": draw(st.sampled_from([arena.base, "http://evil.example", "null", "", "::::"])),
               "cookie": draw(st.sampled_from(["", f"{COOKIE}=garbage", f"{COOKIE}={arena.cookies['anna']}",
                                               f"{COOKIE}={'x' * 3000}"])),
               "hx-request": draw(st.sampled_from(["", "true"])),
               "x-forwarded-for": draw(st.sampled_from(["", "1.2.3.4", "garbage, ::1", "x" * 100]))}
    if token:
        headers["authorization"] = token
    kind = draw(st.sampled_from(["none", "json", "json", "json", "form", "bytes", "big"]))
    if kind == "json":
        body = json.dumps(_json_safe(draw(structured | values | st.fixed_dictionaries(
            {}, optional={"name": st.text(max_size=50) | values, "ruleset": values, "seat": values,
                          "clock": values, "seed": values})))).encode()
    elif kind == "form":
        body = "&".join(f"{quote(k)}={quote(v)}" for k, v in draw(st.dictionaries(
            st.sampled_from(["name", "next", "ruleset", "clock", "seat", "seed", "code", "preset", "width", "height",
                             "mines", "no_guess"]),
            st.text(max_size=40), max_size=4)).items()).encode()
    elif kind == "bytes":
        body = draw(st.binary(max_size=200))
    elif kind == "big":
        body = b"x" * draw(st.sampled_from([4097, 50_000]))
    else:
        body = b""
    return {"method": method, "path": path, "query": query, "headers": {k: v for k, v in headers.items() if v},
            "body": body, "room": room}


def changes_by_http(arena: Arena, req: dict[str, Any]) -> bool:
    """Legitimate changes a request could make to the three rooms (Anna is seated in all)."""
    anna = arena.tokens["anna"] in req["headers"].get("authorization", "") or arena.tokens["anna"] in str(req["query"])
    anna_cookie = arena.cookies["anna"] in req["headers"].get("cookie", "")
    path = req["path"]
    if req["method"] != "POST":
        return False
    if (anna or anna_cookie) and (path.endswith("/resign") or path.endswith("/rematch")):
        return True
    return False


@settings(max_examples=400, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_http_endpoints(arena, data):
    req = data.draw(requests_(arena))
    if changes_by_http(arena, req):
        FIGURES["replaced_legal_inputs"] += 1
        return
    arena.http.cookies.clear()  # only the cookie header drawn above
    r = arena.http.request(req["method"], req["path"], params=req["query"], headers=req["headers"],
                           content=req["body"])
    FIGURES["http_inputs"] += 1
    FIGURES[f"http_{r.status_code // 100}xx"] += 1
    assert r.status_code < 500, (req, r.status_code, r.text[:300])
    assert_no_trace(r.content, req)
    for room in ("playing", "waiting"):
        arena.inspector.raw(r.content, arena.truths[room])  # no salt of a running game anywhere
    if r.status_code >= 400 and req["method"] != "HEAD":
        assert r.content, req  # a clear error says something
        if req["path"].startswith("/api/v1/") and r.status_code not in (404, 405) and "ws" not in req["path"]:
            assert set(r.json()) == {"error"} and r.json()["error"]["code"], (req, r.text[:200])


BODIES = [b"[]", b'"name"', b"42", b"null", b"true", b"{", b'{"name": ["x"]}', b'{"name": {"a": 1}}',
          b'{"name": 1e999}', b'{"ruleset": null}', b'{"ruleset": ["coan"]}', b'{"seat": "0"}', b'{"seat": true}',
          b'{"seat": 2}', b'{"clock": []}', b'{"clock": {"initial": "60"}}', b'{"clock": {"initial": 1e308}}',
          b'{"clock": {"initial": 60, "increment": -1}}', b'{"clock": {"initial": NaN}}', b'{"seed": 1.5}',
          b'{"seed": 99999999999999999999999}', b"\xff\xfe{}", b'{"a": 1, "a": 2}', b"[" * 2000 + b"]" * 2000,
          "{\"name\": \"\ud800\"}".encode("utf-8", "surrogatepass")]


def test_api_bodies_corpus(arena):
    """Every JSON route with every kind of wrong body, with and without a valid token."""
    ids, tokens = arena.ids, arena.tokens
    legal = {(tokens["anna"], ids["playing"], "resign"), (tokens["anna"], ids["over"], "rematch"),
             (tokens["cy"], ids["waiting"], "join")}  # real changes, not attacks: left out
    routes = [("/api/v1/guests", None, None), ("/api/v1/games", None, None)] + [
        (f"/api/v1/games/{ids[k]}/{action}", ids[k], action) for k in ids for action in ("join", "resign", "rematch")]
    for path, room, action in routes:
        for token in (None, tokens["cy"], tokens["anna"]):
            if (token, room, action) in legal:
                continue
            for body in BODIES:
                headers = {"content-type": "application/json"}
                if token:
                    headers["authorization"] = f"Bearer {token}"
                r = arena.http.post(path, content=body, headers=headers)
                FIGURES["http_inputs"] += 1
                FIGURES[f"http_{r.status_code // 100}xx"] += 1
                assert r.status_code < 500, (path, body[:60], r.status_code, r.text[:200])
                assert_no_trace(r.content, (path, body[:60]))
                if r.status_code >= 400:
                    assert set(r.json()) == {"error"} and r.json()["error"]["code"], (path, body[:60], r.text)
