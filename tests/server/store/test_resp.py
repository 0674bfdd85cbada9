"""server/resp.py: the RESP2 parser (property-based) and the pipelined client against a real
Valkey: replies matched to their commands under concurrency, errors, a forgotten script, a
killed connection and a server that stops answering."""

from __future__ import annotations

import asyncio
import secrets

import pytest
import redis.asyncio as aioredis
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.resp import ErrorReply, Incomplete, ProtocolError, ReplyBuffer, RespClient, encode, parse

# ---------------------------------------------------------------------- parser

replies = st.recursive(
    st.one_of(
        st.none(),
        st.binary(max_size=40),
        st.integers(-(2**63), 2**63 - 1),
        st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=20)
        .map(ErrorReply),
    ),
    lambda inner: st.lists(inner, max_size=5),
    max_leaves=20,
)


def to_resp(value) -> bytes:
    """Encoding a reply the way a server does (what the parser must invert)."""
    if value is None:
        return b"$-1\r\n"
    if isinstance(value, bytes):
        return b"$%d\r\n%s\r\n" % (len(value), value)
    if isinstance(value, int):
        return b":%d\r\n" % value
    if isinstance(value, ErrorReply):
        return b"-" + value.message.encode() + b"\r\n"
    return b"*%d\r\n" % len(value) + b"".join(to_resp(v) for v in value)


@settings(max_examples=300, deadline=None)
@given(st.lists(replies, min_size=1, max_size=5), st.data())
def test_parse_inverts_the_encoding_in_any_chunking(values, data) -> None:
    """Replies split anywhere by the network parse to the same values, in order."""
    wire = b"".join(to_resp(v) for v in values)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=6)))
    buffer, got = ReplyBuffer(), []
    for start, end in zip([0, *cuts], [*cuts, len(wire)]):
        got.extend(buffer.feed(wire[start:end]))
    assert got == values
    assert parse(wire, 0)[0] == values[0]


def test_simple_strings_and_nil_arrays() -> None:
    assert parse(b"+OK\r\n") == (b"OK", 5)
    assert parse(b"*-1\r\n") == (None, 5)
    with pytest.raises(Incomplete):
        parse(b"$5\r\nabc")
    with pytest.raises(ProtocolError):
        parse(b"?what\r\n")
    with pytest.raises(ProtocolError):
        ReplyBuffer().feed(b"$x\r\n")


def test_encode_is_a_resp_array_of_bulk_strings() -> None:
    assert encode("SET", b"k\r\n", 42) == b"*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$2\r\n42\r\n"


# ---------------------------------------------------------------------- client, real server


async def test_concurrent_callers_each_get_their_own_reply(redis_url: str) -> None:
    client = RespClient(redis_url)
    try:
        key = f"resp-test:{secrets.token_hex(4)}"
        values = [secrets.token_bytes(n) for n in range(1, 400)]
        # 399 commands in flight at once on the one connection: each reply matches its command
        await asyncio.gather(*(client.execute("HSET", key, str(i), v) for i, v in enumerate(values)))
        got = await asyncio.gather(*(client.execute("HGET", key, str(i)) for i in range(len(values))))
        assert got == values
        assert await client.execute("HMGET", key, "0", "missing") == [values[0], None]
        assert await client.execute("DEL", key) == 1
    finally:
        client.close()


async def test_an_error_reply_fails_only_its_command(redis_url: str) -> None:
    client = RespClient(redis_url)
    try:
        key = f"resp-test:{secrets.token_hex(4)}"
        ok, wrong, after = await asyncio.gather(
            client.execute("SET", key, "1"), client.execute("HGET", key, "f"), client.execute("GET", key),
            return_exceptions=True,
        )
        assert ok == b"OK" and after == b"1"
        assert isinstance(wrong, ResponseError) and "WRONGTYPE" in str(wrong)
        await client.execute("DEL", key)
    finally:
        client.close()


async def test_a_script_the_server_forgot_is_loaded_again(redis_url: str) -> None:
    script = "return {KEYS[1], ARGV[1]}"
    client = RespClient(redis_url)
    try:
        assert await client.evalsha(script, ["k"], ["a"]) == [b"k", b"a"]
        async with aioredis.from_url(redis_url) as other:
            await other.script_flush()  # as after a Redis restart
        assert await client.evalsha(script, ["k"], [7]) == [b"k", b"7"]
    finally:
        client.close()


async def test_a_killed_connection_fails_its_commands_and_the_next_call_reconnects(redis_url: str) -> None:
    client = RespClient(redis_url)
    try:
        await client.execute("CLIENT", "SETNAME", "resp-victim")
        async with aioredis.from_url(redis_url) as other:
            pending = asyncio.ensure_future(client.execute("BLPOP", f"resp-test:{secrets.token_hex(4)}", 5))
            await asyncio.sleep(0.1)
            victim = next(c for c in await other.client_list() if c["name"] == "resp-victim")
            await other.client_kill_filter(_id=victim["id"])
            with pytest.raises(RedisConnectionError):
                await asyncio.wait_for(pending, 5)
        assert await client.execute("PING") == b"PONG"  # a fresh connection
    finally:
        client.close()


async def test_a_server_that_stops_answering_times_out(own_redis) -> None:
    redis_url = own_redis.url  # paused for everybody: not the shared one
    client = RespClient(redis_url, timeout_s=0.4)
    try:
        async with aioredis.from_url(redis_url) as other:
            await other.execute_command("CLIENT", "PAUSE", 1500, "ALL")
            with pytest.raises(RedisTimeoutError):
                await asyncio.wait_for(client.execute("PING"), 5)
        await asyncio.sleep(1.5)  # the pause ends
        assert await client.execute("PING") == b"PONG"
    finally:
        client.close()


async def test_nothing_listening_is_a_connection_error() -> None:
    client = RespClient("redis://127.0.0.1:1/0", connect_timeout_s=1)
    with pytest.raises(RedisConnectionError):
        await client.execute("PING")
    client.close()


def test_an_address_logs_in_with_what_its_url_says() -> None:
    from server.store.resp import Address

    assert Address.from_url("redis://127.0.0.1:6380/0").login() == []
    address = Address.from_url("redis://bot:p%40ss@db.internal/3")
    assert (address.host, address.port, address.db) == ("db.internal", 6379, 3)
    assert address.login() == [("AUTH", "bot", "p@ss"), ("SELECT", 3)]
    assert Address.from_url("redis://:secret@h:1").login() == [("AUTH", "secret")]
    with pytest.raises(ValueError):
        Address.from_url("http://h:1")
