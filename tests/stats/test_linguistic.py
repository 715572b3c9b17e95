import pytest

from benchmark.stats.linguistic import counts, sentiment, signature, words


def test_words_keep_inner_apostrophes_and_straighten_curly_ones():
    assert words("I’m sure it's fine — don't worry!") == ["i'm", "sure", "it's", "fine", "don't", "worry"]


def test_vague_reference_counts_pronouns_and_placeholder_nouns():
    found = counts("Bring that thing and the stuff, it is over there with them.")
    assert found.words == 12
    assert found.vague_pronouns == 5  # that, thing, stuff, it, them


def test_hedges_count_words_and_phrases_once_each():
    found = counts("Maybe it is sort of late, I guess, more or less.")
    # maybe, sort of, guess (covers 'I guess'), more or less
    assert found.hedges == 4


def test_self_focus_counts_first_person_singular_and_its_contractions():
    found = counts("I think my plan is mine; I'm sure, and you help me myself.")
    assert found.self_focus == 6  # I, my, mine, I'm, me, myself


def test_self_focus_ignores_other_pronouns():
    assert counts("We told you they were ours.").self_focus == 0


def test_sentiment_is_a_polarity_between_minus_one_and_one():
    assert 0 < sentiment("Thank you so much, this is wonderful!") <= 1
    assert -1 <= sentiment("This is awful and I am furious.") < 0
    assert sentiment("The meeting is on Tuesday.") == 0


def test_sentiment_of_a_text_without_words_is_none():
    assert sentiment("... !!") is None


def test_signature_pools_words_across_utterances():
    result = signature(["I guess so.", "Fine, it works for me."])
    # words: i guess so (3) + fine it works for me (5) = 8; self-focus: i, me; hedges: guess; vague: it
    assert result.words == 8
    assert result.utterances == 2
    assert result.self_focus == pytest.approx(2 / 8)
    assert result.hedges == pytest.approx(1 / 8)
    assert result.vague_pronouns == pytest.approx(1 / 8)


def test_signature_sentiment_is_the_mean_over_utterances():
    happy, sad = "I love it, thank you!", "I hate this."
    result = signature([happy, sad, "   "])
    assert result.utterances == 2
    assert result.sentiment == pytest.approx((sentiment(happy) + sentiment(sad)) / 2)


def test_signature_of_silence_has_no_rates():
    result = signature(["", "..."])
    assert result.to_dict() == {
        "words": 0, "utterances": 0, "vague_pronouns": None, "hedges": None, "self_focus": None, "sentiment": None,
    }
