"""Each spoken turn's linguistic features, computed once and stored, read back by every report.

VADER's sentiment costs about half a millisecond an utterance in pure Python, so a report over 720
SocialVeil episodes (28,870 turns) spent most of its time recomputing it on every load. A turn's
counts and sentiment depend only on its text and on the feature definitions
(``benchmark.stats.linguistic``), so they are stored in ``TurnFeatures`` with a digest of both:

- **Filled when first needed**: the first report that reads a turn computes and stores its
  features. Imports and chats stay as fast as before, and every way a turn is written (``save``,
  bulk inserts, ``update``, an import) is covered without signals that bulk writes would skip.
- **Never stale**: a stored row whose digest differs from the turn's text as it is now (the turn
  was edited, or the word lists or the VADER release changed) is computed again and replaced.
- **The same numbers**: a stored row holds exactly what ``linguistic.utterance`` returns (a float
  column round-trips a Python float), and the signature adds them up in the same order.

Two reports filling the same turns at once write the same values; the upsert lets both succeed.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from functools import lru_cache

from django.db import IntegrityError, transaction

from ..models import ActionType, Turn, TurnFeatures
from ..stats.linguistic import Counts, Utterance, definitions_key, utterance

COUNT_FIELDS = ("words", "vague_pronouns", "hedges", "self_focus")


@lru_cache(maxsize=1)
def _hasher() -> hashlib.blake2b:
    return hashlib.blake2b(f"{definitions_key()}\0".encode(), digest_size=16)


def digest(text: str) -> str:
    """The key a turn's stored features must carry to be current: its text under today's definitions."""
    hasher = _hasher().copy()
    hasher.update(text.encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()


def spoken_features(episode_ids: Iterable[int]) -> dict[int, list[tuple[int, Utterance]]]:
    """Each episode's spoken turns in order as (seat position, features), computing and storing the features
    that are missing or stale."""
    rows = Turn.objects.filter(episode_id__in=list(episode_ids), action_type=ActionType.SPEAK).order_by(
        "episode_id", "index"
    ).values_list("pk", "episode_id", "seat__position", "content", "features__digest",
                  *(f"features__{name}" for name in (*COUNT_FIELDS, "sentiment")))
    spoken: dict[int, list[tuple[int, Utterance]]] = defaultdict(list)
    fresh: list[TurnFeatures] = []
    for pk, episode_id, position, content, stored, *values in rows:
        key = digest(content)
        if stored == key:
            found = Utterance(Counts(*values[:4]), values[4])
        else:
            found = utterance(content)
            fresh.append(TurnFeatures(turn_id=pk, digest=key, sentiment=found.sentiment,
                                      **{name: getattr(found.counts, name) for name in COUNT_FIELDS}))
        spoken[episode_id].append((position, found))
    _store(fresh)
    return spoken


def _store(features: list[TurnFeatures]) -> None:
    if not features:
        return
    try:
        with transaction.atomic():
            TurnFeatures.objects.bulk_create(
                features, batch_size=1000, update_conflicts=True, unique_fields=["turn"],
                update_fields=["digest", *COUNT_FIELDS, "sentiment"],
            )
    except IntegrityError:
        # A turn was deleted (its episode re-imported or removed) while this report read it. The
        # features just computed are still right for this report; the next one stores what remains.
        pass
