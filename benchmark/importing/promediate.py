"""ProMediate's negotiation cases (microsoft/ProMediate-Eval, ``cases/<case>.json``), one scenario each.

A case is one JSON object: ``instruction`` (the shared scenario, with ``{issues}`` and ``{options}``
where the issues and their options go), ``issues`` and ``options`` (text), ``names`` (party name ->
its private prompt in markdown sections: ``Background``, ``Identity`` with ``Role:`` and ``Main
Goal:`` lines, ``Opinions``, ``Strategy``; the ``Mediator``'s has ``Identity`` and ``Guidelines``, with
``{issues}`` in it), ``config`` (each party's proactivity settings for the inner-thought agents:
``im_threshold``, ``system1_prob``, ``interrupt_threshold``) and, in some cases, ``topics`` (the
issues' titles). How ``multiparty_conversation_negotiate.py`` (``load_prompts``, ``run_conversation``)
uses them, and how Parley keeps them:

- The instruction, with the issues and options filled in as the script fills them, is the
  scenario's shared context (the same text every party reads).
- Each party in ``names``, the Mediator included, is a role in the file's order, with a character
  of that name whose occupation is the ``Role:`` line. Its private prompt (the Mediator's with the
  issues filled in) is the role's private knowledge, as the script gives it to that party alone;
  its goal is the ``Main Goal:`` line (the Mediator's: its Identity paragraph).
- The Mediator opens ("Welcome everyone!") and the others then speak when they have something to
  say: turn-taking is ``promediate`` (the mediator decides first, then the most motivated party;
  ``benchmark.scenarios.floor``), the Mediator's role its greeter. The turn cap is the script's budget,
  4 x parties x topics (the Mediator not counted).
- The topics are kept as ``Topic`` rows with their options, and each party's stated choices on them as
  ``Preference`` rows (``promediate_topics`` says how each shape is read). Each role's Opinions section
  (with its ``###`` sub-sections), Role and Main Goal lines, the issues and options texts and ``config``
  go into ``Scenario.settings["promediate"]``. ``config`` names are matched to ``names`` case-insensitively
  (francis spells ``MacNamara``, ias ``McKenzie``); a respelling is reported in the import's notes.
- The conflict modes (``promediate_modes``) are built-in barriers; each case gets a barrier prompt per mode
  naming every party role, so a run's barrier seats are the parties and never the Mediator.

The scenario's external id is ``promediate-<file name stem>`` (``promediate-hmo``), its source
``promediate``.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.utils.text import slugify

from ..models import Character, Relationship, Scenario
from ..models.scenarios import TurnTaking
from .checks import check_character_values, check_roles, check_scenario_shape, check_scenario_values
from .format import FileFormat
from .promediate_modes import BARRIERS
from .promediate_topics import read_preferences, read_topics, topic_titles
from .reading import load_json
from .records import (
    MAX_SMALL_INTEGER,
    BarrierPromptDraft,
    CharacterDraft,
    CharacterRef,
    Draft,
    Fields,
    GoalDraft,
    Origin,
    Remark,
    RoleDraft,
    ScenarioDraft,
    TopicDraft,
    max_length,
)

SOURCE = "promediate"
MEDIATOR = "Mediator"
CASE_KEYS = frozenset({"instruction", "issues", "options", "names"})
_HEADING = re.compile(r"^\s*#+\s*(.*?)\s*$", re.M)
_MAIN_GOAL = re.compile(r"^\s*(?:Main )?Goal:\s*(.+?)\s*$", re.M | re.I)
_ROLE = re.compile(r"^\s*Role:\s*(.+?)\s*$", re.M | re.I)
# The Opinions section, its ### sub-sections included, up to the next level-1 or level-2 heading.
_OPINIONS = re.compile(r"^#{1,2}[ \t]*Opinions?\b[^\n]*\n(.*?)(?=^#{1,2}(?!#)|\Z)", re.M | re.S | re.I)
THRESHOLDS = ("im_threshold", "interrupt_threshold", "system1_prob")


def recognises(first: object) -> bool:
    """A ProMediate case: instruction, issues, options and the parties' ``names``."""
    return isinstance(first, dict) and CASE_KEYS <= first.keys()


def parse(text: str, file: str) -> list[Draft]:
    origin = Origin(file)
    case = Fields(load_json(text, origin), origin)
    stem = slugify(Path(file).stem) or "case"
    issues = case.text("issues", required=True, blank=False)
    options = case.text("options", required=True, blank=False)
    instruction = case.text("instruction", required=True, blank=False)
    context = instruction.replace("{issues}", issues).replace("{options}", options)
    titles, titles_from = topic_titles(stem, case.texts("topics"), issues)
    if not titles:
        raise origin.at("issues").problem(
            "no topics: give a 'topics' list, or number the issues ('1. Title: ...' or '## Issue 1: Title')"
        )
    topics = read_topics(titles, issues, options, origin)

    names = case.mapping("names")
    parties = [name for name in names if name != MEDIATOR]
    if not parties:
        raise origin.at("names").problem("a case needs its parties: an object of name -> private prompt")
    roles = [
        party(case.origin.at("names").at(name), name, prompt, issues, stem, position, topics)
        for position, (name, prompt) in enumerate(names.items())
    ]
    check_roles(roles, origin.at("names"))
    mediator = next((position for position, name in enumerate(names) if name == MEDIATOR), None)
    config, order, respelled = read_config(case, list(names))
    budget = 4 * len(parties) * len(topics)
    values = {
        "codename": f"{SOURCE}-{stem}"[: max_length(Scenario, "codename")],
        "source": SOURCE,
        "context": context,
        "original_context": instruction,
        "relationship": Relationship.ACQUAINTANCE,  # colleagues and business counterparts at one table
        "turn_taking": TurnTaking.PROMEDIATE if mediator is not None else TurnTaking.ROUND_ROBIN,
        "greeter_position": mediator,
        "turn_cap": min(MAX_SMALL_INTEGER, budget),
    }
    check_scenario_values(
        {k: values[k] for k in ("codename", "source", "context", "original_context")},
        origin,
        {"context": "instruction", "original_context": "instruction"},
    )
    values["settings"] = {
        SOURCE: {
            "case": stem,
            "issues": issues,
            "options": options,
            "topics_from": titles_from,
            "config": config,
            "config_order": order,
            "respelled": respelled,
            "parties": parties,
            "mediator_position": mediator,
            "turn_budget": budget,
            "roles": {name: role_summary(names[name]) for name in parties},
        }
    }
    party_positions = [position for position, name in enumerate(names) if name != MEDIATOR]
    draft = ScenarioDraft(
        external_id=f"{SOURCE}-{stem}"[: max_length(Scenario, "external_id")],
        values=values,
        roles=roles,
        origin=origin,
        id_field="names",
        topics=topics,
        barrier_prompts=[
            BarrierPromptDraft(mode["key"], mode["style_directive"], origin.at("names"), positions=party_positions)
            for mode in BARRIERS
        ],
    )
    check_scenario_shape(draft)
    remark = Remark()
    for spelled, name in respelled.items():
        remark.notes.append(
            f"{file}: config spells the party {name!r} as {spelled!r}; matched to names case-insensitively."
        )
    return [draft, remark]


def read_config(case: Fields, names: list[str]) -> tuple[dict[str, dict[str, float]], list[str], dict[str, str]]:
    """``config`` by party name as ``names`` spells it, the names in the config's order (the order upstream
    lists candidates and builds its pair index in), and the respellings (config spelling -> name)."""
    config = case.mapping("config")
    if not config:
        return {}, [], {}
    by_folded = {name.casefold(): name for name in names}
    found: dict[str, dict[str, float]] = {}
    respelled: dict[str, str] = {}
    origin = case.origin.at("config")
    for spelled, thresholds in config.items():
        name = by_folded.get(spelled.casefold())
        if name is None:
            raise origin.at(spelled).problem(f"names no party of 'names' ({', '.join(names)})")
        if name != spelled:
            respelled[spelled] = name
        fields = Fields(thresholds, origin.at(spelled))
        found[name] = {key: fields.number(key) for key in THRESHOLDS if fields.has(key)}
    missing = [name for name in names if name not in found]
    if missing:
        raise origin.problem(f"has no entry for {', '.join(map(repr, missing))}: every party of 'names' needs one")
    return found, list(found), respelled


def role_summary(prompt: object) -> dict[str, str]:
    """A party's Role and Main Goal lines and its whole Opinions section (prompt already checked as text)."""
    text = str(prompt)
    role, goal, opinions = _ROLE.search(text), _MAIN_GOAL.search(text), _OPINIONS.search(text)
    return {
        "role": role.group(1) if role else "",
        "main_goal": goal.group(1) if goal else "",
        "opinions": opinions.group(1).strip() if opinions else "",
    }


def party(
    origin: Origin, name: str, prompt: object, issues: str, stem: str, position: int, topics: list[TopicDraft]
) -> RoleDraft:
    """One party's role: its private prompt as private knowledge, its main goal, a character of its name, and
    its stated preferences on the topics (none for the Mediator)."""
    fields = Fields({"prompt": prompt}, origin)
    text = fields.text("prompt", blank=False).replace("{issues}", issues).strip()
    sections = _sections(text)
    goal = _MAIN_GOAL.search(text)
    if goal:
        goal_text = goal.group(1)
    elif name == MEDIATOR and sections.get("identity"):
        goal_text = sections["identity"]
    else:
        raise origin.problem("no 'Main Goal:' (or 'Goal:') line: the party's Identity section must say its main goal")
    role = _ROLE.search(text)
    occupation = role.group(1) if role else ("mediator" if name == MEDIATOR else "")
    values = {"first_name": name.strip(), "occupation": occupation[: max_length(Character, "occupation")]}
    check_character_values(values, origin, {"first_name": "name", "occupation": "Role"})
    character = CharacterDraft(f"{SOURCE}-{stem}-{slugify(name) or position}", values, origin, id_field="names")
    opinions = _OPINIONS.search(text)
    preferences = read_preferences(opinions.group(1), topics, origin) if opinions and name != MEDIATOR else []
    return RoleDraft(
        position=position,
        goals=[GoalDraft(goal_text)],
        private_knowledge=text,
        character=CharacterRef(origin, draft=character),
        goals_field="Main Goal",
        preferences=preferences,
    )


def _sections(text: str) -> dict[str, str]:
    """The prompt's markdown sections by lower-case title (any heading level), each body stripped."""
    headings = list(_HEADING.finditer(text))
    return {
        match.group(1).lower(): text[
            match.end() : headings[number + 1].start() if number + 1 < len(headings) else len(text)
        ].strip()
        for number, match in enumerate(headings)
    }


FORMAT = FileFormat(
    "promediate",
    label="ProMediate case",
    shape="a ProMediate case (instruction, issues, options, names)",
    recognise=recognises,
    parse=parse,
)
