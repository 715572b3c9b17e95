"""A flat CSV of turns: ``episode_id, turn_index, speaker, action_type, text``.

The header is required; ``scenario`` and ``barrier`` are optional extra columns, and any other
column is ignored. Rows may come in any order. Speakers become seats in the order they first speak
(at least two per episode); each episode gets a placeholder scenario, since the file carries no
goals, and each speaker a character with external id ``csv:<name>``, shared by every episode that
names it.

Every cell is read back through ``benchmark.csv_output.restore_cell``: Parley's CSV export puts a
quote before text a spreadsheet would run as a formula (``'=1+1``), and one more before text that
already begins with quotes and such a character (``''=x`` for ``'=x``); the importer removes exactly
that quote, so export, import and export again gives the same bytes and the same turns.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.utils.text import slugify

from ..csv_output import restore_cell
from ..models import ActionType, Character, Episode, Scenario
from .checks import (
    check_character_values,
    check_episode,
)
from .format import FileFormat
from .reading import check_storable_text
from .records import (
    ACTIONS_NEEDING_CONTENT,
    MAX_INTEGER,
    MAX_TURN_CHARS,
    CharacterDraft,
    CharacterRef,
    Draft,
    EpisodeDraft,
    Origin,
    RoleDraft,
    ScenarioDraft,
    ScenarioRef,
    SeatDraft,
    TurnDraft,
    action_words,
    check_choice,
    check_text,
    goals_from_text,
    max_length,
    unique,
    values_of,
)

REQUIRED_COLUMNS = ("episode_id", "turn_index", "speaker", "action_type", "text")
OPTIONAL_COLUMNS = ("scenario", "barrier")
PLACEHOLDER_GOAL = "Not recorded: this episode was imported from a CSV of turns, which has no goals."
WHOLE_NUMBER = re.compile(r"[0-9]+")


@dataclass
class Row:
    origin: Origin
    index: int
    speaker: str
    action_type: str
    text: str


@dataclass
class EpisodeRows:
    episode_id: str
    origin: Origin
    rows: list[Row] = field(default_factory=list)
    scenario: str = ""
    barrier: str = ""


def recognises(first: object) -> bool:
    """Any CSV (a header read as column names): the last CSV format tried, whose parser names missing columns."""
    return isinstance(first, list)


def parse(text: str, file: str) -> list[Draft]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header_origin = Origin(file, "row 1")
    header = [column.strip().lower() for column in next(reader, [])]
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if missing:
        raise header_origin.problem(
            f"the header lacks {', '.join(missing)}; it must name the columns {', '.join(REQUIRED_COLUMNS)} "
            f"(and may add {', '.join(OPTIONAL_COLUMNS)})"
        )
    episodes: dict[str, EpisodeRows] = {}
    hint = f"; a turn's text may hold at most {MAX_TURN_CHARS} characters"
    for number, cells in enumerate(rows(reader, file, hint), start=2):
        if not any(cell.strip() for cell in cells):
            continue
        origin = Origin(file, f"row {number}")
        if len(cells) != len(header):
            raise origin.problem(f"has {len(cells)} cells; the header has {len(header)}")
        values = dict(zip(header, (restore_cell(cell) for cell in cells), strict=True))
        for column in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS):
            if column in values:
                check_storable_text(values[column], origin.at(column))
        episode_id = check_text(values["episode_id"].strip(), origin.at("episode_id"), blank=False,
                                max_length=max_length(Episode, "external_id"))
        group = episodes.setdefault(episode_id, EpisodeRows(episode_id, origin))
        for column in OPTIONAL_COLUMNS:
            given = values.get(column, "").strip()
            if given and getattr(group, column) and given != getattr(group, column):
                raise origin.at(column).problem(
                    f"{given!r} differs from {getattr(group, column)!r}, given earlier for episode {episode_id!r}"
                )
            if given:
                setattr(group, column, given)
        group.rows.append(read_row(values, origin))
    return [episode(group, file) for group in episodes.values()]


def rows(reader: Iterator[list[str]], file: str, hint: str = "") -> Iterator[list[str]]:
    """The data rows, with the csv module's own complaints (a cell over its size limit) located, and
    ``hint`` (what may cause them in this kind of file) added."""
    number = 1
    while True:
        number += 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise Origin(file, f"row {number}").problem(f"cannot be read as CSV ({error}){hint}") from None
        yield cells


def read_row(values: dict[str, str], origin: Origin) -> Row:
    index_text = values["turn_index"].strip()
    if not WHOLE_NUMBER.fullmatch(index_text):
        raise origin.at("turn_index").problem(f"expected a whole number of 0 or more, got {index_text!r}")
    if len(index_text.lstrip("0")) > len(str(MAX_INTEGER)) or int(index_text) > MAX_INTEGER:
        raise origin.at("turn_index").problem(f"{index_text} is above the maximum {MAX_INTEGER}")
    action_type = check_choice(values["action_type"].strip() or ActionType.SPEAK, values_of(ActionType),
                               origin.at("action_type"))
    text = check_text(values["text"], origin.at("text"), max_length=MAX_TURN_CHARS)
    if action_type in ACTIONS_NEEDING_CONTENT and not text.strip():
        raise origin.at("text").problem(f"a {action_words(action_type)} turn needs text")
    speaker = check_text(values["speaker"].strip(), origin.at("speaker"), blank=False)
    return Row(origin, int(index_text), speaker, action_type, text)


def episode(group: EpisodeRows, file: str) -> EpisodeDraft:
    rows = sorted(group.rows, key=lambda row: row.index)
    seen: dict[int, Row] = {}
    for row in group.rows:
        if row.index in seen:
            raise row.origin.at("turn_index").problem(
                f"turn index {row.index} appears twice in episode {group.episode_id!r} "
                f"(first at {seen[row.index].origin.place})"
            )
        seen[row.index] = row
    speakers = unique(row.speaker for row in rows)
    if len(speakers) < 2:
        raise group.origin.at("speaker").problem(
            f"episode {group.episode_id!r} has {len(speakers)} speaker ({', '.join(speakers)}); "
            "at least two are needed, one per role"
        )
    characters = [speaker_character(name, next(row.origin for row in rows if row.speaker == name)) for name in speakers]
    scenario_id = f"csv:{group.episode_id}"
    check_text(scenario_id, group.origin.at("episode_id"), max_length=max_length(Scenario, "external_id"))
    codename = slugify(group.scenario or group.episode_id)[: max_length(Scenario, "codename")]
    scenario = ScenarioDraft(
        external_id=scenario_id,
        values={
            "codename": codename,
            "source": "csv",
            "context": (
                f"Imported from the CSV file {file} (episode {group.episode_id}); "
                "the file holds only the turns, not the scenario text or the goals."
            ),
            "original_context": "",
            "difficulty": "standard",
            "relationship": None,  # the file does not say how its speakers know each other
        },
        roles=[
            RoleDraft(position, goals_from_text(PLACEHOLDER_GOAL), character=character)
            for position, character in enumerate(characters)
        ],
        origin=group.origin,
    )
    positions = {name: position for position, name in enumerate(speakers)}
    draft = EpisodeDraft(
        external_id=group.episode_id,
        scenario=ScenarioRef(scenario_id, group.origin, draft=scenario),
        origin=group.origin,
        barrier_key=group.barrier or "none",
        turn_cap=max(20, len(rows)),
        seats=[
            SeatDraft(position, position, character, group.origin)
            for position, character in enumerate(characters)
        ],
        turns=[
            TurnDraft(row.index, positions[row.speaker], row.action_type, row.origin, content=row.text)
            for row in rows
        ],
    )
    check_episode(draft)
    return draft


def speaker_character(name: str, origin: Origin) -> CharacterRef:
    external_id = f"csv:{name}"
    check_text(external_id, origin.at("speaker"), max_length=max_length(Character, "external_id"))
    first_name, _, last_name = name.partition(" ")
    values = {"first_name": first_name, "last_name": last_name}
    check_character_values(values, origin, {"first_name": "speaker", "last_name": "speaker"})
    draft = CharacterDraft(external_id, values, origin)
    return CharacterRef(origin, external_id=external_id, draft=draft)


FORMAT = FileFormat(
    "csv", label="CSV of turns",
    shape="a CSV of turns (episode_id, turn_index, speaker, action_type, text)",
    recognise=recognises, parse=parse,
)
