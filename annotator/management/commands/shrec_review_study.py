"""Create the review study of a span study (SHREC's review step, SH-15): each annotator reviews the other's
unmatched spans and says whether they agree.

The spans are paired as SHREC's task builders pair them (the first two annotators of each episode); every span
left unmatched becomes one item showing the mark and its turns, offered only to the other annotator of that
episode (``annotator.span_review``). The review study's agreement report gives the share of persistent
disagreement. Annotators imported with a SHREC file cannot sign in, so their spans are left out: the review is
for Parley's own span studies.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.management.team_option import add_team_argument, team_from_options

from ...span_review import EXTERNAL_NOTE, ReviewProblem, create_review_study
from ..study_option import find_study


class Command(BaseCommand):
    help = (
        "Create a review study over a span study's unmatched spans (SHREC's review step): each span the pairing "
        "left alone is shown to the episode's other annotator, who says whether they agree with it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument("--study", required=True, metavar="ID_OR_SLUG", help="The span study to review.")
        parser.add_argument("--title", default="", help="The review study's title (default: 'Review: <title>').")
        parser.add_argument("--slug", default="", help="The review study's address (default: made from the title).")
        parser.add_argument("--seed", type=int, default=0, help="Makes each reviewer's item order reproducible.")

    def handle(self, *args, **options) -> None:
        study = find_study(options["study"], team_from_options(options))
        try:
            made = create_review_study(study, title=options["title"], slug=options["slug"], seed=options["seed"])
        except ReviewProblem as problem:
            raise CommandError(str(problem)) from None
        left_out = f"; {made.external} of them left out: {EXTERNAL_NOTE}" if made.external else ""
        if made.study is None:
            raise CommandError(
                f"--study {study.slug!r}: {made.unmatched} unmatched span{'s' * (made.unmatched != 1)} to review"
                f"{left_out}. No review study was made."
            )
        reviewers = made.study.memberships.count()
        self.stdout.write(
            f"Created review study {made.study.slug!r} of {study.slug!r}: {made.items} unmatched "
            f"span{'s' * (made.items != 1)} to review, each offered only to the episode's other annotator "
            f"({reviewers} reviewer{'s' * (reviewers != 1)}, already in the study's pool, who find it among their "
            f"studies){left_out}."
        )
