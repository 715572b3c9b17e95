"""Reading models' replies to SHREC task items (SH-9; the SH-A11 cases first)."""

import pytest

from benchmark.shrec.answers import attribute_keys, coercion_messages, option_value, parse_answer

DETECTION = ["Social Competence", "Social Error", "None"]
ERROR = ["Social Error", "No Social Error"]
ATTRIBUTES = ["Emotions", "Engagement", "Conversational mechanics", "Knowledge state", "Intention",
              "Social context and relationships", "Social norms and routines"]
MCQ = ["Robot kept talking over the user.", "Robot forgot the user's name.", "Robot answered a sad story with a joke.",
       "Robot did not apologise.", "Robot missed that the user wanted to stop."]


# SH-A11, exactly as the spec states them.
def test_answer_line_with_a_number():
    assert parse_answer("rationale", "Answer: (3)", MCQ) == 3


def test_option_named_by_its_letter_in_a_sentence():
    assert parse_answer("detection", "The correct choice is option C", DETECTION) == "none"


def test_letter_and_text_of_a_lettered_option():
    assert parse_answer("detection", "(B) Social Error", DETECTION) == "error"


def test_true_with_a_full_stop():
    assert parse_answer("multiple", "True.", ["True", "False"]) is True
    assert parse_answer("multiple", "True.", []) is True


def test_attributes_by_name():
    assert parse_answer("attributes", "Knowledge State and Intention", ATTRIBUTES) == ["intention", "knowledge-state"]


def test_hedging_reply_is_unparsed():
    for task, options in (("detection", DETECTION), ("error", ERROR), ("attributes", ATTRIBUTES),
                          ("multiple", []), ("pre", MCQ), ("correction", MCQ)):
        assert parse_answer(task, "I think both could work", options) is None, task


# More of SH-9.
@pytest.mark.parametrize("reply, expected", [
    ("C", None), ("3", 3), ("(3) Robot answered a sad story with a joke.", 3), ("3. because it is rude", 3),
    ("option 2", 2), ("I would pick choice 5.", 5), ("Robot forgot the user's name.", 2),
    ("The answer is (4)", 4), ("Answer:\n(1)", 1), ("**Answer:** **2**", 2), ("Answer: 5", 5),
])
def test_multiple_choice_readings(reply, expected):
    assert parse_answer("rationale", reply, MCQ) == expected


def test_out_of_range_number_is_unparsed():
    assert parse_answer("pre", "Answer: (7)", MCQ) is None


def test_two_different_marks_are_ambiguous():
    assert parse_answer("post", "Either (2) or (4).", MCQ) is None


def test_chain_of_thought_reads_the_final_answer_line():
    reply = ("Option (1) seems plausible but (2) fits the sadness better. Looking at (4)...\n"
             "So the best is the second one.\nAnswer: (2)")
    assert parse_answer("rationale", reply, MCQ) == 2


def test_chain_of_thought_without_answer_line_reads_the_last_line():
    reply = "The robot ignores the user, which could be (A) or (B) at first sight.\n(B) Social Error"
    assert parse_answer("detection", reply, DETECTION) == "error"


def test_detection_by_words_and_letters():
    assert parse_answer("detection", "B", DETECTION) == "error"
    assert parse_answer("detection", "**C**", DETECTION) == "none"
    assert parse_answer("detection", "A social error.", DETECTION) == "error"  # the article is no option
    assert parse_answer("detection", "The robot shows social competence here.", DETECTION) == "competency"
    assert parse_answer("detection", "Answer: None", DETECTION) == "none"
    assert parse_answer("detection", "It is not an error; the robot shows competence.", DETECTION) == "competency"


def test_error_detection_readings():
    assert parse_answer("error", "(B)", ERROR) == "no_error"
    assert parse_answer("error", "No Social Error", ERROR) == "no_error"
    assert parse_answer("error", "Social Error.", ERROR) == "error"
    assert parse_answer("error", "Yes", ERROR) == "error"
    assert parse_answer("error", "No.", ERROR) == "no_error"


def test_attribute_letters_and_marks():
    assert parse_answer("attributes", "Answer: (A), (E)", ATTRIBUTES) == ["emotions", "intention"]
    assert parse_answer("attributes", "Answer: C and F", ATTRIBUTES) == ["conversational-mechanics", "social-context"]
    assert parse_answer("attributes", "Answer: (H)", ATTRIBUTES) is None


def test_attribute_names_as_the_released_files_spell_them():
    assert attribute_keys("Social Context &  Relationships") == {"social-context"}
    assert attribute_keys("Recognizing Social Norms including toxicity") == {"social-norms"}
    assert attribute_keys("User Intention; Conversational Mechanics") == {"intention", "conversational-mechanics"}
    assert attribute_keys("a normal reply") == set()


def test_multiple_yes_no_and_phrases():
    assert parse_answer("multiple", "Answer: False", []) is False
    assert parse_answer("multiple", "Yes, more than one attribute is involved.", []) is True
    assert parse_answer("multiple", "No", ["True", "False"]) is False
    assert parse_answer("multiple", "True or False, hard to say", []) is None


def test_option_values_follow_the_stored_texts_not_their_order():
    shuffled = ["None", "Social Error", "Social Competence"]
    assert option_value("detection", 0, shuffled) == "none"
    assert parse_answer("detection", "(C)", shuffled) == "competency"
    assert option_value("attributes", 5, ATTRIBUTES) == "social-context"


def test_unknown_task_is_refused():
    with pytest.raises(ValueError, match="unknown SHREC task"):
        parse_answer("ranking", "1", MCQ)


def test_coercion_request_lists_the_options_and_the_reply():
    messages = coercion_messages("pre", "I'd go with the walk one", MCQ)
    assert "(5) Robot missed" in messages[1]["content"] and "I'd go with the walk one" in messages[1]["content"]
    assert "Answer: (1)" in messages[0]["content"]
