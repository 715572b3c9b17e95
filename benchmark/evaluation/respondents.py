"""Who answered: the respondent rows of judges and of scores named by one string.

Scores stored before instruments named their evaluator with one string: a judge model's name, or
``human mean`` for the mean of human ratings imported with an episode. Such a string becomes a
``Respondent``: ``human mean`` (any case) an annotator-kind respondent with that label and no
user, anything else a judge with that model name. The data migration, the Parley JSONL importer
(for the ``evaluations`` of older files) and the Sotopia importer all map it this way.
"""

from __future__ import annotations

from typing import Any

JUDGE = "judge"
ANNOTATOR = "annotator"
HUMAN_MEAN = "human mean"


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


def judge_respondent(model: str, prompt_version: str) -> Any:
    """The judge-kind respondent of ``model`` under ``prompt_version``."""
    from ..models import Respondent

    return find_respondent(Respondent, {"kind": JUDGE, "user": None, "model": model, "label": "",
                                        "prompt_version": prompt_version})
