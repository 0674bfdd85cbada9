"""The client seam takes every URL redis-py takes: the lean client where it can serve the URL
(``redis://``, ``unix://``, with a password and a database), redis-py for the rest and when
the lean client is switched off. Both links and both pub/sub connections do the same work
against a Valkey that wants a password and also listens on a unix socket."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.embedded_redis import EmbeddedRedis
from server.store.link import LeanLink, RedisPyLink, open_link
from server.store.pubsub import LeanPubSub, RedisPyPubSub, open_pubsub

PASSWORD = "s3cret/pass"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedRedis, Path]]:
    base = tmp_path_factory.mktemp("guarded")
    sock = base / "valkey.sock"
    server = EmbeddedRedis(base, extra_args=("--requirepass", PASSWORD, "--unixsocket", str(sock),
                                             "--unixsocketperm", "700")).start()
    yield server, sock
    server.stop()


def urls(server: EmbeddedRedis, sock: Path) -> list[str]:
    quoted = PASSWORD.replace("/", "%2F")
    return [f"redis://:{quoted}@127.0.0.1:{server.port}/2", f"unix://:{quoted}@{sock}?db=2"]


def test_the_lean_client_serves_what_it_can_and_redis_py_the_rest() -> None:
    assert isinstance(open_link("redis://127.0.0.1:1/0"), LeanLink)
    assert isinstance(open_link("unix:///tmp/x.sock?db=3"), LeanLink)
    for url in ("rediss://127.0.0.1:1/0", "redis://127.0.0.1:1/0?socket_timeout=3", "unix:///tmp/x.sock?foo=1"):
        assert isinstance(open_link(url), RedisPyLink), url
        assert isinstance(open_pubsub(url), RedisPyPubSub), url
    assert isinstance(open_link("redis://127.0.0.1:1/0", lean=False), RedisPyLink)
    assert isinstance(open_pubsub("redis://127.0.0.1:1/0"), LeanPubSub)
    assert isinstance(open_pubsub("redis://127.0.0.1:1/0", lean=False), RedisPyPubSub)


@pytest.mark.parametrize("lean", [True, False])
async def test_commands_and_scripts_over_tcp_and_unix_with_a_password_and_a_database(guarded, lean: bool) -> None:
    server, sock = guarded
    for url in urls(server, sock):
        link = open_link(url, lean=lean)
        assert isinstance(link, LeanLink if lean else RedisPyLink)
        try:
            await link.execute("SET", "link-test", url)
            assert await link.execute("GET", "link-test") == url.encode()
            assert await link.evalsha("return {KEYS[1], ARGV[1]}", ["k"], [7]) == [b"k", b"7"]
            # the database of the URL: db 0 does not hold the key
            other = open_link(f"redis://:{PASSWORD.replace('/', '%2F')}@127.0.0.1:{server.port}/0", lean=lean)
            try:
                assert await other.execute("GET", "link-test") is None
            finally:
                await other.aclose()
        finally:
            await link.aclose()


@pytest.mark.parametrize("lean", [True, False])
async def test_commands_written_together_answer_in_order_and_fail_alike(guarded, lean: bool) -> None:
    """``execute_many`` (the sweepers' due indexes): the replies in order; an error reply raises
    the error ``execute`` raises, and the connection stays in step for the next command."""
    server, sock = guarded
    link = open_link(urls(server, sock)[0], lean=lean)
    try:
        await link.execute("DEL", "many-a", "many-b")
        await link.execute("ZADD", "many-a", 5, "x", 1, "y")
        replies = await link.execute_many([("ZRANGEBYSCORE", "many-a", "-inf", 3), ("ZCARD", "many-a"),
                                           ("ZRANGEBYSCORE", "many-b", "-inf", 3)])
        assert replies == [[b"y"], 2, []]
        with pytest.raises(Exception) as failed:
            await link.execute_many([("ZCARD", "many-a"), ("INCR", "many-a")])  # a ZSET is no integer
        with pytest.raises(type(failed.value)):
            await link.execute("INCR", "many-a")
        assert await link.execute_many([("ZCARD", "many-a"), ("ECHO", "next")]) == [2, b"next"]
        assert await link.execute_many([]) == []
    finally:
        await link.aclose()


@pytest.mark.parametrize("lean", [True, False])
async def test_a_script_for_many_calls_answers_in_order_and_loads_itself_once_forgotten(guarded, lean: bool) -> None:
    """``evalsha_many`` (the presence refresh): one reply per ``(keys, args)``, in order; after
    ``SCRIPT FLUSH`` (a restarted server forgets its scripts) the script is loaded and all run."""
    server, sock = guarded
    link = open_link(urls(server, sock)[0], lean=lean)
    script = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
    try:
        await link.execute("DEL", "many-s1", "many-s2")
        calls = [(["many-s1"], [2]), (["many-s2"], [5]), (["many-s1"], [1])]
        assert await link.evalsha_many(script, calls) == [2, 5, 3]
        await link.execute("SCRIPT", "FLUSH")
        assert await link.evalsha_many(script, calls) == [5, 10, 6]
        assert await link.evalsha_many(script, []) == []
    finally:
        await link.aclose()


@pytest.mark.parametrize("lean", [True, False])
async def test_pub_sub_over_tcp_and_unix_with_a_password(guarded, lean: bool) -> None:
    server, sock = guarded
    for url in urls(server, sock):
        ps = open_pubsub(url, lean=lean)
        link = open_link(url)
        try:
            await ps.connect()
            await ps.subscribe("chan-test")
            assert await asyncio.wait_for(ps.read(), 5) == ("subscribe", "chan-test", 1)
            await link.execute("PUBLISH", "chan-test", b"hello")
            assert await asyncio.wait_for(ps.read(), 5) == ("message", "chan-test", b"hello")
        finally:
            await ps.close()
            await link.aclose()


@pytest.mark.parametrize("lean", [True, False])
async def test_a_listener_hears_every_push_in_order_until_the_link_drops(guarded, lean: bool) -> None:
    """``listen``: pushes read before it began come first; then each as it arrives; a listener
    that raises ends it with its exception; a dropped link ends it with a ``ConnectionError``."""
    server, sock = guarded
    url = urls(server, sock)[0]
    ps, link = open_pubsub(url, lean=lean), open_link(url)
    heard: list[tuple[str, str, object]] = []
    try:
        await ps.connect()
        await ps.subscribe("listen-a", "listen-b")
        await asyncio.sleep(0.1)  # the confirmations arrive before anyone listens
        listening = asyncio.create_task(ps.listen(lambda *push: heard.append(push)))
        for k in range(3):
            await link.execute("PUBLISH", "listen-b" if k % 2 else "listen-a", b"m%d" % k)
        for _ in range(200):
            if len(heard) == 5:
                break
            await asyncio.sleep(0.01)
        assert heard == [("subscribe", "listen-a", 1), ("subscribe", "listen-b", 2), ("message", "listen-a", b"m0"),
                         ("message", "listen-b", b"m1"), ("message", "listen-a", b"m2")]
        await link.execute("CLIENT", "KILL", "TYPE", "pubsub")  # this module's own server
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(listening, 5)

        await ps.connect()
        await ps.subscribe("listen-a")

        def refuse(*push: object) -> None:
            raise ValueError("the listener failed")

        with pytest.raises(ValueError, match="the listener failed"):
            await asyncio.wait_for(ps.listen(refuse), 5)
    finally:
        await ps.close()
        await link.aclose()


@pytest.mark.parametrize("lean", [True, False])
async def test_a_wrong_password_fails_to_connect(guarded, lean: bool) -> None:
    server, _sock = guarded
    url = f"redis://:wrong@127.0.0.1:{server.port}/0"
    link = open_link(url, lean=lean)
    with pytest.raises(Exception) as failed:
        await link.execute("PING")
    assert "WRONGPASS" in str(failed.value) or "invalid" in str(failed.value).lower()
    await link.aclose()
    with pytest.raises(Exception):
        await open_pubsub(url, lean=lean).connect()


async def test_the_redis_py_link_keeps_its_connections_bounded_under_a_burst(own_redis) -> None:
    """2,500 sockets attaching at once load 2,500 rooms: the link must queue them on a bounded
    pool, not open a connection each (which ran Valkey out of file descriptors)."""
    import redis.asyncio as aioredis

    link = RedisPyLink(own_redis.url, timeout_s=5, connect_timeout_s=2, max_connections=16)
    try:
        await asyncio.gather(*(link.execute("HMGET", f"room-{i}", "v", "data") for i in range(600)))
        async with aioredis.from_url(own_redis.url) as admin:
            clients = await admin.client_list()
        assert len(clients) <= 16 + 1  # the pool's, and this admin connection
    finally:
        await link.aclose()


@pytest.mark.parametrize("lean", [True, False])
async def test_a_commits_waitaof_goes_on_the_connection_that_wrote(own_redis, lean: bool) -> None:
    """``WAITAOF`` waits only for the writes of the connection that sends it: sent on another
    connection (as the commit once did, through the store's redis-py pool) it waited for
    nothing. Seen with ``MONITOR``: the commit's script and its ``WAITAOF`` come from one client."""
    import redis.asyncio as aioredis

    from server.store.store import Store

    store = Store(own_redis.url, waitaof=True, lean=lean)
    seen: list[dict] = []
    try:
        async with aioredis.from_url(own_redis.url) as admin:
            async with admin.monitor() as monitor:
                assert await store.commit("durable", None, 1, b"data", b"entry", b"message", None) == (True, 1, False)
                for _ in range(50):  # bounded: the commit's commands (and a SCRIPT LOAD) are all there is
                    seen.append(await asyncio.wait_for(monitor.next_command(), 5))
                    if seen[-1]["command"].upper().startswith("WAITAOF"):
                        break
        assert store.waitaof  # the server knows WAITAOF and the write was fsynced (no warning)
        script = [c for c in seen if c["command"].upper().startswith("EVALSHA")]
        waits = [c for c in seen if c["command"].upper().startswith("WAITAOF")]
        assert script and len(waits) == 1
        assert (script[-1]["client_address"], script[-1]["client_port"]) == \
            (waits[0]["client_address"], waits[0]["client_port"])
    finally:
        await store.close()
