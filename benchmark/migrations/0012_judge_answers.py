"""The judge becomes a respondent: its rubrics are instruments, its scores are answers.

1. The two preset instruments of ``benchmark.instruments.rubrics`` ("Sotopia-EVAL judge", seven
   per-seat questions; "SocialVeil judge", two per-episode questions), team NULL.
2. Every ``Evaluation`` becomes an ``Answer``: the rows of one (episode, evaluator, prompt
   version, instrument) make one ``Response`` of the evaluator's respondent (a judge, or an
   annotator-kind respondent labelled ``human mean``; see ``benchmark.instruments.respondents``).
   Each answer keeps the score (``number``, and as text in ``value``), the reasoning and the seat's
   position; the response takes the group's earliest time and the usage of its first row that has
   one (a judge call writes the same usage on every row). Reversible: answers to the two presets
   go back to evaluations, each with its response's time and usage.

``0013`` then drops ``Evaluation`` and adds the triggers that keep its guarantees.
"""


from collections import defaultdict

from django.db import migrations

from benchmark.instruments import rubrics
from benchmark.instruments import respondents


def install_presets(apps, schema_editor):
    rubrics.install(apps.get_model("benchmark", "Instrument"), apps.get_model("benchmark", "Question"))


def remove_presets(apps, schema_editor):
    Instrument = apps.get_model("benchmark", "Instrument")
    for rubric in rubrics.JUDGE_RUBRICS:
        Instrument.objects.filter(team=None, preset=rubric.preset, version=rubric.version).delete()


def _number_text(number):
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def evaluations_to_answers(apps, schema_editor):
    Evaluation = apps.get_model("benchmark", "Evaluation")
    Question = apps.get_model("benchmark", "Question")
    Respondent = apps.get_model("benchmark", "Respondent")
    Response = apps.get_model("benchmark", "Response")
    Answer = apps.get_model("benchmark", "Answer")
    presets = [rubric.preset for rubric in rubrics.JUDGE_RUBRICS]
    questions = {
        question.dimension: question
        for question in Question.objects.filter(instrument__team=None, instrument__preset__in=presets)
    }
    groups = defaultdict(list)
    rows = Evaluation.objects.select_related("seat").order_by("pk")
    for evaluation in rows.iterator(chunk_size=2000):
        question = questions[evaluation.dimension]
        key = (evaluation.episode_id, evaluation.evaluator, evaluation.prompt_version, question.instrument_id)
        groups[key].append((evaluation, question))
    found = {}
    answers = []
    for (episode_id, evaluator, prompt_version, instrument_id), members in groups.items():
        fields = respondents.respondent_fields(evaluator, prompt_version)
        key = tuple(sorted(fields.items(), key=lambda item: item[0]))
        if key not in found:
            found[key] = respondents.find_respondent(Respondent, fields)
        used = next((e for e, _ in members if e.latency_ms is not None or e.prompt_tokens is not None
                     or e.completion_tokens is not None), members[0][0])
        response = Response.objects.create(
            instrument_id=instrument_id, episode_id=episode_id, respondent=found[key],
            created_at=min(e.created_at for e, _ in members), latency_ms=used.latency_ms,
            prompt_tokens=used.prompt_tokens, completion_tokens=used.completion_tokens,
        )
        answers.extend(
            Answer(
                response=response, question=question,
                seat_position=None if evaluation.seat_id is None else evaluation.seat.position,
                value=_number_text(evaluation.score), number=evaluation.score, reasoning=evaluation.reasoning,
            )
            for evaluation, question in members
        )
        if len(answers) >= 2000:
            Answer.objects.bulk_create(answers)
            answers = []
    Answer.objects.bulk_create(answers)


def answers_to_evaluations(apps, schema_editor):
    Evaluation = apps.get_model("benchmark", "Evaluation")
    Answer = apps.get_model("benchmark", "Answer")
    Response = apps.get_model("benchmark", "Response")
    Seat = apps.get_model("benchmark", "Seat")
    presets = [rubric.preset for rubric in rubrics.JUDGE_RUBRICS]
    responses = Response.objects.filter(instrument__team=None, instrument__preset__in=presets)
    answers = (
        Answer.objects.filter(response__in=responses)
        .select_related("response__respondent", "question")
        .order_by("pk")
    )
    seats = {}
    rows = []
    for answer in answers.iterator(chunk_size=2000):
        response = answer.response
        respondent = response.respondent
        seat_id = None
        if answer.seat_position is not None:
            key = (response.episode_id, answer.seat_position)
            if key not in seats:
                seats[key] = Seat.objects.get(episode_id=response.episode_id, position=answer.seat_position).pk
            seat_id = seats[key]
        rows.append(Evaluation(
            episode_id=response.episode_id, seat_id=seat_id,
            evaluator=respondent.model or respondent.label, prompt_version=respondent.prompt_version,
            dimension=answer.question.dimension, score=answer.number, reasoning=answer.reasoning,
            created_at=response.created_at, latency_ms=response.latency_ms,
            prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens,
        ))
    Evaluation.objects.bulk_create(rows, batch_size=2000)
    responses.delete()


class Migration(migrations.Migration):

    dependencies = [
        ("benchmark", "0011_question_label"),
    ]

    operations = [
        migrations.RunPython(install_presets, remove_presets),
        migrations.RunPython(evaluations_to_answers, answers_to_evaluations),
    ]
