"""The offline scripted answerer of SHREC's task items (SH-11), read back by the same parser as models."""

from types import SimpleNamespace

from benchmark.shrec.answers import parse_answer
from benchmark.shrec.scripted import attributes_found, best_overlap, detection_label, scripted_reply

DETECTION = ["Social Competence", "Social Error", "None"]
ATTRIBUTES = ["Emotions", "Engagement", "Conversational mechanics", "Knowledge state", "Intention",
              "Social context and relationships", "Social norms and routines"]


def item(task, context, options=(), label="error"):
    return SimpleNamespace(task=task, item_key="k", label=label, context=context, options=list(options),
                           correct=[], gold=None, source="")


def answered(task, context, options=()):
    value = parse_answer(task, scripted_reply(item(task, context, options)), list(options))
    assert value is not None
    return value


def test_apology_and_sorry_are_errors():
    assert detection_label("AI Agent: I apologise, I misheard.") == "error"
    assert detection_label("AI Agent: Sorry, what was that?") == "error"


def test_a_question_asked_twice_is_an_error():
    context = "AI Agent: How was your day?\nUser A: Fine.\nAI Agent: How was your day?"
    assert detection_label(context) == "error"


def test_thanks_and_a_recalled_name_are_competence():
    assert detection_label("AI Agent: Thank you for sharing that.") == "competency"
    assert detection_label("User A: My name is Maya.\nAI Agent: Nice to meet you, Maya.") == "competency"


def test_no_cue_is_none():
    assert detection_label("AI Agent: Let's start.\nUser A: Okay.") == "none"


def test_detection_replies_name_the_option_in_its_stored_order():
    assert scripted_reply(item("detection", "AI Agent: Sorry!", DETECTION)) == "Answer: (B)"
    shuffled = ["None", "Social Competence", "Social Error"]
    assert scripted_reply(item("detection", "AI Agent: Sorry!", shuffled)) == "Answer: (C)"
    assert answered("detection", "AI Agent: Let's start.", DETECTION) == "none"


def test_error_task_answers_error_or_no_error():
    options = ["Social Error", "No Social Error"]
    assert answered("error", "AI Agent: Sorry, I did not catch that.", options) == "error"
    assert answered("error", "AI Agent: Thanks!", options) == "no_error"
    assert answered("error", "AI Agent: Let's start.", options) == "no_error"


def test_attributes_by_keyword_and_the_fallback():
    context = "User A: I feel sad, my friend moved away."
    assert attributes_found(context) == ["emotions", "social-context"]
    assert answered("attributes", context, ATTRIBUTES) == ["emotions", "social-context"]
    assert answered("attributes", "User A: Okay.", ATTRIBUTES) == ["conversational-mechanics"]


def test_multiple_is_true_for_more_than_one_attribute():
    assert answered("multiple", "User A: I feel sad, my friend moved away.") is True
    assert answered("multiple", "User A: I feel sad.") is False
    assert answered("multiple", "User A: Okay.") is False


def test_multiple_choice_by_word_overlap_ties_to_the_lowest_number():
    options = ["Robot kept talking.", "The walk was lovely today.", "Robot forgot a name.", "Walk lovely today was."]
    assert best_overlap("Today I took a walk; it was lovely.", options) == 1
    assert answered("post", "Today I took a walk; it was lovely.", options) == 2
    assert best_overlap("Nothing shared here", ["a", "b", "c"]) == 0


def test_the_same_item_always_gets_the_same_reply():
    one = item("rationale", "AI Agent: Sweet! User A: my cat died.", ["Robot was sweet.", "Robot cat.", "x", "y", "z"])
    assert {scripted_reply(one) for _ in range(5)} == {"Answer: (1)"}
