"""SHREC's transcripts read into timed turns (SH-A9's transcript) and its attribute spellings (SH-A10)."""

import pytest

from benchmark.episodes.turn_times import turns_overlapping
from benchmark.importing.shrec_spans import ALIASES, KEYS, attribute_key
from benchmark.importing.shrec_transcript import TranscriptProblem, parse_transcript

SH_A9 = "\n".join([
    "AI Agent:",
    "(00:00:02) Hey (00:00:03) there. (00:00:04) How (00:00:05) was (00:00:05) your (00:00:06) day?",
    "User A:",
    "(00:00:08) Good. (00:00:09) How (00:00:09) was (00:00:10) yours?",
    "AI Agent:",
    "(00:00:12) Sweet! (00:00:13) Let's (00:00:13) start.",
    "User A:",
    "(00:00:20) Okay.",
])


def test_sh_a9_transcript_gives_four_turns_starting_at_2_8_12_and_20_seconds():
    turns = parse_transcript(SH_A9)

    assert [(turn.speaker, turn.start_s, turn.end_s) for turn in turns] == [
        ("AI Agent", 2.0, 6.0), ("User A", 8.0, 10.0), ("AI Agent", 12.0, 13.0), ("User A", 20.0, 20.0),
    ]
    assert [turn.text for turn in turns] == [
        "Hey there. How was your day?", "Good. How was yours?", "Sweet! Let's start.", "Okay.",
    ]
    assert turns[0].words == [[2.0, "Hey"], [3.0, "there."], [4.0, "How"], [5.0, "was"], [5.0, "your"], [6.0, "day?"]]


def test_the_inline_variant_reads_like_the_two_line_one():
    inline = parse_transcript("AI Agent: (00:00:02) Hey there.\nUser A: (00:00:08) Good.")

    assert [(turn.speaker, turn.start_s, turn.text) for turn in inline] == [
        ("AI Agent", 2.0, "Hey there."), ("User A", 8.0, "Good."),
    ]
    assert inline[0].words == [[2.0, "Hey"], [2.0, "there."]]


def test_consecutive_blocks_of_one_speaker_are_one_turn_and_empty_blocks_none():
    turns = parse_transcript(
        "AI Agent:\n(00:00:02) Hi.\nAI Agent:\n(00:00:05) Still me.\nUser B:\n\nUser A: (00:01:02.5) ok"
    )

    assert [(turn.speaker, turn.start_s, turn.end_s, turn.text) for turn in turns] == [
        ("AI Agent", 2.0, 5.0, "Hi. Still me."), ("User A", 62.5, 62.5, "ok"),
    ]


def test_a_colon_inside_the_words_is_not_a_speaker():
    turns = parse_transcript("User A:\n(00:00:01) Note: (00:00:02) this")

    assert [turn.text for turn in turns] == ["Note: this"]


@pytest.mark.parametrize(("text", "message"), [
    ("(00:00:01) hello\nAI Agent: (00:00:02) hi", "line 1: words before any speaker line"),
    ("AI Agent:\nhello there", "line 1: AI Agent's words have no time"),
])
def test_an_unreadable_transcript_names_its_line(text, message):
    with pytest.raises(TranscriptProblem, match=message):
        parse_transcript(text)


@pytest.mark.parametrize(("spelling", "key"), [
    ("Social Context &  Relationships", "social-context"),
    ("Social and Context Relationships", "social-context"),
    ("Social Relationships", "social-context"),
    ("Social Norms and Routines", "social-norms"),
    ("Recognizing Social Norms including toxicity", "social-norms"),
    ("Conversational Mechanics", "conversational-mechanics"),
    ("Knowledge State", "knowledge-state"),
    ("Intention", "intention"),
    ("User Intention", "intention"),
    ("Emotions", "emotions"),
    ("Engagement", "engagement"),
    ("  engagement ", "engagement"),
    ("knowledge-state", "knowledge-state"),
])
def test_every_spelling_of_an_attribute_maps_to_its_key(spelling, key):
    assert attribute_key(spelling) == key


def test_the_alias_table_names_only_the_seven_keys_and_refuses_other_names():
    assert set(ALIASES.values()) == set(KEYS)
    assert attribute_key("Humour") is None


def test_a_span_covers_the_turns_its_times_overlap_else_the_one_before_its_silence():
    turns = [(0, 2.0, 6.0), (1, 8.0, 10.0), (2, 12.0, 13.0), (3, 20.0, 20.0)]

    assert turns_overlapping(turns, 9.0, 13.0) == (1, 2)
    assert turns_overlapping(turns, 0.0, 1.0) == (0, 0)
    assert turns_overlapping(turns, 10.5, 11.0) == (1, 1)  # in the silence after turn 1
    assert turns_overlapping(turns, 11.6, 11.9) == (1, 1)  # nearer turn 2, still the turn the silence follows
    assert turns_overlapping(turns, 25.0, 30.0) == (3, 3)
