from django import forms

from ..agents.llm import SCRIPTED
from ..forms import team_field
from ..models import Barrier, Scenario, Seat, SimulationRun, Team
from ..models.scenarios import Difficulty
from ..scenarios.picker import ScenarioPicker, playable
from .options import ALL_CASTS, DEFAULT_CAST, DEFAULT_CONDITIONS, RunOptions, RunOptionsError
from .planning import plan_run


class ScenarioSelectorsField(forms.Field):
    """Scenarios by id (the picker's ticks), or ids, external ids and codenames typed comma-separated."""

    def to_python(self, value: object) -> tuple[str, ...]:
        values = value if isinstance(value, (list, tuple)) else [value]
        return tuple(part.strip() for item in values if item for part in str(item).split(",") if part.strip())


class RunForm(forms.Form):
    """Launch a simulation run from the browser: the options of ``manage.py simulate``.

    Checked against the database in ``clean`` (scenarios exist and are cast, conditions are
    known barriers), so a run that is created can also be executed.
    """

    tag = forms.SlugField(
        max_length=80, required=False, label="Run name",
        help_text="Names the run and tags its episodes. Leave empty for a dated name.",
    )
    difficulty = forms.ChoiceField(
        choices=[("", "any difficulty"), *Difficulty.choices], required=False,
        help_text="Only scenarios with this difficulty tag.",
    )
    scenarios = ScenarioSelectorsField(
        required=False, label="Scenarios", widget=ScenarioPicker(scope="playable"),
        help_text="Tick the scenarios to play (search to narrow the list); none ticked: every scenario (of the "
        "chosen difficulty) but ProMediate negotiations, which play with manage.py simulate --preset promediate.",
    )
    casts = forms.CharField(
        max_length=1000, required=False, initial=DEFAULT_CAST, label="Casts",
        help_text=f"Who plays the roles, each cast its own cell: '{DEFAULT_CAST}' (the roles' default characters), "
        f"'{ALL_CASTS}' (every cast of each scenario) or cast ids, comma-separated; empty: {DEFAULT_CAST}.",
    )
    conditions = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple, help_text="Every chosen scenario is played under each of these.",
    )
    agent_model = forms.CharField(
        max_length=200, initial=SCRIPTED, label="Barrier seat's model",
        help_text="A litellm model name, e.g. openai/gpt-4o-mini; 'scripted' is the offline scripted model.",
    )
    partner_model = forms.CharField(max_length=200, initial=SCRIPTED, label="Partner's model")
    seat_models = forms.CharField(
        max_length=1000, required=False, label="Models by seat",
        help_text="For pairwise designs: sender=MODEL, receiver=MODEL (every role labelled so) or POSITION=MODEL, "
        "comma-separated, e.g. sender=openai/gpt-4o,receiver=scripted. Other seats get the models above.",
    )
    judge_model = forms.CharField(
        max_length=1000, initial=SCRIPTED, label="Judge",
        help_text="Scores the finished episodes at the end of the run, so the results page can show them; "
        "'scripted' uses the offline heuristics, 'none' leaves them unscored. Name several models, separated "
        "by commas, to have each judge every episode: the results then show each judge and their majority.",
    )
    strategy = forms.ChoiceField(
        choices=Seat.Strategy.choices, initial=Seat.Strategy.DEFAULT, label="Partner strategy",
        help_text="'repair' tells the partner to ask clarifying questions and paraphrase.",
    )
    episodes_per_cell = forms.IntegerField(min_value=1, max_value=100, initial=1, label="Episodes per cell")
    turn_cap = forms.IntegerField(min_value=1, max_value=100, initial=20, label="Turn cap")
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0.7)
    concurrency = forms.IntegerField(
        min_value=1, max_value=256, initial=8, help_text="Episodes played at once (model calls in flight)."
    )
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)
    barrier_seats = forms.CharField(
        max_length=200, initial="0", required=False, label="Barrier seats",
        help_text="Role positions that speak under the condition, comma-separated (0 is the first role; empty: 0).",
    )
    interview = forms.BooleanField(
        required=False, label="Interview the agents",
        help_text="After the episodes, ask each agent whether every goal was achieved and the scenario's probes, "
        "and have the judges answer every goal yes or no.",
    )

    FIELD_OF_OPTION = {"difficulties": "difficulty"}

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"] = team_field(user)
        self.order_fields(["team"])
        self.fields["scenarios"].widget.queryset = playable(Scenario.objects.owned_by(user))
        barriers = Barrier.objects.owned_by(user).order_by("position", "key").values_list("key", "name").distinct()
        self.fields["conditions"].choices = [(key, f"{name} ({key})") for key, name in barriers]
        self.fields["conditions"].initial = [key for key, _ in barriers if key in DEFAULT_CONDITIONS]

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        team: Team = data["team"]
        tag = data.get("tag")
        if tag and SimulationRun.objects.of_team(team).filter(tag=tag).exists():
            self.add_error("tag", f"A run named {tag} exists already: resume it from its page, or pick another name.")
            return data
        try:
            plan_run(self.options(), team, tag or "preview")
        except RunOptionsError as error:
            field = self.FIELD_OF_OPTION.get(error.option, error.option)
            self.add_error(field if field in self.fields else None, str(error))
        return data

    def options(self) -> RunOptions:
        data = self.cleaned_data
        return RunOptions(
            scenarios=data["scenarios"],
            difficulties=(data["difficulty"],) if data["difficulty"] else (),
            conditions=tuple(data["conditions"]),
            agent_model=data["agent_model"].strip(),
            partner_model=data["partner_model"].strip(),
            seat_models=tuple(s.strip() for s in data["seat_models"].split(",") if s.strip()),
            judge_model=data["judge_model"].strip(),
            strategy=data["strategy"],
            episodes_per_cell=data["episodes_per_cell"],
            turn_cap=data["turn_cap"],
            temperature=data["temperature"],
            concurrency=data["concurrency"],
            seed=data["seed"],
            barrier_seats=tuple(s.strip() for s in data["barrier_seats"].split(",") if s.strip()) or ("0",),
            interview=data["interview"],
            casts=tuple(s.strip() for s in data["casts"].split(",") if s.strip()) or (DEFAULT_CAST,),
        )
