"""How fast Parley imports and exports episodes.

Loads the demo, exports it as Parley JSON Lines, multiplies it into N episodes with fresh
external ids, then times: importing them into an empty database, exporting them, re-importing
them (everything unchanged), importing every real Sotopia file in ../shared/data/sotopia, a SocialVeil
run's results (180 scenario folders) and both real ProMediate cases, Sotopia's 450 castings after
the profiles they name, adding scores to stored episodes (Sotopia's GPT-4 judge file; a scores-only
CSV of 10,000 rows, twice); then imports about 10,000 long rows of external ratings into a Sotopia-EVAL
study (and again, unchanged); then the same for a scenario library of N scenarios (``--scenarios``); then
SocialVeil's two real scenario files in ../shared/data/socialveil (the hard scenarios, then the semantic
barrier file).

    .venv/bin/python perf/import_export.py [--episodes 2000]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench .venv/bin/python perf/import_export.py

Episodes, scenarios and characters in the database named by DATABASE_URL are deleted first and
last (default: a temporary SQLite file).
"""

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOTOPIA = ROOT.parent / "shared" / "data" / "sotopia"
SOCIALVEIL = ROOT.parent / "shared" / "data" / "socialveil"
SOCIALVEIL_RUNS = ROOT / "tests" / "data" / "socialveil" / "runs" / "results"
PROMEDIATE = ROOT.parent / "shared" / "data" / "promediate"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=2000, help="How many episodes to import and export.")
    parser.add_argument("--scenarios", type=int, default=1000, help="How many scenarios of a library to time.")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ.setdefault("PARLEY_VAR_DIR", str(workdir))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")  # development settings, as the published figures were measured
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from benchmark.exporting import export_episodes, select_episodes
    from benchmark.importing import ImportProblem, import_file
    from benchmark.models import DEFAULT_TEAM_SLUG, Character, Episode, Scenario, Team, Turn

    def empty() -> None:
        """Remove episodes, scenarios (instances before their templates) and characters; the seeded barriers stay."""
        Episode.objects.all().delete()
        Scenario.objects.exclude(template=None).delete()
        Scenario.objects.all().delete()
        Character.objects.all().delete()

    call_command("migrate", verbosity=0)
    empty()
    call_command("load_demo", "--skip-accounts", stdout=io.StringIO())
    team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
    demo = io.StringIO()
    export_episodes(select_episodes(team), demo)
    lines = [json.loads(line) for line in demo.getvalue().splitlines()]

    big = workdir / "episodes.jsonl"
    with big.open("w") as out:
        for number in range(args.episodes):
            record = dict(lines[number % len(lines)])
            record["external_id"] = f"bench-{number:06d}"
            out.write(json.dumps(record, sort_keys=True) + "\n")
    turns = sum(len(lines[n % len(lines)]["turns"]) for n in range(args.episodes))
    empty()

    print(f"database: {connection.vendor}; {args.episodes} episodes, {turns} turns, "
          f"{big.stat().st_size / 1e6:.1f} MB of JSON Lines")

    started = time.perf_counter()
    result = import_file(big, team=team)
    elapsed = time.perf_counter() - started
    assert result.created["episode"] == args.episodes
    print(f"import:    {elapsed:6.2f} s  {args.episodes / elapsed:7.0f} episodes/s  {turns / elapsed:8.0f} turns/s")

    started = time.perf_counter()
    exported = io.StringIO()
    export_episodes(select_episodes(team), exported)
    elapsed = time.perf_counter() - started
    print(f"export:    {elapsed:6.2f} s  {args.episodes / elapsed:7.0f} episodes/s  {turns / elapsed:8.0f} turns/s")

    started = time.perf_counter()
    again = import_file(big, team=team)
    elapsed = time.perf_counter() - started
    assert again.unchanged["episode"] == args.episodes and Turn.objects.count() == turns
    print(f"re-import: {elapsed:6.2f} s  (all {args.episodes} unchanged)")

    files = sorted(SOTOPIA.glob("*profiles.json")) + sorted(SOTOPIA.glob("serialized_*.jsonl"))
    files += [p for p in sorted(SOTOPIA.glob("*.json*")) if p not in files]
    started = time.perf_counter()
    imported, refused = [], []
    for path in files:  # shapes the importer does not read yet are named, not timed
        try:
            imported.append(import_file(path, team=team))
        except ImportProblem as problem:
            refused.append(f"{path.name} ({problem})")
    elapsed = time.perf_counter() - started
    episodes = sum(r.created["episode"] for r in imported)
    print(f"sotopia:   {elapsed:6.2f} s  for {len(imported)} real files ({episodes} episodes and their profiles)")
    for line in refused:
        print(f"  refused: {line}")
    time_scores(team, workdir, min(args.episodes, 1000))

    time_socialveil_runs(team, workdir)
    time_promediate(team)
    time_ratings(workdir, team)
    empty()
    time_castings(team)
    empty()
    time_library(team, workdir, args.scenarios, empty)
    empty()
    time_socialveil(team, import_file)
    time_sotopia_logs(team)
    empty()


def time_library(team, workdir: Path, count: int, empty) -> None:  # noqa: ANN001 - a Team, imported after setup
    """Export the demo's scenario library, multiply its scenarios into ``count`` with fresh ids, and time
    importing them into an empty team, exporting them and re-importing them (everything unchanged)."""
    from django.core.management import call_command

    from benchmark.importing import import_file
    from benchmark.scenarios.library_export import select_library, write_library

    call_command("load_demo", "--skip-accounts", stdout=io.StringIO())
    demo = io.StringIO()
    write_library(select_library(team), demo)
    lines = [json.loads(line) for line in demo.getvalue().splitlines()]
    scenarios = [line for line in lines if line["kind"] == "scenario" and not line["is_template"]]
    path = workdir / "library.jsonl"
    with path.open("w") as out:
        for line in (line for line in lines if line["kind"] != "scenario" or line["is_template"]):
            out.write(json.dumps(line, sort_keys=True) + "\n")
        for number in range(count):
            record = dict(scenarios[number % len(scenarios)], external_id=f"bench-scenario-{number:06d}")
            out.write(json.dumps(record, sort_keys=True) + "\n")
    empty()
    print(f"library: {count} scenarios, {path.stat().st_size / 1e6:.1f} MB")

    started = time.perf_counter()
    result = import_file(path, team=team)
    elapsed = time.perf_counter() - started
    assert result.created["scenario"] >= count
    print(f"  import:    {elapsed:6.2f} s  {count / elapsed:7.0f} scenarios/s")
    started = time.perf_counter()
    write_library(select_library(team), io.StringIO())
    elapsed = time.perf_counter() - started
    print(f"  export:    {elapsed:6.2f} s  {count / elapsed:7.0f} scenarios/s")
    started = time.perf_counter()
    again = import_file(path, team=team)
    elapsed = time.perf_counter() - started
    assert not again.created and not again.notes
    print(f"  re-import: {elapsed:6.2f} s  (all unchanged)")


def time_socialveil(team, import_file) -> None:  # noqa: ANN001 - Django is set up inside main
    """Import SocialVeil's hard file and its semantic barrier file into an empty team, then again."""
    files = [SOCIALVEIL / "episode_hard.jsonl", SOCIALVEIL / "episodes_all_semantic.json"]
    started = time.perf_counter()
    results = [import_file(path, team=team) for path in files]
    elapsed = time.perf_counter() - started
    scenarios = sum(r.created["scenario"] for r in results)
    prompts = sum(r.created["barrier prompt"] for r in results)
    print(f"socialveil:{elapsed:6.2f} s  for 2 real files ({scenarios} scenarios, {prompts} barrier prompts)")
    started = time.perf_counter()
    again = [import_file(path, team=team) for path in files]
    elapsed = time.perf_counter() - started
    assert not any(r.created for r in again)
    print(f"  again:   {elapsed:6.2f} s  (all unchanged)")


def time_socialveil_runs(team, workdir: Path, scenarios: int = 60) -> None:
    """A SocialVeil run's results: the fixture's outputs copied into 60 scenario folders x 3 conditions."""
    import shutil

    from benchmark.importing import import_file
    from benchmark.models import Character, Goal, Role, Scenario

    record = json.loads((SOCIALVEIL / "episodes_all_semantic.json").read_text())[0]
    scenario = Scenario.objects.create(team=team, external_id="bench-socialveil", source="socialveil",
                                       context=record["scenario"])
    for position, (profile, goal) in enumerate(zip(record["agent_profiles"], record["agent_goals"], strict=True)):
        character = Character.objects.create(team=team, first_name=profile["first_name"],
                                             last_name=profile["last_name"])
        role = Role.objects.create(scenario=scenario, position=position, character=character)
        Goal.objects.create(role=role, position=0, text=goal)
    results = workdir / "socialveil-results"
    for mode in ("baseline", "semantic", "cultural"):
        for number in range(1, scenarios + 1):
            folder = results / f"mode_{mode}" / f"scenario_{number}"
            shutil.copytree(SOCIALVEIL_RUNS / f"mode_{mode}" / "scenario_1", folder)
            log = json.loads((folder / "conversation_log.json").read_text())
            log["conversation_log"][0] += f" ({number})"  # another conversation, another episode
            (folder / "conversation_log.json").write_text(json.dumps(log, indent=4))
    started = time.perf_counter()
    result = import_file(results, team=team)
    elapsed = time.perf_counter() - started
    episodes = result.created["episode"]
    print(f"socialveil run: {elapsed:6.2f} s  for {episodes} scenario folders ({episodes / elapsed:.0f} episodes/s, "
          f"{result.created['turn']} turns, {result.created['answer']} answers)")


def time_promediate(team) -> None:
    """Both real ProMediate cases in ../shared/data/promediate."""
    from benchmark.importing import import_file

    started = time.perf_counter()
    results = [import_file(path, team=team) for path in sorted(PROMEDIATE.glob("*.json"))]
    elapsed = time.perf_counter() - started
    roles = sum(r.created["character"] for r in results)
    print(f"promediate:     {elapsed:6.2f} s  for {len(results)} real cases ({roles} parties)")


def time_castings(team) -> None:  # noqa: ANN001 - a Team, imported after django.setup()
    """Sotopia's 450 castings as casts, after the serialized profiles they name (not timed), then again."""
    from benchmark.importing import import_file

    import_file(SOTOPIA / "serialized_agent_profiles.jsonl", team=team)
    import_file(SOTOPIA / "serialized_environment_profiles.jsonl", team=team)
    castings = SOTOPIA / "sotopia_env_agent_combos_450.jsonl"
    started = time.perf_counter()
    result = import_file(castings, team=team)
    elapsed = time.perf_counter() - started
    again_started = time.perf_counter()
    again = import_file(castings, team=team)
    again_elapsed = time.perf_counter() - again_started
    assert result.created["cast"] == again.unchanged["cast"] == 450
    print(f"castings:  {elapsed:6.2f} s  {450 / elapsed:7.0f} casts/s  (re-import, all unchanged: "
          f"{again_elapsed:.2f} s)")


def time_scores(team, workdir: Path, episodes: int) -> None:  # noqa: ANN001 - a Team, after django.setup()
    """Scores onto stored episodes: Sotopia's GPT-4 judge file onto the human-eval episodes, then a
    scores-only CSV of 10 rows per episode (5 dimensions, 2 seats) onto the generated ones, and again."""
    from benchmark.importing import import_file
    from benchmark.models import Response

    # The Sotopia files above already attached the file's scores: time attaching them, not finding them there.
    judge = {"respondent__model": "gpt-4", "respondent__prompt_version": "sotopia"}
    Response.objects.filter(episode__team=team, **judge).delete()
    started = time.perf_counter()
    result = import_file(SOTOPIA / "sotopia_humaneval_gpt4_scores_140.json", team=team)
    elapsed = time.perf_counter() - started
    print(f"gpt-4 scores: {elapsed:6.2f} s  (140 scored, {result.changed['episode'] + result.unchanged['episode']} "
          f"in Parley, {result.created['answer']} answers added)")
    scores = workdir / "scores.csv"
    with scores.open("w") as out:
        out.write("episode_id,respondent,question,seat,value,reasoning\n")
        for number in range(episodes):
            for question in ("goal", "believability", "knowledge", "relationship", "secret"):
                value = -(number % 3) if question == "secret" else number % 6
                for seat in (0, 1):
                    out.write(f"bench-{number:06d},bench-judge,{question},{seat},{value},because\n")
    for label in ("scores csv", "again"):
        started = time.perf_counter()
        result = import_file(scores, team=team)
        elapsed = time.perf_counter() - started
        print(f"{label}: {elapsed:6.2f} s  {episodes * 10 / elapsed:8.0f} rows/s  ({episodes * 10} rows; "
              f"{result.created['answer']} answers added, {result.unchanged['episode']} episodes unchanged)")


def time_ratings(workdir: Path, team, raters: int = 15, episodes: int = 48) -> None:  # noqa: ANN001
    """Import a long ratings file (raters x episodes x 2 seats x 7 questions rows) into a Sotopia-EVAL study."""
    import csv

    from django.contrib.auth import get_user_model

    from annotator.external_ratings import import_ratings
    from annotator.models import ExternalAnnotator, Study, StudyItem
    from benchmark.instruments.presets import install_preset
    from benchmark.models import Episode, Respondent

    chosen = [episode for episode in Episode.objects.filter(team=team).prefetch_related("seats")[:episodes * 2]
              if episode.seats.count() == 2][:episodes]
    study = Study.objects.create(team=team, title="Ratings benchmark", slug="bench-ratings", overlap=3,
                                 instrument=install_preset("sotopia-eval"), instructions="Rate.")
    StudyItem.objects.bulk_create(StudyItem(study=study, episode=ep, position=n) for n, ep in enumerate(chosen))
    questions = list(study.instrument.questions.order_by("position"))
    path = workdir / "ratings.csv"
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["episode_id", "annotator_id", "question", "seat", "value", "rationale"])
        for rater in range(raters):
            for episode in chosen:
                for seat in (0, 1):
                    for question in questions:
                        value = int(question.low + (question.high - question.low) * ((rater + seat) % 5) / 4)
                        out.writerow([episode.external_id or f"parley-episode-{episode.pk}", f"prolific-{rater:04d}",
                                      question.key, seat, value, "Rated for the benchmark."])
    rows = raters * len(chosen) * 2 * len(questions)
    started = time.perf_counter()
    result = import_ratings(path, study=study)
    elapsed = time.perf_counter() - started
    assert result.created["rating"] == raters * len(chosen)
    print(f"ratings:   {elapsed:6.2f} s  {rows / elapsed:7.0f} rows/s  ({rows} long rows, "
          f"{raters * len(chosen)} ratings)")
    started = time.perf_counter()
    again = import_ratings(path, study=study)
    elapsed = time.perf_counter() - started
    assert again.unchanged["rating"] == raters * len(chosen)
    print(f"ratings again: {elapsed:6.2f} s  (all unchanged)")
    users = list(ExternalAnnotator.objects.filter(study=study).values_list("user_id", flat=True))
    study.delete()
    Respondent.objects.filter(user_id__in=users).delete()
    get_user_model().objects.filter(pk__in=users).delete()


def time_sotopia_logs(team) -> None:  # noqa: ANN001 - a Team, imported after django.setup()
    """The early v1 transcripts and the human-evaluation exports, each read from text alone, into an
    empty team: the scenario and people are rebuilt from the log, the turns parsed out of prose."""
    from benchmark.importing import import_file

    for label, paths in (
        ("v1 text", [SOTOPIA / "sotopia_v1_transcript_only_30.jsonl"]),
        ("human eval", sorted(SOTOPIA.glob("*human_eval*.json")) + sorted(SOTOPIA.glob("*humaneval_[!g]*.json"))),
    ):
        started = time.perf_counter()
        results = [import_file(path, team=team) for path in paths]
        elapsed = time.perf_counter() - started
        episodes = sum(result.created["episode"] for result in results)
        turns = sum(result.created["turn"] for result in results)
        print(f"{label + ':':11}{elapsed:6.2f} s  for {len(paths)} files, {episodes} episodes, {turns} turns "
              f"({episodes / elapsed:.0f} episodes/s)")


if __name__ == "__main__":
    main()
