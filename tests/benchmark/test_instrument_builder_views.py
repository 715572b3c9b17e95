"""The instrument builder's pages: a researcher builds, orders, previews, versions, copies, exports and imports."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from benchmark.instrument_builder.transfer import create_instrument, questions_from_data
from benchmark.instruments.presets import install_preset
from benchmark.instruments.versions import freeze
from benchmark.models import Instrument, Question
from tests.builders import default_team, make_researcher, make_team

pytestmark = pytest.mark.django_db

LIKERT = {"key": "warmth", "kind": "likert", "prompt": "How warm was the agent?", "options": {"anchors": [
    {"value": 1, "label": "Cold", "description": "Distant"}, {"value": 2},
    {"value": 3, "label": "Warm", "description": "Friendly"}]}}
CHOICE = {"key": "winner", "kind": "multiple_choice", "prompt": "Who gave in?", "options": {
    "choices": [{"value": "first", "label": "The first"}, {"value": "second", "label": "The second"}],
    "correct": "second"}}


@pytest.fixture
def researcher(client):
    user = make_researcher()
    client.force_login(user)
    return user


def instrument_of(*questions, team=None):
    return create_instrument(team or default_team(), "Warmth", "", questions_from_data(list(questions)))


def url(name, *args):
    return reverse(f"benchmark:{name}", args=args)


def test_the_list_shows_the_teams_instruments_and_the_presets_but_not_another_teams(client, researcher):
    ours = instrument_of(LIKERT)
    create_instrument(make_team(), "Someone else's", "", questions_from_data([LIKERT]))

    page = client.get(url("instruments")).text

    assert str(ours) in page and "SocialVeil" in page
    assert "Someone else" not in page


def test_a_new_instrument_is_made_for_the_team_and_opens_the_builder(client, researcher):
    response = client.post(url("instrument-new"), {"name": "Rapport", "description": "Pilot"})

    made = Instrument.objects.get(name="Rapport")
    assert made.team == default_team()
    assert response.url == url("instrument", made.pk)


def test_adding_a_likert_question_saves_it_and_the_previews_show_it_to_all_three(client, researcher):
    instrument = create_instrument(default_team(), "Rapport", "", [])
    page = client.get(url("instrument-question-new", instrument.pk), {"kind": "likert"}).text
    assert 'name="option_anchors"' in page and 'name="option_not_applicable"' in page

    response = client.post(url("instrument-question-new", instrument.pk) + "?kind=likert", {
        "key": "warmth", "prompt": "How warm was the agent?", "scope": "episode", "rationale": "none",
        "required": "on", "option_anchors": "1 | Cold | Distant\n2\n3 | Warm | Friendly",
    })

    assert response.status_code == 302
    question = instrument.questions.get()
    assert (question.kind, question.low, question.high) == ("likert", 1, 3)
    builder = client.get(url("instrument", instrument.pk)).text
    assert builder.count("How warm was the agent?") >= 3  # the list, the annotator's and the participant's form
    assert "- warmth (1 to 3)" in builder  # the judge's rubric
    assert 'data-preview="annotator"' in builder and 'data-preview="participant"' in builder


def test_a_multiple_choice_question_hides_its_correct_answer_from_annotators(client, researcher):
    instrument = instrument_of(CHOICE)

    builder = client.get(url("instrument", instrument.pk)).text

    assert "Participants cannot be asked this instrument" in builder
    annotator_panel = builder.split('data-preview="annotator"')[1].split("</details>")[0]
    assert "Who gave in?" in annotator_panel and "correct" not in annotator_panel


def test_a_bad_option_is_shown_on_its_field_and_nothing_is_saved(client, researcher):
    instrument = create_instrument(default_team(), "Rapport", "", [])

    response = client.post(url("instrument-question-new", instrument.pk) + "?kind=multiple_choice", {
        "key": "winner", "prompt": "Who?", "scope": "episode", "rationale": "none",
        "option_choices": "first\nsecond", "option_correct": "third",
    })

    assert response.status_code == 200
    assert "&#x27;third&#x27; is not the value of one of the choices" in response.text
    assert not instrument.questions.exists()


def test_moving_and_removing_keep_positions_in_order(client, researcher):
    instrument = instrument_of(LIKERT, CHOICE, {"key": "note", "kind": "text", "prompt": "Anything?"})
    note = instrument.questions.get(key="note")

    response = client.post(url("instrument-question-move", instrument.pk, note.pk), {"direction": "up"},
                           HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and 'id="previews"' in response.text
    assert list(instrument.questions.values_list("key", flat=True)) == ["warmth", "note", "winner"]

    client.post(url("instrument-question-delete", instrument.pk, instrument.questions.get(key="warmth").pk))

    assert list(instrument.questions.values_list("key", "position")) == [("note", 0), ("winner", 1)]


def test_editing_a_question_changes_it_in_place(client, researcher):
    instrument = instrument_of(LIKERT)
    question = instrument.questions.get()

    client.post(url("instrument-question", instrument.pk, question.pk), {
        "key": "warmth", "prompt": "How friendly?", "scope": "seat", "rationale": "optional",
        "option_anchors": "1 | Cold | Distant\n2 | Mild | So-so\n3 | Warm | Friendly",
    })

    question.refresh_from_db()
    assert (question.prompt, question.scope, question.rationale, question.required) == (
        "How friendly?", "seat", "optional", False)


def test_a_frozen_instrument_offers_a_new_version_and_refuses_changes(client, researcher):
    instrument = instrument_of(LIKERT)
    freeze(instrument)
    question = instrument.questions.get()

    page = client.get(url("instrument", instrument.pk)).text
    assert "Make a new version" in page and "Move up" not in page
    client.post(url("instrument-question-delete", instrument.pk, question.pk))
    response = client.post(url("instrument-question", instrument.pk, question.pk), {"key": "x", "prompt": "X?"})
    assert response.status_code == 302
    assert instrument.questions.get().prompt == LIKERT["prompt"]

    response = client.post(url("instrument-version", instrument.pk))

    newer = Instrument.objects.get(name=instrument.name, version=instrument.version + 1)
    assert response.url == url("instrument", newer.pk)
    assert not newer.frozen and newer.questions.get().prompt == LIKERT["prompt"]


def test_a_preset_can_be_opened_and_copied_but_not_changed(client, researcher):
    preset = install_preset("socialveil")
    question = preset.questions.first()

    assert client.get(url("instrument", preset.pk)).status_code == 200
    assert client.post(url("instrument-question-delete", preset.pk, question.pk)).status_code == 404
    response = client.post(url("instrument-copy", preset.pk), {"name": "Our SocialVeil"})

    copy = Instrument.objects.get(name="Our SocialVeil")
    assert response.url == url("instrument", copy.pk)
    assert (copy.team, copy.preset) == (default_team(), "socialveil")
    assert list(copy.questions.values_list("key", "label", "options")) == list(
        preset.questions.values_list("key", "label", "options"))


def test_an_exported_instrument_imports_as_the_same_questions(client, researcher):
    instrument = instrument_of(LIKERT, CHOICE)
    exported = client.get(url("instrument-export", instrument.pk))
    assert exported["Content-Disposition"] == 'attachment; filename="warmth-v1.json"'
    data = json.loads(exported.content)
    data["name"] = "Warmth again"

    response = client.post(url("instrument-import"), {"file": SimpleUploadedFile("w.json", json.dumps(data).encode())})

    made = Instrument.objects.get(name="Warmth again")
    assert response.url == url("instrument", made.pk)
    fields = ("key", "kind", "prompt", "scope", "options", "low", "high")
    assert list(made.questions.values_list(*fields)) == list(instrument.questions.values_list(*fields))


@pytest.mark.parametrize(("content", "expected"), [
    (b'{"name": "x",\n "questions": [}', "The file is not valid JSON: Expecting value at line 2, column"),
    (json.dumps({"questions": [LIKERT, {**CHOICE, "options": {**CHOICE["options"], "correct": "third"}}]}).encode(),
     "Question 2, field &#x27;options.correct&#x27;: &#x27;third&#x27; is not the value of one of the choices"),
    (json.dumps({"questions": [{**LIKERT, "kind": "stars"}]}).encode(), "Question 1, field &#x27;kind&#x27;"),
    (json.dumps({"questions": [LIKERT, {**LIKERT, "prompt": ""}]}).encode(),
     "Question 2, field &#x27;key&#x27;: “warmth” is already the key of question 1"),
])
def test_a_bad_file_is_refused_whole_naming_the_question_and_field(client, researcher, content, expected):
    response = client.post(url("instrument-import"), {"file": SimpleUploadedFile("bad.json", content)})

    assert response.status_code == 200
    assert expected in response.text
    assert not Question.objects.filter(instrument__team=default_team()).exists()


def test_the_live_preview_shows_a_draft_question_without_saving_it(client, researcher):
    instrument = instrument_of(LIKERT)

    response = client.post(url("instrument-preview", instrument.pk), {
        "kind": "yes_no", "key": "agreed", "prompt": "Did they agree?", "scope": "episode", "rationale": "none",
    })

    assert "Did they agree?" in response.text
    assert "- agreed:" in response.text  # the judge's rubric has it too
    assert list(instrument.questions.values_list("key", flat=True)) == ["warmth"]


def test_the_annotation_study_form_offers_the_teams_own_instruments(client, researcher):
    ours = instrument_of(LIKERT)

    form = client.get(reverse("annotator:study-create")).context["form"]

    assert ours in form.fields["instrument"].queryset


def test_a_draft_answer_is_enough_to_keep_the_questions_as_they_are(client, researcher):
    from benchmark.instruments.respondents import respondent_for
    from benchmark.models import Respondent, Response
    from tests.builders import make_episode, make_user

    instrument = instrument_of(LIKERT)
    Response.objects.create(instrument=instrument, episode=make_episode(), status=Response.Status.DRAFT,
                            respondent=respondent_for(make_user(), Respondent.Kind.ANNOTATOR))
    question = instrument.questions.get()

    page = client.get(url("instrument", instrument.pk)).text
    client.post(url("instrument-question-delete", instrument.pk, question.pk))

    assert "has answers (drafts too)" in page and "Make a new version" in page
    assert instrument.questions.get() == question
    assert client.get(url("instrument-question", instrument.pk, question.pk)).status_code == 302


def test_a_question_a_studys_known_answers_hang_on_is_not_removed(client, researcher):
    from tests.annotator.builders import make_instrument, make_study

    instrument = make_instrument(team=default_team())
    make_study(instrument=instrument, items=1, gold=1, team=default_team())
    question = instrument.questions.get()

    client.post(url("instrument-question-delete", instrument.pk, question.pk))
    page = client.get(url("instrument", instrument.pk)).text

    assert instrument.questions.get() == question
    assert f"The question “{question.key}” holds 1 item keys; make a new version to remove it." in page
