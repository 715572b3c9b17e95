"""A chat study's participants and their answers as one CSV table, one row per participant.

Columns (``COLUMNS``, then one per question):

- ``participant_id`` (the recruiting platform's id), ``prolific_pid``, ``prolific_study_id``,
  ``prolific_session_id``;
- ``stage`` (consent, briefing, chat, questionnaire, done, screened_out, technical_problem, declined);
- ``outcome``: which code the participant was given: ``completed`` (the completion code),
  ``screened_out`` (the screen-out code: they ended the chat before the study's minimum of
  turns), ``technical_problem`` (the technical-problem code: the model failed before that minimum; review
  and approve these), ``declined`` (no code), or empty while they are still on their way;
- ``scenario`` (codename), ``condition`` (barrier key), ``episode`` (the episode's stable id,
  as in episode exports), ``episode_status``, ``end_reason``, ``turns`` (both sides),
  ``participant_turns``;
- ``created_at``, ``consented_at``, ``finished_at`` (ISO 8601, UTC);
- AgentSense's human test, when the participant took it (``chat.human_test``): ``goals`` (how many
  of their own goals they judged), ``goals_reached`` (how many of those they said they reached),
  ``goal_answers`` (each goal and its yes or no, as ``goal = yes``, joined with "; "), ``probes``,
  ``probes_correct`` and ``probe_answers`` (each probe and the option picked, ``(correct)`` or
  ``(wrong)``). Empty for a participant who did not take it;
- one column per question key of the study's questionnaire, in its order, then any other key found
  in answers to an earlier version of it, alphabetically (``chat.answers.answer_table``). Empty when
  unanswered; a multi-label answer's labels are joined with "; ".

Rows are ordered by arrival. Values are written as stored, except that text a spreadsheet would
run as a formula (a comment beginning with ``=``, say) gets a leading quote
(``benchmark.csv_output``), since participants' answers are free text.
"""

from __future__ import annotations

from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from benchmark.csv_output import csv_text
from benchmark.exporting import stable_id, timestamp
from benchmark.models import Seat, Turn

from .answers import LABEL_SEPARATOR, AnswerTable, answer_table
from .human_test import HumanTestAnswers, human_test_answers
from .models import ChatStudy, Participant

COLUMNS = (
    "participant_id", "prolific_pid", "prolific_study_id", "prolific_session_id", "stage", "outcome",
    "scenario", "condition", "episode", "episode_status", "end_reason", "turns", "participant_turns",
    "created_at", "consented_at", "finished_at",
    "goals", "goals_reached", "goal_answers", "probes", "probes_correct", "probe_answers",
)


def participants_csv(study: ChatStudy) -> str:
    """The whole table as CSV text (a study has hundreds of participants, not millions)."""
    turns = Turn.objects.filter(episode_id=OuterRef("episode_id")).order_by().values("episode_id")
    participants = list(
        Participant.objects.filter(study=study)
        .select_related("scenario", "barrier", "episode")
        .annotate(
            turn_count=Coalesce(Subquery(turns.annotate(n=Count("pk")).values("n")), 0),
            human_turn_count=Coalesce(
                Subquery(turns.annotate(n=Count("pk", filter=Q(seat__player=Seat.Player.HUMAN))).values("n")), 0
            ),
        )
        .order_by("created_at", "pk")
    )
    table = answer_table(study.instrument, participants)
    tests = human_test_answers(participants)
    return csv_text(
        [*COLUMNS, *table.keys], (_row(participant, table, tests.get(participant.pk)) for participant in participants)
    )


def _row(participant: Participant, table: AnswerTable, test: HumanTestAnswers | None) -> list[object]:
    episode = participant.episode
    answers = table.answers.get(participant.pk, {})
    return [
        participant.participant_id,
        participant.prolific_pid,
        participant.prolific_study_id,
        participant.prolific_session_id,
        participant.stage,
        participant.outcome,
        str(participant.scenario) if participant.scenario else "",
        participant.barrier.key if participant.barrier else "",
        stable_id(episode) if episode else "",
        episode.status if episode else "",
        episode.end_reason if episode else "",
        participant.turn_count if episode else "",
        participant.human_turn_count if episode else "",
        timestamp(participant.created_at, "seconds"),
        timestamp(participant.consented_at, "seconds") or "",
        timestamp(participant.finished_at, "seconds") or "",
        *_human_test_cells(test),
        *(answers.get(key, "") for key in table.keys),
    ]


def _human_test_cells(test: HumanTestAnswers | None) -> list[object]:
    """The six human-test columns; empty for a participant who did not take it."""
    if test is None:
        return [""] * 6
    return [
        len(test.goals) if test.goals else "",
        test.goals_reached if test.goals else "",
        LABEL_SEPARATOR.join(f"{goal} = {verdict}" for goal, verdict in test.goals),
        len(test.probes) if test.probes else "",
        test.probes_correct if test.probes else "",
        LABEL_SEPARATOR.join(
            f"{prompt} = {picked} ({'correct' if correct else 'wrong'})" for prompt, picked, correct in test.probes
        ),
    ]
