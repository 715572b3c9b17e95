"""Neutralising scenario contexts: the check, the cache per prompt version, researchers' edits, offline."""

import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import CommandError, call_command
from django.urls import reverse

from benchmark.models import NeutralContext, Scenario
from benchmark.scenarios import neutralise
from tests.builders import make_character, make_scenario, make_user
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

ORIGINAL = "Dmitri is selling a used road bike listed at 220 euros; Aisha has come to see it on a tight budget."
NEUTRAL = "Two people meet outside an apartment building about a bicycle listed online."
PROMPT_MARK = "Rewrite the description of a social situation"


@pytest.fixture
def scenario() -> Scenario:
    return make_scenario(
        codename="used-bike",
        context=ORIGINAL,
        roles=[
            {
                "goal": "Sell the bike for at least 200 euros.",
                "character": make_character(secret="Crashed it in 2019."),
            },
            {"goal": "Buy the bike for 160 euros or less.", "private_knowledge": "Has 175 euros in cash."},
        ],
    )


def answer(text: str) -> str:
    return json.dumps({"context": text})


def run(scenario: Scenario, **options) -> neutralise.NeutralisationResult:
    options.setdefault("model", FAKE_MODEL)
    return async_to_sync(neutralise.neutralise_scenario)(scenario, **options)


def test_a_new_sentence_replaces_the_context_and_the_original_is_kept(fake_llm, scenario):
    fake_llm.reply_when(PROMPT_MARK, answer(NEUTRAL))

    result = run(scenario)

    scenario.refresh_from_db()
    assert result.outcome == neutralise.GENERATED
    assert (scenario.context, scenario.original_context) == (NEUTRAL, ORIGINAL)
    row = NeutralContext.objects.get(scenario=scenario)
    assert (row.text, row.model, row.prompt_version, row.edited) == (
        NEUTRAL, FAKE_MODEL, neutralise.NEUTRALISE_PROMPT_VERSION, False
    )
    assert ORIGINAL in fake_llm.prompts[0]
    assert fake_llm.requests[0]["temperature"] == 0


def test_an_existing_original_is_never_overwritten_and_is_what_gets_rewritten(fake_llm):
    scenario = make_scenario(context="An earlier rewrite.", original_context=ORIGINAL)
    NeutralContext.objects.create(scenario=scenario, prompt_version="older", model="m", text="An earlier rewrite.")
    fake_llm.reply_when(PROMPT_MARK, answer(NEUTRAL))

    run(scenario)

    scenario.refresh_from_db()
    assert (scenario.context, scenario.original_context) == (NEUTRAL, ORIGINAL)
    assert ORIGINAL in fake_llm.prompts[0] and "An earlier rewrite." not in fake_llm.prompts[0]


def test_sotopia_viewer_markup_is_removed_before_rewriting(fake_llm):
    raw = 'Two friends plan a trip. <p viewer="environment">One of them is secretly broke.</p>'
    scenario = make_scenario(context="Two friends plan a trip.", original_context=raw)
    fake_llm.reply_when(PROMPT_MARK, answer("Two friends talk about a trip."))

    run(scenario)

    assert "secretly broke" not in fake_llm.prompts[0]


def test_the_sentence_is_cached_per_prompt_version(fake_llm, scenario):
    fake_llm.reply_when(PROMPT_MARK, answer(NEUTRAL))
    run(scenario)
    fake_llm.reset()

    result = run(scenario)

    assert result.outcome == neutralise.CACHED
    assert result.after == NEUTRAL
    assert fake_llm.requests == []


def test_a_new_prompt_version_writes_a_new_sentence(fake_llm, scenario, monkeypatch):
    fake_llm.reply_when(PROMPT_MARK, answer(NEUTRAL))
    run(scenario)
    monkeypatch.setattr(neutralise, "NEUTRALISE_PROMPT_VERSION", "neutral-next")

    result = run(scenario)

    assert result.outcome == neutralise.GENERATED
    assert len(fake_llm.requests) == 2
    assert set(scenario.neutral_contexts.values_list("prompt_version", flat=True)) == {
        "neutral-2025.1", "neutral-next"
    }


def test_force_rewrites_a_cached_sentence(fake_llm, scenario):
    fake_llm.enqueue(text=answer(NEUTRAL))
    fake_llm.enqueue(text=answer("Two people look at a bicycle together."))
    run(scenario)

    result = run(scenario, force=True)

    scenario.refresh_from_db()
    assert result.outcome == neutralise.GENERATED
    assert scenario.context == "Two people look at a bicycle together."
    assert scenario.original_context == ORIGINAL
    assert NeutralContext.objects.filter(scenario=scenario).count() == 1


def test_an_edited_sentence_is_never_regenerated_even_with_force(fake_llm, scenario):
    fake_llm.reply_when(PROMPT_MARK, answer(NEUTRAL))
    run(scenario)
    NeutralContext.objects.filter(scenario=scenario).update(text="Edited by a researcher.", edited=True)
    fake_llm.reset()

    result = run(scenario, force=True)

    scenario.refresh_from_db()
    assert result.outcome == neutralise.KEPT
    assert scenario.context == "Edited by a researcher."
    assert fake_llm.requests == []


def test_a_context_rewritten_by_hand_is_kept_and_recorded_as_edited(fake_llm):
    scenario = make_scenario(context="Two people meet about a bicycle.", original_context=ORIGINAL)

    result = run(scenario, force=True)

    scenario.refresh_from_db()
    assert result.outcome == neutralise.KEPT
    assert scenario.context == "Two people meet about a bicycle."
    row = NeutralContext.objects.get(scenario=scenario)
    assert (row.model, row.edited, row.text) == (neutralise.BY_HAND, True, "Two people meet about a bicycle.")
    assert fake_llm.requests == []


def test_a_leaked_private_figure_is_named_in_the_repair(fake_llm, scenario):
    fake_llm.enqueue(text=answer("A seller asks 200 euros for a bike."))
    fake_llm.enqueue(text=answer(NEUTRAL))

    result = run(scenario)

    assert result.outcome == neutralise.GENERATED
    assert "gives away 200, a figure from one side's goal or private knowledge" in fake_llm.prompts[1]


def test_a_sentence_still_bad_after_its_repair_fails_and_changes_nothing(fake_llm, scenario):
    fake_llm.reply_when(PROMPT_MARK, answer("One sentence. And another."))

    result = run(scenario)

    scenario.refresh_from_db()
    assert result.outcome == neutralise.FAILED
    assert "ONE sentence" in result.error
    assert scenario.context == ORIGINAL
    assert not NeutralContext.objects.exists()


def test_a_dry_run_writes_nothing(fake_llm, scenario):
    fake_llm.reply_when(PROMPT_MARK, answer(NEUTRAL))

    result = run(scenario, dry_run=True)

    scenario.refresh_from_db()
    assert (result.outcome, result.before, result.after) == (neutralise.GENERATED, ORIGINAL, NEUTRAL)
    assert scenario.context == ORIGINAL
    assert not NeutralContext.objects.exists()


def test_the_scripted_model_rewrites_offline_with_the_heuristic(fake_llm, scenario):
    result = run(scenario, model="scripted")

    scenario.refresh_from_db()
    assert result.outcome == neutralise.GENERATED
    assert scenario.context == "Dmitri is selling a used road bike."
    row = NeutralContext.objects.get(scenario=scenario)
    assert (row.model, row.prompt_version) == ("scripted", neutralise.HEURISTIC_VERSION)
    assert fake_llm.requests == []


def test_a_heuristic_sentence_does_not_count_as_a_model_rewrite(fake_llm, scenario):
    run(scenario, model="scripted")
    fake_llm.reply_when(PROMPT_MARK, answer(NEUTRAL))

    result = run(scenario)

    assert result.outcome == neutralise.GENERATED
    assert Scenario.objects.get(pk=scenario.pk).context == NEUTRAL


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Leo paid the whole dinner bill for five friends and wants it split evenly. Sam ate little.",
         "Leo paid the whole dinner bill for five friends."),
        ("Jordan and Ines are moving in together and must decide how to split the 1,400-euro rent.",
         "Jordan and Ines are moving in together."),
        ("Two neighbours meet in the stairwell to talk about a noisy party.",
         "Two neighbours meet in the stairwell to talk about a noisy party."),
        ("Oskar needs someone to look after his cat while he is away.",
         "Two strangers meet to talk about the plant watering."),
    ],
)
def test_the_heuristic_cuts_before_goals_and_figures(source, expected):
    assert neutralise.heuristic_neutral_sentence(source, topic="plant watering", relationship=0) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "the sentence is empty"),
        ("Two people meet. They talk.", "write exactly ONE sentence; the reply has 2"),
        ("Two people meet\nabout a bike.", "write exactly ONE sentence; the reply has 2"),
        ("x" * 200, "more than the original's"),
        ("Someone wants 1,500 for it.", "gives away 1500"),
        (None, "'context' must be a string"),
    ],
)
def test_the_check_refuses_what_cannot_replace_a_context(text, problem):
    with pytest.raises(ValueError, match=problem):
        neutralise.check_neutral_sentence(
            text, original="A long enough original sentence about a bike sale for a fair price.",
            private_texts=["Sell for 1500 euros."],
        )


def test_the_check_accepts_titles_and_public_figures():
    sentence = neutralise.check_neutral_sentence(
        "Dr. Lee and a patient meet at a 24-hour clinic.",
        original="Dr. Lee and a patient meet at a 24-hour clinic; the patient wants 3 days off.",
        private_texts=["Get 3 days off."],
    )
    assert sentence == "Dr. Lee and a patient meet at a 24-hour clinic."


# --- the command ---------------------------------------------------------------------------------------


def neutralise_command(*args: str) -> str:
    out = StringIO()
    call_command("neutralise", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_the_command_neutralises_chosen_scenarios_by_id_or_codename(fake_llm, scenario, settings):
    settings.PARLEY_MODELS = {"neutralizer": FAKE_MODEL}
    other = make_scenario(codename="late-music", context="Ruth has been kept awake by music from the flat above.")
    untouched = make_scenario(context="Not chosen.")
    fake_llm.reply_when(PROMPT_MARK, answer("Two neighbours talk."))

    out = neutralise_command("--scenarios", f"{scenario.pk},late-music")

    assert out.splitlines()[-1] == "2 scenario(s): 2 rewritten, 0 cached, 0 kept (edited by hand), 0 failed."
    assert {s.context for s in Scenario.objects.filter(pk__in=[scenario.pk, other.pk])} == {"Two neighbours talk."}
    assert Scenario.objects.get(pk=untouched.pk).context == "Not chosen."


def test_the_command_dry_run_prints_before_and_after(fake_llm, scenario):
    out = neutralise_command("--all", "--dry-run", "--model", "scripted")

    assert f"before: {ORIGINAL}" in out
    assert "after:  Dmitri is selling a used road bike." in out
    assert "dry run, nothing was saved." in out
    assert Scenario.objects.get(pk=scenario.pk).context == ORIGINAL


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "Say which scenarios to neutralise"),
        (["--all", "--scenarios", "1"], "Say which scenarios to neutralise"),
        (["--scenarios", "no-such-scenario"], "No scenario with id or codename no-such-scenario"),
        (["--all", "--concurrency", "0"], "--concurrency must be at least 1"),
    ],
)
def test_the_command_refuses_bad_input_clearly(scenario, args, message):
    with pytest.raises(CommandError, match=message):
        neutralise_command(*args)


def test_the_command_exits_non_zero_when_a_scenario_fails(fake_llm, scenario):
    fake_llm.reply_when(PROMPT_MARK, "not JSON at all")

    with pytest.raises(CommandError, match="1 scenario\\(s\\) could not be neutralised"):
        neutralise_command("--all", "--model", FAKE_MODEL)


# --- the admin -----------------------------------------------------------------------------------------


@pytest.fixture
def admin_client(client):
    client.force_login(make_user(superuser=True))
    return client


def test_saving_an_edited_text_in_the_admin_marks_it_and_applies_it(admin_client, scenario):
    row = NeutralContext.objects.create(
        scenario=scenario, prompt_version=neutralise.NEUTRALISE_PROMPT_VERSION, model=FAKE_MODEL, text=NEUTRAL
    )
    url = reverse("admin:benchmark_neutralcontext_change", args=[row.pk])

    response = admin_client.post(url, {"text": "Two people look at a bicycle."})

    assert response.status_code == 302
    row.refresh_from_db()
    scenario.refresh_from_db()
    assert (row.text, row.edited) == ("Two people look at a bicycle.", True)
    assert (scenario.context, scenario.original_context) == ("Two people look at a bicycle.", ORIGINAL)


def test_saving_without_changing_the_text_does_not_mark_it_edited(admin_client, scenario):
    row = NeutralContext.objects.create(scenario=scenario, prompt_version="v", model=FAKE_MODEL, text=NEUTRAL)

    admin_client.post(reverse("admin:benchmark_neutralcontext_change", args=[row.pk]), {"text": NEUTRAL})

    row.refresh_from_db()
    assert row.edited is False


def test_a_neutral_context_added_in_the_admin_is_an_edit(admin_client, scenario):
    response = admin_client.post(
        reverse("admin:benchmark_neutralcontext_add"),
        {"scenario": scenario.pk, "prompt_version": "by-hand-1", "model": "by hand", "text": "Two people meet."},
    )

    assert response.status_code == 302
    assert NeutralContext.objects.get(scenario=scenario).edited is True
    assert Scenario.objects.get(pk=scenario.pk).context == "Two people meet."
