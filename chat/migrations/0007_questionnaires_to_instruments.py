"""Move every chat questionnaire and participant's answers onto benchmark's instruments (step 2 of 3).

- The default questionnaire becomes the shared preset ``chat-questionnaire`` (team NULL; its
  questions as they were then, frozen below): created here if missing, and asked by every study
  that kept the default.
- Every other questionnaire becomes an instrument of the study's team, one per distinct
  questionnaire and team ("Chat questionnaire: <study title>"): a ``likert`` question (whole
  numbers ``low``..``high`` with labels at the two ends) becomes a slider of step 1 with the same
  end labels, ``choice`` a categorical question whose choices are the options (value and label),
  ``text`` a text question with ``max_chars`` as its ``max_length``; ``label`` becomes the prompt.
  An empty questionnaire asks nothing (no instrument).
- Each participant's stored answers become one submitted ``Response`` of their ``participant``
  respondent (labelled with their id) to the study's instrument, with an ``Answer`` per answered
  question (unanswered ones, ``null`` or empty, have none); the response takes the time they
  finished. Answers that do not fit the study's current questions (given to an earlier version
  of its questionnaire) go to an instrument "as answered": the questions that fit, and free-text
  questions for the keys or values that do not, so nothing is lost. Answered instruments are frozen.

Reversible: the reverse writes each study's questions back as JSON (the default when it asks the
preset) and each response's answers back onto its participant, then deletes what this step made (the
preset too, unless someone else answered it).
"""

import json
import math

from django.db import migrations
from django.db.models import Q
from django.utils import timezone

PRESET = "chat-questionnaire"
TEXT_MAX_LENGTH = 2000
CHOICE_VALUE_MAX_LENGTH = 200
# The preset as the participants of the studies moved here answered it, frozen: the shipped preset's
# wording may change later, and then gets a version of its own (``benchmark.instruments.presets``).
PRESET_NAME = "Chat questionnaire"
PRESET_DESCRIPTION = (
    "What a participant is asked after chatting with an agent: how far they reached their goal, how "
    "much confusion was left and how well the two sides understood each other (SocialVeil's scales, "
    "from the participant's side), and an optional comment."
)
PRESET_QUESTIONS = [{'key': 'goal',
  'position': 0,
  'kind': 'likert',
  'prompt': "How well did you reach your character's goal?",
  'help_text': '',
  'required': True,
  'scope': 'episode',
  'rationale': 'none',
  'options': {'anchors': [{'value': 1,
                           'label': 'not at all',
                           'description': 'Nothing of what your character wanted came about.'},
                          {'value': 2,
                           'label': 'a little',
                           'description': 'A small part of the goal was reached, or only in words.'},
                          {'value': 3,
                           'label': 'partly',
                           'description': 'About half of what your character wanted came about.'},
                          {'value': 4,
                           'label': 'mostly',
                           'description': 'The main goal was reached; some details were not.'},
                          {'value': 5,
                           'label': 'completely',
                           'description': 'Everything your character wanted came about.'}]},
  'dimension': '',
  'low': 1.0,
  'high': 5.0},
 {'key': 'unresolved_confusion',
  'position': 1,
  'kind': 'likert',
  'prompt': 'How much confusion was left at the end of the conversation?',
  'help_text': '',
  'required': True,
  'scope': 'episode',
  'rationale': 'none',
  'options': {'anchors': [{'value': 1,
                           'label': 'a great deal: it never made sense',
                           'description': 'You still do not know what the other side meant.'},
                          {'value': 2, 'label': 'much', 'description': 'Important points stayed unclear.'},
                          {'value': 3,
                           'label': 'some',
                           'description': 'Some points stayed unclear, others were cleared up.'},
                          {'value': 4,
                           'label': 'little',
                           'description': 'Only small details stayed unclear.'},
                          {'value': 5,
                           'label': 'none: everything was cleared up',
                           'description': 'By the end you understood everything that was said.'}]},
  'dimension': 'unresolved_confusion',
  'low': 1.0,
  'high': 5.0},
 {'key': 'mutual_understanding',
  'position': 2,
  'kind': 'likert',
  'prompt': 'How well did you and the other side understand each other?',
  'help_text': '',
  'required': True,
  'scope': 'episode',
  'rationale': 'none',
  'options': {'anchors': [{'value': 1, 'label': 'not at all', 'description': 'You talked past each other.'},
                          {'value': 2,
                           'label': 'a little',
                           'description': 'You understood each other on a few points only.'},
                          {'value': 3,
                           'label': 'partly',
                           'description': 'You understood each other on some points and not on others.'},
                          {'value': 4,
                           'label': 'well',
                           'description': 'You understood each other on most points.'},
                          {'value': 5,
                           'label': 'fully',
                           'description': "You understood each other's views and aims."}]},
  'dimension': 'mutual_understanding',
  'low': 1.0,
  'high': 5.0},
 {'key': 'comment',
  'position': 3,
  'kind': 'text',
  'prompt': 'Anything you want to tell us about the conversation? (optional)',
  'help_text': '',
  'required': False,
  'scope': 'episode',
  'rationale': 'none',
  'options': {'max_length': 2000},
  'dimension': '',
  'low': None,
  'high': None}]
QUESTION_DEFAULTS = {
    "key": "", "position": 0, "kind": "", "prompt": "", "label": "", "help_text": "", "required": True,
    "scope": "episode", "rationale": "none", "options": {}, "low": None, "high": None, "dimension": "", "truth": "",
}


def _old_default():
    import importlib

    return importlib.import_module("chat.migrations.0001_initial").default_questionnaire()


def _normalised(questionnaire):
    """The questionnaire as the old validation stored it (``required`` filled in), for comparing."""
    return [{**q, "required": q.get("required", True)} if isinstance(q, dict) else q for q in questionnaire]


def _number_text(number):
    return str(int(number)) if float(number).is_integer() else repr(float(number))


# Old questions into new ones


def _new_question(old, position):
    """The fields of a benchmark question made from one old JSON question."""
    fields = {
        "key": old["key"], "position": position, "prompt": old["label"], "required": old.get("required", True),
        "scope": "episode", "rationale": "none", "low": None, "high": None,
    }
    if old["kind"] == "likert":
        labels = {end: old[name] for end, name in (("min", "low_label"), ("max", "high_label")) if old.get(name)}
        options = {"min": old["low"], "max": old["high"], "step": 1, **({"labels": labels} if labels else {})}
        return {**fields, "kind": "slider", "options": options, "low": float(old["low"]), "high": float(old["high"])}
    if old["kind"] == "choice":
        return {**fields, "kind": "categorical",
                "options": {"choices": [{"value": o.strip(), "label": o} for o in old["options"]]}}
    if old["kind"] == "text":
        return {**fields, "kind": "text", "options": {"max_length": old.get("max_chars", TEXT_MAX_LENGTH)}}
    raise RuntimeError(f"question {old['key']!r} has kind {old['kind']!r}, which chat questionnaires never had")


def _text_question(key, prompt, position, values):
    longest = max([TEXT_MAX_LENGTH, *(len(v) for v in values)])
    return {"key": key, "position": position, "prompt": prompt, "required": False, "scope": "episode",
            "rationale": "none", "low": None, "high": None, "kind": "text", "options": {"max_length": longest}}


def _answer(question, stored):
    """(value, number) of a stored answer to ``question`` (new fields), or None when it does not fit."""
    kind, options = question["kind"], question["options"]
    if kind in ("slider", "likert"):  # a whole number within the scale (old Likert answers were whole numbers)
        if isinstance(stored, bool) or not isinstance(stored, int | float | str):
            return None
        try:
            number = float(stored)
        except ValueError:
            return None
        if not math.isfinite(number) or not number.is_integer() or not question["low"] <= number <= question["high"]:
            return None
        return _number_text(number), number
    if not isinstance(stored, str):
        return None
    if kind == "categorical":
        value = stored.strip()
        return (value, None) if value in {c["value"] for c in options["choices"]} else None
    return (stored, None) if len(stored) <= options["max_length"] else None


def _as_text(stored):
    return stored if isinstance(stored, str) else json.dumps(stored, ensure_ascii=False)


def _answered(answers):
    """The stored answers that say something (``null`` and empty text were unanswered questions)."""
    return {key: value for key, value in answers.items() if value is not None and value != ""}


# Forward


def forward(apps, schema_editor):
    ChatStudy = apps.get_model("chat", "ChatStudy")
    Participant = apps.get_model("chat", "Participant")
    Instrument = apps.get_model("benchmark", "Instrument")
    Question = apps.get_model("benchmark", "Question")
    Respondent = apps.get_model("benchmark", "Respondent")
    Response = apps.get_model("benchmark", "Response")
    Answer = apps.get_model("benchmark", "Answer")

    def next_version(name):
        return max(Instrument.objects.filter(name=name).values_list("version", flat=True), default=0) + 1

    def create(name, team_id, questions, description, preset=""):
        instrument = Instrument.objects.create(
            team_id=team_id, name=name, version=next_version(name), preset=preset, description=description,
        )
        Question.objects.bulk_create(Question(instrument=instrument, **fields) for fields in questions)
        return instrument

    preset = Instrument.objects.filter(team=None, preset=PRESET).order_by("-version", "-pk").first()
    if preset is None:
        preset = create(PRESET_NAME, None, PRESET_QUESTIONS, PRESET_DESCRIPTION, PRESET)

    default = _normalised(_old_default())
    made = {}  # (team, questions as JSON) -> instrument
    instrument_of = {}  # study pk -> instrument or None
    questions_of = {}  # instrument pk -> {key: new question fields}
    studies = {study.pk: study for study in ChatStudy.objects.order_by("pk")}
    for study in studies.values():
        old = study.questionnaire
        if not isinstance(old, list) or not all(isinstance(q, dict) for q in old):
            raise RuntimeError(f"chat study {study.slug!r}: its questionnaire is not a list of questions; fix it, "
                               "then migrate again.")
        if not old:
            instrument_of[study.pk] = None
            continue
        if _normalised(old) == default:
            instrument_of[study.pk] = preset
            continue
        try:
            questions = [_new_question(q, position) for position, q in enumerate(old)]
        except (KeyError, TypeError, AttributeError) as error:
            raise RuntimeError(f"chat study {study.slug!r}: its questionnaire cannot be read ({error!r}); fix it, "
                               "then migrate again.") from None
        _check_choices(study, questions)
        found = (study.team_id, json.dumps(questions, sort_keys=True))
        if found not in made:
            made[found] = create(
                f"Chat questionnaire: {study.title}"[:200], study.team_id, questions,
                f"The questionnaire of the chat study “{study.title}” (/s/{study.slug}/), moved from its JSON.",
            )
        instrument_of[study.pk] = made[found]
    for instrument in {i.pk: i for i in instrument_of.values() if i is not None}.values():
        questions_of[instrument.pk] = {
            q["key"]: q for q in Question.objects.filter(instrument=instrument).order_by("position").values()
        }
    ChatStudy.objects.bulk_update(
        [ChatStudy(pk=pk, instrument=instrument) for pk, instrument in instrument_of.items()], ["instrument"]
    )

    answered_at = {}  # instrument pk -> earliest answer
    for participant in Participant.objects.exclude(answers={}).order_by("pk"):
        study = studies[participant.study_id]
        stored = participant.answers
        if not isinstance(stored, dict):
            raise RuntimeError(f"participant {participant.participant_id!r} of chat study {study.slug!r}: the "
                               "stored answers are not an object; fix them, then migrate again.")
        if participant.episode_id is None:
            raise RuntimeError(f"participant {participant.participant_id!r} of chat study {study.slug!r} has "
                               "answers but no episode; answers are about an episode, so give it one or clear them.")
        instrument = instrument_of[study.pk]
        questions = questions_of.get(instrument.pk, {}) if instrument is not None else {}
        answers = _answered(stored)
        fits = {key: _answer(questions[key], value) if key in questions else None for key, value in answers.items()}
        if any(fit is None for fit in fits.values()):
            instrument, questions, fits = _as_answered(study, questions, answers, create, Instrument, Question)
            questions_of[instrument.pk] = questions
        respondent, _ = Respondent.objects.get_or_create(
            kind="participant", user=None, model="", prompt_version="", label=participant.participant_id,
        )
        when = participant.finished_at or participant.last_seen_at or timezone.now()
        response = Response.objects.create(
            instrument=instrument, episode_id=participant.episode_id, respondent=respondent, status="submitted",
            created_at=when,
        )
        Answer.objects.bulk_create(
            Answer(response=response, question_id=questions[key]["id"], value=value, number=number)
            for key, (value, number) in fits.items()
        )
        Participant.objects.filter(pk=participant.pk).update(response=response)
        answered_at[instrument.pk] = min(when, answered_at.get(instrument.pk, when))
    for pk, when in answered_at.items():
        Instrument.objects.filter(pk=pk, frozen_at__isnull=True).update(frozen_at=when)


def _check_choices(study, questions):
    for question in questions:
        if question["kind"] != "categorical":
            continue
        values = [c["value"] for c in question["options"]["choices"]]
        if len(set(values)) != len(values) or any(not v or len(v) > CHOICE_VALUE_MAX_LENGTH for v in values):
            raise RuntimeError(
                f"chat study {study.slug!r}, question {question['key']!r}: its options must differ from each "
                f"other once outer spaces are removed and have at most {CHOICE_VALUE_MAX_LENGTH} characters; "
                "fix them, then migrate again."
            )


def _comparable(question):
    return {name: question.get(name, default) for name, default in QUESTION_DEFAULTS.items()}


def _as_answered(study, questions, answers, create, Instrument, Question):
    """An instrument holding the study's questions that fit ``answers`` and free text for the rest (made
    once per distinct set of questions and team), its questions by key, and the answers' (value, number)."""
    wanted = []
    for key, question in questions.items():
        value = answers.get(key)
        if value is None or _answer(question, value) is not None:
            wanted.append({k: v for k, v in question.items() if k not in ("id", "instrument_id")})
        else:
            wanted.append(_text_question(key, question["prompt"], question["position"], [_as_text(value)]))
    for key in sorted(set(answers) - set(questions)):
        wanted.append(_text_question(key, key, len(wanted), [_as_text(answers[key])]))
    name = f"Chat questionnaire: {study.title} (as answered)"[:200]
    existing = None
    for candidate in Instrument.objects.filter(name=name, team_id=study.team_id).order_by("pk"):
        stored = Question.objects.filter(instrument=candidate).order_by("position").values()
        if [_comparable(q) for q in stored] == [_comparable(q) for q in wanted]:
            existing = candidate
            break
    made = existing or create(name, study.team_id, wanted, f"Answers given in the chat study “{study.title}” "
                              "to questions its questionnaire no longer asks in that form.")
    by_key = {q["key"]: q for q in Question.objects.filter(instrument=made).order_by("position").values()}
    fits = {key: _answer(by_key[key], value) if by_key[key]["kind"] != "text" else (_as_text(value), None)
            for key, value in answers.items()}
    return made, by_key, fits


# Backward


def backward(apps, schema_editor):
    ChatStudy = apps.get_model("chat", "ChatStudy")
    Participant = apps.get_model("chat", "Participant")
    Instrument = apps.get_model("benchmark", "Instrument")
    Question = apps.get_model("benchmark", "Question")
    Respondent = apps.get_model("benchmark", "Respondent")
    Response = apps.get_model("benchmark", "Response")
    Answer = apps.get_model("benchmark", "Answer")

    default = _old_default()
    for study in ChatStudy.objects.select_related("instrument").order_by("pk"):
        if study.instrument_id is None:
            old = []
        elif study.instrument.team_id is None and study.instrument.preset == PRESET:
            old = default
        else:
            old = [_old_question(q, study) for q in Question.objects.filter(instrument_id=study.instrument_id)
                   .order_by("position")]
        ChatStudy.objects.filter(pk=study.pk).update(questionnaire=old)

    responses = Response.objects.filter(participant__isnull=False)
    for participant in Participant.objects.filter(response__isnull=False).order_by("pk"):
        answers = {}
        given = {}
        for key, kind, value, number in Answer.objects.filter(response_id=participant.response_id).values_list(
            "question__key", "question__kind", "value", "number"
        ).order_by("question__position", "pk"):
            if kind == "multi_label":
                given[key] = f"{given[key]}; {value}" if key in given else value
            else:
                given[key] = int(number) if number is not None and float(number).is_integer() else (
                    number if number is not None else value)
        for key, kind in Question.objects.filter(instrument__responses=participant.response_id).values_list(
            "key", "kind"
        ).order_by("position"):
            answers[key] = given.get(key, None if kind in ("likert", "slider") else "")
        Participant.objects.filter(pk=participant.pk).update(answers=answers)

    response_ids = list(responses.values_list("pk", flat=True))
    instrument_ids = set(responses.values_list("instrument_id", flat=True))
    instrument_ids |= set(ChatStudy.objects.exclude(instrument=None).values_list("instrument_id", flat=True))
    Participant.objects.update(response=None)
    ChatStudy.objects.update(instrument=None)
    Answer.objects.filter(response_id__in=response_ids).delete()
    Response.objects.filter(pk__in=response_ids).delete()
    Respondent.objects.filter(kind="participant", responses__isnull=True).delete()
    unused = Instrument.objects.filter(responses__isnull=True).filter(
        Q(pk__in=instrument_ids, team__isnull=False) | Q(team=None, preset=PRESET)  # the preset: forward made it
    )
    unused = list(unused.values_list("pk", flat=True))
    # Deleted without Django's collector, which would look for links in apps already migrated back.
    alias = schema_editor.connection.alias
    Question.objects.filter(instrument_id__in=unused)._raw_delete(alias)
    Instrument.objects.filter(pk__in=unused)._raw_delete(alias)


def _old_question(question, study):
    """One benchmark question as the old JSON question it can be (kinds a participant answered back then)."""
    old = {"key": question.key, "label": question.prompt, "required": question.required}
    options = question.options or {}
    if question.kind in ("slider", "likert") and float(question.low).is_integer() and (
        question.kind == "likert" or options.get("step") == 1
    ):
        labels = options.get("labels", {})
        if question.kind == "likert":
            anchors = options["anchors"]
            labels = {"min": anchors[0]["label"], "max": anchors[-1]["label"]}
        old.update(kind="likert", low=int(question.low), high=int(question.high),
                   **{name: labels[end] for end, name in (("min", "low_label"), ("max", "high_label")) if end in labels})
        return old
    if question.kind in ("categorical", "yes_no"):
        choices = options.get("choices") or [{"value": "yes"}, {"value": "no"}]
        return {**old, "kind": "choice", "options": [c["value"] for c in choices]}
    if question.kind == "text":
        return {**old, "kind": "text", "max_chars": options.get("max_length", TEXT_MAX_LENGTH)}
    raise RuntimeError(
        f"Cannot move back: the questionnaire of chat study {study.slug!r} asks {question.key!r}, a "
        f"{question.kind} question, which JSON questionnaires cannot hold."
    )


class Migration(migrations.Migration):

    dependencies = [
        ('chat', '0006_questionnaire_instrument'),
        ('benchmark', '0016_answer_checks'),
    ]

    operations = [
        migrations.RunPython(forward, backward),
    ]
