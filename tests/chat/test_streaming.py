"""Reading the argument out of a JSON action while it streams."""

import json

import pytest

from chat.streaming import ArgumentExtractor, utf16_length


def streamed(text: str, size: int = 1) -> tuple[str, list[str], ArgumentExtractor]:
    """Feed ``text`` in pieces of ``size`` characters; return the argument, the pieces it came in, the reader."""
    reader = ArgumentExtractor()
    pieces = [reader.feed(text[start : start + size]) for start in range(0, len(text), size)]
    return "".join(pieces), [p for p in pieces if p], reader


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_the_argument_is_decoded_whatever_the_delta_size(size):
    argument, _, reader = streamed('{"action_type": "speak", "argument": "Hello there."}', size)

    assert argument == "Hello there."
    assert reader.action_type == "speak"


def test_the_argument_arrives_piece_by_piece():
    _, pieces, _ = streamed('{"action_type": "speak", "argument": "Hi you"}', 2)

    assert len(pieces) > 1


def test_the_argument_may_come_before_the_action_type():
    argument, _, reader = streamed('{"argument": "waves", "action_type": "non-verbal"}')

    assert (argument, reader.action_type) == ("waves", "non-verbal")


def test_prose_and_a_code_fence_before_the_object_are_skipped():
    argument, _, _ = streamed('Here is my move:\n```json\n{"action_type": "speak", "argument": "Fine."}\n```')

    assert argument == "Fine."


@pytest.mark.parametrize("size", [1, 2, 5])
def test_escapes_are_decoded_even_when_split_across_deltas(size):
    value = 'She said "no".\nThen\tleft \\ é — 😀'
    argument, _, _ = streamed(json.dumps({"action_type": "speak", "argument": value}), size)

    assert argument == value


def test_non_ascii_text_is_passed_through_unescaped():
    value = "Ça va? 😀"
    argument, _, _ = streamed(json.dumps({"argument": value}, ensure_ascii=False))

    assert argument == value


def test_nested_values_before_the_argument_do_not_confuse_the_reader():
    text = '{"meta": {"argument": "not this", "list": ["}", "{"]}, "n": 3, "ok": true, "argument": "This."}'

    argument, _, _ = streamed(text)

    assert argument == "This."


def test_only_the_first_argument_counts_and_text_after_the_object_is_ignored():
    argument, _, _ = streamed('{"argument": "First."} {"argument": "Second."}')

    assert argument == "First."


def test_a_reply_without_json_yields_nothing():
    argument, _, reader = streamed("I think I will just say hello.")

    assert argument == ""
    assert reader.action_type is None


def test_an_argument_that_is_not_a_string_yields_nothing():
    argument, _, _ = streamed('{"action_type": "leave", "argument": null}')

    assert argument == ""


def test_utf16_length_counts_as_javascript_does():
    assert utf16_length("abc") == 3
    assert utf16_length("é") == 1
    assert utf16_length("😀") == 2
