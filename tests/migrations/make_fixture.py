"""Rebuild ``data/demo_before_issue_13.json.gz``: today's demo, as stored by the code before issue 13.

The migration test (``test_demo_migration.py``) loads this fixture into the schema of commit
df40544 (the last commit before issue 13 changed the research core), migrates forward and checks
that everything survived. This script makes the fixture with that old code, so the rows are the
ones the old code writes, not what a test author imagines it wrote. Run it from a checkout of
df40544 with an empty database of its own:

    git worktree add ../wt-before df40544 && cd ../wt-before
    DEBUG=true LITELLM_LOCAL_MODEL_COST_MAP=True PARLEY_VAR_DIR=/tmp/before-var \\
      DATABASE_URL=sqlite:////tmp/before.sqlite3 \\
      /path/to/.venv/bin/python /path/to/tests/migrations/make_fixture.py \\
      --out /path/to/tests/migrations/data/demo_before_issue_13.json.gz

It does what ``make demo`` does short of serving (``migrate``, ``load_demo``, ``load_demo_studies``
with their generated ratings, ``load_demo_chat``), then adds, through the old code's own functions,
rows the demo lacks but the migration must keep:

- a scenario imported from Parley JSON Lines whose first role's goal has two lines and whose
  second role's goal has a blank line and trailing spaces, with an imported episode scored by
  ``human mean`` (no prompt version, means with long decimals) and by a judge model;
- a simulation run of that scenario (two conditions, repair strategy) with the scripted judge's
  scores, and its neutralised context;
- chat participants: one who finished the default questionnaire, one screened out before the
  minimum, and one who finished a study with its own questionnaire (likert 0–6, choice, text);
- annotations by a person (no ``generated_by``): a submitted version 1 with a draft version 2 in
  the Sotopia-EVAL study (per-seat sliders with rationales) and in the SHREC study (spans with
  character offsets, attributes, corrections), a resubmitted version 2 in the SocialVeil study, and
  a first draft never submitted;
- a numeric key with a tolerance on a gold item, and an unused new version of a frozen scheme.

After the dump it fetches, from the same old code and data, everything researchers download (every
study's agreement report and its CSV tables, the annotation exports, the benchmark results and
their tables, the chat studies' participants, the episode exports: ``downloads.py`` lists them and
says what is normalised) and writes them to ``downloads_before_issue_13.json.gz`` beside the
fixture (``--downloads`` elsewhere). First it loads the dump back over the rows (``loaddata``):
``dumpdata`` keeps times to the millisecond and the episode export shows microseconds, so the
downloads are made from exactly the rows the test loads. The migration test fetches them again
from the current code on the migrated rows and compares. Fixture and downloads are made together
from one run, so rebuild both or neither.

The demo accounts' passwords are made unusable before the dump (no hash of a password that once
worked goes into the repository). Invite tokens, resume codes and timestamps are random or the
time of the run, so two runs give different files with the same shape. The output is gzip-compressed ``dumpdata`` JSON
(no natural keys) of auth users and groups and every row of ``benchmark``, ``annotator`` and
``chat``; sessions, content types, permissions, admin logs and login attempts are left out.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

OLD_LEAVES = {"benchmark": "0009_episode_external_ids", "annotator": "0007_annotation_generated_by",
              "chat": "0005_participant_binding_and_screen_out"}
SCENARIO_ID = "fixture-ladder"
DUMPED = ["auth.user", "auth.group", "benchmark", "annotator", "chat"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="Where to write the .json.gz fixture.")
    parser.add_argument("--downloads", type=Path, default=None,
                        help="Where to write what researchers download from that data (default: "
                        "downloads_before_issue_13.json.gz beside --out).")
    args = parser.parse_args()
    setup_django()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    refuse_unless_fresh_and_old()
    for command in ("load_demo", "load_demo_studies", "load_demo_chat"):
        call_command(command, stdout=io.StringIO())  # their links and passwords are of no use here
    import_scored_episode()
    call_command("simulate", scenarios=SCENARIO_ID, conditions="none,semantic", strategy="repair", turn_cap=6,
                 run_name="fixture-run", stdout=io.StringIO(), stderr=io.StringIO())
    call_command("neutralise", scenarios=SCENARIO_ID, model="scripted", stdout=io.StringIO(), stderr=io.StringIO())
    play_chats()
    annotate_as_a_person()
    add_gold_key_and_scheme_version()
    make_passwords_unusable()
    dump(args.out)
    # dumpdata keeps times to the millisecond: store the rows as the fixture holds them, as the test will.
    call_command("loaddata", str(args.out), verbosity=0)
    save_downloads(args.downloads or args.out.with_name("downloads_before_issue_13.json.gz"))


def setup_django() -> None:
    """Import the checkout in the current directory (df40544), not whatever the environment installed."""
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import benchmark

    if Path(benchmark.__file__).resolve().parent != Path.cwd().resolve() / "benchmark":
        sys.exit(f"benchmark was imported from {benchmark.__file__}; run this from the checkout's top directory.")
    from django.conf import settings

    settings.PARLEY_CHAT_SCRIPTED_DELAY = 0  # the scripted agent types instantly


def refuse_unless_fresh_and_old() -> None:
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    from benchmark.models import Episode

    leaves = {app: name for app, name in MigrationLoader(connection).graph.leaf_nodes() if app in OLD_LEAVES}
    if leaves != OLD_LEAVES:
        sys.exit(f"This checkout's latest migrations are {leaves}, not {OLD_LEAVES}: check out df40544.")
    if Episode.objects.exists():
        sys.exit("The database already holds episodes; give DATABASE_URL an empty database.")


def the_team():
    from benchmark.models import Team

    return Team.objects.get()


# --- an imported episode scored by the human mean and a judge ---------------------------------


def character(external_id: str, first: str, last: str, age: int, occupation: str) -> dict:
    return {"external_id": external_id, "first_name": first, "last_name": last, "age": age,
            "gender": "", "pronouns": "they/them", "occupation": occupation, "public_info": "Lives on Elm Street."}


def scored_episode() -> dict:
    ana = character("fixture-ana", "Ana", "Costa", 41, "nurse")
    ben = character("fixture-ben", "Ben", "Okafor", 36, "roofer")
    scenario = {
        "external_id": SCENARIO_ID, "codename": SCENARIO_ID, "source": "fixture",
        "context": "Two neighbours talk over the garden fence on a Saturday morning.",
        "relationship": 3,
        "roles": [
            {"position": 0, "character": ana, "reason": "The gutters overflow onto the porch.",
             "goal": "Borrow the ladder for this weekend.\nKeep the friendship warm whatever the answer.",
             "private_knowledge": "The forecast says heavy rain on Monday."},
            {"position": 1, "character": ben, "reason": "",
             "goal": "Keep the ladder until the roof job is done.\n\nDo not mention the dent in it.  ",
             "private_knowledge": ""},
        ],
    }
    lines = [
        (0, "Morning! Could I borrow your ladder this weekend? The gutters are overflowing again."),
        (1, "I need it for a roof job until Sunday, I'm afraid."),
        (0, "What about Sunday evening? Rain is coming on Monday."),
        (1, "Sunday evening works. Bring it back by Tuesday."),
    ]
    turns = [{"index": index, "seat": seat, "action_type": "speak", "content": text} for index, (seat, text)
             in enumerate(lines)]
    turns.append({"index": len(lines), "seat": 0, "action_type": "leave", "content": ""})
    means = {("goal", 0): 6.333333333333333, ("goal", 1): 7.666666666666667, ("relationship", 0): 1.6666666666666667,
             ("relationship", 1): 0.3333333333333333, ("mutual_understanding", None): 3.6666666666666665,
             ("unresolved_confusion", None): 4.0}
    judge = {("goal", 0): 7.0, ("goal", 1): 8.0, ("relationship", 0): 2.0, ("relationship", 1): 1.0,
             ("mutual_understanding", None): 4.0, ("unresolved_confusion", None): 4.0}
    evaluations = [
        {"evaluator": "human mean", "seat": seat, "dimension": dimension, "score": score,
         "reasoning": "Mean of three raters."} for (dimension, seat), score in means.items()
    ] + [
        {"evaluator": "openai/gpt-4o-mini", "prompt_version": "v1", "seat": seat, "dimension": dimension,
         "score": score, "reasoning": f"{dimension} judged from turns 1 to 4.", "latency_ms": 900,
         "prompt_tokens": 1200, "completion_tokens": 150} for (dimension, seat), score in judge.items()
    ]
    return {
        "format_version": 1, "external_id": "fixture-ladder-pilot-1", "scenario": scenario, "barrier": "semantic",
        "source": "imported", "status": "finished", "end_reason": "leave", "tag": "fixture-pilot",
        "created_at": "2025-03-01T10:00:00Z", "finished_at": "2025-03-01T10:06:00Z",
        "seats": [
            {"position": 0, "role": 0, "character": ana, "player": "human"},
            {"position": 1, "role": 1, "character": ben, "model": "openai/gpt-4o-mini", "carries_barrier": True},
        ],
        "turns": turns, "evaluations": evaluations,
    }


def import_scored_episode() -> None:
    from benchmark.importing import import_file

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fixture.jsonl"
        path.write_text(json.dumps(scored_episode()) + "\n", encoding="utf-8")
        import_file(path, team=the_team())


# --- chats ------------------------------------------------------------------------------------


def play_chats() -> None:
    from benchmark.models import Scenario
    from chat.models import ChatCondition, ChatStudy

    demo = ChatStudy.objects.get(slug="demo-chat")
    play(demo, "fixture-done", participant_lines=4, answers={
        "goal": "4", "unresolved_confusion": "3", "mutual_understanding": "4",
        "comment": "The agent kept saying 'the thing'.\nI asked twice.",
    })
    play(demo, "fixture-screened-out", participant_lines=1, answers=None)

    team = the_team()
    custom = ChatStudy.objects.create(
        team=team, slug="fixture-chat-custom", title="Fixture: own questions", created_by=demo.created_by,
        human_position=0, agent_model="", completion_code="FIXTURE-DONE", min_participant_turns=2,
        questionnaire=[
            {"key": "trust", "kind": "likert", "label": "How far did you trust the other side?", "low": 0,
             "high": 6, "low_label": "not at all", "high_label": "completely", "required": True},
            {"key": "outcome", "kind": "choice", "label": "How did it end?",
             "options": ["We agreed", "We half agreed", "No agreement"], "required": True},
            {"key": "notes", "kind": "text", "label": "Anything else?", "max_chars": 500, "required": False},
        ],
    )
    custom.scenarios.set(Scenario.objects.of_team(team).filter(external_id=SCENARIO_ID))
    ChatCondition.objects.create(study=custom, barrier=demo.conditions.get(barrier__key="emotional").barrier,
                                 target=1)
    play(custom, "fixture-custom-done", participant_lines=3, answers={
        "trust": "5", "outcome": "We half agreed", "notes": "",
    })


def play(study, participant_id: str, *, participant_lines: int, answers: dict | None) -> None:
    """One participant's way through ``study`` with the scripted agent; ``answers`` as the form posts them."""
    from asgiref.sync import async_to_sync

    from chat import access, agent_turn, flow, state_machine, questionnaire, turns
    from chat.assignment import assign
    from chat.models import Participant

    session: dict = {}
    participant = flow.arrive(study, flow.ArrivalIds(participant_id=participant_id, prolific_pid=participant_id,
                                                     prolific_study_id="fixture", prolific_session_id="s1"))
    access.claim(session, participant)
    participant = assign(participant, rng=random.Random(participant_id))
    flow.start_conversation(participant)
    said = 0
    while True:
        step = state_machine.next_step(participant.pk)
        if step.ended or step.episode_pk is None:
            break
        owner = step.owner
        while owner:  # a group chat's agent turn hands its lease to the next agent's
            taken = async_to_sync(agent_turn.take_turn)(participant.pk, owner)
            owner = taken.owner if taken is not None else ""
        if step.owner:
            continue
        leaving = said == participant_lines
        turns.submit_human_turn(
            participant.pk, client_id=uuid.uuid4().hex, browser=session[access.BROWSER_KEY],
            action_type="leave" if leaving else "speak",
            content="" if leaving else f"My message number {said + 1}, about the matter at hand.",
        )
        said += 1
    participant.refresh_from_db()
    if answers is None:
        assert participant.stage == Participant.Stage.SCREENED_OUT, participant.stage
        return
    form = questionnaire.questionnaire_form(study.questionnaire, answers)
    assert form.is_valid(), form.errors
    assert questionnaire.save_answers(participant, form.cleaned_data)


# --- a person's annotations ---------------------------------------------------------------------


def annotate_as_a_person() -> None:
    from django.contrib.auth import get_user_model

    from annotator import drafts
    from annotator.models import Study

    users = {user.username: user for user in get_user_model().objects.all()}
    person, other = users["annotator1"], users["annotator3"]

    sotopia = Study.objects.get(slug="demo-sotopia-eval")
    assignment, page = claim(sotopia, person)
    submitted = drafts.submit(assignment, page.parse(sotopia_form(page, shift=0), complete=True), revision=0,
                              seconds=240)
    draft = drafts.start_edit(assignment, version=submitted.version)
    drafts.save_draft(assignment, page.parse(sotopia_form(page, shift=1, partial=True), complete=False),
                      revision=draft.revision, seconds=35)

    shrec = Study.objects.get(slug="demo-shrec-spans")
    assignment, page = claim(shrec, person)
    submitted = drafts.submit(assignment, page.parse(shrec_form(page, edited=False), complete=True), revision=0,
                              seconds=410)
    draft = drafts.start_edit(assignment, version=submitted.version)
    parsed = page.parse(shrec_form(page, edited=True), complete=False)
    drafts.save_draft(assignment, parsed, revision=draft.revision, seconds=60)

    socialveil = Study.objects.get(slug="demo-socialveil")
    assignment, page = claim(socialveil, person)
    first = socialveil_form(page, barrier="semantic", why="Nobody names the thing they mean.")
    submitted = drafts.submit(assignment, page.parse(first, complete=True), revision=0, seconds=150)
    draft = drafts.start_edit(assignment, version=submitted.version)
    second = socialveil_form(page, barrier="emotional", why="On a second reading the worry drives it.")
    drafts.submit(assignment, page.parse(second, complete=True), revision=draft.revision, seconds=45)

    assignment, page = claim(socialveil, other)
    only_draft = socialveil_form(page, barrier="none", why="")
    drafts.save_draft(assignment, page.parse(only_draft, complete=False), revision=0, seconds=20)


def claim(study, annotator):
    from annotator import assignment as assignments
    from annotator.item_page import ItemPage

    claimed = assignments.claim_next(study, annotator)
    assert claimed is not None, f"{annotator} has nothing left to claim in {study}"
    return claimed, ItemPage(claimed, with_answers=False)


def sotopia_form(page, *, shift: int, partial: bool = False) -> dict:
    """Slider answers inside each question's range, with a rationale each; ``partial`` leaves some out."""
    from annotator.schemes import field_name

    form = {}
    for number, question in enumerate(page.questions):
        low, high = question.options["min"], question.options["max"]
        for seat in page.main_seats:
            if partial and number % 3 == 2:
                continue
            value = low + (number + seat.position * 2 + shift) % (high - low + 1)
            form[field_name(question, seat.position)] = str(value)
            form[field_name(question, seat.position, "rationale")] = (
                f"{question.key} for {seat.character.name}: see turns {seat.position + 1} and {seat.position + 3}."
            )
    return form


def shrec_form(page, *, edited: bool) -> dict:
    """Two spans with character offsets (an error over two turns, a competency inside one turn)."""
    turns = page.turns[page.item.episode_id]
    first, second = turns[0].content, turns[1].content
    spans = [
        {"label": "error", "start_turn": 0, "end_turn": 1, "start_char": 0, "end_char": min(12, len(second)),
         "attributes": ["knowledge-state", "intention"],
         "rationale": "Opens without saying what is wanted." + (" It also ignores the question." if edited else ""),
         "correction": "Say plainly what you need and by when."},
        {"label": "competency", "start_turn": 1, "end_turn": 1, "start_char": 2, "end_char": min(20, len(second)),
         "attributes": ["emotions"], "rationale": "Picks up the other side's mood.", "correction": ""},
    ]
    if edited:  # a half-made error span: no correction yet, so a draft save cannot store it
        spans.append({"label": "error", "start_turn": 0, "end_turn": 0, "start_char": 0,
                      "end_char": min(5, len(first)), "attributes": [], "rationale": "Too blunt.", "correction": ""})
    return {"spans-spans": json.dumps(spans),
            "answer-overall_comment": "Both sides stay polite." + (" Ben warms up late." if edited else "")}


def socialveil_form(page, *, barrier: str, why: str) -> dict:
    return {"answer-barrier_type": barrier, "rationale-barrier_type": why,
            "answer-unresolved_confusion": "3", "answer-mutual_understanding": "4",
            "rationale-mutual_understanding": why}


def add_gold_key_and_scheme_version() -> None:
    from annotator import schemes
    from annotator.models import ItemKey, StudyItem

    gold = StudyItem.objects.filter(study__slug="demo-socialveil", kind=StudyItem.Kind.GOLD).order_by("position")[0]
    question = gold.study.scheme.questions.get(key="mutual_understanding")
    ItemKey.objects.create(item=gold, question=question, value="4", tolerance=1.0)
    schemes.new_version(gold.study.scheme)


def make_passwords_unusable() -> None:
    from django.contrib.auth import get_user_model

    for user in get_user_model().objects.all():
        user.set_unusable_password()
        user.save(update_fields=["password"])


# --- what researchers download from it ----------------------------------------------------------


def save_downloads(out: Path) -> None:
    """Fetch every download of ``downloads.download_requests`` from the old code and save them (see downloads.py)."""
    from django.test.utils import setup_test_environment

    # downloads.py sits beside this script, whose folder Python put on sys.path when it started.
    from downloads import download_requests, fetch_all, save

    from annotator.models import Study
    from chat.models import ChatStudy

    setup_test_environment()  # lets the test client's host in, as under pytest
    team = the_team()
    requests = download_requests(
        Study.objects.of_team(team).order_by("slug").values_list("slug", flat=True),
        ChatStudy.objects.of_team(team).order_by("slug").values_list("slug", flat=True),
    )
    fetched = fetch_all(requests)
    failed = [request for request, download in fetched.items() if download["status"] not in (0, 200)]
    if failed:
        sys.exit(f"These downloads failed on the old code: {failed}")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    out.parent.mkdir(parents=True, exist_ok=True)
    save(out, fetched, made_with=commit or "unknown")
    print(f"{out}: {len(fetched)} downloads, {out.stat().st_size:,} bytes")


# --- the dump -----------------------------------------------------------------------------------


def dump(out: Path) -> None:
    from django.core.management import call_command

    buffer = io.StringIO()
    call_command("dumpdata", *DUMPED, stdout=buffer, verbosity=0)
    rows = json.loads(buffer.getvalue())
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as packed:
        packed.write((json.dumps(rows, ensure_ascii=False, indent=0) + "\n").encode("utf-8"))
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["model"]] = counts.get(row["model"], 0) + 1
    print(f"{out}: {len(rows)} rows, {out.stat().st_size:,} bytes")
    for model, count in sorted(counts.items()):
        print(f"  {model:<28} {count}")


if __name__ == "__main__":
    main()
