"""The question form's option fields: one editor per option name, so no researcher types JSON.

A kind says which options it takes (``option_names``); the builder's question form gets one field per
name from ``editor_for(name)``. Each editor turns the stored option into text for its field and the
text back into the option, refusing text it cannot read with a message on the field. What the option
must then be (rising anchor values, a correct value among the choices) is the kind's own check.

- points (``anchors``): one line per point of the scale, ``value | label | description``; an inner
  point may be its value alone;
- choices (``choices``): one line per choice, ``value | label | description``; a line of one part is
  both value and label;
- a value (``correct``, ``source``): one line of text;
- a number (``min``, ``max``, ``step``, ``max_length``, ``position``);
- one label (``not_applicable``): ``label | description``;
- lines (``labels``, ``attributes``, and any option a future kind adds): one entry per line, or
  ``name: text`` lines for named entries (a slider's ``min: Not at all`` / ``max: Completely``).

An empty field leaves the option out.
"""

from __future__ import annotations

from typing import Any

from django import forms

SEPARATOR = "|"
EMPTY = object()  # what an empty field reads as: the option is left out


class OptionEditor:
    """How one option is edited: its form field, the stored value as text, the text read back."""

    help_text = ""
    rows = 0  # a text box of this many lines; 0 for a one-line input

    def field(self, name: str) -> forms.Field:
        widget = forms.Textarea(attrs={"rows": self.rows}) if self.rows else forms.TextInput(attrs={"size": 40})
        return forms.CharField(label=name.replace("_", " ").capitalize(), required=False, widget=widget,
                               help_text=self.help_text, strip=True)

    def to_text(self, value: Any) -> str:
        return "" if value is None else str(value)

    def read(self, text: str) -> Any:
        """The option from the field's text (EMPTY when left empty), or ``forms.ValidationError``."""
        return text if text else EMPTY


def _parts(line: str) -> list[str]:
    return [part.strip() for part in line.split(SEPARATOR)]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


class PointsEditor(OptionEditor):
    help_text = "One point of the scale per line: value | label | description (an inner point may be its value alone)."
    rows = 6

    def to_text(self, value: Any) -> str:
        if not isinstance(value, list):
            return ""
        return "\n".join(
            " | ".join(str(part) for part in (point.get("value"), point.get("label"), point.get("description"))
                       if part not in (None, "")) if isinstance(point, dict) else str(point)
            for point in value
        )

    def read(self, text: str) -> Any:
        points = []
        for number, line in enumerate(_lines(text), start=1):
            parts = _parts(line)
            try:
                value = int(parts[0])
            except ValueError:
                raise forms.ValidationError(
                    f"Line {number}: start with the point's whole number, e.g. “{number} | label | description”."
                ) from None
            point: dict[str, Any] = {"value": value}
            if len(parts) > 1:
                point["label"] = parts[1]
                point["description"] = SEPARATOR.join(parts[2:]).strip()
            points.append(point)
        return points or EMPTY


class ChoicesEditor(OptionEditor):
    help_text = "One choice per line: value | label | description (a line of one part is both value and label)."
    rows = 5

    def to_text(self, value: Any) -> str:
        if not isinstance(value, list):
            return ""
        lines = []
        for choice in value:
            if not isinstance(choice, dict):
                continue
            parts = [str(choice.get("value", "")), str(choice.get("label", ""))]
            if choice.get("description"):
                parts.append(str(choice["description"]))
            lines.append(" | ".join(parts))
        return "\n".join(lines)

    def read(self, text: str) -> Any:
        choices = []
        for line in _lines(text):
            parts = _parts(line)
            choice = {"value": parts[0], "label": parts[1] if len(parts) > 1 and parts[1] else parts[0]}
            if len(parts) > 2 and SEPARATOR.join(parts[2:]).strip():
                choice["description"] = SEPARATOR.join(parts[2:]).strip()
            choices.append(choice)
        return choices or EMPTY


class ValueEditor(OptionEditor):
    help_text = "One value."


class CorrectEditor(ValueEditor):
    help_text = "The value of the correct choice (never shown to annotators or participants)."


class NumberEditor(OptionEditor):
    help_text = "A number."

    def field(self, name: str) -> forms.Field:
        field = super().field(name)
        field.widget = forms.TextInput(attrs={"inputmode": "decimal", "size": 8})
        return field

    def read(self, text: str) -> Any:
        if not text:
            return EMPTY
        try:
            number = float(text)
        except ValueError:
            raise forms.ValidationError(f"“{text}” is not a number.") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise forms.ValidationError(f"“{text}” is not a number.")
        return int(number) if number.is_integer() else number

    def to_text(self, value: Any) -> str:
        return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


class LabelEditor(OptionEditor):
    help_text = "label | description, e.g. “Not applicable | The problem never arose”; empty to leave it out."

    def to_text(self, value: Any) -> str:
        if not isinstance(value, dict):
            return ""
        return " | ".join(str(value[part]) for part in ("label", "description") if value.get(part))

    def read(self, text: str) -> Any:
        if not text:
            return EMPTY
        label, _, description = text.partition(SEPARATOR)
        found = {"label": label.strip()}
        if description.strip():
            found["description"] = description.strip()
        return found


class LinesEditor(OptionEditor):
    help_text = "One entry per line, or “name: text” per line for named entries."
    rows = 3

    def to_text(self, value: Any) -> str:
        if isinstance(value, dict):
            return "\n".join(f"{name}: {text}" for name, text in value.items())
        if isinstance(value, list):
            return "\n".join(str(entry) for entry in value)
        return "" if value is None else str(value)

    def read(self, text: str) -> Any:
        lines = _lines(text)
        if not lines:
            return EMPTY
        named = [line.partition(":") for line in lines]
        if all(sep and name.strip() and " " not in name.strip() for name, sep, _ in named):
            return {name.strip(): rest.strip() for name, _, rest in named}
        return lines


EDITORS: dict[str, OptionEditor] = {
    "anchors": PointsEditor(),
    "choices": ChoicesEditor(),
    "correct": CorrectEditor(),
    "source": ValueEditor(),
    "min": NumberEditor(),
    "max": NumberEditor(),
    "step": NumberEditor(),
    "max_length": NumberEditor(),
    "position": NumberEditor(),
    "not_applicable": LabelEditor(),
}


def editor_for(option: str) -> OptionEditor:
    """The editor of the option called ``option`` (lines for an option no editor is named for)."""
    return EDITORS.get(option, LinesEditor())
