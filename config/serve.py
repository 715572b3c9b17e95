"""Parley's web server: daphne, except that a websocket message too big to take is refused with a close code.

Daphne takes websocket messages up to 1 MiB (``--websocket_max_message_size``) and leaves autobahn's
default for anything bigger: drop the TCP connection. The page then sees close code 1006 and no
reason, and cannot tell the person in front of it why. Here autobahn closes properly instead: close
code 1009 (message too big) with a reason naming the size and the limit. Every other option is
daphne's own::

    python -m config.serve -b 127.0.0.1 -p 8000 config.asgi:application
"""

from __future__ import annotations

import signal
from typing import Any

from daphne.cli import CommandLineInterface
from daphne.server import Server
from daphne.ws_protocol import WebSocketProtocol


class ParleyServer(Server):
    def protocol_connected(self, protocol: Any) -> None:
        super().protocol_connected(protocol)
        if isinstance(protocol, WebSocketProtocol):
            protocol.failByDrop = False  # fail with a close frame (1009 for too big), not a dropped connection


class ParleyCommandLine(CommandLineInterface):
    server_class = ParleyServer


def take_back_ctrl_c() -> None:
    """Handle Ctrl-C even when the shell that started the server ignores it for its children.

    ``make demo`` starts the task consumer in the background and then this server from the same shell,
    which leaves SIGINT ignored here too; Twisted then installs no handler and Ctrl-C would stop the
    consumer but leave the server running.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


if __name__ == "__main__":
    take_back_ctrl_c()
    ParleyCommandLine.entrypoint()
