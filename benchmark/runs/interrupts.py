"""Ctrl-C and SIGTERM on the process that executes a run: the first stops it cleanly, like a cancel."""

from __future__ import annotations

import signal
import threading
from typing import Any, Protocol


class Signalled(Protocol):
    signalled: bool

def install_signal_handlers(supervisor: Signalled) -> dict[int, Any]:
    """The first SIGINT/SIGTERM asks the run to stop cleanly; a second one acts as it usually does."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {}

    def handler(number: int, frame: Any) -> None:
        if supervisor.signalled:
            signal.signal(number, previous.get(number, signal.SIG_DFL))
            signal.raise_signal(number)
            return
        supervisor.signalled = True

    for number in (signal.SIGINT, signal.SIGTERM):
        previous[number] = signal.signal(number, handler)
    return previous
