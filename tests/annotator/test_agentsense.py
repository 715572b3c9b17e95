"""The AgentSense preset in an annotation study: every goal of every character asked yes / no with a reason,
the scenario's probes as multiple-choice questions, and the report against self, other and external answers.

The episode has three seats; the first character has two goals. Annotators are blind to the models
and to every other respondent's answers; the probes' correct options never reach the page.
"""

import csv
import io
import zipfile

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator import drafts
from annotator.assignment import claim_next
from annotator.exports import export_lines
from annotator.item_page import ItemPage
from annotator.models import Annotation, Membership
from annotator.reports import build_report
from annotator.reports.display import number as shown_number
from annotator.reports.documents import render_bundle, render_tables_zip
from annotator.reports.tables import report_tables
from benchmark.evaluation.interviews.instruments import goals_instrument, probes_instrument
from benchmark.instruments.presets import install_preset
from benchmark.models import Answer, Goal, Probe, Respondent, Response
from tests.annotator.builders import make_study
from tests.builders import make_character, make_episode, make_researcher, make_scenario, make_user

pytestmark = pytest.mark.django_db

PLANTED_MODEL = "planted-model-omega-7"
PLANTED_REASONING = "Planted reasoning of an interviewed agent."
PLANTED_RATIONALE = "Planted rationale of another annotator."


@pytest.fixture
def episode():
    """A three-party episode: Ada has two goals, Bo and Cy one each; two probes, about Ada's reason and Bo's
    private information (a probe about a goal is not asked of annotators: test_blinding.py)."""
    scenario = make_scenario(
        context="Three neighbours meet to decide what to do with the shared garden.",
        roles=[
            {"goal": ["Get the vegetable beds approved.", "Keep Bo on your side."],
             "character": make_character(first_name="Ada", last_name="Lind")},
            {"goal": ["Find out what the repairs will cost."],
             "character": make_character(first_name="Bo", last_name="Berg")},
            {"goal": ["Avoid paying anything this year."],
             "character": make_character(first_name="Cy", last_name="Holm")},
        ],
    )
    roles = list(scenario.roles.order_by("position"))
    Probe.objects.create(scenario=scenario, about=roles[0], position=0, topic="reason",
                         text="Why does Ada want the beds?", options=["A pond", "Fresh food", "A shed"], correct=1)
    Probe.objects.create(scenario=scenario, about=roles[1], position=1, topic="private_info",
                         text="What does Bo secretly know?", options=["The fence", "The pond", "The repair bill"],
                         correct=2)
    return make_episode(scenario=scenario, turns=6, seat_fields={"model": PLANTED_MODEL})


@pytest.fixture
def study(episode):
    annotators = [make_user(username=f"annotator-{name}") for name in "abc"]
    study = make_study(instrument=install_preset("agentsense"), items=[episode], overlap=3, annotators=annotators)
    Membership.objects.filter(study=study).update(instructions_read_at="2025-01-01T00:00:00Z")
    return study


def goals(episode):
    return list(Goal.objects.filter(role__scenario=episode.scenario).order_by("role__position", "position"))


def form(episode, verdicts, probes=("1", "2")):
    """A complete form: one verdict per goal (in seat and goal order) and the probes' answers."""
    data = {}
    for goal, verdict in zip(goals(episode), verdicts, strict=True):
        data[f"answer-goal_achieved-g{goal.pk}"] = verdict
        data[f"rationale-goal_achieved-g{goal.pk}"] = f"Turn 3 settles goal {goal.position + 1}."
    for number, value in enumerate(probes, start=1):
        data[f"answer-probe_{number}"] = value
    return data


def submit(study, user, data):
    assignment = claim_next(study, user)
    annotation = drafts.save_draft(assignment, ItemPage(assignment).parse(data, complete=False), revision=0, seconds=1)
    return drafts.submit(assignment, ItemPage(assignment).parse(data, complete=True), revision=annotation.revision,
                         seconds=40)


# The item page


def test_the_item_page_asks_every_goal_of_every_character_and_the_probes_without_their_answer(client, study, episode):
    user = study.annotators.get(username="annotator-a")
    client.force_login(user)

    page = client.get(reverse("annotator:next", args=[study.slug]), follow=True).text

    for goal in goals(episode):
        assert f'name="answer-goal_achieved-g{goal.pk}"' in page
        assert f'name="rationale-goal_achieved-g{goal.pk}"' in page
        assert goal.text in page
    assert "Ada Lind’s goal: Keep Bo on your side." in page
    assert "Cy Holm’s goal: Avoid paying anything this year." in page
    assert page.count("By the end of the conversation, had the character reached this goal?") == 4
    assert "Why does Ada want the beds?" in page and "The repair bill" in page
    assert 'name="answer-probe_1"' in page and 'name="answer-probe_2"' in page
    assert "correct" not in page.lower()


def test_the_page_hides_the_models_and_every_other_answer(client, study, episode):
    agent = Respondent.objects.create(kind="agent", model=PLANTED_MODEL, prompt_version="goals-1")
    response = Response.objects.create(instrument=goals_instrument(), episode=episode, respondent=agent,
                                       seat_position=0)
    Answer.objects.create(response=response, question=goals_instrument().questions.get(), goal=goals(episode)[0],
                          value="yes", reasoning=PLANTED_REASONING)
    submit(study, study.annotators.get(username="annotator-b"),
           {**form(episode, ["yes", "no", "no", "yes"]),
            f"rationale-goal_achieved-g{goals(episode)[0].pk}": PLANTED_RATIONALE})
    client.force_login(study.annotators.get(username="annotator-a"))

    page = client.get(reverse("annotator:next", args=[study.slug]), follow=True).text

    assert "Ada Lind’s goal" in page
    for planted in (PLANTED_MODEL, PLANTED_REASONING, PLANTED_RATIONALE):
        assert planted not in page


# Drafts, submits, edits


def test_draft_submit_and_edit_keep_every_version_of_goals_and_probes(client, study, episode):
    user = study.annotators.get(username="annotator-a")
    client.force_login(user)
    assignment = claim_next(study, user)
    first, *_ = goals(episode)
    urls = {name: reverse(f"annotator:{name}", args=[assignment.pk]) for name in ("draft", "submit", "edit")}

    client.post(urls["draft"], {f"answer-goal_achieved-g{first.pk}": "yes", "answer-probe_2": "0", "revision": 0})
    draft = Annotation.objects.get(assignment=assignment)
    assert (draft.response.status, draft.probes_response.status) == ("draft", "draft")
    assert draft.response.answers.get().goal == first
    assert draft.probes_response.answers.get().value == "0"
    assert draft.probes_response.instrument == probes_instrument(episode.scenario)

    client.post(urls["submit"], {**form(episode, ["yes", "no", "no", "yes"]), "revision": draft.revision})
    client.post(urls["edit"], {"version": 1})
    edit = Annotation.objects.get(assignment=assignment, version=2)
    assert sorted(edit.response.answers.values_list("goal__text", "value")) == sorted(
        draft.response.answers.values_list("goal__text", "value")
    )
    client.post(urls["submit"], {**form(episode, ["no", "no", "no", "yes"], probes=("0", "2")),
                                 "revision": edit.revision})

    versions = list(Annotation.objects.filter(assignment=assignment).order_by("version"))
    assert [(v.status, v.response.status, v.probes_response.status) for v in versions] == [
        ("submitted", "superseded", "superseded"), ("submitted", "submitted", "submitted"),
    ]
    assert versions[0].response.answers.get(goal=first).value == "yes"
    assert versions[1].response.answers.get(goal=first).value == "no"
    assert versions[0].probes_response.answers.get(question__key="probe_1").value == "1"
    assert versions[1].probes_response.answers.get(question__key="probe_1").value == "0"
    assert versions[1].response.answers.count() == 4


def test_an_autosave_writes_only_the_goal_and_probe_answers_that_changed(study, episode):
    assignment = claim_next(study, study.annotators.get(username="annotator-a"))
    data = form(episode, ["yes", "no", "no", "yes"])
    draft = drafts.save_draft(assignment, ItemPage(assignment).parse(data, complete=False), revision=0, seconds=1)
    rows = Answer.objects.filter(response__in=[draft.response_id, draft.probes_response_id])
    before = {(row.question.key, row.goal_id): (row.pk, row.value) for row in rows.select_related("question")}
    first = goals(episode)[0]
    changed = form(episode, ["no", "no", "no", "yes"], probes=("0",))  # the first goal and probe 1; probe 2 cleared

    with CaptureQueriesContext(connection) as queries:
        draft = drafts.save_draft(assignment, ItemPage(assignment).parse(changed, complete=False), revision=1,
                                  seconds=1)

    writes = [q["sql"].split()[0] for q in queries.captured_queries if '"benchmark_answer"' in q["sql"]]
    assert sorted(w for w in writes if w != "SELECT") == ["DELETE", "UPDATE"]
    after = {(row.question.key, row.goal_id): (row.pk, row.value) for row in rows.select_related("question")}
    expected = {**before, ("goal_achieved", first.pk): (before[("goal_achieved", first.pk)][0], "no"),
                ("probe_1", None): (before[("probe_1", None)][0], "0")}
    del expected[("probe_2", None)]
    assert after == expected
    assert draft.probes_response.answers.count() == 1

    drafts.save_draft(assignment, ItemPage(assignment).parse({**changed, "answer-probe_2": "1"}, complete=False),
                      revision=2, seconds=1)

    assert dict(draft.probes_response.answers.values_list("question__key", "value")) == {"probe_1": "0", "probe_2": "1"}
    assert draft.probes_response.answers.get(question__key="probe_1").pk == before[("probe_1", None)][0]
    assert Answer.objects.filter(response=draft.response).count() == 4


def test_a_cancelled_edit_takes_both_of_its_responses_with_it(study, episode):
    annotation = submit(study, study.annotators.get(username="annotator-a"), form(episode, ["yes", "no", "no", "yes"]))
    edit = drafts.start_edit(annotation.assignment, version=1)
    ids = [edit.response_id, edit.probes_response_id]

    drafts.cancel_edit(annotation.assignment, version=2)

    assert not Response.objects.filter(pk__in=ids).exists()


def test_a_wrong_value_is_refused_naming_the_character_and_goal_and_nothing_is_submitted(study, episode):
    assignment = claim_next(study, study.annotators.get(username="annotator-a"))
    data = form(episode, ["yes", "maybe", "no", "yes"], probes=("1", "7"))
    del data[f"rationale-goal_achieved-g{goals(episode)[3].pk}"]

    parsed = ItemPage(assignment).parse(data, complete=True)
    with pytest.raises(drafts.Incomplete):
        drafts.submit(assignment, parsed, revision=0, seconds=1)

    second, fourth = goals(episode)[1], goals(episode)[3]
    assert parsed.errors[f"answer-goal_achieved-g{second.pk}"].startswith(
        "Goal achieved (Ada Lind: Keep Bo on your side.): "
    )
    assert parsed.errors[f"rationale-goal_achieved-g{fourth.pk}"].startswith(
        "Goal achieved (Cy Holm: Avoid paying anything this year.): say briefly why"
    )
    assert "Probe 2" in parsed.errors["answer-probe_2"]
    assert len(parsed.errors) == 3
    assert not Annotation.objects.filter(assignment=assignment).exists()
    assert not Response.objects.filter(status="submitted").exists()


# Exports


def test_the_export_has_a_row_per_goal_with_its_text_and_a_row_per_probe(study, episode):
    submit(study, study.annotators.get(username="annotator-a"), form(episode, ["yes", "no", "no", "yes"]))

    rows = list(csv.DictReader(io.StringIO("".join(export_lines(study, "csv")))))

    goal_rows = [(row["goal"], row["goal_text"], row["value"]) for row in rows if row["question"] == "goal_achieved"]
    assert goal_rows == [
        ("0.0", "Get the vegetable beds approved.", "yes"), ("0.1", "Keep Bo on your side.", "no"),
        ("1.0", "Find out what the repairs will cost.", "no"), ("2.0", "Avoid paying anything this year.", "yes"),
    ]
    probes = [(row["question"], row["value"], row["scheme"]) for row in rows if row["question"].startswith("probe")]
    name = probes_instrument(episode.scenario).name
    assert probes == [("probe_1", "1", name), ("probe_2", "2", name)]


# The report


def _model_answers(episode):
    """An interviewed model (three seats), a judge, and the model's blind probe answers (see the report test)."""
    question = goals_instrument().questions.get()
    agent = Respondent.objects.create(kind="agent", model="m-agent", prompt_version="goals-1")
    judge = Respondent.objects.create(kind="judge", model="m-judge", prompt_version="goals-judge-1")
    by_seat = {0: ["yes", "yes", "no", "yes"], 1: ["yes", "no", "yes", "no"], 2: ["no", "no", "no", "yes"]}
    answered = [(agent, seat, values) for seat, values in by_seat.items()]
    answered.append((judge, None, ["yes", "no", "yes", "yes"]))
    for respondent, seat, values in answered:
        response = Response.objects.create(instrument=goals_instrument(), episode=episode, respondent=respondent,
                                           seat_position=seat)
        Answer.objects.bulk_create(Answer(response=response, question=question, goal=goal, value=value)
                                   for goal, value in zip(goals(episode), values, strict=True))
    probes = probes_instrument(episode.scenario)
    blind = Respondent.objects.create(kind="agent", model="m-agent", prompt_version="blind-1")
    for respondent, seat, values in [(agent, 0, ["1", "2"]), (agent, 1, ["0", "0"]), (agent, 2, ["1", "1"]),
                                     (blind, 2, ["0", "2"])]:
        response = Response.objects.create(instrument=probes, episode=episode, respondent=respondent,
                                           seat_position=seat)
        for question, value in zip(probes.questions.order_by("position"), values, strict=True):
            Answer.objects.create(response=response, question=question, value=value)


@pytest.fixture
def annotated(study, episode):
    for name, verdicts, probes in [("a", ["yes", "no", "yes", "yes"], ("1", "0")),
                                   ("b", ["yes", "no", "no", "yes"], ("1", "2")),
                                   ("c", ["no", "yes", "no", "yes"], ("0", "2"))]:
        submit(study, study.annotators.get(username=f"annotator-{name}"), form(episode, verdicts, probes))
    _model_answers(episode)
    return study


def test_the_report_sets_the_human_majority_against_self_other_and_external_answers(annotated):
    report = build_report(annotated, resamples=0, respondent_kinds=["agent", "judge"])

    goals_section = report["agentsense"]["goals"]
    pooled = {row["perspective"]: row for row in goals_section["perspectives"] if row["respondent"] is None}
    # Human majorities: yes, no, no, yes. Self: seat 0 on Ada's two goals, seat 1 on Bo's, seat 2 on Cy's.
    assert (pooled["self"]["accuracy"], pooled["self"]["n"], pooled["self"]["goals"]) == (0.5, 4, 4)
    # Every agent says yes about its own goals; the humans say yes to half of them: over-estimation.
    assert (pooled["self"]["yes_share"], pooled["self"]["human_yes_share"]) == (1.0, 0.5)
    assert pooled["self"]["kappa"] == 0.0
    assert (pooled["other"]["accuracy"], pooled["other"]["n"]) == (0.75, 8)
    assert (pooled["external"]["accuracy"], pooled["external"]["n"]) == (0.75, 4)
    assert pooled["external"]["kappa"] == pytest.approx(0.5)
    judge = next(row for row in goals_section["perspectives"] if row["respondent"] == "m-judge")
    assert (judge["respondent_kind"], judge["prompt_version"], judge["accuracy"]) == ("judge", "goals-judge-1", 0.75)
    assert (goals_section["goals"], goals_section["goals_with_majority"], goals_section["ties"]) == (4, 4, 0)
    assert goals_section["annotators"]["percent_agreement"] == pytest.approx(0.5)
    assert report["skipped_questions"]["goal_achieved"] == "asked per goal: see agentsense.goals"


def test_the_report_scores_human_probe_answers_beside_the_agents_attacker_and_blind_accuracy(annotated):
    probes = build_report(annotated, resamples=0, respondent_kinds=["agent"])["agentsense"]["probes"]

    assert probes["humans"] == {"n": 6, "correct": 4, "accuracy": pytest.approx(4 / 6)}
    # Own-information answers (seat 0 on probe 1, seat 1 on probe 2) are no inference and left out.
    assert probes["agents"] == [
        {"measure": "attacker", "model": "m-agent", "n": 4, "correct": 2, "accuracy": 0.5},
        {"measure": "blind", "model": "m-agent", "n": 2, "correct": 1, "accuracy": 0.5},
    ]


def test_the_report_compares_with_judges_only_by_default(annotated):
    report = build_report(annotated, resamples=0)

    assert {row["perspective"] for row in report["agentsense"]["goals"]["perspectives"]} == {"external"}
    assert report["agentsense"]["probes"]["agents"] == []


def test_agreement_report_prints_the_goal_comparison(annotated, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    call_command("agreement_report", "--study", annotated.slug, "--compare-with", "agent,judge", "--resamples", "0",
                 "--out", str(tmp_path / "report.json"), stdout=out, stderr=err)

    printed = out.getvalue()
    assert "Goals: 4 of 4 with a human majority" in printed
    assert "self     all: accuracy 0.500 (n=4, 4 goals), kappa 0.000, yes 1.000 vs humans 0.500" in printed
    assert "external m-judge (judge): accuracy 0.750 (n=4, 4 goals)" in printed
    assert "Probes: humans 0.667 correct (n=6)." in printed
    assert "attacker m-agent: 0.500 (n=4)" in printed


def test_the_report_page_shows_the_goal_comparison(client, annotated):
    researcher = make_researcher(username="researcher")
    client.force_login(researcher)

    page = client.get(reverse("annotator:report", args=[annotated.slug]), {"compare": ["agent", "judge"]}).text

    assert "Goals and probes: humans against the models" in page
    assert "<td>external</td><td>m-judge (judge)</td><td>0.750</td><td>4</td><td>4</td><td>0.500</td>" in page
    assert '<figure class="report-figure"><svg role="img" aria-labelledby="agentsense-comparison-title' in page
    assert "0.750 (n = 4)" in page


def test_the_report_page_shows_the_annotators_agreement_on_goals_that_its_csv_has(client, annotated):
    client.force_login(make_researcher(username="researcher"))
    report = build_report(annotated, resamples=0, respondent_kinds=["agent", "judge"])
    csv_rows = {row["statistic"]: row["value"] for row in _csv_rows(report_tables(report)["agentsense_annotators.csv"])}

    page = client.get(reverse("annotator:report", args=[annotated.slug]), {"compare": ["agent", "judge"]}).text

    assert "The annotators' agreement on goals" in page
    kappa = csv_rows["fleiss_kappa"]
    shown = shown_number(float(kappa) if kappa else None)
    assert f'<th scope="row">Fleiss&#x27; kappa</th><td class="num">{shown}</td>' in page
    agreement = f"{float(csv_rows['percent_agreement']):.3f}"
    assert f'<th scope="row">Percent agreement</th><td class="num">{agreement}</td>' in page
    assert f'<th scope="row">Ratings</th><td class="num">{csv_rows["ratings"]}</td>' in page


def _csv_rows(text):
    return [dict(row) for row in csv.DictReader(io.StringIO(text))]


def test_the_report_tables_carry_the_goal_comparison_the_annotators_agreement_and_the_probes(annotated):
    tables = report_tables(build_report(annotated, resamples=0, respondent_kinds=["agent", "judge"]))

    goals = _csv_rows(tables["agentsense_goals.csv"])
    assert [(row["perspective"], row["respondent"]) for row in goals] == [
        ("self", ""), ("self", "m-agent"), ("other", ""), ("other", "m-agent"), ("external", ""),
        ("external", "m-judge"),
    ]
    judge = goals[-1]
    assert (judge["respondent_kind"], judge["prompt_version"], float(judge["accuracy"]), judge["n"]) == (
        "judge", "goals-judge-1", 0.75, "4",
    )
    assert (float(goals[0]["yes_share"]), float(goals[0]["human_yes_share"])) == (1.0, 0.5)
    annotators = {row["statistic"]: row["value"] for row in _csv_rows(tables["agentsense_annotators.csv"])}
    assert (annotators["goals"], annotators["goals_with_majority"], annotators["ties"]) == ("4", "4", "0")
    assert float(annotators["percent_agreement"]) == pytest.approx(0.5)
    assert _csv_rows(tables["agentsense_probes.csv"]) == [
        {"measure": "humans", "who": "annotators", "n": "6", "correct": "4", "accuracy": str(4 / 6)},
        {"measure": "attacker", "who": "m-agent", "n": "4", "correct": "2", "accuracy": "0.5"},
        {"measure": "blind", "who": "m-agent", "n": "2", "correct": "1", "accuracy": "0.5"},
    ]


def test_a_report_without_goals_or_probes_has_no_agentsense_tables(episode):
    study = make_study(instrument=install_preset("socialveil"), items=[episode], overlap=1)

    tables = report_tables(build_report(study, resamples=0))

    assert "statistics.csv" in tables and not any(name.startswith("agentsense") for name in tables)


def test_the_bundle_and_the_tables_zip_hold_the_agentsense_tables_and_figure(annotated):
    report = build_report(annotated, resamples=0, respondent_kinds=["agent", "judge"])

    bundle = zipfile.ZipFile(io.BytesIO(render_bundle(annotated, report)))
    tables = zipfile.ZipFile(io.BytesIO(render_tables_zip(report)))

    names = {"agentsense_goals.csv", "agentsense_annotators.csv", "agentsense_probes.csv"}
    assert {f"tables/{name}" for name in names} <= set(bundle.namelist())
    assert names <= set(tables.namelist())
    assert bundle.read("tables/agentsense_probes.csv") == tables.read("agentsense_probes.csv")
    svg = bundle.read("figures/agentsense-comparison.svg").decode()
    assert "Goals and probes: humans against the models" in svg and "attacker: m-agent" in svg
    assert "agentsense-comparison.svg" in bundle.read("README.txt").decode()
    assert "agentsense-comparison-title" in bundle.read("report.html").decode()


def test_a_respondents_name_is_escaped_in_the_figure_the_page_and_the_tables(client, annotated, episode):
    planted = '=HYPERLINK("x") <script>alert(1)</script> $\\alpha$ & co'
    judge = Respondent.objects.create(kind="judge", model=planted, prompt_version="goals-judge-1")
    response = Response.objects.create(instrument=goals_instrument(), episode=episode, respondent=judge)
    Answer.objects.bulk_create(Answer(response=response, question=goals_instrument().questions.get(), goal=goal,
                                      value="yes") for goal in goals(episode))
    report = build_report(annotated, resamples=0)
    client.force_login(make_researcher(username="researcher"))

    page = client.get(reverse("annotator:report", args=[annotated.slug]), {"compare": ["judge"]}).text
    svg = render_bundle(annotated, report)

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; $\\alpha$ &amp; co" in page
    figure = zipfile.ZipFile(io.BytesIO(svg)).read("figures/agentsense-comparison.svg").decode()
    assert "<script>" not in figure and "&lt;script&gt;alert(1)&lt;/script&gt; $\\alpha$ &amp; co" in figure
    rows = _csv_rows(report_tables(report)["agentsense_goals.csv"])
    assert "'" + planted in {row["respondent"] for row in rows}
