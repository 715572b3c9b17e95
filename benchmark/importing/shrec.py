"""SHREC's released files (CSV, or parquet as on the dataset's hub): one episode per video, and its spans.

A row is one video (spec ``shrec.md`` §2.2): ``file_name`` (or ``video_id``, ``ID``), ``transcript``
(``shrec_transcript``), ``Annotations_A``/``_B``/``_C`` (``shrec_spans``), ``framerate`` and, optionally,
``frame_paths`` and the subset (``source`` or ``dataset``). Column names are matched without regard to
case; rows are numbered from 1 after the header in a CSV (``row 2`` is the first video) and from 1 in
parquet. What Parley makes of a row, and why:

- **An episode** whose external id is the video id (a video file's extension dropped), source
  ``imported``, under the ``none`` barrier, tagged ``shrec-<file name>`` unless ``--tag`` says otherwise.
  Its seats are one per speaker label, the robot's (``AI Agent``) first at position 0 (the agent under
  study), then the users in the order they first speak; its turns come from the transcript with their
  times and words. ``settings["shrec"]`` keeps the subset (``source``), the video id, the framerate, the
  frames' folder and count, the file and which annotator columns held segments.
- **A scenario per subset** (``shrec-empathic``, ``shrec-wellness-dorm``, ``shrec-wellness-home``,
  ``shrec-wellness``, ``shrec-unknown``), with the robot Jibo and the user as its roles; a video with more
  users (``User B``) gets the subset's scenario for that cast (``shrec-empathic-user-a-user-b``).
- **The subset** is the row's ``source`` or ``dataset`` column (``Empathic++``, ``wellness_dorm`` ...)
  when the file has one, else the file's name (``shrec_empathic.csv`` -> empathic; a name with
  ``wellness`` and ``dorm`` or ``home`` -> that Wellness study; ``wellness`` alone -> wellness), else blank:
  the released subsets come as one file each, named for the subset.
- **A recording** (``benchmark.Recording``) of kind video per episode, neither uploaded nor linked: it
  names the frames' folder (the common folder of ``frame_paths``, else ``<video id>/`` when the file gives
  a framerate) and the framerate; frames are referenced, never copied. Its duration is the frames'
  count over the framerate, when both are known.
- **The spans**: each annotator column's segments, checked and placed on the turns (``shrec_spans``),
  are sent to the annotator app (``signals.spans_imported``), which keeps them as the submitted
  annotations of external annotators 1-3 (A-C) in one study per tag. Segments without times are
  skipped and counted in the summary; empty rationales and corrections are counted in its notes.

All or nothing, as every import; re-importing a file leaves episodes, recordings, annotators and spans
as they are (an annotator's stored spans that differ from the file's are refused, never overwritten).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.utils.text import slugify

from ..episodes.turn_times import turns_overlapping
from ..models import ActionType, Episode, Recording, Relationship, Scenario, Turn
from . import saving
from .checks import check_episode
from .format import FileFormat, Saved
from .import_result import ImportResult
from .records import (
    MAX_TURN_CHARS,
    MAX_TURNS,
    CharacterDraft,
    CharacterRef,
    Draft,
    EpisodeDraft,
    GoalDraft,
    Origin,
    RoleDraft,
    ScenarioDraft,
    ScenarioRef,
    SeatDraft,
    TurnDraft,
    check_text,
    describe,
    max_length,
)
from .shrec_spans import (
    COLUMNS,
    AnnotatorSpans,
    plain,
    read_annotator,
    seconds_value,
    segments_of,
)
from .shrec_transcript import TranscriptProblem, TranscriptTurn, parse_transcript
from .signals import VideoSpans, spans_imported
from .turns_csv import rows

AGENT = "AI Agent"
ID_COLUMNS = ("file_name", "video_id", "id")
SUBSET_COLUMNS = ("source", "dataset")
CELL_HINT = f"; a cell may hold at most {csv.field_size_limit():,} characters (save a longer transcript as parquet)"
VIDEO_SUFFIX = re.compile(r"\.(mp4|mov|avi|mkv|webm)$", re.I)
SUBSETS = {
    "empathic": "Jibo, a tabletop social robot, keeps a person company at home over several weeks and trades "
    "emotionally meaningful stories with them, drawing on narrative therapy (SHREC's Empathic++ sessions).",
    "wellness-dorm": "Jibo, a tabletop social robot, coaches a college student in their dormitory through short "
    "positive-psychology exercises and builds rapport with them (SHREC's Wellness-Dorm sessions).",
    "wellness-home": "Jibo, a tabletop social robot, coaches an adult at home through an eight-week "
    "positive-psychology programme (SHREC's Wellness-Home sessions).",
    "wellness": "Jibo, a tabletop social robot, coaches a person through positive-psychology exercises "
    "(one of SHREC's Wellness sessions).",
    "": "Jibo, a tabletop social robot, talks with a person in one of SHREC's recorded sessions (the file does "
    "not say which study).",
}
ROBOT_GOAL = "Respond to the person as a socially competent companion would: notice their cues and meet them."
USER_GOAL = "Take part in the session with the robot as the study invited you to."


@dataclass
class ShrecEpisodeDraft(EpisodeDraft):
    """An episode of a SHREC file, with what ``saving`` does not keep: its recording and its annotators' spans."""

    frames: str = ""
    framerate: float | None = None
    duration_s: float | None = None
    annotators: list[AnnotatorSpans] = field(default_factory=list)


def recognises(first: object) -> bool:
    """A CSV whose header names a transcript and an annotator column (``Annotations_A`` ...)."""
    return isinstance(first, list) and "transcript" in first and any(column.lower() in first for column in COLUMNS)


def subset_of(value: str) -> str:
    """A subset's name as a file gives it (``Empathic++``, ``wellness_dorm``, ``shrec_wellness_home.csv``) as
    one of ``SUBSETS``' keys, or "" when it names none."""
    text = value.casefold()
    if "empathic" in text:
        return "empathic"
    if "wellness" in text:
        return "wellness-dorm" if "dorm" in text else "wellness-home" if "home" in text else "wellness"
    return ""


# --- reading the rows -----------------------------------------------------------------------------


def read_csv_rows(text: str, file: str) -> tuple[dict[str, str], list[tuple[Origin, dict[str, Any]]]]:
    """The header (lower-case name -> the file's spelling) and each row as {lower-case name: cell}."""
    lines = rows(csv.reader(io.StringIO(text, newline="")), file, CELL_HINT)
    header = next(lines, [])
    names = {column.strip().lower(): column.strip() for column in header}
    found = []
    for number, cells in enumerate(lines, start=2):
        if not any(cell.strip() for cell in cells):
            continue
        origin = Origin(file, f"row {number}")
        if len(cells) != len(header):
            raise origin.problem(f"has {len(cells)} cells; the header has {len(header)}")
        found.append((origin, dict(zip(names, cells, strict=True))))
    return names, found


def read_parquet_rows(path: Path) -> tuple[dict[str, str], list[tuple[Origin, dict[str, Any]]]]:
    """The parquet file's columns and rows, cells as plain Python (``shrec_spans.plain``)."""
    import pandas  # only parquet files need it; importing pandas costs a second at start-up

    try:
        frame = pandas.read_parquet(path)
    except Exception as error:  # noqa: BLE001 - pyarrow raises many kinds; each means "not a parquet file we read"
        raise Origin(path.name).problem(f"cannot be read as parquet ({type(error).__name__}: {error})") from None
    names = {str(column).strip().lower(): str(column).strip() for column in frame.columns}
    records = frame.rename(columns=lambda column: str(column).strip().lower()).to_dict("records")
    return names, [(Origin(path.name, f"row {number}"), plain(row)) for number, row in enumerate(records, start=1)]


def parse(text: str, file: str) -> list[Draft]:
    names, rows = read_csv_rows(text, file)
    return parse_rows(names, rows, file)


def parse_rows(names: dict[str, str], rows: list[tuple[Origin, dict[str, Any]]], file: str) -> list[Draft]:
    header = Origin(file, "row 1" if file.lower().endswith(".csv") else None)
    id_column = next((column for column in ID_COLUMNS if column in names), None)
    missing = [label for label, found in (("file_name (or video_id, ID)", id_column),
                                          ("transcript", "transcript" in names)) if not found]
    if not any(column.lower() in names for column in COLUMNS):
        missing.append("Annotations_A (and _B, _C)")
    if missing:
        raise header.problem(f"a SHREC file needs the columns {', '.join(missing)}; see docs/formats.md")
    subset_column = next((column for column in SUBSET_COLUMNS if column in names), None)
    file_subset = subset_of(Path(file).stem)
    tag = f"shrec-{slugify(Path(file).stem.replace('_', '-'))}"[: max_length(Episode, "tag")]
    seen: dict[str, str] = {}
    drafts: list[Draft] = []
    scenarios: dict[str, ScenarioDraft] = {}
    for origin, row in rows:
        id_origin = origin.at(names[id_column])
        video = VIDEO_SUFFIX.sub("", check_text(_text_cell(row.get(id_column)), id_origin, blank=False).strip())
        check_text(video, id_origin, blank=False, max_length=max_length(Episode, "external_id"))
        if video in seen:
            raise id_origin.problem(f"video {video!r} appears twice in this file (first at {seen[video]})")
        seen[video] = origin.place or ""
        subset = subset_of(str(_text_cell(row.get(subset_column)))) if subset_column else ""
        drafts.append(video_draft(origin, names, row, video, subset or file_subset, tag, scenarios))
    if not drafts:
        raise header.problem("holds no videos")
    return drafts


def _text_cell(value: Any) -> Any:
    return "" if value is None else value


def video_draft(
    origin: Origin, names: dict[str, str], row: dict[str, Any], video: str, subset: str, tag: str,
    scenarios: dict[str, ScenarioDraft],
) -> ShrecEpisodeDraft:
    transcript_origin = origin.at(names["transcript"])
    transcript = check_text(_text_cell(row.get("transcript")), transcript_origin)
    try:
        turns = parse_transcript(transcript)
    except TranscriptProblem as problem:
        raise transcript_origin.problem(f"cannot be read: {problem}") from None
    if not turns:
        raise transcript_origin.problem("holds no turns: a speaker line ('AI Agent:') and its timed words, at least")
    if len(turns) > MAX_TURNS:
        raise transcript_origin.problem(f"has {len(turns)} turns; at most {MAX_TURNS} fit")
    for number, turn in enumerate(turns):
        if len(turn.text) > MAX_TURN_CHARS:
            raise transcript_origin.problem(f"turn {number + 1} is {len(turn.text)} characters long; at most "
                                            f"{MAX_TURN_CHARS} fit")
    framerate = _framerate(row.get("framerate"), origin.at(names.get("framerate", "framerate")))
    frames, frame_count = _frames(row.get("frame_paths"), origin.at(names.get("frame_paths", "frame_paths")), video,
                                  framerate)
    duration = frame_count / framerate if frame_count and framerate else None
    end_of_recording = max([turn.end_s for turn in turns] + ([duration] if duration else []))
    annotators = []
    for number, column in enumerate(COLUMNS, start=1):
        if column.lower() in names:
            read = read_annotator(row.get(column.lower()), names[column.lower()], number, origin, end_of_recording)
            if read.spans or read.skipped:
                annotators.append(read)
    users = list(dict.fromkeys(turn.speaker for turn in turns if turn.speaker != AGENT)) or ["User A"]
    positions = {AGENT: 0, **{label: position for position, label in enumerate(users, start=1)}}
    scenario = scenario_draft(subset, users, origin, scenarios)
    characters = {label: scenario.roles[position].character for label, position in positions.items()}
    draft = ShrecEpisodeDraft(
        external_id=video,
        scenario=ScenarioRef(scenario.external_id, origin, draft=scenario),
        origin=origin,
        id_field=names[next(column for column in ID_COLUMNS if column in names)],
        turn_cap=max(20, len(turns)),
        tag=tag,
        settings={"shrec": {
            "source": subset, "video_id": video, "framerate": framerate, "frames": frames, "frame_count": frame_count,
            "file": origin.file, "annotators": [read.column for read in annotators],
        }},
        seats=[SeatDraft(position, position, characters[label], origin) for label, position in positions.items()],
        turns=[turn_draft(number, turn, positions, transcript_origin) for number, turn in enumerate(turns)],
        frames=frames,
        framerate=framerate,
        duration_s=duration,
        annotators=annotators,
    )
    check_episode(draft)
    return draft


def turn_draft(index: int, turn: TranscriptTurn, positions: dict[str, int], origin: Origin) -> TurnDraft:
    return TurnDraft(index, positions[turn.speaker], ActionType.SPEAK, origin, content=turn.text,
                     start_s=turn.start_s, end_s=turn.end_s, words=turn.words)


def _framerate(value: Any, origin: Origin) -> float | None:
    number = seconds_value(value, origin, "frames per second")
    if number is not None and not number > 0:
        raise origin.problem(f"expected a positive number of frames per second, got {describe(value)}")
    return number


def _frames(value: Any, origin: Origin, video: str, framerate: float | None) -> tuple[str, int | None]:
    """The frames' folder (or path prefix) and how many frames the row lists (None: not listed)."""
    if isinstance(value, str) and value.strip().startswith("["):
        value = segments_of(value, origin)
    if value is None or (isinstance(value, str) and not value.strip()):
        return (f"{video}/" if framerate else ""), None
    if isinstance(value, str):
        return check_text(value.strip(), origin, max_length=max_length(Recording, "frames")), None
    if not isinstance(value, list) or not all(isinstance(path, str) for path in value):
        raise origin.problem(f"expected a list of frame paths or a folder, got {describe(value)}")
    if not value:
        return (f"{video}/" if framerate else ""), 0
    folder = os.path.commonpath(value) if len(value) > 1 else os.path.dirname(value[0])
    folder = folder.rstrip("/") + "/" if folder else ""
    return check_text(folder, origin, max_length=max_length(Recording, "frames")), len(value)


def scenario_draft(subset: str, users: list[str], origin: Origin, made: dict[str, ScenarioDraft]) -> ScenarioDraft:
    """The subset's scenario for this cast (the robot and these users), made once per file."""
    name = f"shrec-{subset or 'unknown'}"
    external_id = name if users == ["User A"] else f"{name}-{slugify(' '.join(users))}"
    external_id = external_id[: max_length(Scenario, "external_id")]
    if external_id in made:
        return made[external_id]
    robot = CharacterDraft("shrec-jibo", {"first_name": "Jibo", "occupation": "social robot"}, origin)
    roles = [RoleDraft(0, [GoalDraft(ROBOT_GOAL)], character=CharacterRef(origin, "shrec-jibo", draft=robot))]
    for position, label in enumerate(users, start=1):
        key = f"shrec-{slugify(label)}"[:100] or f"shrec-user-{position}"
        person = CharacterDraft(key, {"first_name": label[:100], "occupation": "study participant"}, origin)
        roles.append(RoleDraft(position, [GoalDraft(USER_GOAL)], character=CharacterRef(origin, key, draft=person)))
    made[external_id] = ScenarioDraft(
        external_id=external_id,
        values={"codename": external_id[:50], "source": "shrec", "context": SUBSETS[subset], "original_context": "",
                "difficulty": "standard", "relationship": Relationship.ACQUAINTANCE},
        roles=roles,
        origin=origin,
    )
    return made[external_id]


# --- saving ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShrecFormat(FileFormat):
    """Reads parquet as well as CSV, and saves each video's recording and spans after its episode."""

    binary_suffixes = (".parquet",)

    def parse_file(self, path: Path, text: str) -> list[Any]:
        if path.suffix.lower() == ".parquet":
            names, rows = read_parquet_rows(path)
            return parse_rows(names, rows, path.name)
        return parse(text, path.name)

    def save(self, drafts: Sequence[Any], result: ImportResult, team: Any, progress: Saved | None) -> None:
        saving.save(list(drafts), result, team, progress=progress)
        save_videos([draft for draft in drafts if isinstance(draft, ShrecEpisodeDraft)], result, team)


def save_videos(videos: list[ShrecEpisodeDraft], result: ImportResult, team: Any) -> None:
    """Each video's recording (unless it has one) and its spans, placed on the stored episode's turns."""
    if not videos:
        return
    episodes = {episode.external_id: episode for episode in
                Episode.objects.of_team(team).filter(external_id__in=[video.external_id for video in videos])}
    recorded = set(Recording.objects.filter(episode__in=episodes.values()).values_list("episode_id", flat=True))
    new = [
        Recording(episode=episodes[video.external_id], kind=Recording.Kind.VIDEO, frames=video.frames,
                  framerate=video.framerate, duration_s=video.duration_s)
        for video in videos if episodes[video.external_id].pk not in recorded
    ]
    Recording.objects.bulk_create(new)
    result.created["recording"] += len(new)
    result.unchanged["recording"] += len(videos) - len(new)
    timed: dict[int, list[tuple[int, float, float]]] = defaultdict(list)
    for episode_id, index, start, end in Turn.objects.filter(
        episode__in=episodes.values(), start_s__isnull=False
    ).order_by("index").values_list("episode_id", "index", "start_s", "end_s"):
        timed[episode_id].append((index, start, end))
    sent = []
    for video in videos:
        episode = episodes[video.external_id]
        spans = [span for read in video.annotators for span in read.spans]
        if spans and not timed[episode.pk]:
            raise video.origin.at(video.id_field).problem(
                f"episode {video.external_id!r} is already stored without turn times, so its spans cannot be placed"
            )
        for span in spans:
            span.start_turn, span.end_turn = turns_overlapping(timed[episode.pk], span.start_s, span.end_s)
        sent.append(VideoSpans(episode.pk, video.external_id, video.origin.place or "", 0, video.annotators))
    _count(videos, result)
    replies = spans_imported.send(sender=ShrecFormat, team=team, tag=videos[0].tag, file=videos[0].origin.file,
                                  videos=sent, result=result)
    if not replies:
        result.note("the spans were read but not kept: no installed app keeps SHREC's annotations")


def _count(videos: list[ShrecEpisodeDraft], result: ImportResult) -> None:
    skipped = sum(read.skipped for video in videos for read in video.annotators)
    if skipped:
        result.skipped["segment without a time"] += skipped
    spans = [span for video in videos for read in video.annotators for span in read.spans]
    no_rationale = sum(not span.rationale for span in spans)
    no_correction = sum(span.label == "error" and not span.correction for span in spans)
    if no_rationale or no_correction:
        result.note(
            f"flagged: {no_rationale} of {len(spans)} segments have no rationale and {no_correction} errors no "
            "correction; they are imported as the file gives them"
        )


FORMAT = ShrecFormat(
    "shrec",
    label="SHREC videos and annotations",
    shape="a SHREC file (file_name, transcript, Annotations_A/B/C)",
    recognise=recognises,
    parse=parse,
)
