from django import forms
from django.db.models import Q, QuerySet

from ..models import Barrier, Episode, ImportJob, Recording, Scenario, Turn

# The browser's sortable columns: the key in the URL, the column's label, what it orders by.
SORTS = {
    "episode": ("Episode", "external_id"),
    "scenario": ("Scenario", "scenario__codename"),
    "scenario_source": ("Scenario source", "scenario__source"),
    "barrier": ("Barrier", "barrier__name"),
    "source": ("Source", "source"),
    "status": ("Status", "status"),
    "tag": ("Tag", "tag"),
    "turns": ("Turns", "turn_count"),
    "created": ("Created", "created_at"),
}
DEFAULT_SORT = "-created"


class ScenarioFilterField(forms.ModelChoiceField):
    """A scenario told apart from others of its name by its id and source."""

    def label_from_instance(self, scenario: Scenario) -> str:
        return f"{scenario} #{scenario.pk}" + (f" ({scenario.source})" if scenario.source else "")


class EpisodeFilterForm(forms.Form):
    """The episode browser's filters over the episodes a researcher may see; an empty form filters nothing."""

    source = forms.ChoiceField(choices=[("", "any source"), *Episode.Source.choices], required=False)
    barrier = forms.ModelChoiceField(Barrier.objects.none(), required=False, empty_label="any barrier")
    scenario = ScenarioFilterField(Scenario.objects.none(), required=False, empty_label="any scenario")
    status = forms.ChoiceField(choices=[("", "any status"), *Episode.Status.choices], required=False)
    tag = forms.ChoiceField(required=False)
    imported = forms.ModelChoiceField(ImportJob.objects.none(), required=False, widget=forms.HiddenInput,
                                      label="Import")  # the import page's link to what an import brought in
    q = forms.CharField(required=False, max_length=200, label="Search",
                        widget=forms.TextInput(attrs={"type": "search", "placeholder": "words of the turns or "
                                                      "the context, an id or external id"}))
    sort = forms.ChoiceField(required=False, widget=forms.HiddenInput,
                             choices=[(f"{sign}{key}", key) for key in SORTS for sign in ("", "-")])

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["barrier"].queryset = Barrier.objects.owned_by(user)
        self.fields["scenario"].queryset = Scenario.objects.owned_by(user).only("codename", "source")
        self.fields["imported"].queryset = ImportJob.objects.owned_by(user)
        tags = Episode.objects.owned_by(user).exclude(tag="").order_by("tag").values_list("tag", flat=True).distinct()
        self.fields["tag"].choices = [("", "any tag"), *((tag, tag) for tag in tags)]

    def filter(self, episodes: QuerySet[Episode]) -> QuerySet[Episode]:
        """Narrow ``episodes`` to the valid filters; an invalid value is ignored, not an error."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        special = ("imported", "q", "sort")
        lookups = {field: data[field] for field in self.fields if data.get(field) and field not in special}
        if data.get("imported"):
            lookups["pk__in"] = {pk for result in data["imported"].results for pk in result.get("episodes", [])}
        episodes = episodes.filter(**lookups)
        for word in (data.get("q") or "").split()[:10]:
            match = (Q(external_id__icontains=word) | Q(scenario__context__icontains=word)
                     | Q(pk__in=Turn.objects.filter(content__icontains=word).values("episode_id")))
            number = word.lstrip("#")
            if number.isdigit() and len(number) < 19:
                match |= Q(pk=int(number))
            episodes = episodes.filter(match)
        return episodes

    @property
    def chosen_sort(self) -> str:
        """The chosen sort, ``-`` first for descending; the newest first when none (or a bad one) is asked."""
        return getattr(self, "cleaned_data", {}).get("sort") or DEFAULT_SORT

    def order(self, episodes: QuerySet[Episode]) -> QuerySet[Episode]:
        key = self.chosen_sort.lstrip("-")
        field = SORTS[key][1]
        descending = self.chosen_sort.startswith("-")
        return episodes.order_by(f"-{field}" if descending else field, "-pk" if descending else "pk")

    def columns(self) -> dict[str, dict[str, str]]:
        """Each sortable column's header: the sort its link asks for, and how the list is sorted by it now."""
        current = self.chosen_sort
        headers = {}
        for key, (label, _) in SORTS.items():
            if current.lstrip("-") == key:
                ascending = not current.startswith("-")
                headers[key] = {"label": label, "sort": f"-{key}" if ascending else key,
                                "aria": "ascending" if ascending else "descending"}
            else:
                headers[key] = {"label": label, "sort": key, "aria": ""}
        return headers


class RecordingForm(forms.Form):
    """A recording for an episode: a file to upload or an http(s) address, one of the two.

    What the file is gets checked by ``benchmark.episodes.recordings`` (its first bytes, its size)
    before anything is stored; this form only says which of the two was given.
    """

    file = forms.FileField(required=False, label="Upload a file",
                           help_text="Audio or video: WAV, MP3, Ogg, FLAC, WebM/Matroska or MP4.")
    url = forms.URLField(required=False, label="Or give its address", assume_scheme="https",
                         help_text="An http:// or https:// address; the player loads it from there.")
    kind = forms.ChoiceField(choices=Recording.Kind.choices, initial=Recording.Kind.VIDEO, required=False,
                             help_text="For an address: audio or video? (An upload's kind is read from the file.)")
    duration_s = forms.FloatField(required=False, min_value=0, label="Length in seconds (optional)")

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("file")) == bool(data.get("url")):
            raise forms.ValidationError("Give either a file to upload or an address, not both and not neither.")
        return data
