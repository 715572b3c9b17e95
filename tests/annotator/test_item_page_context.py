"""The item page's template gets plain values only: no model instance, from which a template could walk
to the episode's barrier, models or evaluations (``{{ assignment.item.episode.barrier.key }}``)."""

import dataclasses
from typing import Any

import pytest
from django.db import models

from annotator import drafts
from annotator.answer_forms import FormValues
from annotator.assignment import claim_next
from annotator.item_page import ItemPage
from benchmark.instruments.presets import install_preset
from tests.annotator.builders import make_study
from tests.builders import make_user

pytestmark = pytest.mark.django_db


def model_objects(value: Any, path: str = "context") -> list[str]:
    """Paths to every model instance, queryset or manager reachable through dicts, sequences and dataclasses."""
    if isinstance(value, (models.Model, models.QuerySet, models.Manager)):
        return [f"{path}: {type(value).__name__}"]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in model_objects(item, f"{path}[{key!r}]")]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [found for number, item in enumerate(value) for found in model_objects(item, f"{path}[{number}]")]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [
            found for field in dataclasses.fields(value)
            for found in model_objects(getattr(value, field.name), f"{path}.{field.name}")
        ]
    return []


@pytest.mark.parametrize("preset", ["socialveil", "sotopia-eval", "shrec-spans", "agentsense"])
def test_the_item_page_context_holds_no_model_instance(preset):
    annotator = make_user()
    study = make_study(instrument=install_preset(preset), items=1, overlap=1, annotators=[annotator])
    assignment = claim_next(study, annotator)
    drafts.save_draft(assignment, ItemPage(assignment).parse({}, complete=False), revision=0, seconds=5)
    page = ItemPage(assignment)
    assert page.annotation is not None

    context = page.context(annotator, FormValues.stored(page.annotation))

    assert model_objects(context) == []
