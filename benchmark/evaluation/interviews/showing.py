"""The agents' interview answers about an episode, as tables for its page."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...agents import llm
from ...models import Episode, Instrument, Respondent, Response


@dataclass
class InterviewRow:
    question: str  # the goal or the probe
    subject: str  # whose goal / whom the probe is about
    perspective: str  # "self" or "other"
    answer: str
    correct: bool | None  # for a probe: was the answer right
    reasoning: str


@dataclass
class InterviewTable:
    seat_position: int
    seat_name: str
    respondent: Respondent
    instrument: Instrument
    rows: list[InterviewRow] = field(default_factory=list)

    @property
    def is_scripted(self) -> bool:
        return llm.is_scripted(self.respondent.model)


def episode_interviews(episode: Episode) -> list[InterviewTable]:
    """The agents' interview answers about ``episode``, one table per seat and instrument (a fixed
    number of queries)."""
    responses = (
        Response.objects.filter(episode=episode, respondent__kind=Respondent.Kind.AGENT)
        .select_related("respondent", "instrument")
        .prefetch_related("answers__question", "answers__goal__role")
        .order_by("seat_position", "instrument__preset", "instrument__version", "pk")
    )
    responses = list(responses)
    if not responses:
        return []
    seats = {seat.position: seat for seat in episode.seats.select_related("role", "character")}
    by_role = {seat.role.position: seat.character.name for seat in seats.values()}
    scenario_probes = list(episode.scenario.probes.select_related("about").order_by("position"))
    tables = []
    for response in responses:
        seat = seats.get(response.seat_position)
        mine = seat.role.position if seat else None
        table = InterviewTable(
            response.seat_position if response.seat_position is not None else -1,
            seat.character.name if seat else "an unknown seat", response.respondent, response.instrument,
        )
        for answer in sorted(response.answers.all(), key=lambda a: (a.question.position, a.goal_id or 0)):
            question = answer.question
            if answer.goal_id is not None:
                role = answer.goal.role.position
                table.rows.append(InterviewRow(
                    answer.goal.text, by_role.get(role, f"role {role + 1}"), "self" if role == mine else "other",
                    answer.value, None, answer.reasoning,
                ))
                continue
            choices = {c["value"]: c["label"] for c in question.options.get("choices", [])}
            # the probe asked, if the scenario still has it as it was asked
            probe = next((p for p in scenario_probes if p.text == question.prompt), None)
            about = probe.about.position if probe else None
            table.rows.append(InterviewRow(
                question.prompt,
                by_role.get(about, "") if about is not None else "",
                "self" if about is not None and about == mine else "other",
                choices.get(answer.value, answer.value),
                answer.value == question.options.get("correct") if "correct" in question.options else None,
                answer.reasoning,
            ))
        tables.append(table)
    return tables
