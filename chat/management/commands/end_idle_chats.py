"""End the chats that have gone quiet past their study's inactivity timeout; run it periodically.

A participant's page and socket end their own idle chat when they come back, and the live monitor
only shows such a chat as idle (a GET changes nothing). Participants who never come back are
ended here, so their design cell is offered again and the monitor's counts settle. The consumer that
runs periodic tasks does this every minute (``chat.tasks.end_idle_chats``); this command is for an
operator who wants it now, or runs no such consumer. Running it twice is harmless.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...lifecycle import end_idle_chats
from ...models import ChatStudy


class Command(BaseCommand):
    help = (
        "End every participant chat quiet past its study's inactivity timeout (the consumer's upkeep does it "
        "every minute)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--study", default="", metavar="SLUG", help="Only this chat study's chats (default: every study's).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = None
        if options["study"]:
            study = ChatStudy.objects.filter(slug=options["study"]).first()
            if study is None:
                raise CommandError(f"There is no chat study with the slug {options['study']!r}.")
        ended = end_idle_chats(study)
        per_study = Counter(participant.study.slug for participant in ended)
        for slug, count in sorted(per_study.items()):
            self.stdout.write(f"{slug}: ended {count} idle chat{'s' if count != 1 else ''}")
        self.stdout.write(self.style.SUCCESS(
            f"Ended {len(ended)} idle chat{'s' if len(ended) != 1 else ''}"
            f"{'' if study is None else f' in {study.slug}'}."
        ))
