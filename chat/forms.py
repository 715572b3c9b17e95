"""The form a researcher creates or edits a chat study with; ``save`` writes it all or nothing.

Besides the study's own fields it has one target per barrier (built-in and researcher-defined):
how many participants each scenario needs in that condition, 0 leaving the condition out. The
questionnaire is an instrument picked from the team's and the presets (``chat.questionnaire``); it is
built and changed in the instrument builder, never typed here.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models, transaction

from benchmark.agents.allowed_models import ModelNotAllowed, check_models
from benchmark.forms import RowsChoiceField, team_field
from benchmark.models import Barrier, Instrument, Scenario, Team, TurnTaking
from benchmark.runs.options import RunOptionsError
from benchmark.scenarios.picker import ScenarioPicker, fully_cast
from benchmark.scenarios.turn_taking import turn_cap_for

from .models import MEDIATOR_CONDITIONS, NO_MEDIATOR, ChatCondition, ChatStudy
from .negotiation import is_negotiation, mediator_position
from .questionnaire import default_instrument, questionnaire_choices

TARGET_PREFIX = "target_"
DEFAULT_TARGET = 5
RESERVED_SLUGS = {"new"}  # /chat/new/ is the creation page
MODEL_NAME = re.compile(r"^[\w.:/@+-]*$")
NUMBER_BOUNDS = {
    "turn_cap": (2, 200),
    "inactivity_timeout": (30, 24 * 60 * 60),
    "max_message_chars": (20, 20000),
    "messages_per_minute": (1, 600),
    "min_participant_turns": (0, 100),
}


def https_by_default(field: models.Field, **kwargs: Any) -> forms.Field | None:
    """Form fields as Django makes them, with links typed without a scheme read as https."""
    if isinstance(field, models.URLField):
        kwargs.setdefault("assume_scheme", "https")
    return field.formfield(**kwargs)


class InstrumentChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, instrument: Instrument) -> str:
        owner = instrument.team.name if instrument.team_id else "preset"
        return f"{instrument} ({owner}, {len(instrument.questions.all())} questions)"


class ChatStudyForm(forms.ModelForm):
    """Everything a chat study needs; ``save(created_by=...)`` stores study, scenarios and conditions."""

    scenarios = RowsChoiceField(
        queryset=Scenario.objects.none(), widget=ScenarioPicker(scope="cast"),
        help_text="Each participant plays one of these, agents the other roles. Only scenarios whose roles are all "
        "cast are listed; in those of three or more roles the agents speak in the scenario's turn-taking order.",
    )
    human_position = forms.TypedChoiceField(
        coerce=int, label="The participant plays",
        choices=[
            (0, "the first role: the participant speaks first"),
            (1, "the second role: the agent speaks first"),
            (2, "the third role (scenarios of three roles or more)"),
            (3, "the fourth role (scenarios of four roles or more)"),
        ],
    )
    instrument = InstrumentChoiceField(
        queryset=Instrument.objects.none(), required=False, label="Questionnaire",
        empty_label="— none: participants get their code straight after the chat",
        help_text="What participants answer after the chat: a preset or one of your team's instruments whose "
        "questions are all asked once per episode, of a kind participants answer. Build or change one on the "
        "Instruments page; an answered one changes as a new version, which you then pick here.",
    )

    class Meta:
        model = ChatStudy
        fields = [
            "title", "slug", "scenarios", "human_position", "agent_model", "seat_models", "partner_strategy",
            "mediator_condition", "turn_cap", "inactivity_timeout", "intervene_window", "claim_window",
            "max_message_chars", "messages_per_minute", "min_participant_turns", "consent_text", "completion_code",
            "screen_out_code", "technical_problem_code", "return_url", "is_open", "instrument",
        ]
        labels = {
            "agent_model": "Agent model",
            "seat_models": "Models by seat",
            "mediator_condition": "Agent mediator (negotiations)",
            "turn_cap": "Turn cap",
            "inactivity_timeout": "Inactivity timeout (seconds)",
            "intervene_window": "Time to intervene (seconds)",
            "claim_window": "Time to ask for the floor (seconds)",
            "max_message_chars": "Longest message (characters)",
            "messages_per_minute": "Messages per minute",
            "min_participant_turns": "Minimum participant turns",
            "screen_out_code": "Screen-out code",
            "technical_problem_code": "Technical-problem code",
            "is_open": "Open for new participants",
            "return_url": "Return URL",
        }
        # The same words whoever has the slug: a study of another team answers 404, and the form must not
        # say that it exists ("Chat study with this Slug already exists").
        error_messages = {"slug": {"unique": "This slug is not available; choose another."}}
        help_texts = {
            "mediator_condition": "Only for negotiation scenarios in which the participant is one of the parties: "
            "the mediator condition, as in a simulation run. None: the mediator's chair stays empty and an agent "
            "party opens. Generic: a mediator that steps in when it judges it should. Social: a mediator that "
            "watches for misunderstandings, hard feelings and a slipping agreement and picks a strategy before it "
            "speaks. The agent mediator plays its seat's model (models by seat, else the agent model). Left empty, "
            "negotiations get the generic mediator.",
            "return_url": "Where the completion and screen-out pages send participants; {code} is replaced by "
            "the code they got, e.g. https://app.prolific.com/submissions/complete?cc={code}.",
            "max_message_chars": "Longer messages are refused with a message saying so.",
            "min_participant_turns": "Messages (say, non-verbal or action) the participant must send before their "
            "chat counts. Leaving earlier, or going quiet past the inactivity timeout earlier, ends the study with "
            "the screen-out code instead of the questions and the completion code, and frees their place. 0 turns "
            "this off. It must fit every chosen scenario's turn order: under round robin the participant's exact "
            "number of turns before the cap; under random order after a greeting, the number they can expect "
            "(each chat draws its own order, and its briefing tells the participant their count).",
        }
        widgets = {"consent_text": forms.Textarea(attrs={"rows": 10})}
        formfield_callback = https_by_default

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        """Scenarios and barriers come from ``user``'s teams; a saved study keeps its team."""
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            team = self.instance.team
            scenarios, barriers = Scenario.objects.of_team(team), Barrier.objects.of_team(team)
            instruments = Instrument.objects.of_team(team)
        else:
            scenarios, barriers = Scenario.objects.owned_by(user), Barrier.objects.owned_by(user)
            instruments = Instrument.objects.owned_by(user)
            self.fields["team"] = team_field(user)
            self.order_fields(["team", *self.Meta.fields])
        self.fields["scenarios"].queryset = fully_cast(scenarios)
        self.fields["mediator_condition"].choices = [("", "— (not a negotiation, or generic)"), *MEDIATOR_CONDITIONS]
        for name in ("intervene_window", "claim_window"):  # only negotiations use them: the defaults do elsewhere
            self.fields[name].required = False
        self.fields["slug"].help_text = "The study link is /s/<slug>/: letters, numbers, hyphens."
        self.fields["agent_model"].widget.attrs["placeholder"] = "configured agent model, or scripted (offline)"
        self.barriers = list(barriers.order_by("-builtin", "position", "key"))
        targets = {}
        if self.instance.pk:
            targets = dict(self.instance.conditions.values_list("barrier_id", "target"))
        for barrier in self.barriers:
            default = DEFAULT_TARGET if barrier.builtin and not self.instance.pk else 0
            self.fields[TARGET_PREFIX + barrier.key] = forms.IntegerField(
                min_value=0, max_value=1000, label=barrier.name, initial=targets.get(barrier.pk, default),
                help_text="" if barrier.builtin else "researcher-defined",
            )
        for name, (low, high) in NUMBER_BOUNDS.items():
            field = self.fields[name]
            field.validators += [MinValueValidator(low), MaxValueValidator(high)]
        for field in self.fields.values():  # styled like the other text boxes, as on the annotation form
            if isinstance(field.widget, forms.NumberInput):
                field.widget = forms.TextInput(attrs={"inputmode": "numeric", "size": 8})
            elif isinstance(field.widget, forms.URLInput):
                field.widget = forms.TextInput(attrs={"inputmode": "url", "size": 60})
        offered = questionnaire_choices(instruments)
        if self.instance.pk and self.instance.instrument is not None and self.instance.instrument not in offered:
            offered.append(self.instance.instrument)  # kept as it is, though it would no longer be offered
        self.fields["instrument"].queryset = (
            Instrument.objects.filter(pk__in=[i.pk for i in offered]).select_related("team")
            .prefetch_related("questions").order_by("team", "name", "-version")
        )
        if not self.is_bound:
            if not self.instance.pk:
                self.initial["instrument"] = default_instrument().pk
            self.initial.setdefault("human_position", self.instance.human_position)

    def target_fields(self) -> list[forms.BoundField]:
        return [self[TARGET_PREFIX + barrier.key] for barrier in self.barriers]

    # Validation

    def clean_intervene_window(self) -> float:
        return self._window("intervene_window")

    def clean_claim_window(self) -> float:
        return self._window("claim_window")

    def _window(self, name: str) -> float:
        """A negotiation's window in seconds; left empty, the default (only negotiations use it)."""
        value = self.cleaned_data.get(name)
        return ChatStudy._meta.get_field(name).default if value is None else value

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if slug in RESERVED_SLUGS:
            raise forms.ValidationError(f"“{slug}” is reserved; choose another slug.")
        if self.instance.pk and slug != self.instance.slug and self.instance.participants.exists():
            raise forms.ValidationError(
                "Participants have already used this study's link, so its slug can no longer change."
            )
        return slug

    def clean_agent_model(self) -> str:
        model = self.cleaned_data["agent_model"].strip()
        if not MODEL_NAME.match(model):
            raise forms.ValidationError("A model name has no spaces, e.g. openai/gpt-4o-mini or scripted.")
        return model

    def clean_seat_models(self) -> str:
        """The seat models, checked with the runs' own reading of SEAT=MODEL, as tidy text."""
        text = ",".join(entry.strip() for entry in self.cleaned_data["seat_models"].split(",") if entry.strip())
        try:
            named = ChatStudy(seat_models=text).seat_model_map()
        except RunOptionsError as problem:
            raise forms.ValidationError(str(problem)) from None
        for model in named.values():
            if not MODEL_NAME.match(model):
                raise forms.ValidationError(f"{model!r} is not a model name: a model name has no spaces.")
        return text

    def clean_return_url(self) -> str:
        url = self.cleaned_data["return_url"]
        leftover = url.replace("{code}", "")
        if "{" in leftover or "}" in leftover:
            raise forms.ValidationError("The only placeholder a return URL may hold is {code}.")
        return url

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        team_id = self.instance.team_id if self.instance.pk else getattr(data.get("team"), "pk", None)
        if team_id is None:
            return data
        for scenario in data.get("scenarios") or []:
            if scenario.team_id != team_id:
                self.add_error("scenarios", f"Scenario {scenario} belongs to another of your teams.")
        for barrier in self.barriers:
            if data.get(TARGET_PREFIX + barrier.key) and barrier.team_id not in (None, team_id):
                self.add_error(TARGET_PREFIX + barrier.key, f"{barrier} belongs to another of your teams.")
        targets = [data.get(TARGET_PREFIX + barrier.key) for barrier in self.barriers]
        if all(target is not None for target in targets) and not any(targets):
            self.add_error(None, "Give at least one condition a target above 0: otherwise no one can take part.")
        position = data.get("human_position")
        for scenario in data.get("scenarios") or []:
            positions = set(scenario.roles.values_list("position", flat=True))
            if position is not None and position not in positions:
                self.add_error("scenarios", f"Scenario {scenario} has no role at position {position}.")
        self._check_seat_models(data)
        self._check_mediator_condition(data)
        self._check_models_allowed(data, Team.objects.get(pk=team_id).slug)
        self._check_minimum(data)
        return data

    def _check_models_allowed(self, data: dict[str, Any], team_slug: str) -> None:
        """Refuse a model the study's team may not call (``benchmark.agents.allowed_models``)."""
        named = {"agent_model": [data["agent_model"]] if "agent_model" in data else []}
        if "seat_models" in data:
            named["seat_models"] = list(ChatStudy(seat_models=data["seat_models"]).seat_model_map().values())
        for field, names in named.items():
            try:
                check_models(names, team_slug)
            except ModelNotAllowed as problem:
                self.add_error(field, str(problem))

    def _check_minimum(self, data: dict[str, Any]) -> None:
        """Refuse a minimum of participant turns a chosen scenario's turn order does not give the participant
        (``ChatStudy.participant_turns_in``: exact under round robin, expected under random order)."""
        minimum, position, cap = data.get("min_participant_turns"), data.get("human_position"), data.get("turn_cap")
        if minimum is None or position is None or cap is None or self.has_error("scenarios"):
            return
        study = ChatStudy(human_position=position, turn_cap=cap)
        for scenario in data.get("scenarios") or []:
            turns = study.participant_turns_in(scenario)
            if minimum <= turns:
                continue
            if scenario.turn_taking == TurnTaking.RANDOM_AFTER_GREETING:
                said = f"can expect {turns:.1f} turns in scenario {scenario} (its order is drawn anew in each chat)"
            else:
                said = f"has at most {turns:.0f} turns in scenario {scenario}"
            self.add_error("min_participant_turns", (
                f"With a turn cap of {turn_cap_for(scenario, cap)} the participant {said}, "
                f"so a minimum of {minimum} could not be met."
            ))

    def _check_mediator_condition(self, data: dict[str, Any]) -> None:
        """Refuse a mediator condition nothing takes: on a scenario that is not a negotiation, ``none`` where
        the participant is the mediator, or any where the participant mediates every chosen negotiation."""
        condition, position = data.get("mediator_condition"), data.get("human_position")
        scenarios = data.get("scenarios") or []
        if not condition or position is None or not scenarios:
            return
        plain = [str(scenario) for scenario in scenarios if not is_negotiation(scenario)]
        if plain:
            self.add_error("mediator_condition", (
                f"{', '.join(plain)} {'is not a negotiation' if len(plain) == 1 else 'are not negotiations'}, so "
                "no mediator sits there: leave the agent mediator empty, or choose negotiation scenarios only."
            ))
            return
        mediating = [str(scenario) for scenario in scenarios if mediator_position(scenario) == position]
        if condition == NO_MEDIATOR and mediating:
            self.add_error("mediator_condition", (
                f"The participant is the mediator in {', '.join(mediating)}; 'none' would take their chair away. "
                "Seat the participant as a party, or choose another condition."
            ))
        elif len(mediating) == len(scenarios):
            self.add_error("mediator_condition", (
                "The participant is the mediator in every chosen scenario, so no agent mediates: "
                "leave the agent mediator empty, or seat the participant as a party."
            ))

    def _check_seat_models(self, data: dict[str, Any]) -> None:
        """Refuse a seat model no agent would take: the participant's seat, or a position no scenario has."""
        if "seat_models" not in data:  # refused already
            return
        named = ChatStudy(seat_models=data["seat_models"]).seat_model_map()
        scenarios = data.get("scenarios") or []
        for seat in (key for key in named if key.isdigit()):
            if int(seat) == data.get("human_position"):
                self.add_error("seat_models", f"Seat {seat} is the participant's; name the agents' seats only.")
            elif scenarios and not any(scenario.roles.filter(position=int(seat)).exists() for scenario in scenarios):
                self.add_error("seat_models", f"None of the chosen scenarios has a role at position {seat}.")


    # Saving

    def save(self, commit: bool = True, *, created_by: AbstractBaseUser | None = None) -> ChatStudy:
        """Store the study, its scenarios and its conditions in one transaction."""
        study = super().save(commit=False)
        if study.team_id is None:
            study.team = self.cleaned_data["team"]
        if created_by is not None and study.created_by_id is None:
            study.created_by = created_by
        with transaction.atomic():
            study.save()
            study.scenarios.set(self.cleaned_data["scenarios"])
            for barrier in self.barriers:
                target = self.cleaned_data[TARGET_PREFIX + barrier.key]
                if target:
                    ChatCondition.objects.update_or_create(study=study, barrier=barrier, defaults={"target": target})
                else:
                    ChatCondition.objects.filter(study=study, barrier=barrier).delete()
        return study
