from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from ..forms import team_field
from ..importing import FORMATS
from ..importing.registry import REGISTRY

# How the page names each format, in the Format list and wherever it tells what a file was read as: each
# format of ``benchmark.importing`` brings its label (``ImportFormat.label``), so no page shows a format's key.
AUTO = "auto"
FORMAT_LABELS = {AUTO: "Tell from each file", **{found.name: found.label for found in REGISTRY}}


def format_label(name: str) -> str:
    """The page's name for a format (its key only for a format this page has never heard of)."""
    return FORMAT_LABELS.get(name, name)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """One or more files, in the order the browser sends them."""

    widget = MultipleFileInput

    def clean(self, data, initial=None):  # noqa: ANN001, ANN201 - Django's signature
        if isinstance(data, list | tuple):
            if not data:
                raise forms.ValidationError(self.error_messages["required"], code="required")
            return [super(MultipleFileField, self).clean(item, initial) for item in data]
        return [super().clean(data, initial)]


class ImportForm(forms.Form):
    """Files to import into one of the researcher's teams; the size limit is ``PARLEY_IMPORT_MAX_BYTES``."""

    files = MultipleFileField(
        label="Files",
        help_text="One or more files, imported in the order chosen; each one all or nothing.",
        allow_empty_file=True,  # refused in clean_files, with the file's name
        error_messages={"required": "Choose at least one file."},
    )
    format = forms.ChoiceField(
        initial=AUTO, label="Format",
        help_text=f"Left on “{FORMAT_LABELS[AUTO]}”, each file's format is told from its name and first record.",
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"] = team_field(user)
        self.fields["format"].choices = [(name, FORMAT_LABELS[name]) for name in (AUTO, *FORMATS)]
        self.order_fields(["team", "files", "format"])

    def clean_files(self) -> list:
        files = self.cleaned_data["files"]
        for upload in files:
            if not upload.size:
                raise forms.ValidationError(f"The file {upload.name} is empty.")
        total, limit = sum(upload.size for upload in files), settings.PARLEY_IMPORT_MAX_BYTES
        if total > limit:
            raise forms.ValidationError(
                f"These files come to {filesizeformat(total)}; this page takes at most {filesizeformat(limit)} at "
                "once. Choose fewer files at a time (a file larger than that can be imported by whoever runs the "
                "server, from its command line)."
            )
        return files
