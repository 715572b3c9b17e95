"""Run a task consumer: Huey's ``run_huey``, after importing litellm if this deployment may call a model.

The import takes 10+ s of CPU on a small machine, and a first call builds more (``loading.start``
rehearses one). Done here, in the consumer's main process before it starts its workers, process
workers inherit it when they fork (one import, not one per worker) and the first task that calls a
model does not wait for it. A deployment that runs only the offline
scripted model skips it and starts in about a second.

Workers and their kind come from settings (``PARLEY_TASK_WORKERS``, ``PARLEY_TASK_WORKER_TYPE``);
every option of Huey's command still applies (``--no-periodic`` on all consumers but one).
"""

from __future__ import annotations

import signal
from typing import Any

from huey.contrib.djhuey.management.commands.run_huey import Command as HueyCommand

from benchmark.agents import loading


class Command(HueyCommand):
    help = "Run a task consumer (imports litellm first when a model may be called)."
    # The system checks import the URL conf, and with it every page's modules (scipy and pandas for the
    # results): half a second more before a consumer is ready. The web process and ``migrate`` run them.
    requires_system_checks: list[str] = []

    def handle(self, *args: Any, **options: Any) -> None:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            # Started in the background by a shell (``make demo``), which ignores Ctrl-C for it: take it
            # back, so Ctrl-C stops the consumer with the web server, even while it is still starting.
            signal.signal(signal.SIGINT, signal.default_int_handler)
        loading.start()
        super().handle(*args, **options)
