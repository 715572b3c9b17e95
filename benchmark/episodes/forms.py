from django import forms
from django.db.models import QuerySet

from ..models import Barrier, Episode, ImportJob, Recording, Scenario


class EpisodeFilterForm(forms.Form):
    """The episode browser's filters over the episodes a researcher may see; an empty form filters nothing."""

    source = forms.ChoiceField(choices=[("", "any source"), *Episode.Source.choices], required=False)
    barrier = forms.ModelChoiceField(Barrier.objects.none(), required=False, empty_label="any barrier")
    scenario = forms.ModelChoiceField(Scenario.objects.none(), required=False, empty_label="any scenario")
    status = forms.ChoiceField(choices=[("", "any status"), *Episode.Status.choices], required=False)
    tag = forms.ChoiceField(required=False)
    imported = forms.ModelChoiceField(ImportJob.objects.none(), required=False, widget=forms.HiddenInput,
                                      label="Import")  # the import page's link to what an import brought in

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["barrier"].queryset = Barrier.objects.owned_by(user)
        self.fields["scenario"].queryset = Scenario.objects.owned_by(user).only("codename")
        self.fields["imported"].queryset = ImportJob.objects.owned_by(user)
        tags = Episode.objects.owned_by(user).exclude(tag="").order_by("tag").values_list("tag", flat=True).distinct()
        self.fields["tag"].choices = [("", "any tag"), *((tag, tag) for tag in tags)]

    def filter(self, episodes: QuerySet[Episode]) -> QuerySet[Episode]:
        """Narrow ``episodes`` to the valid filters; an invalid value is ignored, not an error."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        lookups = {field: data[field] for field in self.fields if data.get(field) and field != "imported"}
        if data.get("imported"):
            lookups["pk__in"] = {pk for result in data["imported"].results for pk in result.get("episodes", [])}
        return episodes.filter(**lookups)


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
