"""Copy every scheme, question, annotation and answer onto benchmark's instruments (step 2 of 3).

- Each ``Scheme`` becomes an ``Instrument`` with the same name, version, preset, description and
  freeze time. Its team: none for a preset's scheme or one no single team's studies use (shared,
  as every scheme was before); otherwise the one team whose studies use it.
- Each ``Question`` becomes a benchmark ``Question``: ``per_seat`` becomes ``scope`` seat or
  episode, and a numeric question gets ``low``/``high`` from its options.
- Each annotator becomes an ``annotator`` ``Respondent``; each ``Annotation`` version gets its own
  ``Response`` (instrument: its scheme's; episode: its item's) whose status follows the version:
  draft, submitted (the assignment's latest submitted version) or superseded (an older one).
- Each ``Answer`` becomes a benchmark ``Answer`` of that response (``rationale`` → ``reasoning``).
- Studies, spans and item keys point at the new rows.

Primary keys are kept when the new table is still empty; otherwise the database numbers the
copies (never a mix, which would collide with its sequence). The judge's preset instruments exist
before this step, so instruments, and answers when the judge has scored, usually get new keys;
every link is made through a map of old key to new. Submitted answers must already satisfy their
question, and every answer's seat its question's scope (the database checks both from now on); a
row that does not stops the migration with a message naming it, before anything is written.

Reversible: the reverse copies back every instrument that studies, annotations, spans or keys use,
and every other one a scheme can hold that no one but annotators answered and that is not the
judge's preset (teams and the new kinds do not go back), then deletes the benchmark rows that came
from annotations (an instrument only once nothing else uses it).
"""

from collections import defaultdict

from django.core.management.color import no_style
from django.db import migrations

BATCH = 1000
OLD_KINDS = ("categorical", "likert", "slider", "span", "text", "pairwise")  # what a scheme's question could be
SCHEME_PRESETS = ("", "socialveil", "sotopia-eval", "shrec-spans", "promediate")  # not the judge's presets
NUMERIC = ("likert", "slider")
CHOICES = ("categorical", "pairwise")


def _bounds(question):
    """(low, high) of a numeric question from its options, or (None, None) for other kinds."""
    if question.kind not in NUMERIC:
        return None, None
    options = question.options or {}
    try:
        if question.kind == "likert":
            values = [float(anchor["value"]) for anchor in options["anchors"]]
            return min(values), max(values)
        return float(options["min"]), float(options["max"])
    except (KeyError, TypeError, ValueError) as error:
        raise RuntimeError(
            f"annotator question {question.pk} ({question.key!r} of scheme {question.scheme_id}) is {question.kind} "
            f"but its options give no range ({error!r}); fix its options, then migrate again."
        ) from None


def _problem(question, low, high, value, number):
    """Why a submitted answer breaks its question's rules ("" when it does not): the triggers' rules."""
    if question.kind in NUMERIC:
        if number is None:
            return "a numeric answer without a number"
        if not low <= number <= high:
            return f"the number {number:g} is outside {low:g}..{high:g}"
    if question.kind in CHOICES:
        values = {c.get("value") for c in (question.options or {}).get("choices", []) if isinstance(c, dict)}
        if value not in values:
            return f"{value!r} is not one of the choices"
    return ""


def _keep(pk, keep):
    return pk if keep else None


def _reset_sequences(schema_editor, models):
    statements = schema_editor.connection.ops.sequence_reset_sql(no_style(), models)
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def forward(apps, schema_editor):
    Scheme = apps.get_model("annotator", "Scheme")
    OldQuestion = apps.get_model("annotator", "Question")
    OldAnswer = apps.get_model("annotator", "Answer")
    Annotation = apps.get_model("annotator", "Annotation")
    Study = apps.get_model("annotator", "Study")
    Span = apps.get_model("annotator", "Span")
    ItemKey = apps.get_model("annotator", "ItemKey")
    Instrument = apps.get_model("benchmark", "Instrument")
    Question = apps.get_model("benchmark", "Question")
    Respondent = apps.get_model("benchmark", "Respondent")
    Response = apps.get_model("benchmark", "Response")
    Answer = apps.get_model("benchmark", "Answer")

    old_questions = {question.pk: question for question in OldQuestion.objects.order_by("pk")}
    bounds = {pk: _bounds(question) for pk, question in old_questions.items()}
    submitted = set(Annotation.objects.filter(status="submitted").values_list("pk", flat=True))
    problems = []
    for pk, annotation_id, question_id, seat, value, number in OldAnswer.objects.order_by("pk").values_list(
        "pk", "annotation_id", "question_id", "seat_position", "value", "number"
    ):
        question = old_questions[question_id]
        problem = ""
        if question.per_seat != (seat is not None):
            problem = "a per-seat answer without a seat" if question.per_seat else "a seat on a per-episode answer"
        elif annotation_id in submitted:
            problem = _problem(question, *bounds[question_id], value, number)
        if problem:
            problems.append(f"answer {pk} (annotation {annotation_id}, question {question.key!r}): {problem}")
    if problems:
        raise RuntimeError(
            "Submitted answers that break their question's rules, which the database now refuses; correct or "
            "delete them, then migrate again:\n  " + "\n  ".join(problems[:50])
            + (f"\n  … and {len(problems) - 50} more" if len(problems) > 50 else "")
        )

    # Instruments, with the team whose studies use them (shared when it is a preset or not one team's).
    teams = defaultdict(set)
    for scheme_id, team_id in Study.objects.values_list("scheme_id", "team_id"):
        teams[scheme_id].add(team_id)
    keep = not Instrument.objects.exists()
    names = set(Instrument.objects.values_list("name", "version"))
    instrument_of = {}
    for scheme in Scheme.objects.order_by("pk"):
        version = scheme.version
        while (scheme.name, version) in names:  # a preset instrument made before this migration took it
            version += 1
        names.add((scheme.name, version))
        team = next(iter(teams[scheme.pk])) if not scheme.preset and len(teams[scheme.pk]) == 1 else None
        instrument = Instrument.objects.create(
            pk=_keep(scheme.pk, keep), team_id=team, name=scheme.name, preset=scheme.preset, version=version,
            description=scheme.description, frozen_at=scheme.frozen_at, created_at=scheme.created_at,
        )
        instrument_of[scheme.pk] = instrument.pk

    keep = not Question.objects.exists()
    question_of = {}
    for pk, old in old_questions.items():
        low, high = bounds[pk]
        question = Question.objects.create(
            pk=_keep(pk, keep), instrument_id=instrument_of[old.scheme_id], key=old.key, position=old.position,
            kind=old.kind, prompt=old.prompt, help_text=old.help_text, required=old.required,
            scope="seat" if old.per_seat else "episode", rationale=old.rationale, options=old.options,
            low=low, high=high, dimension=old.dimension, truth=old.truth,
        )
        question_of[pk] = question.pk

    # One respondent per annotator; one response per annotation version.
    annotations = list(Annotation.objects.order_by("pk").values(
        "pk", "status", "version", "created_at", "scheme_id", "assignment_id",
        "assignment__annotator_id", "assignment__item__episode_id",
    ))
    latest_submitted = {}
    for row in annotations:
        if row["status"] == "submitted":
            latest_submitted[row["assignment_id"]] = max(latest_submitted.get(row["assignment_id"], 0), row["version"])
    respondent_of = {}
    for user_id in sorted({row["assignment__annotator_id"] for row in annotations}):
        respondent, _ = Respondent.objects.get_or_create(kind="annotator", user_id=user_id)
        respondent_of[user_id] = respondent.pk
    response_of = {}
    for start in range(0, len(annotations), BATCH):
        rows = annotations[start:start + BATCH]
        responses = Response.objects.bulk_create(
            Response(
                instrument_id=instrument_of[row["scheme_id"]],
                episode_id=row["assignment__item__episode_id"],
                respondent_id=respondent_of[row["assignment__annotator_id"]],
                status=_status(row, latest_submitted),
                created_at=row["created_at"],
            )
            for row in rows
        )
        for row, response in zip(rows, responses, strict=True):
            response_of[row["pk"]] = response.pk
        objects = [Annotation(pk=row["pk"], response_id=response_of[row["pk"]]) for row in rows]
        Annotation.objects.bulk_update(objects, ["response"])

    keep = not Answer.objects.exists()
    answers = OldAnswer.objects.order_by("pk").values_list(
        "pk", "annotation_id", "question_id", "seat_position", "value", "number", "rationale"
    )
    batch = []
    for pk, annotation_id, question_id, seat, value, number, rationale in answers.iterator(chunk_size=BATCH):
        batch.append(Answer(
            pk=_keep(pk, keep), response_id=response_of[annotation_id], question_id=question_of[question_id],
            seat_position=seat, value=value, number=number, reasoning=rationale,
        ))
        if len(batch) == BATCH:
            Answer.objects.bulk_create(batch)
            batch = []
    Answer.objects.bulk_create(batch)

    for scheme_id, instrument_id in instrument_of.items():
        Study.objects.filter(scheme_id=scheme_id).update(instrument_id=instrument_id)
    for old, new in question_of.items():
        Span.objects.filter(question_id=old).update(instrument_question_id=new)
        ItemKey.objects.filter(question_id=old).update(instrument_question_id=new)
    _reset_sequences(schema_editor, [Instrument, Question, Answer])


def _status(row, latest_submitted):
    if row["status"] != "submitted":
        return "draft"
    return "submitted" if latest_submitted[row["assignment_id"]] == row["version"] else "superseded"


def backward(apps, schema_editor):
    Scheme = apps.get_model("annotator", "Scheme")
    OldQuestion = apps.get_model("annotator", "Question")
    OldAnswer = apps.get_model("annotator", "Answer")
    Annotation = apps.get_model("annotator", "Annotation")
    Study = apps.get_model("annotator", "Study")
    Span = apps.get_model("annotator", "Span")
    ItemKey = apps.get_model("annotator", "ItemKey")
    Instrument = apps.get_model("benchmark", "Instrument")
    Question = apps.get_model("benchmark", "Question")
    Respondent = apps.get_model("benchmark", "Respondent")
    Response = apps.get_model("benchmark", "Response")
    Answer = apps.get_model("benchmark", "Answer")

    responses = Response.objects.filter(annotation__isnull=False)
    used = (
        set(Study.objects.values_list("instrument_id", flat=True))
        | set(responses.values_list("instrument_id", flat=True))
        | set(Question.objects.filter(spans__isnull=False).values_list("instrument_id", flat=True))
        | set(Question.objects.filter(item_keys__isnull=False).values_list("instrument_id", flat=True))
    )
    used.discard(None)
    goal_scoped = list(Question.objects.filter(instrument_id__in=used, scope="goal").values_list("key", flat=True))
    if goal_scoped or Answer.objects.filter(response__in=responses, goal__isnull=False).exists():
        raise RuntimeError(
            "Cannot move back: annotation studies use questions asked per goal "
            f"({', '.join(goal_scoped) or 'answers with a goal'}), which annotator schemes cannot hold."
        )
    # Instruments no study uses go back too when a scheme can hold them and no one else answered them
    # (a scheme made in the admin and not used yet); a judge's instruments stay.
    unfit = set(Question.objects.exclude(kind__in=OLD_KINDS).values_list("instrument_id", flat=True))
    unfit |= set(Question.objects.filter(scope="goal").values_list("instrument_id", flat=True))
    unfit |= set(Response.objects.filter(annotation__isnull=True).values_list("instrument_id", flat=True))
    unused = Instrument.objects.exclude(pk__in=unfit).filter(preset__in=SCHEME_PRESETS)
    used |= set(unused.values_list("pk", flat=True))
    questions = Question.objects.filter(instrument_id__in=used)
    for instrument in Instrument.objects.filter(pk__in=used).order_by("pk"):
        Scheme.objects.create(
            pk=instrument.pk, name=instrument.name, preset=instrument.preset, version=instrument.version,
            description=instrument.description, frozen_at=instrument.frozen_at, created_at=instrument.created_at,
        )
    for question in questions.order_by("pk"):
        OldQuestion.objects.create(
            pk=question.pk, scheme_id=question.instrument_id, key=question.key, position=question.position,
            kind=question.kind, prompt=question.prompt, help_text=question.help_text, required=question.required,
            per_seat=question.scope == "seat", rationale=question.rationale, options=question.options,
            dimension=question.dimension, truth=question.truth,
        )
    for instrument_id in used:
        Study.objects.filter(instrument_id=instrument_id).update(scheme_id=instrument_id)
    for question_id in questions.values_list("pk", flat=True):
        Span.objects.filter(instrument_question_id=question_id).update(question_id=question_id)
        ItemKey.objects.filter(instrument_question_id=question_id).update(question_id=question_id)

    annotation_of = dict(Annotation.objects.filter(response__isnull=False).values_list("response_id", "pk"))
    schemes = dict(responses.values_list("pk", "instrument_id"))
    for response_id, annotation_id in annotation_of.items():
        Annotation.objects.filter(pk=annotation_id).update(scheme_id=schemes[response_id])
    batch = []
    for pk, response_id, question_id, seat, value, number, reasoning in Answer.objects.filter(
        response__in=responses
    ).order_by("pk").values_list("pk", "response_id", "question_id", "seat_position", "value", "number", "reasoning"):
        batch.append(OldAnswer(
            pk=pk, annotation_id=annotation_of[response_id], question_id=question_id, seat_position=seat,
            value=value, number=number, rationale=reasoning,
        ))
        if len(batch) == BATCH:
            OldAnswer.objects.bulk_create(batch)
            batch = []
    OldAnswer.objects.bulk_create(batch)
    _reset_sequences(schema_editor, [Scheme, OldQuestion, OldAnswer])

    # The benchmark rows that came from annotations go; instruments only when nothing else uses them.
    Study.objects.update(instrument_id=None)
    Span.objects.update(instrument_question_id=None)
    ItemKey.objects.update(instrument_question_id=None)
    response_ids = list(annotation_of)
    Annotation.objects.update(response_id=None)
    Answer.objects.filter(response_id__in=response_ids).delete()
    Response.objects.filter(pk__in=response_ids).delete()
    Respondent.objects.filter(kind="annotator", responses__isnull=True).delete()
    Instrument.objects.filter(pk__in=used, responses__isnull=True).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0008_instruments_schema'),
        ('benchmark', '0016_answer_checks'),
    ]

    operations = [
        migrations.RunPython(forward, backward),
    ]
