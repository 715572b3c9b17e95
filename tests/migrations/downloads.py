"""What researchers download, fetched the same way from the old code and the current one, and compared.

``make_fixture.py`` runs at commit df40544: after building the demo it fetches every download in
``download_requests`` and saves them in ``data/downloads_before_issue_13.json.gz``. The migration
test loads the same rows into the old schema, migrates forward, fetches the same requests from the
current code and calls ``assert_downloads_unchanged``. Both sides go through the researcher's own
interface, so a moved module cannot hide a change:

- ``GET <path>``: the page's download, fetched with Django's test client as the demo researcher:
  every annotation study's ``report.json``, the CSV tables in its ``report/tables.zip`` and its
  annotation exports (``export.csv``, latest versions and ``?all_versions=1``); the benchmark
  results (``results.json`` and the four CSV tables, under the default filters and a few others:
  the barrier seat, the judge model with a prompt version, the human mean, one run's tag); each
  chat study's ``participants.csv``;
- ``manage.py <command> <options>``: a command's output, written to a file: ``export_episodes`` as
  Parley JSON Lines and as a CSV of turns.

Left out on purpose: ``report.html`` and the results page (layout, not data), the ZIP bundle (it
holds the same report.json, tables and annotations.csv as the downloads above, with figures), the
JSON Lines annotation export (the same records as ``export.csv``) and ``agreement_report`` /
``benchmark_report``, which call the same builders as the views (``build_report``,
``build_results``) with the same default seeds and resamples.

Values that depend on the moment of the request, not on the data, are replaced on both sides
before saving and comparing (``NORMALISED``): only the ``generated_at`` stamp at the top of the
agreement report and of results.json. Every other value comes from stored rows or seeded
computation (bootstraps use the builders' default seeds) and must come out the same.

Comparing: the status and content type must match; JSON is compared value by value (object keys
in any order, lists in order), CSV cell by cell (same columns in the same order, same rows in the
same order), a ZIP member by member. Two numbers are equal within 1e-9 relative (1e-12 absolute,
for values that are zero but for rounding, such as a correlation summed in another order on
PostgreSQL); an int equals the same float. A change made on purpose is declared in ``RENAMED``,
``ADDED`` or ``DROPPED`` with its reason, so it shows in review; a declaration that no download
uses any more fails too, so the lists stay true.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import re
import shlex
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

DOWNLOADS = Path(__file__).parent / "data" / "downloads_before_issue_13.json.gz"
RESEARCHER = "researcher"  # the demo researcher, a member of the demo team, who fetches every download
SHOWN = 5  # differences quoted per download
RELATIVE, ABSOLUTE = 1e-9, 1e-12

# The moment of the request, not the data: replaced on both sides (top-level key of a JSON download).
NORMALISED = {"generated_at": "(the time of the request)"}

# Names changed on purpose. Keys: (download, name), both patterns where ``*`` matches anything; a
# download is its request (``GET /benchmark/results/results.json``), a ZIP member is
# ``<request> :: <member>``; a name is a CSV column, or a JSON key's dotted path from the top
# (``questions.*.judge.evaluator``; ``*`` is one whole key or list index; a key that holds a dot,
# such as ``feature_labels.barrier_speech.hedges``, spans as many segments as it has parts).
# RENAMED: old name -> (new key, why); ADDED: a new name -> why (a list's entries after the old ones are
# named by index, ``evaluators.2``); DROPPED: an old name -> why.
_TWO_PERCENTS = ("issue 21: a barrier signature's deviation in percent is named apart from SocialVeil's change from "
                 "baseline (percent_change)")
_DEVIATIONS_CSV = "GET /benchmark/results/deviations.csv*"
RENAMED: dict[tuple[str, str], tuple[str, str]] = {
    ("GET /benchmark/results/results.json*", "deviations.*.percent"): ("deviation_percent", _TWO_PERCENTS),
    ("GET /benchmark/results/results.json*", "deviations.*.percent_ci95"): ("deviation_percent_ci95", _TWO_PERCENTS),
    ("GET /benchmark/results/results.json*", "deviations.*.percent_floor"): ("deviation_percent_floor", _TWO_PERCENTS),
    (_DEVIATIONS_CSV, "percent"): ("deviation_percent", _TWO_PERCENTS),
    (_DEVIATIONS_CSV, "percent_ci_low"): ("deviation_percent_ci_low", _TWO_PERCENTS),
    (_DEVIATIONS_CSV, "percent_ci_high"): ("deviation_percent_ci_high", _TWO_PERCENTS),
}
# Values changed on purpose: the old one dropped and the new one added under the same name.
_REWORDED = {
    ("GET /benchmark/results/results.json*", "schema_version"): f"2 since {_TWO_PERCENTS}",
    ("GET /benchmark/results/results.json*", "deviations.*.notes"): f"the notes name the key: {_TWO_PERCENTS}",
    ("GET /benchmark/results/results.json*", "methods.deviations"): f"the method names the key: {_TWO_PERCENTS}",
    (_DEVIATIONS_CSV, "notes"): f"the notes name the key: {_TWO_PERCENTS}",
    ("GET /annotate/studies/*/report.json", "questions.*.methods.krippendorff_alpha"):
        "issue 22: the method says alpha is computed by the krippendorff package (the same values)",
}
_RESULTS = "GET /benchmark/results/results.json*"
_JUDGES = "the judge is a respondent to instruments (issue 13): results read one kind of respondent"
_REPORTS = "GET /annotate/studies/*/report.json"
_COMPARED = "human answers are compared with any respondent kind's through one reader (issue 13)"
_PARLEY_EXPORT = "manage.py export_episodes --format parley"
_GOALS_AS_ROWS = "a role's goals are rows now (issue 13): one per line of the old goal text, each with its tags"
ADDED: dict[tuple[str, str], str] = {
    (_RESULTS, "filters.respondent_kind"): f"{_JUDGES}, asked for by this filter (empty: judges, or the named one's)",
    (_RESULTS, "respondent_kind"): f"{_JUDGES}: the kind the report read",
    (_RESULTS, "evaluator.kind"): f"{_JUDGES}: the evaluator's kind",
    (_RESULTS, "evaluator.members"): "several judges have a majority: the respondents a majority takes the median of",
    (_RESULTS, "other_evaluators.*.kind"): f"{_JUDGES}: each evaluator's kind",
    (_RESULTS, "other_evaluators.*.members"): "the same shape as the evaluator's (empty: one respondent)",
    (_RESULTS, "evaluators"): "several judges: each judge of the kind and their majority, side by side",
    (_RESULTS, "methods.respondents"): f"{_JUDGES}: how the kind and the evaluator are chosen",
    (_RESULTS, "methods.majority"): "several judges: how their majority is taken",
    (_REPORTS, "compared_with"): f"{_COMPARED}: the respondent kinds the annotators are compared with",
    (_REPORTS, "questions.*.judge.respondent_kind"): f"{_COMPARED}: the kind of the respondent compared with",
    (_REPORTS, "methods.respondents"): f"{_COMPARED}: whose answers count and how the judge is chosen",
    (_RESULTS, "other_evaluators.*"): "chat participants answer the chat questionnaire's SocialVeil dimensions (issue "
        "13): a participant with scores is another evaluator, of kind participant (an entry after the old ones)",
    (_PARLEY_EXPORT, "*.responses"):
        "every respondent's answers about the episode (judges, imported ratings), which replace evaluations",
    (_RESULTS, "filters.template"): "results can be narrowed to one template's casts",
    ("GET /benchmark/results/episodes.csv*", "template"): "the template each episode's scenario was made from",
    (_PARLEY_EXPORT, "*.scenario.roles.*.goals"): _GOALS_AS_ROWS,
    (_PARLEY_EXPORT, "*.scenario.roles.*.slot"): "a template role's constraints on who may fill it",
    (_PARLEY_EXPORT, "*.scenario.probes"): "multiple-choice questions about a role's private information",
    (_PARLEY_EXPORT, "*.scenario.turn_taking"): "round robin, or random order after a greeting",
    (_PARLEY_EXPORT, "*.scenario.greeter"): "the role that greets first under random order",
    (_PARLEY_EXPORT, "*.scenario.turn_cap"): "a scenario's own turn cap, overriding a run's",
    (_PARLEY_EXPORT, "*.scenario.is_template"): "templates: scenarios whose roles are slots to fill with casts",
    (_PARLEY_EXPORT, "*.scenario.template"): "the template a scenario was instantiated from, in full",
    (_REPORTS, "agentsense"): "AgentSense (issue 14): goals and probes against self, other and external answers; "
        "null for a study that asks neither",
    (_REPORTS, "span_review"): "SHREC's review step (issue 25, SH-15): a span review study's persistent "
        "disagreement; null for every other study",
    ("GET /annotate/studies/*/export.csv*", "goal"): "AgentSense (issue 14): the goal a per-goal answer is about",
    ("GET /annotate/studies/*/export.csv*", "goal_text"): "AgentSense (issue 14): that goal's text",
}
ADDED.update(_REWORDED)
ADDED.update({
    ("GET /benchmark/results/results.json*", "filters.difficulty"): "issue 21: results narrowed to a difficulty "
        "(Sotopia-Hard)",
    ("GET /benchmark/results/results.json*", "filters.scenarios"): "issue 21: results narrowed to named scenarios",
    ("GET /chat/*/participants.csv", "goals"): "issue 21: a group chat participant's own goal verdicts and probe "
        "answers (AgentSense's human test), before the questionnaire's columns",
    ("GET /chat/*/participants.csv", "goals_reached"): "issue 21: as goals",
    ("GET /chat/*/participants.csv", "goal_answers"): "issue 21: as goals",
    ("GET /chat/*/participants.csv", "probes"): "issue 21: as goals",
    ("GET /chat/*/participants.csv", "probes_correct"): "issue 21: as goals",
    ("GET /chat/*/participants.csv", "probe_answers"): "issue 21: as goals",
    ("GET /annotate/studies/*/export.csv*", "excerpt"): "issue 24: the turns an item showed (a window of its episode "
        "for ProMediate's per-intervention and snippet items; empty for a whole episode)",
    ("GET /annotate/studies/*/export.csv*", "start_s"): "issue 25: where a span marked on the episode's recording "
        "starts, in seconds (empty for spans on the text and for answers)",
    ("GET /annotate/studies/*/export.csv*", "end_s"): "issue 25: as start_s, where it ends",
    ("GET /annotate/studies/*/export.csv*", "channel"): "issue 25: whether a span's behaviour was verbal, "
        "non-verbal or both (empty when not said, and for answers)",
    (_REPORTS, "questions.*.spans.unitizing_alpha"): "issue 25: Krippendorff's unitizing alpha of the spans, on "
        "turns and on seconds, beside the overlap measures",
    ("GET /annotate/studies/*/report/tables.zip :: spans.csv", "unitizing_alpha_turns"): "issue 25: as the report's "
        "spans.unitizing_alpha.turns",
    ("GET /annotate/studies/*/report/tables.zip :: spans.csv", "unitizing_alpha_seconds"): "issue 25: as the "
        "report's spans.unitizing_alpha.seconds",
    ("GET /annotate/studies/*/export.csv*", "participant_id"): "issue 26: a crowd annotator's platform id (the "
        "researchers pay by it; empty for annotators with an account)",
    ("GET /annotate/studies/*/export.csv*", "crowd_outcome"): "issue 26: whether a crowd annotator finished or was "
        "screened out (empty for annotators with an account)",
    ("GET /annotate/studies/*/export.csv*", "annotator_removed_at"): "issue 26: when a researcher removed the "
        "annotator from the pool; their submitted work is kept and marked",
})
_QUALITY = "issue 26: each annotator's agreement with the others and with gold, and MACE competence"
ADDED.update({
    (_REPORTS, "annotators"): f"{_QUALITY}, per question (the statistics before it are unchanged)",
    (_REPORTS, "methods.annotators"): f"{_QUALITY}: how they are computed, citing MACE (Hovy et al. 2013)",
    ("GET /annotate/studies/*/report/tables.zip", "annotators.csv"): f"{_QUALITY}: a new table of the ZIP",
})
DROPPED: dict[tuple[str, str], str] = {
    **_REWORDED,
    (_PARLEY_EXPORT, "*.evaluations"):
        "scores are answers now, exported as responses; files with evaluations are still read",
    (_PARLEY_EXPORT, "*.scenario.roles.*.goal"): _GOALS_AS_ROWS + "; files with 'goal' still import",
}

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


# --- which downloads ----------------------------------------------------------------------------------

RESULT_FILTERS = ("", "?seat=barrier", "?evaluator=openai/gpt-4o-mini&prompt_version=v1",
                  "?evaluator=human+mean", "?tag=fixture-run")
RESULT_TABLES = ("means", "deviations", "correlations", "episodes")


def download_requests(annotation_studies: Iterable[str], chat_studies: Iterable[str]) -> list[str]:
    """Every download of the demo team: the studies are slugs (all of the team's)."""
    requests = []
    for slug in annotation_studies:
        base = f"GET /annotate/studies/{slug}"
        requests += [f"{base}/report.json", f"{base}/report/tables.zip", f"{base}/export.csv",
                     f"{base}/export.csv?all_versions=1"]
    for query in RESULT_FILTERS:
        requests.append(f"GET /benchmark/results/results.json{query}")
        requests += [f"GET /benchmark/results/{table}.csv{query}" for table in RESULT_TABLES]
    requests += [f"GET /chat/{slug}/participants.csv" for slug in chat_studies]
    requests += ["manage.py export_episodes --format parley", "manage.py export_episodes --format csv"]
    return requests


# --- fetching -------------------------------------------------------------------------------------------


def fetch_all(requests: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each request's download as plain data (see ``fetch``), as the demo researcher."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=RESEARCHER))
    return {request: fetch(client, request) for request in requests}


def fetch(client: Any, request: str) -> dict[str, Any]:
    """``{"status", "content_type", <kind>: body}``, the body parsed by kind: json, jsonl, csv, zip, text."""
    kind, _, rest = request.partition(" ")
    if kind == "GET":
        response = client.get(rest)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        content_type = response.get("Content-Type", "")
        fetched = {"status": response.status_code, "content_type": content_type}
        if response.status_code != 200:
            return {**fetched, "text": body.decode("utf-8", errors="replace")}
        return {**fetched, **_parsed(rest.split("?")[0], body)}
    if kind == "manage.py":
        from django.core.management import call_command

        arguments = shlex.split(rest)
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "out"
            call_command(*arguments, "--out", str(out), stdout=io.StringIO(), stderr=io.StringIO())
            body = out.read_bytes()
        suffix = ".jsonl" if "parley" in arguments else ".csv"
        return {"status": 0, "content_type": "", **_parsed(f"out{suffix}", body)}
    raise ValueError(f"{request!r}: a request begins with 'GET ' or 'manage.py '")


def _parsed(name: str, body: bytes) -> dict[str, Any]:
    if name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            return {"zip": {member: _parsed(member, archive.read(member)) for member in archive.namelist()}}
    text = body.decode("utf-8")
    if name.endswith(".json"):
        data = json.loads(text)
        if isinstance(data, dict):
            data.update({key: value for key, value in NORMALISED.items() if key in data})
        return {"json": data}
    if name.endswith(".jsonl"):
        return {"jsonl": [json.loads(line) for line in text.splitlines() if line.strip()]}
    if name.endswith(".csv"):
        return {"csv": list(csv.reader(io.StringIO(text, newline="")))}
    return {"text": text}


def save(path: Path, downloads: Mapping[str, Any], made_with: str) -> None:
    """Gzip-compressed JSON, byte for byte the same for the same downloads."""
    document = {"made_with": made_with, "researcher": RESEARCHER, "downloads": downloads}
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as packed:
        packed.write((json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))


def stored_downloads(path: Path = DOWNLOADS) -> dict[str, dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        return json.load(stream)["downloads"]


# --- comparing ------------------------------------------------------------------------------------------


class _Declarations:
    """The declared changes, and which of them a comparison met."""

    def __init__(self) -> None:
        self.used: set[tuple[str, tuple[str, str]]] = set()

    def _find(self, table: Mapping[tuple[str, str], Any], kind: str, download: str, name: str) -> Any:
        for key, value in table.items():
            if fnmatchcase(download, key[0]) and _name_matches(name, key[1]):
                self.used.add((kind, key))
                return value
        return None

    def renamed(self, download: str, name: str) -> str | None:
        found = self._find(RENAMED, "renamed", download, name)
        return found[0] if found else None

    def added(self, download: str, name: str) -> bool:
        return self._find(ADDED, "added", download, name) is not None

    def dropped(self, download: str, name: str) -> bool:
        return self._find(DROPPED, "dropped", download, name) is not None

    def unused(self) -> list[str]:
        tables = {"renamed": RENAMED, "added": ADDED, "dropped": DROPPED}
        return [f"{kind} {key} is declared but no download has it: remove the declaration"
                for kind, table in tables.items() for key in table if (kind, key) not in self.used]


def _name_matches(name: str, pattern: str) -> bool:
    """Dotted names match segment by segment (``*`` is one whole segment); CSV columns match plainly."""
    names, patterns = name.split("."), pattern.split(".")
    return len(names) == len(patterns) and all(fnmatchcase(n, p) for n, p in zip(names, patterns, strict=True))


def assert_downloads_unchanged(stored: Mapping[str, dict[str, Any]], fetched: Mapping[str, dict[str, Any]]) -> None:
    """Fail with every difference between the stored downloads and the fetched ones, by download."""
    declarations = _Declarations()
    problems = []
    for request, before in stored.items():
        differences = _download_differences(request, before, fetched[request], declarations)
        if differences:
            shown = differences[:SHOWN] + ([f"... and {len(differences) - SHOWN} more"] if len(differences) > SHOWN
                                           else [])
            problems.append(f"{request}:\n" + "\n".join(f"  {line}" for line in shown))
    problems += declarations.unused()
    if problems:
        raise AssertionError(f"{len(problems)} of {len(stored)} downloads differ from the old code's:\n"
                             + "\n".join(problems))


def _download_differences(download: str, before: dict[str, Any], now: dict[str, Any],
                          declarations: _Declarations) -> list[str]:
    for key in ("status", "content_type"):
        if before[key] != now[key]:
            return [f"{key}: was {before[key]!r}, now {now[key]!r}" + (f": {now['text'][:300]!r}" if "text" in now
                                                                      and "text" not in before else "")]
    (kind,) = set(before) - {"status", "content_type"}
    if kind not in now:
        return [f"was {kind}, now {sorted(set(now) - {'status', 'content_type'})}"]
    if kind == "zip":
        return _zip_differences(download, before["zip"], now["zip"], declarations)
    if kind == "csv":
        return _csv_differences(download, before["csv"], now["csv"], declarations)
    if kind in ("json", "jsonl"):
        return _json_differences(download, "", before[kind], now[kind], declarations)
    return [] if before[kind] == now[kind] else [f"text was {before[kind][:200]!r}, now {now[kind][:200]!r}"]


def _zip_differences(download: str, before: dict[str, Any], now: dict[str, Any],
                     declarations: _Declarations) -> list[str]:
    lines = [f"member {name} is gone" for name in before if name not in now]
    lines += [f"member {name} is new" for name in now if name not in before and not declarations.added(download, name)]
    for name in before:
        if name in now:
            unframed = {"status": 0, "content_type": ""}
            lines += [f"{name}: {line}" for line in _download_differences(
                f"{download} :: {name}", {**unframed, **before[name]}, {**unframed, **now[name]}, declarations)]
    return lines


def _csv_differences(download: str, before: list[list[str]], now: list[list[str]],
                     declarations: _Declarations) -> list[str]:
    if not before or not now:
        return [] if before == now else [f"was {len(before)} lines, now {len(now)}"]
    old_header, new_header = before[0], now[0]
    expected = []
    for column in old_header:
        if declarations.dropped(download, column):
            continue
        expected.append(declarations.renamed(download, column) or column)
    header = [column for column in new_header if column in expected or not declarations.added(download, column)]
    lines = []
    if header != expected:
        missing = [column for column in expected if column not in header]
        extra = [column for column in header if column not in expected]
        lines.append(f"columns: missing {missing}, unexpected {extra}" if missing or extra
                     else f"columns in another order: was {expected}, now {header}")
        return lines
    old_index = {name: index for index, name in enumerate(old_header)}
    renamed_back = {declarations.renamed(download, column) or column: column for column in old_header}
    new_index = {name: index for index, name in enumerate(new_header)}
    old_rows = [[row[old_index[renamed_back[column]]] for column in header] for row in before[1:]]
    new_rows = [[row[new_index[column]] for column in header] for row in now[1:]]
    if len(old_rows) != len(new_rows):
        lines.append(f"{len(old_rows)} rows before, {len(new_rows)} now")
    for number, (old, new) in enumerate(zip(old_rows, new_rows, strict=False), start=2):
        cells = [f"{column}: was {was!r}, now {is_!r}"
                 for column, was, is_ in zip(header, old, new, strict=True) if not _same_cell(was, is_)]
        if cells:
            lines.append(f"line {number}: " + "; ".join(cells))
    if lines and len(old_rows) == len(new_rows) and _same_rows_in_any_order(old_rows, new_rows):
        return [f"the same {len(old_rows)} rows in another order"]
    return lines


def _same_rows_in_any_order(old_rows: list[list[str]], new_rows: list[list[str]]) -> bool:
    remaining = list(new_rows)
    for old in old_rows:
        match = next((i for i, row in enumerate(remaining) if all(map(_same_cell, old, row))), None)
        if match is None:
            return False
        remaining.pop(match)
    return True


def _same_cell(old: str, new: str) -> bool:
    if old == new:
        return True
    if _NUMBER.fullmatch(old) and _NUMBER.fullmatch(new):
        return _same_number(float(old), float(new))
    return False


def _same_number(old: float, new: float) -> bool:
    if math.isnan(old) or math.isnan(new):
        return math.isnan(old) and math.isnan(new)
    return math.isclose(old, new, rel_tol=RELATIVE, abs_tol=ABSOLUTE)


def _json_differences(download: str, path: str, before: Any, now: Any, declarations: _Declarations) -> list[str]:
    where = path or "(top)"
    if isinstance(before, dict) and isinstance(now, dict):
        lines = []
        seen = set()
        for key, value in before.items():
            name = f"{path}.{key}" if path else str(key)
            if declarations.dropped(download, name):
                continue
            renamed = declarations.renamed(download, name)
            new_key = renamed.rsplit(".", 1)[-1] if renamed else key
            seen.add(new_key)
            if new_key not in now:
                lines.append(f"{name}: gone" + (f" (declared renamed to {new_key!r})" if new_key != key else ""))
                continue
            lines += _json_differences(download, name, value, now[new_key], declarations)
        for key in now:
            name = f"{path}.{key}" if path else str(key)
            if key not in seen and not declarations.added(download, name):
                lines.append(f"{name}: new, {_short(now[key])}")
        return lines
    if isinstance(before, list) and isinstance(now, list):
        lines = []
        extra = [f"{path}.{index}" for index in range(len(before), len(now))]  # entries only the new code has
        if len(before) > len(now) or not all(declarations.added(download, name) for name in extra):
            lines.append(f"{where}: {len(before)} entries before, {len(now)} now")
        for index, (old, new) in enumerate(zip(before, now, strict=False)):
            lines += _json_differences(download, f"{path}.{index}" if path else str(index), old, new, declarations)
        return lines
    if _is_number(before) and _is_number(now):
        return [] if _same_number(float(before), float(now)) else [f"{where}: was {before!r}, now {now!r}"]
    return [] if before == now and type(before) is type(now) else [f"{where}: was {_short(before)}, now {_short(now)}"]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."
