from django.urls import path

from . import character_views, scenario_views

urlpatterns = [
    path("scenarios/", scenario_views.scenario_list, name="scenarios"),
    path("scenarios/new/", scenario_views.scenario_new, name="scenario-new"),
    path("scenarios/<int:pk>/", scenario_views.scenario_edit, name="scenario-edit"),
    path("scenarios/picker/", scenario_views.picker_options, name="scenario-picker"),
    path("characters/", character_views.character_list, name="characters"),
    path("characters/new/", character_views.character_new, name="character-new"),
    path("characters/<int:pk>/", character_views.character_edit, name="character-edit"),
]
