from hypothesis import given
from hypothesis import strategies as st

from server.edge.ratelimit import Bucket, Counter, KeyedLimiter


def test_a_bucket_allows_its_credits_at_once_then_refuses():
    bucket = Bucket(100, 20)
    assert all(bucket.allow(0.0) for _ in range(100))
    assert not bucket.allow(0.0)


def test_a_bucket_refills_at_credits_per_duration():
    bucket = Bucket(100, 20)  # 5 credits per second
    for _ in range(100):
        bucket.allow(0.0)
    assert [bucket.allow(1.0) for _ in range(6)] == [True] * 5 + [False]


def test_refill_never_exceeds_capacity():
    bucket = Bucket(3, 1)
    bucket.allow(0.0)
    assert [bucket.allow(1000.0) for _ in range(4)] == [True, True, True, False]


@given(st.lists(st.floats(0, 0.5), min_size=1, max_size=400))
def test_never_more_than_credits_plus_refill_over_any_run(gaps):
    bucket = Bucket(10, 2)
    now, allowed = 0.0, 0
    for gap in gaps:
        now += gap
        allowed += bucket.allow(now)
    assert allowed <= 10 + now * 10 / 2 + 1e-9


def test_keyed_limiter_keeps_buckets_apart_and_bounded():
    limiter = KeyedLimiter(2, 60, max_keys=3)
    assert limiter.allow("a", 0) and limiter.allow("a", 0) and not limiter.allow("a", 0)
    assert limiter.allow("b", 0)
    for key in "cdefg":
        limiter.allow(key, 0)
    assert len(limiter) == 3


def test_counter_caps_concurrent_holdings():
    held = Counter(2)
    assert held.acquire("ip") and held.acquire("ip") and not held.acquire("ip")
    held.release("ip")
    assert held.acquire("ip") and held.held("ip") == 2
    held.release("ip"), held.release("ip")
    assert held.held("ip") == 0
