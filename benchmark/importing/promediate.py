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
  ``benchmark.scenarios.floor``), the Mediator's role its greeter. The turn cap is the script's,
  4 x (parties - 1) x issues. The issues are the ``topics`` when the case lists them, else the
  numbered issues of ``issues``, in either shape the six cases use: numbered lines (``1. Budget
  allocations: ...``) or headings (``## Issue 1: Water Prediction ...``, river).
- ``config`` has no place in Parley (its agents do not think between turns) and is counted under
  ``ignored``.

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
from .reading import load_json
from .records import (
    MAX_SMALL_INTEGER,
    CharacterDraft,
    CharacterRef,
    Draft,
    Fields,
    GoalDraft,
    Origin,
    Remark,
    RoleDraft,
    ScenarioDraft,
    max_length,
)

SOURCE = "promediate"
MEDIATOR = "Mediator"
CASE_KEYS = frozenset({"instruction", "issues", "options", "names"})
_HEADING = re.compile(r"^\s*#+\s*(.*?)\s*$", re.M)
_MAIN_GOAL = re.compile(r"^\s*(?:Main )?Goal:\s*(.+?)\s*$", re.M | re.I)
_ROLE = re.compile(r"^\s*Role:\s*(.+?)\s*$", re.M | re.I)
# An issue's first line: "1. Title" / "1: Title", or a heading or line "Issue 1" (any heading level).
_ISSUE = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?(?:issue[ \t]+(\d{1,3})\b|(\d{1,3})[.:][ \t])", re.M | re.I)


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
    issue_count = len(case.texts("topics")) or count_issues(issues)

    names = case.mapping("names")
    if not names:
        raise origin.at("names").problem("a case needs its parties: an object of name -> private prompt")
    roles = [party(case.origin.at("names").at(name), name, prompt, issues, stem, position)
             for position, (name, prompt) in enumerate(names.items())]
    check_roles(roles, origin.at("names"))
    mediator = next((position for position, name in enumerate(names) if name == MEDIATOR), None)
    values = {
        "codename": f"{SOURCE}-{stem}"[: max_length(Scenario, "codename")],
        "source": SOURCE,
        "context": context,
        "original_context": instruction,
        "relationship": Relationship.ACQUAINTANCE,  # colleagues and business counterparts at one table
        "turn_taking": TurnTaking.PROMEDIATE if mediator is not None else TurnTaking.ROUND_ROBIN,
        "greeter_position": mediator,
        "turn_cap": min(MAX_SMALL_INTEGER, 4 * max(1, len(names) - 1) * issue_count),
    }
    check_scenario_values({k: values[k] for k in ("codename", "source", "context", "original_context")},
                          origin, {"context": "instruction", "original_context": "instruction"})
    draft = ScenarioDraft(external_id=f"{SOURCE}-{stem}"[: max_length(Scenario, "external_id")], values=values,
                          roles=roles, origin=origin, id_field="names")
    check_scenario_shape(draft)
    remark = Remark()
    if case.mapping("config"):
        remark.ignored["config"] += 1
    return [draft, remark]


def count_issues(issues: str) -> int:
    """How many issues the case's ``issues`` text numbers (distinct numbers, so a repeated one counts once);
    1 when it numbers none."""
    return len({heading or line for heading, line in _ISSUE.findall(issues)}) or 1


def party(origin: Origin, name: str, prompt: object, issues: str, stem: str, position: int) -> RoleDraft:
    """One party's role: its private prompt as private knowledge, its main goal, a character of its name."""
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
    return RoleDraft(
        position=position, goals=[GoalDraft(goal_text)], private_knowledge=text,
        character=CharacterRef(origin, draft=character), goals_field="Main Goal",
    )


def _sections(text: str) -> dict[str, str]:
    """The prompt's markdown sections by lower-case title (any heading level), each body stripped."""
    headings = list(_HEADING.finditer(text))
    return {
        match.group(1).lower(): text[match.end(): headings[number + 1].start() if number + 1 < len(headings)
                                     else len(text)].strip()
        for number, match in enumerate(headings)
    }


FORMAT = FileFormat(
    "promediate", label="ProMediate case",
    shape="a ProMediate case (instruction, issues, options, names)",
    recognise=recognises, parse=parse,
)
