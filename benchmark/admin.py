"""The admin for the research core (superusers only: see ``config.admin``).

Every list joins what its columns show (``list_select_related``) and counts with annotations, so
a page of 100 rows costs a fixed number of queries. Foreign keys to large tables use
autocomplete widgets, so a form never renders thousands of options.
"""

from typing import Any

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Count, Q, QuerySet
from django.forms import CharField, ModelForm, Textarea
from django.http import HttpRequest

from .instruments import admin as instruments_admin  # noqa: F401  (registers instruments, questions, answers)
from .jobs import admin as jobs_admin  # noqa: F401  (registers jobs and Huey's dashboard)
from .models import (
    Answer,
    Barrier,
    BarrierCue,
    Cast,
    CastMember,
    Character,
    Episode,
    Goal,
    NeutralContext,
    Probe,
    Respondent,
    Response,
    Role,
    RunChunk,
    Scenario,
    ScenarioBarrier,
    Seat,
    SimulationRun,
    Team,
    TeamMember,
    Turn,
)
from .models.scenarios import goal_lines
from .scenarios.neutralise import BY_HAND, NEUTRALISE_PROMPT_VERSION, apply_neutral_context


class TeamMemberInline(admin.TabularInline):
    model = TeamMember
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    """Teams and who is in them: researchers manage the team's data, annotators form its pool."""

    list_display = ["name", "slug", "researchers", "annotators", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [TeamMemberInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Team]:
        researcher, annotator = TeamMember.Role.RESEARCHER, TeamMember.Role.ANNOTATOR
        return super().get_queryset(request).annotate(
            researcher_count=Count("members", filter=Q(members__role=researcher)),
            annotator_count=Count("members", filter=Q(members__role=annotator)),
        )

    @admin.display(ordering="researcher_count")
    def researchers(self, team: Team) -> int:
        return team.researcher_count

    @admin.display(ordering="annotator_count")
    def annotators(self, team: Team) -> int:
        return team.annotator_count


@admin.register(Character)
class CharacterAdmin(admin.ModelAdmin):
    list_display = ["name", "age", "gender", "occupation", "external_id"]
    list_filter = ["team", "gender"]
    search_fields = ["first_name", "last_name", "occupation", "external_id"]


class MinimumInline(admin.options.InlineModelAdmin):
    """An inline whose ``min_num`` is enforced: the form refuses to save fewer rows."""

    validate_min = True

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs):
        # InlineModelAdmin passes min_num to the formset but not validate_min, so without this
        # the minimum only sets how many blank forms are shown.
        return super().get_formset(request, obj, validate_min=self.validate_min, **kwargs)


class RoleForm(ModelForm):
    """A role on its scenario's page, with its goals as text, one a line (their tags are kept by
    position; tags are edited on the role's own page)."""

    goals = CharField(widget=Textarea(attrs={"rows": 3}), help_text="One goal a line.")

    class Meta:
        model = Role
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["goals"].initial = self.instance.goal_text

    def clean_goals(self) -> list[str]:
        lines = goal_lines(self.cleaned_data["goals"])
        if not lines:
            raise ValidationError("A role needs a goal.")
        return lines

    def save_goals(self) -> None:
        """Make the role's goals the lines given, keeping each position's tags."""
        role, lines = self.instance, self.cleaned_data["goals"]
        for position, text in enumerate(lines):
            Goal.objects.update_or_create(role=role, position=position, defaults={"text": text})
        role.goals.filter(position__gte=len(lines)).delete()


class RoleInline(MinimumInline, admin.StackedInline):
    """A scenario needs at least two roles."""

    model = Role
    form = RoleForm
    extra = 0
    min_num = 2
    autocomplete_fields = ["character"]


class ProbeInline(admin.StackedInline):
    """Multiple-choice questions about a role's private information, goal or reason."""

    model = Probe
    extra = 0
    autocomplete_fields = ["about"]


class CastInline(admin.TabularInline):
    """The scenario's other casts, with who plays which role; a cast's characters are changed on its page."""

    model = Cast
    extra = 0
    fields = ["external_id", "label", "who"]
    readonly_fields = ["who"]
    show_change_link = True

    def get_queryset(self, request: HttpRequest) -> QuerySet[Cast]:
        return super().get_queryset(request).prefetch_related("members__role", "members__character")

    @admin.display(description="characters, by role")
    def who(self, cast: Cast) -> str:
        return ", ".join(f"{position + 1}: {character}" for position, character in sorted(cast.characters().items()))


class ScenarioBarrierInline(admin.StackedInline):
    """This scenario's own barrier prompts (SocialVeil's barrier files): each replaces a barrier's directive."""

    model = ScenarioBarrier
    extra = 0
    fields = ["barrier", "style_directive", "trait_note", "barrier_positions"]


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    list_display = [
        "__str__", "source", "difficulty", "relationship", "turn_taking", "is_template", "role_count", "external_id",
        "created_at",
    ]
    list_filter = ["team", "source", "difficulty", "relationship", "turn_taking", "is_template"]
    search_fields = ["codename", "context", "external_id"]
    autocomplete_fields = ["template"]
    inlines = [RoleInline, ProbeInline, ScenarioBarrierInline, CastInline]
    ordering = ["codename", "pk"]  # the role count's GROUP BY drops Meta.ordering (autocomplete pages too)

    def save_related(self, request: HttpRequest, form: ModelForm, formsets: list, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        for formset in formsets:
            for role_form in formset.forms:
                if isinstance(role_form, RoleForm) and role_form.instance.pk and role_form not in formset.deleted_forms:
                    role_form.save_goals()

    def get_queryset(self, request: HttpRequest) -> QuerySet[Scenario]:
        return super().get_queryset(request).annotate(role_count=Count("roles"))

    @admin.display(description="roles", ordering="role_count")
    def role_count(self, scenario: Scenario) -> int:
        return scenario.role_count


class CastMemberInline(MinimumInline, admin.TabularInline):
    """One character per role; only the roles of the cast's scenario are offered."""

    model = CastMember
    extra = 0
    min_num = 1
    autocomplete_fields = ["character"]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any):
        if db_field.name == "role":
            cast = self.parent_model.objects.filter(pk=request.resolver_match.kwargs.get("object_id")).first()
            kwargs["queryset"] = Role.objects.filter(scenario=cast.scenario_id if cast else None).select_related(
                "scenario"
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Cast)
class CastAdmin(admin.ModelAdmin):
    list_display = ["__str__", "scenario", "external_id", "created_at"]
    list_filter = ["scenario__team"]
    list_select_related = ["scenario"]
    search_fields = ["label", "external_id", "scenario__codename", "scenario__external_id"]
    autocomplete_fields = ["scenario"]
    inlines = [CastMemberInline]


class GoalInline(MinimumInline, admin.TabularInline):
    """A role needs a goal; each has optional tags (a JSON list such as ["relatedness"])."""

    model = Goal
    extra = 0
    min_num = 1


@admin.register(Role)
class RoleAdmin(admin.ModelAdmin):
    list_display = ["__str__", "scenario", "position", "character"]
    search_fields = ["scenario__codename", "scenario__external_id", "goals__text"]
    autocomplete_fields = ["scenario", "character"]
    inlines = [GoalInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Role]:
        # Not list_select_related: Role.__str__ names the scenario, and autocomplete results use
        # this queryset too (a changelist ignores list_select_related once select_related is set).
        return super().get_queryset(request).select_related("scenario", "character")


class BarrierCueInline(admin.TabularInline):
    model = BarrierCue
    extra = 0


@admin.register(Barrier)
class BarrierAdmin(admin.ModelAdmin):
    list_display = ["key", "name", "team", "builtin", "position"]
    list_filter = ["builtin", "team"]
    list_editable = ["position"]
    search_fields = ["key", "name", "definition"]
    inlines = [BarrierCueInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Barrier | None = None) -> list[str]:
        # Seeded barriers keep their key: code and imported data refer to them by it.
        # Built-in barriers are shared by every team, so they never get one.
        return ["key", "team", "builtin"] if obj is not None and obj.builtin else ["builtin"]

    def has_delete_permission(self, request: HttpRequest, obj: Barrier | None = None) -> bool:
        if obj is not None and obj.builtin:
            return False
        return super().has_delete_permission(request, obj)


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    autocomplete_fields = ["role", "character"]


class TurnInline(admin.TabularInline):
    """The transcript, read-only: turns are written by the runner, the chat and importers."""

    model = Turn
    fields = ["index", "speaker", "action_type", "content", "model", "created_at"]
    readonly_fields = fields
    ordering = ["index"]
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Episode | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Episode | None = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Turn]:
        return super().get_queryset(request).select_related("seat__character")

    @admin.display(description="speaker")
    def speaker(self, turn: Turn) -> str:
        return turn.seat.character.name


@admin.register(Episode)
class EpisodeAdmin(admin.ModelAdmin):
    list_display = ["id", "external_id", "scenario", "barrier", "source", "status", "turn_count", "created_at"]
    list_display_links = ["id", "external_id"]
    list_filter = ["team", "source", "status", "barrier", "tag", "scenario__difficulty"]
    list_select_related = ["scenario", "barrier"]
    search_fields = ["external_id", "scenario__codename", "tag"]
    autocomplete_fields = ["scenario"]
    date_hierarchy = "created_at"
    inlines = [SeatInline, TurnInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Episode]:
        return super().get_queryset(request).annotate(turn_count=Count("turns"))

    @admin.display(description="turns", ordering="turn_count")
    def turn_count(self, episode: Episode) -> int:
        return episode.turn_count


@admin.register(Seat)
class SeatAdmin(admin.ModelAdmin):
    list_display = ["__str__", "position", "role", "player", "model", "strategy", "carries_barrier"]
    list_filter = ["player", "strategy", "carries_barrier"]
    search_fields = ["episode__external_id", "character__first_name", "character__last_name", "model"]
    autocomplete_fields = ["episode", "role", "character"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Seat]:
        # Seat.__str__ names the character and the episode, in lists and autocomplete results.
        return super().get_queryset(request).select_related("episode", "character", "role__scenario")


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ["__str__", "speaker", "action_type", "excerpt", "model", "created_at"]
    list_filter = ["action_type"]
    list_select_related = ["episode", "seat__character"]
    search_fields = ["content"]
    autocomplete_fields = ["episode", "seat"]

    @admin.display(description="speaker", ordering="seat__character__first_name")
    def speaker(self, turn: Turn) -> str:
        return turn.seat.character.name

    @admin.display(description="content")
    def excerpt(self, turn: Turn) -> str:
        return turn.content if len(turn.content) <= 80 else turn.content[:79] + "…"


@admin.register(Respondent)
class RespondentAdmin(admin.ModelAdmin):
    """Who answered: judges and agents by model and prompt version, people by account, imports by label."""

    list_display = ["__str__", "kind", "model", "prompt_version", "label", "user"]
    list_filter = ["kind"]
    list_select_related = ["user"]
    search_fields = ["model", "label", "prompt_version", "user__username"]
    autocomplete_fields = ["user"]


class AnswerInline(admin.TabularInline):
    model = Answer
    extra = 0
    fields = ["question", "seat_position", "goal", "turn", "end_turn", "start_char", "end_char", "value", "number",
              "reasoning"]
    raw_id_fields = ["question", "goal"]


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    """One respondent's answers to one instrument about an episode (a judge's, say), with its answers."""

    list_display = ["episode", "respondent", "instrument", "status", "seat_position", "created_at", "latency_ms"]
    list_filter = ["respondent__kind", "status"]
    list_select_related = ["episode", "respondent__user", "instrument"]
    search_fields = ["respondent__model", "respondent__label", "episode__external_id"]
    autocomplete_fields = ["episode", "respondent"]
    raw_id_fields = ["instrument"]
    inlines = [AnswerInline]


@admin.register(NeutralContext)
class NeutralContextAdmin(admin.ModelAdmin):
    """Researchers correct a neutral sentence here; a saved edit is marked and put in the scenario.

    ``edited`` protects the text from ``manage.py neutralise``; the scenario's ``context`` takes the
    new text at once, and its original stays in ``original_context``.
    """

    list_display = ["scenario", "prompt_version", "model", "edited", "excerpt", "updated_at"]
    list_filter = ["edited", "prompt_version", "model"]
    list_select_related = ["scenario"]
    search_fields = ["text", "scenario__codename", "scenario__external_id"]
    autocomplete_fields = ["scenario"]
    fields = ["scenario", "prompt_version", "model", "text", "edited", "created_at", "updated_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: NeutralContext | None = None) -> list[str]:
        # A row is found by (scenario, prompt version); once made, only its text is a researcher's to change.
        fixed = ["scenario", "prompt_version", "model"] if obj is not None else []
        return [*fixed, "edited", "created_at", "updated_at"]

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial = {"prompt_version": NEUTRALISE_PROMPT_VERSION, "model": BY_HAND}
        return {**initial, **super().get_changeform_initial_data(request)}

    def save_model(self, request: HttpRequest, obj: NeutralContext, form: ModelForm, change: bool) -> None:
        if not change or "text" in form.changed_data:
            obj.edited = True
        super().save_model(request, obj, form, change)
        if obj.edited:
            apply_neutral_context(obj)

    @admin.display(description="text")
    def excerpt(self, neutral: NeutralContext) -> str:
        return neutral.text if len(neutral.text) <= 80 else neutral.text[:79] + "…"


class RunChunkInline(admin.TabularInline):
    """A run's chunks, read only: which consumer played which, in how many attempts, how it ended."""

    model = RunChunk
    extra = 0
    can_delete = False
    fields = ["number", "status", "attempt", "worker", "heartbeat_at", "started_at", "finished_at", "finished",
              "failed", "error"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: SimulationRun | None = None) -> bool:
        return False


@admin.register(SimulationRun)
class SimulationRunAdmin(admin.ModelAdmin):
    """Runs are started and cancelled from the benchmark pages or ``manage.py simulate``; here they are read,
    with their chunks."""

    inlines = [RunChunkInline]

    list_display = ["tag", "status", "progress", "failed", "created_by", "created_at", "finished_at"]
    list_filter = ["team", "status"]
    list_select_related = ["created_by"]
    search_fields = ["tag", "message"]
    date_hierarchy = "created_at"
    actions = None  # no bulk delete: it would reach runs that are still going

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: SimulationRun | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: SimulationRun | None = None) -> bool:
        # A finished, failed or cancelled run may go; one still queued or running may not.
        return obj is not None and obj.done and super().has_delete_permission(request, obj)

    @admin.display(description="finished")
    def progress(self, run: SimulationRun) -> str:
        return f"{run.finished} / {run.total}"

