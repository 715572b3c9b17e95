"""Parley's web server: daphne, except that a websocket message too big to take is refused with a close code.

Daphne takes websocket messages up to 1 MiB (``--websocket_max_message_size``) and leaves autobahn's
default for anything bigger: drop the TCP connection. The page then sees close code 1006 and no
reason, and cannot tell the person in front of it why. Here autobahn closes properly instead: close
code 1009 (message too big) with a reason naming the size and the limit. Every other option is
daphne's own::

    python -m config.serve -b 127.0.0.1 -p 8000 config.asgi:application
"""

from __future__ import annotations

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


if __name__ == "__main__":
    ParleyCommandLine.entrypoint()
