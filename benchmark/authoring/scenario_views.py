"""The researcher's scenario pages: the team's scenarios (searchable), the editor, and the picker's search.

Every view is for researchers; a scenario of another team is a 404.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from ..models import Scenario
from ..permissions import researcher_required
from ..scenarios.picker import SCOPES, option_rows, search_scenarios, search_text, with_details
from .scenario_forms import ScenarioEditor
from .scenario_saving import EditRefused, external_id_taken, played_count, save_scenario

SCENARIOS_PER_PAGE = 50
SAVE_AS_NEW = "save_as_new"


@require_GET
@researcher_required
def scenario_list(request: HttpRequest) -> HttpResponse:
    """The team's scenarios, searched as the picker searches, with what tells same-named ones apart."""
    text = search_text(request.GET)
    scenarios = search_scenarios(Scenario.objects.owned_by(request.user), text)
    scenarios = scenarios.annotate(
        role_count=Count("roles", distinct=True), episode_count=Count("episodes", distinct=True)
    ).order_by("codename", "pk")
    scenarios = with_details(scenarios)
    page = Paginator(scenarios, SCENARIOS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "benchmark/scenarios/list.html", {"page": page, "text": text})


@require_http_methods(["GET", "POST"])
@researcher_required
def scenario_new(request: HttpRequest) -> HttpResponse:
    return _edit(request, None)


@require_http_methods(["GET", "POST"])
@researcher_required
def scenario_edit(request: HttpRequest, pk: int) -> HttpResponse:
    scenario = get_object_or_404(Scenario.objects.owned_by(request.user), pk=pk)
    if scenario.is_template:
        messages.error(request, "This is a template: its roles are slots that instantiate_template fills; "
                                "edit the scenarios made from it instead.")
        return redirect("benchmark:scenarios")
    return _edit(request, scenario)


def _edit(request: HttpRequest, scenario: Scenario | None) -> HttpResponse:
    """Show the editor, or save it: in place, or as a new scenario when the researcher asks for one."""
    editor = ScenarioEditor(request.user, scenario, request.POST if request.method == "POST" else None)
    as_new = scenario is not None and SAVE_AS_NEW in request.POST
    if request.method == "POST" and editor.is_valid():
        team = scenario.team if scenario else editor.fields.cleaned_data["team"]
        data = editor.data()
        target = None if as_new else scenario
        if as_new and data.fields["external_id"] == scenario.external_id:
            data.fields["external_id"] = None  # the original keeps its id
        if external_id_taken(team, data.fields["external_id"], target):
            editor.fields.add_error("external_id", "Another of the team's scenarios has this external id.")
        else:
            try:
                saved = save_scenario(team, data, target)
            except EditRefused as refusal:
                editor.problems.append(str(refusal))
            else:
                if as_new:
                    messages.success(request, f"Saved as a new scenario, #{saved.pk}; #{scenario.pk} is unchanged.")
                else:
                    messages.success(request, f"Scenario {saved} (#{saved.pk}) is saved.")
                return redirect("benchmark:scenario-edit", saved.pk)
    context = {
        "editor": editor, "scenario": scenario, "played": played_count(scenario) if scenario else 0,
        "save_as_new": SAVE_AS_NEW,
    }
    return render(request, "benchmark/scenarios/edit.html", context)


@require_GET
@researcher_required
def picker_options(request: HttpRequest) -> HttpResponse:
    """The picker's options for a search: the ticked scenarios first, then those that match."""
    scope = SCOPES.get(request.GET.get("scope", ""))
    name = request.GET.get("field", "")
    if scope is None or not name.isidentifier():
        raise Http404("No such scenario picker.")
    text = search_text(request.GET, f"{name}_search")
    rows = option_rows(scope(Scenario.objects.owned_by(request.user)), request.GET.getlist(name), text)
    widget_id = request.GET.get("id", f"id_{name}")
    if not widget_id.replace("-", "_").isidentifier():
        widget_id = f"id_{name}"
    context = {**rows, "name": name, "id": widget_id}
    return render(request, "benchmark/scenarios/partials/_picker_options.html", context)
