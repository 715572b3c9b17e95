"""The builder's live preview: the instrument as each kind of respondent meets it, drawn by the real renderers.

The judge's preview is benchmark's own: the rubric its system prompt carries
(``benchmark.evaluation.judge_questions``), or why the judge cannot answer the instrument. The
annotator's item form and the participant's questionnaire belong to apps that import ``benchmark``;
each registers its renderer here from its ``apps.py`` (``register_preview``), so the builder shows
exactly what those pages draw without importing them. A renderer takes the request and the
instrument and returns HTML; one that fails says so in its panel instead of breaking the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.http import HttpRequest
from django.template.loader import render_to_string

from benchmark.evaluation import judge_questions
from benchmark.models import Instrument

Render = Callable[[HttpRequest, Instrument], str]


@dataclass(frozen=True)
class Preview:
    key: str
    title: str
    render: Render
    order: int


@dataclass(frozen=True)
class Panel:
    key: str
    title: str
    html: str


_previews: dict[str, Preview] = {}


def register_preview(key: str, title: str, render: Render, order: int = 50) -> None:
    """Show ``render(request, instrument)``'s HTML in the preview panel ``title`` (one per ``key``)."""
    _previews[key] = Preview(key, title, render, order)


def panels(request: HttpRequest, instrument: Instrument) -> list[Panel]:
    """Every registered preview of ``instrument``, in order."""
    ordered = sorted(_previews.values(), key=lambda p: (p.order, p.key))
    return [Panel(preview.key, preview.title, preview.render(request, instrument)) for preview in ordered]


def judge_preview(request: HttpRequest, instrument: Instrument) -> str:
    """The rubric the automated judge's system prompt gives for this instrument, or why it cannot answer it."""
    problem, prompt = "", ""
    if instrument.questions.exists():
        try:
            prompt = judge_questions.system_prompt(judge_questions.questionnaire([instrument]))
        except ValueError as refused:
            problem = str(refused)
    return render_to_string("benchmark/instruments/partials/_judge_preview.html",
                            {"prompt": prompt, "problem": problem}, request=request)


register_preview("judge", "The judge", judge_preview, order=30)
