"""The participant's questions page draws each answer with its kind's widget partial, the annotator page's own."""

import pytest
from django.template.loader import render_to_string

from benchmark.instruments.forms import InstrumentForm
from benchmark.models import Instrument
from tests.annotator.builders import make_question

pytestmark = pytest.mark.django_db

CHOICES = {"choices": [{"value": "calm", "label": "Calm"}, {"value": "tense", "label": "Tense"}]}


def _page(data=None) -> str:
    instrument = Instrument.objects.create(name="Widgets")
    questions = [
        ("short", "slider", {"min": 0, "max": 4, "step": 1, "labels": {"min": "none", "max": "all"}}),
        ("long", "slider", {"min": 0, "max": 100, "step": 5}),
        ("moods", "multi_label", CHOICES),
        ("note", "text", {"max_length": 50}),
    ]
    for position, (key, kind, options) in enumerate(questions):
        make_question(instrument=instrument, position=position, key=key, kind=kind, prompt=f"{key}?", options=options)
    form = InstrumentForm(instrument, data)
    if data is not None:
        form.is_valid()
    return "".join(render_to_string("instruments/_question.html", {"field": field}) for field in form)


def test_each_kind_draws_its_participant_widget():
    page = _page()

    assert page.count('type="radio" name="short"') == 5  # a short slider's points are buttons, its ends named
    assert "0 – none" in page and "4 – all" in page
    assert '<input type="number" id="long" name="long" min="0" max="100" step="5" value="">' in page
    assert page.count('type="checkbox" name="moods"') == 2
    assert '<textarea id="note" name="note" rows="3" maxlength="50">' in page


def test_posted_answers_are_shown_again():
    page = _page({"short": "3", "long": "55", "moods": ["tense"], "note": "fine"})

    assert 'name="short" value="3" checked' in page
    assert 'name="long" min="0" max="100" step="5" value="55"' in page
    assert 'name="moods" value="tense" checked' in page and 'value="calm" checked' not in page
    assert ">fine</textarea>" in page
