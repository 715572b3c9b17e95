"""Builders for annotation studies, on top of the benchmark builders in ``tests.builders``.

Each makes a valid object with sensible defaults and takes any model field as an override. They
need a database (use them inside a ``db`` test) and work after a flushed transactional test too.

    study = make_study(items=20, overlap=3, annotators=6, gold=2, attention=1)
    study.items.filter(kind="regular")           # the 20 regular items
    list(study.annotators.all())                 # the 6 members
"""

from collections.abc import Sequence
from itertools import count
from typing import Any

from django.contrib.auth.models import AbstractUser

from annotator.models import Annotation, Assignment, ItemKey, Membership, Study, StudyItem
from benchmark.instruments.checks import set_bounds
from benchmark.instruments.respondents import respondent_for
from benchmark.models import Answer, Episode, Instrument, Question, Respondent, Response
from tests.builders import add_to_team, default_team, make_episode, make_scenario, make_user

_numbers = count(1)


def make_question(**fields: Any) -> Question:
    """A saved question; a numeric one gets its ``low``/``high`` from its options, as the checks set them."""
    question = Question(**fields)
    set_bounds(question)
    question.save()
    return question


def make_instrument(**fields: Any) -> Instrument:
    """An instrument with one required categorical question, ``barrier`` (choices none / semantic / emotional).

    Built with the ORM directly, so it does not depend on the presets in ``benchmark.instruments``.
    """
    number = next(_numbers)
    fields.setdefault("name", f"Test instrument {number}")
    instrument = Instrument.objects.create(**fields)
    Question.objects.create(
        instrument=instrument,
        key="barrier",
        position=0,
        kind=Question.Kind.CATEGORICAL,
        prompt="Which communication barrier did the agent speak under?",
        options={
            "choices": [
                {"value": value, "label": value.title(), "description": f"The {value} condition."}
                for value in ("none", "semantic", "emotional")
            ]
        },
        truth="episode.barrier",
    )
    return instrument


def make_annotation(
    assignment: Assignment,
    *,
    version: int = 1,
    status: str = Annotation.Status.SUBMITTED,
    instrument: Instrument | None = None,
    **fields: Any,
) -> Annotation:
    """An annotation version with its response (the annotator's answers about the item's episode).

    The response is a draft for a draft version and submitted otherwise, as ``annotator.drafts``
    keeps them; answers added with ``add_answer`` are then checked by the database as they are
    stored. Other keywords are Annotation fields (``submitted_at``, ``generated_by``, ...).
    """
    response = Response.objects.create(
        instrument=instrument or assignment.item.study.instrument,
        episode_id=assignment.item.episode_id,
        respondent=respondent_for(assignment.annotator, Respondent.Kind.ANNOTATOR),
        status=Response.Status.DRAFT if status == Annotation.Status.DRAFT else Response.Status.SUBMITTED,
    )
    return Annotation.objects.create(assignment=assignment, version=version, status=status, response=response, **fields)


def add_answer(annotation: Annotation, question: Question, value: str, **fields: Any) -> Answer:
    """One answer of ``annotation`` (``seat_position``, ``number``, ``reasoning`` as keywords)."""
    return Answer.objects.create(response_id=annotation.response_id, question=question, value=value, **fields)


def add_annotators(study: Study, annotators: int | Sequence[AbstractUser]) -> list[AbstractUser]:
    """Put users into the study's pool: the given users, or that many new ones. Returns them."""
    users = [make_user() for _ in range(annotators)] if isinstance(annotators, int) else list(annotators)
    Membership.objects.bulk_create(Membership(study=study, annotator=user) for user in users)
    for user in users:
        if not user.team_memberships.filter(team=study.team).exists():
            add_to_team(user, study.team, role="annotator")
    return users


def add_items(
    study: Study,
    episodes: int | Sequence[Episode],
    *,
    kind: StudyItem.Kind | str = StudyItem.Kind.REGULAR,
) -> list[StudyItem]:
    """Add items of ``kind`` after the study's last position: for the given episodes, or that many new ones.

    New episodes share one scenario, to keep big studies cheap to build. Gold and attention items
    get a key for the instrument's first question (its first choice, or "yes"); attention items also
    get an instruction telling the annotator which answer to pick.
    """
    if isinstance(episodes, int):
        scenario = make_scenario(team=study.team) if episodes else None
        episodes = [make_episode(scenario=scenario, turns=2) for _ in range(episodes)]
    last = study.items.order_by("-position").values_list("position", flat=True).first()
    start = 0 if last is None else last + 1
    question = study.instrument.questions.order_by("position").first()
    known = _first_choice(question)
    items = []
    for offset, episode in enumerate(episodes):
        item = StudyItem.objects.create(
            study=study,
            episode=episode,
            position=start + offset,
            kind=kind,
            attention_instruction=(
                f"To show you are reading, answer '{known}' to the first question."
                if kind == StudyItem.Kind.ATTENTION
                else ""
            ),
        )
        if kind != StudyItem.Kind.REGULAR and question is not None:
            ItemKey.objects.create(item=item, question=question, value=known)
        items.append(item)
    return items


def make_study(
    *,
    instrument: Instrument | None = None,
    items: int | Sequence[Episode] = 3,
    overlap: int = 2,
    annotators: int | Sequence[AbstractUser] = (),
    gold: int | Sequence[Episode] = 0,
    attention: int | Sequence[Episode] = 0,
    **fields: Any,
) -> Study:
    """A study with ``items`` regular items, then ``gold`` gold and ``attention`` attention items.

    ``items``, ``gold`` and ``attention`` are counts of new episodes or lists of episodes;
    ``annotators`` is a number of new users or a list of users, all made members. Without an
    ``instrument`` a minimal one is made (``make_instrument``). Other keywords are Study fields
    (``lease_minutes``, ``seed``, ``is_open``, ...).
    """
    number = next(_numbers)
    fields.setdefault("title", f"Study {number}")
    fields.setdefault("slug", f"study-{number}")
    fields.setdefault("instructions", "Read each conversation and answer every question.")
    fields.setdefault("team", default_team())
    study = Study.objects.create(instrument=instrument or make_instrument(), overlap=overlap, **fields)
    add_items(study, items)
    add_items(study, gold, kind=StudyItem.Kind.GOLD)
    add_items(study, attention, kind=StudyItem.Kind.ATTENTION)
    add_annotators(study, annotators)
    return study


def _first_choice(question: Question | None) -> str:
    choices = (question.options or {}).get("choices") if question is not None else None
    return str(choices[0]["value"]) if choices else "yes"
