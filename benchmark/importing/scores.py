"""A scores-only file: one score a row, for episodes already in Parley, as CSV or JSON Lines.

Columns (CSV header, or keys of each JSON line): ``episode_id, respondent, question, value``, and
optionally ``seat``, ``reasoning`` and ``prompt_version``. ``question`` is one of the judge presets'
dimensions (Sotopia-EVAL's seven, asked per seat, so ``seat`` is required; SocialVeil's two, asked
per episode, so ``seat`` is empty); ``value`` is a number in the question's range. ``respondent``
names the judge model (``gpt-4o``, ``scripted``), or ``human mean`` for a mean of human ratings, as
in the ``evaluations`` of Parley files and Sotopia's rewards: the rows of one respondent and prompt
version about one episode become that respondent's response to the preset, as a judge run would.

The file holds no episodes: each ``episode_id`` must be one of the team's episodes (an unknown one
is refused, naming its row, since it is most likely a typo), and each ``seat`` one of its seats.
What the episode has already is unchanged; a different value for a stored answer is refused
(``saving_stored.add_to_stored``).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from ..csv_output import restore_cell
from ..models import Episode
from .format import FileFormat
from .parley import json_lines
from .reading import check_storable_text
from .records import MAX_SMALL_INTEGER, Fields, Origin, check_integer, describe, max_length
from .responses import JUDGE_QUESTIONS, EpisodeResponsesDraft, ScoreDraft, scores_to_responses
from .turns_csv import rows

REQUIRED_COLUMNS = ("episode_id", "respondent", "question", "value")
OPTIONAL_COLUMNS = ("seat", "reasoning", "prompt_version")


def recognises(first: object) -> bool:
    """A CSV header or a JSON line that names every required column."""
    return isinstance(first, (list, dict)) and all(column in first for column in REQUIRED_COLUMNS)


def parse(text: str, file: str) -> list[EpisodeResponsesDraft]:
    suffix = Path(file).suffix.lower()
    if suffix == ".csv" or (suffix not in (".jsonl", ".ndjson") and not text.lstrip().startswith("{")):
        records = csv_records(text, file)
    else:
        records = [(origin, Fields(value, origin)) for origin, value in json_lines(text, file)]
    by_episode: dict[str, list[ScoreDraft]] = {}
    first_origin: dict[str, Origin] = {}
    seen: dict[tuple[str, str, str, int | None, str], Origin] = {}
    for origin, fields in records:
        episode_id, score = read_score(fields)
        key = (episode_id, score.evaluator, score.prompt_version, score.seat_position, score.dimension)
        if key in seen:
            raise origin.at("question").problem(
                f"{score.evaluator} scores {score.dimension!r} of episode {episode_id!r} for the same seat "
                f"twice (first at {seen[key].place})"
            )
        seen[key] = origin
        by_episode.setdefault(episode_id, []).append(score)
        first_origin.setdefault(episode_id, origin)
    return [
        EpisodeResponsesDraft(
            episode_id=episode_id,
            origin=first_origin[episode_id],
            responses=scores_to_responses(scores, {score.seat_position for score in scores} - {None}),
        )
        for episode_id, scores in by_episode.items()
    ]


def csv_records(text: str, file: str) -> list[tuple[Origin, Fields]]:
    """Each data row as fields by column name: a number where the column holds one, ``None`` when empty."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [column.strip().lower() for column in next(reader, [])]
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if missing:
        raise Origin(file, "row 1").problem(
            f"the header lacks {', '.join(missing)}; a scores file names the columns {', '.join(REQUIRED_COLUMNS)} "
            f"(and may add {', '.join(OPTIONAL_COLUMNS)})"
        )
    records = []
    for number, cells in enumerate(rows(reader, file), start=2):
        if not any(cell.strip() for cell in cells):
            continue
        origin = Origin(file, f"row {number}")
        if len(cells) != len(header):
            raise origin.problem(f"has {len(cells)} cells; the header has {len(header)}")
        values: dict[str, Any] = {}
        for column, cell in zip(header, cells, strict=True):
            if column not in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS):
                continue
            cell = restore_cell(cell)
            check_storable_text(cell, origin.at(column))
            values[column] = cell.strip() if column != "reasoning" else cell
        values["value"] = csv_number(values["value"], origin.at("value"))
        values["seat"] = csv_seat(values.get("seat", ""), origin.at("seat"))
        records.append((origin, Fields(values, origin)))
    return records


def csv_number(text: str, origin: Origin) -> float | None:
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        raise origin.problem(f"expected a number, got {describe(text)}") from None
    if not math.isfinite(number):
        raise origin.problem(f"expected a finite number, got {text!r}")
    return number


def csv_seat(text: str, origin: Origin) -> int | None:
    if not text:
        return None
    if not text.isdigit():
        raise origin.problem(f"expected a seat position (a whole number of 0 or more), got {text!r}")
    return check_integer(int(text), origin, high=MAX_SMALL_INTEGER)


def read_score(fields: Fields) -> tuple[str, ScoreDraft]:
    """One row: its episode id and score, the question known, the value in its range, the seat given
    exactly when the question is asked per seat (whether the episode has that seat is checked on saving)."""
    origin = fields.origin
    episode_id = fields.text("episode_id", required=True, blank=False, max_length=max_length(Episode, "external_id"))
    evaluator = fields.text("respondent", required=True, blank=False)
    key = fields.text("question", required=True, blank=False)
    found = JUDGE_QUESTIONS.get(key)
    if found is None:
        raise origin.at("question").problem(f"{key!r} is not one of the judge presets' questions "
                                            f"({', '.join(JUDGE_QUESTIONS)})")
    question = found[1]
    value = fields.number("value", required=True)
    if not question.low <= value <= question.high:
        raise origin.at("value").problem(f"{value:g} is outside [{question.low}, {question.high}] for {key}")
    seat = fields.integer("seat", low=0, high=MAX_SMALL_INTEGER)
    if question.per_seat and seat is None:
        raise origin.at("seat").problem(f"{key} is scored per seat; give the seat position")
    if not question.per_seat and seat is not None:
        raise origin.at("seat").problem(f"{key} is scored once per episode; leave the seat empty")
    return episode_id, ScoreDraft(
        evaluator=evaluator, dimension=key, score=value, origin=origin, seat_position=seat,
        prompt_version=fields.text("prompt_version"), reasoning=fields.text("reasoning"),
    )


FORMAT = FileFormat(
    "scores", label="Scores of stored episodes (CSV or JSON Lines)",
    shape="a scores file (episode_id, respondent, question, value)",
    recognise=recognises, parse=parse,
)
