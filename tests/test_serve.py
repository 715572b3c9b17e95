"""The web server stops on Ctrl-C even when the shell that started it ignores Ctrl-C for its children.

``make demo`` starts the task consumer in the background and the server after it from one shell,
which leaves SIGINT ignored in the server; without taking it back the server never stopped on Ctrl-C
while the consumer did. This starts the real server that way and sends it SIGINT.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ignore_ctrl_c() -> None:  # what the demo's shell leaves its children with
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_the_server_started_with_ctrl_c_ignored_stops_on_ctrl_c(tmp_path):
    port = free_port()
    env = {**os.environ, "PARLEY_VAR_DIR": str(tmp_path), "DEBUG": "true", "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("DATABASE_URL", None)  # the server needs no database to listen
    server = subprocess.Popen(
        [sys.executable, "-m", "config.serve", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, preexec_fn=ignore_ctrl_c,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, f"the server exited with {server.returncode} before listening"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not listen within 30 s"
                time.sleep(0.1)

        server.send_signal(signal.SIGINT)

        assert server.wait(timeout=20) is not None
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
