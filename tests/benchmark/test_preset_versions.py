"""A preset whose questions change in the code becomes a new version; the old one keeps its words."""

import dataclasses

import pytest

from benchmark.instruments import presets
from benchmark.models import Instrument

pytestmark = pytest.mark.django_db


def test_installing_a_preset_twice_gives_the_same_instrument():
    first = presets.install_preset(presets.CHAT_PRESET)
    versions = Instrument.objects.filter(preset=presets.CHAT_PRESET).count()
    assert presets.install_preset(presets.CHAT_PRESET) == first
    assert Instrument.objects.filter(preset=presets.CHAT_PRESET).count() == versions


def test_the_migrated_chat_preset_keeps_the_words_its_participants_answered_and_new_studies_get_todays():
    """Migrations made version 1 with the words of its time; today's words are the next version."""
    migrated = Instrument.objects.get(preset=presets.CHAT_PRESET, version=1)
    assert "the other side" in migrated.questions.get(key="mutual_understanding").prompt
    today = presets.install_preset(presets.CHAT_PRESET)
    assert today.version == 2 and "the other side" not in today.questions.get(key="mutual_understanding").prompt


def test_a_preset_reworded_in_the_code_is_installed_as_its_next_version(monkeypatch):
    first = presets.install_preset(presets.CHAT_PRESET)
    old_prompts = list(first.questions.order_by("position").values_list("prompt", flat=True))
    spec = presets.CHAT_QUESTIONNAIRE
    reworded = dataclasses.replace(spec, questions=(
        dataclasses.replace(spec.questions[0], prompt="How far did you get with what you wanted?"),
        *spec.questions[1:],
    ))
    monkeypatch.setitem(presets.PARTICIPANT_PRESETS, presets.CHAT_PRESET, reworded)

    second = presets.install_preset(presets.CHAT_PRESET)

    assert second != first and second.version == first.version + 1 and second.team_id is None
    assert second.questions.order_by("position").first().prompt == "How far did you get with what you wanted?"
    assert list(first.questions.order_by("position").values_list("prompt", flat=True)) == old_prompts
    assert presets.install_preset(presets.CHAT_PRESET) == second
