"""ProMediate's evaluation pass (PM-8, PM-9, PM-12, PM-13, PM-15): the exact rows of a scripted pass on a
hand-built negotiation, caching and --force, the litellm path against the local fake server, and bad input."""

import io
import json
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.core.management import CommandError, call_command

from benchmark.evaluation.promediate import passes, prompts, scripted
from benchmark.evaluation.promediate.negotiation import Negotiation, Party, TopicInfo, Utterance, load_negotiation
from benchmark.models import (
    ActionType,
    Answer,
    Attitude,
    Episode,
    PairAgreement,
    Preference,
    Respondent,
    Scenario,
    Seat,
    Topic,
    TopicTag,
    Turn,
)
from tests.benchmark.import_checks import import_file
from tests.benchmark.promediate_world import negotiation_episode
from tests.builders import get_barrier
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

VERSION = passes.SCRIPTED_VERSION


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate", "--promediate", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def attitudes(episode) -> list[tuple]:
    return [
        (row.point, row.seat.character.name, row.topic.title, row.text)
        for row in Attitude.objects.filter(episode=episode)
        .select_related("seat__character", "topic")
        .order_by("point", "seat__position", "topic__position")
    ]


def pairs(episode, **filters) -> list[tuple]:
    return [
        (row.point, row.topic.title, row.seat_a.character.name, row.seat_b.character.name, row.overall)
        for row in PairAgreement.objects.filter(episode=episode, **filters)
        .select_related("topic", "seat_a__character", "seat_b__character")
        .order_by("point", "topic__position", "seat_a__position", "seat_b__position")
    ]


def test_the_scripted_pass_stores_the_exact_trace_of_the_hand_built_negotiation():
    episode = negotiation_episode()

    out, _ = run("--ids", str(episode.pk), "--judge-model", "scripted")

    assert f"Evaluated 1 episode(s) with scripted ({VERSION}): 1 evaluated, 0 cached, 0 failed." in out
    assert attitudes(episode) == [
        (0, "Alice", "Budget", "First choice: (a) Ten million; second choice: (b) Twelve million."),
        (0, "Alice", "Staffing plan", "First choice: (a) Hire two; second choice: (c) Hire none."),
        (0, "Bob", "Budget", "First choice: (b) Twelve million; second choice: (a) Ten million."),
        (0, "Bob", "Staffing plan", "First choice: (a) Hire two; second choice: (b) Hire four."),
        (0, "Carol", "Budget", "First choice: (b) Twelve million; second choice: (c) Fifteen million."),
        (0, "Carol", "Staffing plan", "First choice: (b) Hire four; second choice: (a) Hire two."),
        (2, "Alice", "Budget", "Prefers (b) Twelve million."),  # after turn 1
        (3, "Carol", "Staffing plan", "Prefers (c) Hire none."),
        (5, "Bob", "Budget", "Prefers (c) Fifteen million."),  # the mediator's turns 0 and 3 change nothing
        (5, "Bob", "Staffing plan", "Prefers (b) Hire four."),
        (6, "Carol", "Staffing plan", "Prefers (b) Hire four."),
    ]
    assert pairs(episode) == [
        (0, "Budget", "Alice", "Bob", 0.5),  # a vs b, b is Alice's second choice
        (0, "Budget", "Alice", "Carol", 0.5),
        (0, "Budget", "Bob", "Carol", 1.0),
        (0, "Staffing plan", "Alice", "Bob", 1.0),
        (0, "Staffing plan", "Alice", "Carol", 0.5),
        (0, "Staffing plan", "Bob", "Carol", 0.5),
        (2, "Budget", "Alice", "Bob", 1.0),  # only Alice's pairs, only on the budget
        (2, "Budget", "Alice", "Carol", 1.0),
        (3, "Staffing plan", "Alice", "Carol", 0.5),  # Carol's (c) is Alice's second choice
        (3, "Staffing plan", "Bob", "Carol", 0.0),
        (5, "Budget", "Alice", "Bob", 0.5),  # Alice's (b) carried from point 2; b and c are neighbours
        (5, "Budget", "Bob", "Carol", 0.5),
        (5, "Staffing plan", "Alice", "Bob", 0.5),
        (5, "Staffing plan", "Bob", "Carol", 0.5),
        (6, "Staffing plan", "Alice", "Carol", 0.5),
        (6, "Staffing plan", "Bob", "Carol", 1.0),  # an unordered pair: Carol spoke, the key is still (Bob, Carol)
    ]
    row = PairAgreement.objects.get(episode=episode, point=6, seat_b__position=3, seat_a__position=2)
    assert row.dimensions() == [1.0] * 5 and not row.failed and row.reasoning.startswith(scripted.SCRIPTED)
    assert {(row.judge, row.prompt_version) for row in PairAgreement.objects.all()} == {("scripted", VERSION)}
    mentions = {
        (tag.turn.index, tag.topic.title)
        for tag in TopicTag.objects.filter(kind="mention", value=True).select_related("turn", "topic")
    }
    assert mentions == {
        (1, "Budget"),
        (2, "Staffing plan"),
        (3, "Staffing plan"),
        (4, "Budget"),
        (4, "Staffing plan"),
        (5, "Staffing plan"),
    }
    assert TopicTag.objects.filter(kind="mention").count() == 6 * 2
    assert list(TopicTag.objects.filter(kind="addressed").values_list("turn__index", "topic__title", "value")) == [
        (3, "Budget", False),
        (3, "Staffing plan", True),
    ]
    mi = {
        a.question.key: (a.turn, a.value, a.number)
        for a in Answer.objects.filter(response__respondent__model="scripted", question__scope="turn").select_related(
            "question"
        )
    }
    assert mi == {
        "perception_alignment": (3, "na", None),
        "emotional_dynamics": (3, "na", None),
        "cognitive_challenges": (3, "3", 3.0),
        "communication_breakdowns": (3, "3", 3.0),
    }
    assert Respondent.objects.get(model="scripted", prompt_version=VERSION).kind == "judge"


def test_a_second_run_does_nothing_and_force_replaces_the_pass():
    episode = negotiation_episode()
    run("--ids", str(episode.pk), "--judge-model", "scripted")
    first = set(PairAgreement.objects.values_list("pk", flat=True))

    out, _ = run("--ids", str(episode.pk), "--judge-model", "scripted")
    assert "0 evaluated, 1 cached, 0 failed" in out
    assert set(PairAgreement.objects.values_list("pk", flat=True)) == first

    out, _ = run("--ids", str(episode.pk), "--judge-model", "scripted", "--force")
    assert "1 evaluated, 0 cached, 0 failed" in out
    assert PairAgreement.objects.count() == 16 and not first & set(PairAgreement.objects.values_list("pk", flat=True))
    assert Attitude.objects.count() == 11 and TopicTag.objects.count() == 14
    assert Answer.objects.filter(response__respondent__model="scripted").count() == 4


def test_mentions_derived_from_attitudes_are_a_reading_of_their_own():
    episode = negotiation_episode()
    run("--ids", str(episode.pk), "--judge-model", "scripted")
    run("--ids", str(episode.pk), "--judge-model", "scripted", "--mentions", "attitudes")

    derived = TopicTag.objects.filter(kind="mention", value=True, prompt_version=VERSION + passes.DERIVED_SUFFIX)
    assert sorted(derived.values_list("turn__index", "topic__title")) == [
        (1, "Budget"),
        (2, "Staffing plan"),
        (3, "Staffing plan"),
        (4, "Budget"),
        (4, "Staffing plan"),
        (5, "Staffing plan"),
    ]
    assert PairAgreement.objects.filter(prompt_version=VERSION).count() == 16  # the first reading is untouched


def test_an_episode_whose_scenario_has_no_topics_fails_alone_and_nothing_is_stored():
    good, bare = negotiation_episode(), negotiation_episode()
    Topic.objects.filter(scenario=bare.scenario).delete()

    with pytest.raises(CommandError, match="1 ProMediate evaluation"):
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command(
                "evaluate",
                "--promediate",
                "--ids",
                f"{good.pk},{bare.pk}",
                "--judge-model",
                "scripted",
                stdout=out,
                stderr=err,
            )
        finally:
            assert f"episode {bare.pk}: its scenario" in err.getvalue() and "has no topics" in err.getvalue()
    assert not PairAgreement.objects.filter(episode=bare).exists()
    assert PairAgreement.objects.filter(episode=good).count() == 16


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mentions", "attitudes"], "--mentions applies only with --promediate."),
        (["--promediate", "--interview"], "--promediate runs on its own; leave out --interview and --blind."),
        (["--promediate", "--judge-model", " "], "--model cannot be empty"),
        (["--promediate", "--concurrency", "0"], "--concurrency must be at least 1, got 0."),
    ],
)
def test_bad_options_are_refused_with_a_clear_message(args, message):
    episode = negotiation_episode()
    with pytest.raises(CommandError) as refused:
        call_command("evaluate", "--ids", str(episode.pk), *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert message in str(refused.value)
    assert not PairAgreement.objects.exists()


def test_an_unknown_mentions_choice_is_refused_by_argparse():
    with pytest.raises(CommandError, match="invalid choice: 'tags'"):
        call_command("evaluate", "--promediate", "--mentions", "tags", stdout=io.StringIO(), stderr=io.StringIO())


# --- the litellm path, against the local fake OpenAI-compatible server ------------------------------------

SHORT = (
    ("Mediator", "Welcome everyone! Let's discuss!"),
    ("Alice", "Twelve million for the budget suits me."),
    ("Carol", "Nobody new should be hired."),
    ("Mediator", "Carol, what would make hiring acceptable to you?"),
)


def _json(data) -> str:
    return json.dumps(data)


def script_the_model(fake_llm) -> None:
    mark = "The speech to read, by {}:"
    fake_llm.reply_when(
        mark.format("Alice"), _json({"attitudes": {"T1": "Wants (b) twelve million.", "T2": "No Mention"}})
    )
    fake_llm.reply_when(
        mark.format("Carol"), _json({"attitudes": {"T1": "no explicit mention.", "T2": "Insists on (c): hire nobody."}})
    )
    fake_llm.reply_when("Insists on (c)", "They seem far apart, I would say.")  # J2 never answers in JSON here
    fake_llm.reply_when(
        "Where the first party stands:",
        _json(
            {
                "reasoning": "Close.",
                "shared_goals": 0.8,
                "common_understanding": 0.6,
                "agreement_on_terms": 0.4,
                "tone_and_willingness": 0.9,
                "shared_decision_making": 0.5,
                "overall_consensus_score": 0.7,
            }
        ),
    )
    fake_llm.reply_when("The turn, by Alice", _json({"mentions": {"T1": True, "T2": False}}))
    fake_llm.reply_when("The turn, by Carol", _json({"mentions": {"T1": False, "T2": True}}))
    fake_llm.reply_when("The turn, by Mediator", _json({"mentions": {"T1": False, "T2": False}}))
    fake_llm.reply_when(
        "dealt with four kinds of problem",
        _json(
            {
                "perception_alignment": {"reasoning": "Carol and Alice see staffing differently.", "score": 4},
                "emotional_dynamics": {"reasoning": "No one was upset.", "score": "na"},
                "cognitive_challenges": {"reasoning": "Carol's all-or-nothing view.", "score": 3},
                "communication_breakdowns": {"reasoning": "Bob has said nothing.", "score": "N/A"},
            }
        ),
    )
    fake_llm.reply_when("when it addresses none of them", _json({"addressed": ["T2"]}))


def test_the_litellm_pass_stores_the_judges_readings_and_a_non_json_pair_reply_as_failed(fake_llm):
    episode = negotiation_episode(lines=SHORT)
    script_the_model(fake_llm)

    result = async_to_sync(passes.evaluate_negotiation)(episode.pk, model=FAKE_MODEL, retries=0, concurrency=2)

    assert result.outcome == passes.EVALUATED, result.error
    assert result.counts["failed pairs"] == 2
    rows = attitudes(episode)
    assert rows[6:] == [
        (2, "Alice", "Budget", "Wants (b) twelve million."),
        (3, "Carol", "Staffing plan", "Insists on (c): hire nobody."),
    ]
    assert pairs(episode, failed=True) == [
        (3, "Staffing plan", "Alice", "Carol", None),
        (3, "Staffing plan", "Bob", "Carol", None),
    ]
    failed = PairAgreement.objects.filter(episode=episode, failed=True).first()
    assert failed.dimensions() == [None] * 5 and failed.reasoning.startswith("Unusable reply:")
    assert pairs(episode, point=2) == [(2, "Budget", "Alice", "Bob", 0.7), (2, "Budget", "Alice", "Carol", 0.7)]
    scored = PairAgreement.objects.filter(episode=episode, point=0).first()
    assert (scored.dimensions(), scored.overall, scored.reasoning) == ([0.8, 0.6, 0.4, 0.9, 0.5], 0.7, "Close.")
    assert {(row.judge, row.prompt_version) for row in PairAgreement.objects.all()} == {
        (FAKE_MODEL, prompts.PROMPT_VERSION)
    }
    assert sorted(TopicTag.objects.filter(kind="mention", value=True).values_list("turn__index", "topic__title")) == [
        (1, "Budget"),
        (2, "Staffing plan"),
    ]
    assert list(TopicTag.objects.filter(kind="addressed", value=True).values_list("turn__index", "topic__title")) == [
        (3, "Staffing plan")
    ]
    mi = {
        a.question.key: (a.turn, a.value, a.number, a.reasoning)
        for a in Answer.objects.filter(response__respondent__model=FAKE_MODEL).select_related("question")
    }
    assert mi["perception_alignment"] == (3, "4", 4.0, "Carol and Alice see staffing differently.")
    assert mi["emotional_dynamics"][1:3] == ("na", None)
    assert mi["communication_breakdowns"][1:3] == ("na", None)
    prompts_sent = fake_llm.prompts
    assert any("Carol: Nobody new should be hired." in p and "The mediator's intervention" in p for p in prompts_sent)
    assert all(body["temperature"] == 0 for body in fake_llm.requests)


def test_an_unusable_attitude_reply_fails_the_episode_and_stores_nothing(fake_llm):
    episode = negotiation_episode(lines=SHORT)
    script_the_model(fake_llm)
    fake_llm._rules.insert(0, ("The speech to read, by Carol:", "Carol wants nobody hired."))

    result = async_to_sync(passes.evaluate_negotiation)(episode.pk, model=FAKE_MODEL, retries=0, concurrency=2)

    assert result.outcome == passes.FAILED
    assert result.error.startswith("attitudes of turn 2: ") and "did not return usable JSON" in result.error
    assert not Attitude.objects.exists() and not PairAgreement.objects.exists() and not TopicTag.objects.exists()
    assert not Answer.objects.exists()


def test_the_scripted_extractor_reads_the_nearest_topic_word_before_an_option_marker():
    episode = negotiation_episode()
    negotiation = load_negotiation(episode.pk)
    found = scripted.extract_attitudes(negotiation, "Budget (c) is fine by me and staffing plan (b) as well. (a)!")
    assert found == {"T1": "Prefers (c) Fifteen million.", "T2": "Prefers (b) Hire four."}
    assert scripted.extract_attitudes(negotiation, "We hire (b) people.") == {"T1": None, "T2": None}


# --- a real case, imported ----------------------------------------------------------------------------

HMO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "promediate" / "hmo.json"


def hmo_episode(lines):
    import_file(HMO)
    scenario = Scenario.objects.get(external_id="promediate-hmo")
    episode = Episode.objects.create(
        scenario=scenario,
        barrier=get_barrier("none"),
        team=scenario.team,
        source=Episode.Source.SIMULATED,
        status=Episode.Status.FINISHED,
        turn_cap=61,
    )
    seats = {
        role.character.name: Seat.objects.create(
            episode=episode, position=role.position, role=role, character=role.character
        )
        for role in scenario.roles.select_related("character")
    }
    Turn.objects.bulk_create(
        Turn(episode=episode, index=index, seat=seats[speaker], content=text)
        for index, (speaker, text) in enumerate(lines)
    )
    return episode


def test_an_imported_case_is_evaluated_from_its_topics_and_preferences(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}
    episode = hmo_episode(
        (
            ("Mediator", "Welcome everyone! Let's discuss!"),
            ("Lee", "On Discount Pricing Schedule, I can move to option (b), if that helps us close."),
            ("Mediator", "Lee, thank you. Alex and Jamie, where do you stand on the discount pricing schedule?"),
            ("Alex", "On Market Share Target Tiers, I must insist on option (b). That is where I stand."),
        )
    )

    out, _ = run("--ids", str(episode.pk))  # no judge configured: the scripted heuristics

    assert "1 evaluated" in out
    seats = {seat.character.name: seat for seat in episode.seats.select_related("character")}
    starting = Attitude.objects.filter(episode=episode, point=0)
    # The eleven ranked stances (Alex 5, Jamie 4, Lee 2: the importer ranks Jamie's "First choice: five-year
    # contract", the option's own words) in words, and three only worded, read by the option named after "first
    # choice" or "prefer": Lee's "You prefer open formulary", "You prefer a two-year contract" and "First
    # choice: Standard support for physician". Jamie's marketing words ("Depends on formulary status") name no
    # choice: no starting stance there.
    assert starting.count() == 14
    assert {(row.seat.character.name, row.topic.title, row.text[:12]) for row in starting if row.text[0] == "P"} == {
        ("Lee", "Formulary Status", "Prefers (a) "),
        ("Lee", "Contract Term", "Prefers (a) "),
        ("Lee", "Marketing Support", "Prefers (a) "),
    }
    assert starting.get(seat=seats["Alex"], topic__title="Formulary Status").text == (
        "First choice: (c) Exclusive; second choice: (b) Dual; unacceptable: (a) Open."
    )
    later = Attitude.objects.filter(episode=episode, point__gt=0).order_by("point")
    assert [(row.point, row.seat.character.name, row.topic.title, row.text[:13]) for row in later] == [
        (2, "Lee", "Discount Pricing Schedule", "Prefers (b) 4"),
        (4, "Alex", "Market Share Target Tiers", "Prefers (b) $"),
    ]
    assert PairAgreement.objects.filter(episode=episode, point=0).count() == 5 * 3
    assert set(
        PairAgreement.objects.filter(episode=episode, point=2).values_list(
            "seat_a__role__position", "seat_b__role__position"
        )
    ) == {(0, 2), (1, 2)}
    assert Answer.objects.filter(response__episode=episode, turn=2, question__scope="turn").count() == 4


def test_a_worded_starting_stance_is_read_by_the_model_from_the_brief(fake_llm):
    episode = negotiation_episode(lines=SHORT)
    Preference.objects.filter(role__character__first_name="Carol", topic__title="Budget").update(
        ranking=[], text="Carol would go as high as fifteen million if she must."
    )
    script_the_model(fake_llm)
    fake_llm._rules.insert(
        0,
        (
            "The private brief of Carol",
            _json({"attitudes": {"T1": "Accepts up to (c) fifteen million.", "T2": "No mention"}}),
        ),
    )

    result = async_to_sync(passes.evaluate_negotiation)(episode.pk, model=FAKE_MODEL, retries=0)

    assert result.outcome == passes.EVALUATED, result.error
    carol = Attitude.objects.get(episode=episode, point=0, seat__character__first_name="Carol", topic__title="Budget")
    assert carol.text == "Accepts up to (c) fifteen million."
    brief = next(p for p in fake_llm.prompts if "The private brief of Carol" in p)
    assert "On Budget:\nCarol would go as high as fifteen million if she must." in brief


def pure_negotiation() -> Negotiation:
    """Two parties on one topic with numbered options, built without the database."""
    topic = TopicInfo(1, "T1", "Project time frame", "", (("1", "One year"), ("2", "Two years"), ("3", "Three years")))
    return Negotiation(
        episode_id=0,
        context="",
        parties=(Party(10, 1, "Chung"), Party(11, 2, "Rossi")),
        mediator=0,
        topics=(topic,),
        stances={},
        utterances=(),
        interventions=(),
    )


def test_the_scripted_judges_read_numbered_options_and_neighbours():
    negotiation = pure_negotiation()
    topic = negotiation.topics[0]
    assert scripted.extract_attitudes(negotiation, "On the project time frame, Option #3 is best.") == {
        "T1": "Prefers (3) Three years."
    }
    assert scripted.score_pair(topic, "Prefers (2) Two years.", "Prefers (3) Three years.")[0] == 0.5
    assert scripted.score_pair(topic, "Prefers (1) One year.", "Prefers (3) Three years.")[0] == 0.0
    assert scripted.score_pair(topic, "First choice: (1); second choice: (3).", "Prefers (3).")[0] == 0.5
    assert scripted.score_pair(topic, None, "Prefers (3).") == (
        0.0,
        f"{scripted.SCRIPTED}: one of the two states no option on this topic.",
    )
    assert scripted.brief_attitude(topic, "You prefer a shorter frame of one year.") == "Prefers (1) One year."


def test_the_scripted_mi_judge_scores_what_an_intervention_shows_of_a_problem_that_arose():
    negotiation = pure_negotiation()
    angry = (
        Utterance(1, 1, "Chung", "I am frustrated, you never listen.", False),
        Utterance(2, 2, "Rossi", "Well, I do.", False),
    )
    rated = scripted.rate_intervention(negotiation, angry, "Chung, I understand how you feel. What if we trade?")
    assert {key: score for key, (score, _) in rated.items()} == {
        "perception_alignment": None,
        "emotional_dynamics": 5,
        "cognitive_challenges": 5,
        "communication_breakdowns": None,
    }
    rated = scripted.rate_intervention(negotiation, angry, "Moving on.")
    assert rated["emotional_dynamics"][0] == 1 and rated["cognitive_challenges"][0] == 1


def test_a_turn_with_no_words_costs_no_call_and_mentions_nothing(fake_llm):
    episode = negotiation_episode(lines=(*SHORT, ("Bob", "placeholder")))
    Turn.objects.filter(episode=episode, index=4).update(action_type=ActionType.NONE, content="")
    script_the_model(fake_llm)

    result = async_to_sync(passes.evaluate_negotiation)(episode.pk, model=FAKE_MODEL, retries=0)

    assert result.outcome == passes.EVALUATED, result.error
    assert not any("by Bob" in prompt for prompt in fake_llm.prompts)
    assert list(TopicTag.objects.filter(turn__index=4, kind="mention").values_list("value", flat=True)) == [False] * 2
    assert not PairAgreement.objects.filter(episode=episode, point=5).exists()
