"""Product modules keep no code that only tests call: it reads as a rule the product follows when it is not.

The review behind issue "The first hour with Parley" found these; each was deleted (its logic moved
into the tests that needed it). Test-only helpers live under ``tests/``.
"""

import importlib

import pytest

REMOVED = [
    ("annotator.assignment", "release_expired"),  # claiming already treats a lapsed claim's slot as free
    ("benchmark.instruments.checks", "check_scheme"),  # check_questions is the one check forms and admin use
    ("chat.state_machine", "wait_for_agent_turns"),  # only the chat tests waited on agent tasks
    ("chat.questionnaire", "validate_questionnaire"),  # questions are checked by benchmark.instruments.checks
    ("chat.models", "default_questionnaire"),  # the default is the preset instrument chat-questionnaire
    ("chat.questionnaire", "questions_from_json"),  # the study form picks an instrument; files: instrument_builder
    ("chat.questionnaire", "save_questionnaire"),  # instruments change in the builder, as new versions once answered
]


@pytest.mark.parametrize(("module", "name"), REMOVED)
def test_test_only_function_is_not_in_the_product(module, name):
    assert not hasattr(importlib.import_module(module), name)


def test_agent_context_has_no_unused_partner_name():
    from benchmark.agents.prompt import AgentContext

    assert not hasattr(AgentContext, "partner_name")
