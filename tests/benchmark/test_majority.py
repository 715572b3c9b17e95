"""The majority of several respondents: the median of numbers, the most common choice, labels most chose."""

from types import SimpleNamespace

from benchmark.evaluation.majority import majority_answers, majority_number, majority_value


def answer(respondent: int, kind: str, value: str = "", number: float | None = None, *, seat=None, options=None):
    question = SimpleNamespace(kind=kind, options=options or {})
    return SimpleNamespace(question_id={"slider": 1, "categorical": 2, "yes_no": 3, "multi_label": 4}[kind],
                           question=question, seat_position=seat, goal_id=None, value=value, number=number,
                           response=SimpleNamespace(respondent_id=respondent))


CHOICES = {"choices": [{"value": "calm"}, {"value": "tense"}, {"value": "lost"}]}


def test_the_median_of_numbers_takes_the_middle_or_the_mean_of_the_middle_two():
    assert majority_number([2, 9, 4]) == 4
    assert majority_number([2, 5]) == 3.5


def test_the_most_common_choice_wins_and_a_tie_goes_to_the_option_listed_first():
    assert majority_value(["tense", "lost", "tense"], ["calm", "tense", "lost"]) == "tense"
    assert majority_value(["lost", "tense"], ["calm", "tense", "lost"]) == "tense"
    assert majority_value(["b", "a"]) == "a"


def test_majority_answers_per_question_and_seat():
    answers = [
        answer(1, "slider", "2", 2, seat=0), answer(2, "slider", "9", 9, seat=0), answer(3, "slider", "4", 4, seat=0),
        answer(1, "slider", "1", 1, seat=1), answer(2, "slider", "3", 3, seat=1),
        answer(1, "categorical", "lost", options=CHOICES), answer(2, "categorical", "tense", options=CHOICES),
        answer(1, "yes_no", "no"), answer(2, "yes_no", "yes"),
    ]

    found = {(m.question_id, m.target.seat): (m.value, m.number, m.respondents) for m in majority_answers(answers)}

    assert found == {
        (1, 0): ("4", 4.0, 3), (1, 1): ("2", 2.0, 2),
        (2, None): ("tense", None, 2), (3, None): ("yes", None, 2),
    }


def test_a_multi_label_majority_keeps_the_labels_more_than_half_chose():
    answers = [answer(1, "multi_label", "calm", options=CHOICES), answer(1, "multi_label", "lost", options=CHOICES),
               answer(2, "multi_label", "lost", options=CHOICES), answer(3, "multi_label", "lost", options=CHOICES),
               answer(3, "multi_label", "tense", options=CHOICES)]

    assert [m.value for m in majority_answers(answers)] == ["lost"]
