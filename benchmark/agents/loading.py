"""Loading litellm: once, offline and quiet, and when a server starts rather than on a first message.

``litellm`` fetches a cost map from the network at import unless ``LITELLM_LOCAL_MODEL_COST_MAP``
is set, and its import takes 10+ s of CPU on a small machine. So a server that may call a model
(``config.asgi``) starts the import as it starts (:func:`warm_up`), the gateway's first call finds
it done, and a machine running only the offline scripted model never imports it at all.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

from django.conf import settings

from .allowed_models import SCRIPTED, configured_models


@functools.cache
def litellm() -> Any:
    """The litellm module, imported on first use and set up once for Parley (:func:`_configure`)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    _configure(litellm)
    return litellm


def _configure(litellm: Any) -> None:
    """Offline, quiet, and without the per-call work whose result Parley never reads.

    Parley records each call's tokens and latency (``llm.Usage``), never its price, so litellm's cost
    calculation, which runs on every reply and again on a stream's last chunk (a quarter to a third
    of the gateway's CPU per call, ``perf/model_client.py``), is replaced by one that prices nothing:
    a cost of None is litellm's own "unknown". No success or failure callbacks are registered, and a
    streamed call does not hand each chunk to the (sync) logging thread. One client per provider,
    key and event loop is already reused from litellm's client cache; Parley's own retries replace
    litellm's (``llm._request``). Token estimates for providers that report no usage stay on.
    """
    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on errors
    litellm.telemetry = False  # read by older releases only; current ones send nothing
    litellm.response_cost_calculator = _no_cost
    litellm.disable_streaming_logging = True
    litellm.success_callback = []
    litellm.failure_callback = []
    litellm.callbacks = []


def _no_cost(**_details: Any) -> None:
    """What a call cost, as Parley asks litellm: unknown (None), without working it out."""
    return None


def preload() -> None:
    """Import litellm now rather than on the first call (e.g. once before forking worker processes)."""
    litellm()


def preload_if_used() -> bool:
    """Import litellm now, in this thread, if this deployment may call a model (a consumer starting:
    before it forks its workers); whether it did."""
    if not may_call_models():
        return False
    preload()
    return True


def may_call_models() -> bool:
    """Whether this deployment may call a model other than the scripted one: one is configured for
    a role, or PARLEY_ALLOWED_MODELS lets researchers pick one."""
    return bool(settings.PARLEY_ALLOWED_MODELS) or any(name != SCRIPTED for name in configured_models())


def warm_up() -> threading.Thread | None:
    """Start importing litellm in the background when a server starts, if it may call a model.

    The server answers at once; a first model call that comes before the import is done waits
    for it (``preload`` again is then a no-op) instead of paying the whole import itself.
    """
    if not may_call_models():
        return None
    thread = threading.Thread(target=preload, name="litellm-import", daemon=True)
    thread.start()
    return thread
