"""One parser for the headers that list weighted choices (``Accept-Language``, ``Accept-Encoding``)."""

from __future__ import annotations

from server.web.weighted import MAX_ITEMS, weighted


def test_tokens_come_lower_cased_in_order_with_their_weights() -> None:
    assert weighted("DE-AT, en;q=0.5 ,fr ; Q=0.1,,*;q=0") == [("de-at", 1.0), ("en", 0.5), ("fr", 0.1), ("*", 0.0)]


def test_a_weight_that_is_not_a_number_is_no_weight_at_all() -> None:
    assert weighted("gzip;q=oops, br;q=") == [("gzip", 0.0), ("br", 0.0)]


def test_only_so_much_of_a_header_is_read() -> None:
    assert len(weighted(", ".join(f"x{i}" for i in range(100)))) == MAX_ITEMS
    assert weighted("a" * 600) == [("a" * 512, 1.0)]
    assert weighted("") == [] and weighted(" , ;q=1") == []
