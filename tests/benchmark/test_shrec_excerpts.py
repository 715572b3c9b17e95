"""Excerpts of SHREC segments (spec shrec.md SH-4, acceptance SH-A9)."""

import pytest

from benchmark.shrec.excerpts import check_mode, excerpt, pair_excerpt, seconds_excerpt, span_excerpt
from benchmark.shrec.records import EpisodeRecord, TurnRecord

AGENT, USER = 0, 1


def sh_a9_episode() -> EpisodeRecord:
    """The raw transcript of SH-A9, as the importer reads it: four turns starting at 2, 8, 12 and 20 s."""
    words = [
        (AGENT, "AI Agent", [(2, "Hey"), (3, "there."), (4, "How"), (5, "was"), (5, "your"), (6, "day?")]),
        (USER, "User A", [(8, "Good."), (9, "How"), (9, "was"), (10, "yours?")]),
        (AGENT, "AI Agent", [(12, "Sweet!"), (13, "Let's"), (13, "start.")]),
        (USER, "User A", [(20, "Okay.")]),
    ]
    turns = [
        TurnRecord(index, seat, speaker, " ".join(w for _, w in timed), timed[0][0], timed[-1][0], tuple(timed))
        for index, (seat, speaker, timed) in enumerate(words)
    ]
    return EpisodeRecord("video", turns, agent_seat=AGENT)


HELLO = "AI Agent: Hey there. How was your day?"
GOOD = "User A: Good. How was yours?"
SWEET = "AI Agent: Sweet! Let's start."


@pytest.mark.parametrize("start", [9, 13])
def test_pair_excerpt_is_the_user_agent_pair_around_the_start(start):
    assert pair_excerpt(sh_a9_episode(), start_s=start).lines == (GOOD, SWEET)


def test_pair_excerpt_before_the_first_turn_is_the_first_agent_turn_alone():
    cut = pair_excerpt(sh_a9_episode(), start_s=1)
    assert cut.lines == (HELLO,)
    assert (cut.first_turn, cut.last_turn) == (0, 0)


def test_pair_excerpt_after_the_last_turn_is_the_last_user_turn_alone():
    assert pair_excerpt(sh_a9_episode(), start_s=25).text == "User A: Okay."


def test_seconds_excerpt_keeps_words_within_five_seconds_regrouped_by_speaker():
    episode = sh_a9_episode()
    assert seconds_excerpt(episode, 12, 13).lines == (GOOD, SWEET)
    early = seconds_excerpt(episode, 2, 3)
    assert early.lines == (HELLO, "User A: Good.")
    assert (early.first_turn, early.last_turn) == (0, 1)


def test_span_excerpts_show_the_covered_turns_and_n_more():
    episode = sh_a9_episode()
    assert span_excerpt(episode, 1, 1).lines == (GOOD,)
    assert excerpt(episode, "span+1", start_s=None, end_s=None, start_turn=1, end_turn=1).lines == (HELLO, GOOD, SWEET)


def test_turn_spans_cut_pairs_by_their_first_turn():
    episode = sh_a9_episode()
    assert pair_excerpt(episode, start_turn=2).lines == (GOOD, SWEET)
    assert pair_excerpt(episode, start_turn=1).lines == (GOOD, SWEET)
    assert pair_excerpt(episode, start_turn=0).lines == (HELLO,)


def test_the_agent_is_the_span_seat_when_given():
    # Seen as the user's behaviour, the turn at 9 s is the "agent's": the pair is the turn before it and it.
    assert pair_excerpt(sh_a9_episode(), start_s=9, agent_seat=USER).lines == (HELLO, GOOD)


def test_seconds_excerpt_of_turn_spans_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="seconds excerpt needs spans with times"):
        excerpt(sh_a9_episode(), "seconds", start_s=None, end_s=None, start_turn=0, end_turn=1)


def test_unknown_modes_are_named():
    assert check_mode("span+2") is None
    assert "unknown excerpt mode 'window'" in check_mode("window")
