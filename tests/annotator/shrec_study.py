"""A small SHREC-style study built with the ORM for the task-building tests.

Three timed episodes of twelve turns (the agent on even turns, the user on odd ones, five seconds
apart), annotated by two external annotators (external 1 and 2, as an imported file numbers them)
with four spans each, on the user turns 1, 3, 5 and 7: errors and competencies in turn, the errors
each with a different single attribute, so every one of the eight tasks can build items.
"""

from datetime import timedelta

from django.utils import timezone

from annotator.models import Assignment, ExternalAnnotator, Span, StudyItem
from benchmark.instruments.presets import install_preset
from benchmark.models import Episode, Seat, SocialAttribute, Turn
from tests.annotator.builders import make_annotation, make_study
from tests.builders import make_episode, make_scenario, make_user

NOW = timezone.now()
ATTRIBUTE_CYCLE = ["emotions", "engagement", "conversational-mechanics", "knowledge-state", "intention",
                   "social-context", "social-norms"]


def timed_episode(scenario, number: int, source: str) -> Episode:
    episode = make_episode(scenario=scenario, turns=0, source=Episode.Source.IMPORTED, external_id=f"video{number}",
                           settings={"shrec": {"source": source}})
    seats = list(Seat.objects.filter(episode=episode).order_by("position"))
    for index in range(12):
        start = 5.0 * index
        text = f"Episode {number} says line {index}."
        words = [[start + offset, word] for offset, word in enumerate(text.split())]
        Turn.objects.create(episode=episode, index=index, seat=seats[index % 2], content=text, start_s=start,
                            end_s=start + 4, words=words)
    return episode


def add_external_annotation(study, item, number: int, spans):
    user = make_user()
    ExternalAnnotator.objects.get_or_create(
        study=study, number=number, defaults={"user": user, "source_key": f"{study.pk}-{number}".ljust(64, "0")}
    )
    external = ExternalAnnotator.objects.get(study=study, number=number)
    assignment = Assignment.objects.create(
        item=item, annotator=external.user, claimed_at=NOW, lease_expires_at=NOW + timedelta(hours=1),
        status="submitted", submitted_at=NOW,
    )
    annotation = make_annotation(assignment, submitted_at=NOW)
    question = study.instrument.questions.get(key="spans")
    for label, start_s, end_s, turn, attributes, rationale, correction in spans:
        span = Span.objects.create(
            annotation=annotation, question=question, label=label, start_turn=turn, end_turn=turn + 1,
            start_s=start_s, end_s=end_s, seat_position=0, channel="verbal", rationale=rationale,
            correction=correction,
        )
        span.attributes.set(SocialAttribute.objects.filter(key__in=attributes))


def shrec_study(team=None, episodes: int = 3):
    """The study of the module docstring; returns it."""
    scenario = make_scenario(**({"team": team} if team else {}))
    study = make_study(instrument=install_preset("shrec-spans"), items=[], team=scenario.team,
                       title="SHREC: tiny", slug="shrec-tiny")
    made = 0
    for number in range(1, episodes + 1):
        episode = timed_episode(scenario, number, "empathic" if number % 2 else "wellness")
        item = StudyItem.objects.create(study=study, episode=episode, position=number - 1)
        spans = []
        for k, turn in enumerate((1, 3, 5, 7)):
            start = 5.0 * turn + 1
            error = k % 2 == 0
            attribute = ATTRIBUTE_CYCLE[made % 7]
            made += error
            spans.append((
                "error" if error else "competency", start, start + 7, turn, [attribute] if error else ["engagement"],
                f"Rationale {number}.{k}", f"Correction {number}.{k}" if error else "",
            ))
        for annotator in (1, 2):
            shifted = [(label, s + annotator - 1, e, t, a, r, c) for label, s, e, t, a, r, c in spans]
            add_external_annotation(study, item, annotator, shifted)
    return study
