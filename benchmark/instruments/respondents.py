"""Who answers: the ``Respondent`` rows of people, judges and scores named by one string.

A person has one respondent row per kind (an annotator who is also a participant has two), so
every answer they give in that role points at the same row and reports can group by it. A judge is
one row per model and prompt version.

Scores stored before instruments named their evaluator with one string: a judge model's name, or
``human mean`` for the mean of human ratings imported with an episode. Such a string becomes a
``Respondent``: ``human mean`` (any case) an annotator-kind respondent with that label and no
user, anything else a judge with that model name. The data migration, the Parley JSONL importer
(for the ``evaluations`` of older files) and the Sotopia importer all map it this way.

Models are imported inside the functions: the judge's data migration uses this module with its
historical ``Respondent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from benchmark.models import Respondent

JUDGE = "judge"
ANNOTATOR = "annotator"
PARTICIPANT = "participant"
HUMAN_MEAN = "human mean"


def pseudonym(user_id: int) -> str:
    """A person's name wherever their answers leave the site or meet others' (exports, reports, results):
    ``a<account id>``; usernames never appear there."""
    return f"a{user_id}"


def respondent_name(model: str, label: str, user_id: int | None) -> str:
    """A respondent's one name in results, exports and reports: its model or label, else the person's pseudonym."""
    return model or label or (pseudonym(user_id) if user_id is not None else "")


def respondent_for(user: AbstractBaseUser, kind: str) -> Respondent:
    """The respondent row of ``user`` answering as ``kind`` (annotator or participant), made on first use.

    Safe when two requests of the same person make it at once: the loser reads the winner's row.
    """
    from benchmark.models import Respondent

    if kind not in (ANNOTATOR, PARTICIPANT):
        raise ValueError(f"a person answers as an annotator or a participant, not as {kind!r}")
    respondent, _ = Respondent.objects.get_or_create(kind=kind, user=user)
    return respondent


def respondents_for(user_ids: list[int], kind: str) -> dict[int, Respondent]:
    """``respondent_for`` for many people at once (by user pk), in three queries however many they are."""
    from benchmark.models import Respondent

    if kind not in (ANNOTATOR, PARTICIPANT):
        raise ValueError(f"a person answers as an annotator or a participant, not as {kind!r}")
    rows = Respondent.objects.filter(kind=kind)
    found = {respondent.user_id: respondent for respondent in rows.filter(user_id__in=user_ids)}
    missing = [user_id for user_id in dict.fromkeys(user_ids) if user_id not in found]
    if missing:  # a row made meanwhile by someone else is kept, and read back below
        Respondent.objects.bulk_create([Respondent(kind=kind, user_id=pk) for pk in missing], ignore_conflicts=True)
        found.update((respondent.user_id, respondent) for respondent in rows.filter(user_id__in=missing))
    return found


def respondent_fields(evaluator: str, prompt_version: str = "") -> dict[str, Any]:
    """The ``Respondent`` fields of an evaluator named by one string (see the module docstring)."""
    if evaluator.strip().lower() == HUMAN_MEAN:
        return {"kind": ANNOTATOR, "user": None, "model": "", "label": evaluator, "prompt_version": prompt_version}
    return {"kind": JUDGE, "user": None, "model": evaluator, "label": "", "prompt_version": prompt_version}


def find_respondent(respondent_model: Any, fields: dict[str, Any]) -> Any:
    """The respondent with these fields (no user), created when missing; takes a model class so a
    migration can pass its historical one. Two writers creating it at once get the same row."""
    respondent, _ = respondent_model.objects.get_or_create(**fields)
    return respondent


def judge_respondent(model: str, prompt_version: str) -> Respondent:
    """The judge-kind respondent of ``model`` under ``prompt_version``."""
    from benchmark.models import Respondent

    return find_respondent(Respondent, {"kind": JUDGE, "user": None, "model": model, "label": "",
                                        "prompt_version": prompt_version})
