"""The files of one ProMediate run folder, each read and checked on its own (``promediate_runs`` checks them
against each other and against the case's scenario, and saves the episode).

The folder's path names the run: ``<case>/<method>/<model>_<response_type>_<mode>_<intervene_freq>_<id>``.
``conversation.txt`` is read from its ``📋 Conversation Summary:`` line on, a line that starts no turn
continuing the turn before it; the JSON files are lists (one snapshot, or one judged turn, per item); the CSV
is one row whose numbers are read as numbers, its Python lists as lists and its empty cells as None.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .problems import ImportProblem
from .promediate_modes import MODES
from .reading import load_json, read_text
from .records import Draft, EpisodeDraft, Origin, Remark

CONVERSATION = "conversation.txt"
ATTITUDES = "attitudes.json"
AGREEMENT = "agreement_scores.json"
BEHAVIOUR = "behavior_score.json"
RESULTS = "results_summary.csv"
SUMMARY = "📋 Conversation Summary:"
_TURN = re.compile(r'^🔄 Turn (\d+): (.*?): "(.*)$')
# Upstream's --method -> Parley's mediator condition.
METHODS = {"NoAgent": "none", "Baseline2": "generic", "Social": "social", "Baseline1": "innerthought", "Naive": "naive"}
RESPONSE_TYPES = ("separate", "combined")
FREQUENCIES = ("less", "more", "none")
MI_KEYS = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")


@dataclass
class Utterance:
    speaker: str
    text: str
    origin: Origin


@dataclass
class PairScore:
    point: int
    topic: str
    pair: tuple[str, str]  # in the scenario's party order
    values: dict[str, Any]


@dataclass
class UpstreamRun:
    """One run folder as read from its files; ``resolve`` checks it against the case's scenario."""

    folder: str  # <case>/<method>/<name>, as messages name it
    case: str
    method: str
    model: str
    response_type: str
    mode: str
    frequency: str
    run_id: str
    utterances: list[Utterance]
    attitudes: list[Any] | None = None
    agreement: list[Any] | None = None
    behaviour: list[Any] | None = None
    results: dict[str, Any] | None = None
    episode: EpisodeDraft | None = None
    attitude_rows: list[tuple[int, str, str, str]] = field(default_factory=list)  # point, party, topic, text
    pair_rows: list[PairScore] = field(default_factory=list)
    mi: list[dict[str, Any]] = field(default_factory=list)  # {"turn_index", "scores", "reasoning"} per intervention

    def origin(self, name: str, place: str | None = None) -> Origin:
        return Origin(f"{self.folder}/{name}", place)


def claims(path: Path) -> bool:
    return next(path.rglob(CONVERSATION), None) is not None


def parse_path(path: Path) -> list[Draft | UpstreamRun]:
    """Every run folder at or under ``path`` (a folder holding ``conversation.txt``)."""
    if not path.is_dir():
        raise ImportProblem(
            "a ProMediate run is a folder (import the folder that holds conversation.txt)", file=path.name
        )
    folders = sorted({found.parent for found in path.rglob(CONVERSATION)})
    if not folders:
        raise ImportProblem(f"holds no {CONVERSATION} (a ProMediate run folder)", file=path.name)
    runs = [read_run(folder) for folder in folders]
    remark = Remark()
    missing = [
        f"{run.folder} ({', '.join(name for name, value in files_of(run) if value is None)})"
        for run in runs
        if any(value is None for _name, value in files_of(run))
    ]
    if missing:
        remark.notes.append(
            f"Run folders without some of upstream's files (imported without them): {'; '.join(missing)}."
        )
    return [*runs, remark]


def files_of(run: UpstreamRun) -> list[tuple[str, Any]]:
    files = [(ATTITUDES, run.attitudes), (AGREEMENT, run.agreement), (RESULTS, run.results)]
    return files + ([(BEHAVIOUR, run.behaviour)] if METHODS[run.method] != "none" else [])


def read_run(folder: Path) -> UpstreamRun:
    """A run folder's files, each checked on its own; ``resolve`` checks them against each other."""
    name = f"{folder.parent.parent.name}/{folder.parent.name}/{folder.name}"
    origin = Origin(name)
    case, method = folder.parent.parent.name, folder.parent.name
    if method not in METHODS:
        raise origin.problem(
            f"{method!r} is not one of upstream's methods ({', '.join(METHODS)}): a run folder sits "
            "in output/<case>/<method>/"
        )
    parts = folder.name.split("_")
    if len(parts) < 5:
        raise origin.problem("a run folder is named <model>_<response_type>_<mode>_<intervene_freq>_<id>")
    model, response_type, mode, frequency, run_id = "_".join(parts[:-4]), *parts[-4:]
    for value, allowed, what in (
        (response_type, RESPONSE_TYPES, "response type"),
        (mode, MODES, "mode"),
        (frequency, FREQUENCIES, "intervene_freq"),
    ):
        if value not in allowed:
            raise origin.problem(f"the folder name's {what} {value!r} is not one of {', '.join(allowed)}")
    run = UpstreamRun(name, case, method, model, response_type, mode, frequency, run_id, [])
    run.utterances = read_summary(read_text(folder / CONVERSATION), run.origin(CONVERSATION))
    if (folder / ATTITUDES).is_file():
        run.attitudes = snapshots(folder / ATTITUDES, run.origin(ATTITUDES))
    if (folder / AGREEMENT).is_file():
        run.agreement = snapshots(folder / AGREEMENT, run.origin(AGREEMENT))
    if (folder / BEHAVIOUR).is_file():
        run.behaviour = snapshots(folder / BEHAVIOUR, run.origin(BEHAVIOUR))
    if (folder / RESULTS).is_file():
        run.results = read_results(read_text(folder / RESULTS), run.origin(RESULTS))
    return run


def snapshots(path: Path, origin: Origin) -> list[Any]:
    value = load_json(read_text(path), origin)
    if not isinstance(value, list):
        raise origin.problem("expected a JSON list (one entry per snapshot or judged turn)")
    return value


def read_summary(text: str, origin: Origin) -> list[Utterance]:
    """The summary's utterances; a line that starts no turn continues the one before it."""
    lines = text.splitlines()
    try:
        start = next(number for number, line in enumerate(lines) if line.strip() == SUMMARY) + 1
    except StopIteration:
        raise origin.problem(f"no line {SUMMARY!r}: only the summary after it is read") from None
    utterances: list[Utterance] = []
    for number, line in enumerate(lines[start:], start=start + 1):
        turn = _TURN.match(line)
        if turn is None:
            if utterances:
                utterances[-1].text += "\n" + line
            elif line.strip():
                raise origin.problem(f"line {number} is no '🔄 Turn 1: <name>: \"...\"' line")
            continue
        place = Origin(origin.file, f"line {number}")
        if int(turn.group(1)) != len(utterances) + 1:
            raise place.at("turn").problem(f"Turn {turn.group(1)} follows Turn {len(utterances)}")
        utterances.append(Utterance(turn.group(2).strip(), turn.group(3), place))
    if not utterances:
        raise origin.problem("the summary lists no turns")
    for utterance in utterances:
        text = utterance.text.rstrip()
        utterance.text = text[:-1] if text.endswith('"') else text
    return utterances


def read_results(text: str, origin: Origin) -> dict[str, Any]:
    """The one row of ``results_summary.csv``: numbers as numbers, Python lists as lists, empty as None."""
    rows = list(csv.DictReader(io.StringIO(text)))
    if len(rows) != 1:
        raise origin.problem(f"expected one row of results, got {len(rows)}")
    values: dict[str, Any] = {}
    for name, raw in rows[0].items():
        raw = (raw or "").strip()
        if not raw:
            values[name] = None
            continue
        try:
            values[name] = float(raw) if not raw.startswith("[") else ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            raise Origin(origin.file, "row 1", name).problem(f"{raw[:40]!r} is neither a number nor a list") from None
    return values
