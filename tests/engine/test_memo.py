"""engine/memo.py: a memoised conversion always equals converting the whole list."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memo import PrefixMemo


class Item:
    """An immutable item compared by identity, like a duel's lines and log entries."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


def convert(variant: int):
    return lambda item: (item.n, variant)


# A history of operations on a few append-only lists that share items, as copies of a duel
# do: append a new item to list i, copy list i into slot j, or read list i under a variant.
ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 3)),
        st.tuples(st.just("copy"), st.integers(0, 3), st.integers(0, 3)),
        st.tuples(st.just("read"), st.integers(0, 3), st.integers(0, 2)),
        st.tuples(st.just("seed"), st.integers(0, 3), st.integers(0, 2)),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(ops, st.integers(2, 50))
def test_memoised_conversion_equals_the_full_conversion(history, limit) -> None:
    memo: PrefixMemo[Item, tuple[int, int]] = PrefixMemo(limit=limit)
    lists: list[list[Item]] = [[] for _ in range(4)]
    counter = 0
    for op in history:
        if op[0] == "append":
            counter += 1
            lists[op[1]].append(Item(counter))
        elif op[0] == "copy":
            lists[op[2]] = list(lists[op[1]])
        elif op[0] == "seed":  # a form known without converting (decoded from it)
            items, variant = lists[op[1]], op[2]
            memo.seed(items, variant, tuple((item.n, variant) for item in items))
        else:
            items, variant = lists[op[1]], op[2]
            got = memo.get(items, variant, convert(variant))
            assert got == tuple((item.n, variant) for item in items)
        assert len(memo) <= limit


class Counting:
    """A conversion that records which items it converted."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def __call__(self, item: Item) -> int:
        self.seen.append(item.n)
        return item.n


def test_only_new_items_are_converted() -> None:
    counting = Counting()
    memo: PrefixMemo[Item, int] = PrefixMemo()
    items = [Item(1), Item(2)]
    assert memo.get(items, "v", counting) == (1, 2)
    copy = [*items, Item(3)]  # the next version, sharing the first two items
    assert memo.get(copy, "v", counting) == (1, 2, 3)
    assert memo.get(copy, "v", counting) == (1, 2, 3)
    assert counting.seen == [1, 2, 3]
    assert memo.get(copy, "other", counting) == (1, 2, 3)  # a variant converts on its own
    assert counting.seen == [1, 2, 3, 1, 2, 3]


def test_a_seeded_form_is_returned_and_extended_without_converting_again() -> None:
    counting = Counting()
    memo: PrefixMemo[Item, int] = PrefixMemo()
    items = [Item(1), Item(2)]
    memo.seed(items, "v", (1, 2))
    assert memo.get(items, "v", counting) == (1, 2)
    assert memo.get([*items, Item(3)], "v", counting) == (1, 2, 3)
    assert counting.seen == [3]
    memo.seed([], "v", ())  # nothing to key an empty list by: ignored
    assert memo.get([], "v", counting) == ()
