"""The browser's sentence for every refusal of the room core, in both languages: no code
falls back to the core's English message on a German page."""

from __future__ import annotations

import pytest

from engine.classic import BadBoard, check_size
from server.core.commands import Refused
from server.edge.auth import MAX_NAME, BadName, validate_name
from server.edge.refusals import NOTICES, refusal_notice
from server.web import i18n


def test_every_refusal_has_a_sentence() -> None:
    assert set(NOTICES) == set(Refused)


@pytest.mark.parametrize("code", list(Refused))
def test_each_sentence_is_english_for_english_readers_and_german_for_german_ones(code: Refused) -> None:
    with i18n.using("en"):
        english = refusal_notice(code, "the core's message")
    with i18n.using("de"):
        german = refusal_notice(code.value, "the core's message")  # the wire's string works too
    assert english == NOTICES[code]
    assert german and german != english


def test_an_unknown_code_keeps_the_core_message() -> None:
    with i18n.using("de"):
        assert refusal_notice("no_such_code", "as the core said") == "as the core said"


def test_a_refused_name_says_why_in_the_reader_language_and_in_english_for_the_api() -> None:
    with pytest.raises(BadName) as caught:
        validate_name("x" * (MAX_NAME + 1))
    assert str(caught.value) == f"names are at most {MAX_NAME} characters"
    with i18n.using("de"):
        assert caught.value.said() == f"Namen haben höchstens {MAX_NAME} Zeichen"
    with pytest.raises(BadName) as caught:
        validate_name("tab\there")
    with i18n.using("de"):
        assert "Steuer" in caught.value.said()


@pytest.mark.parametrize(("size", "problem", "most"), [((61, 9, 10), "size", None), ((9, 9, 73), "mines", 72)])
def test_a_board_out_of_bounds_says_which_rule_it_broke(size: tuple[int, int, int], problem: str,
                                                         most: int | None) -> None:
    with pytest.raises(BadBoard) as caught:
        check_size(*size)
    assert caught.value.problem == problem
    if most is not None:
        assert caught.value.most_mines == most
        assert str(caught.value) == f"a 9x9 board takes 1..{most} mines"
