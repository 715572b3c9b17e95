"""The websocket origin rule's settings are worked out once per process, and again when a test changes one.

What the rule lets through is tested on real sockets in ``tests/chat/test_consumer_limits.py``.
"""

from config.origins import allowed_origins


def test_the_rule_is_worked_out_once_not_at_every_handshake():
    assert allowed_origins() is allowed_origins()


def test_a_changed_setting_is_read_at_the_next_handshake(settings):
    before = allowed_origins()
    assert not before.allow("https://study.example.org", "127.0.0.1:8000", secure=False)

    settings.CSRF_TRUSTED_ORIGINS = ["https://study.example.org", "https://*.lab.example.org"]

    after = allowed_origins()
    assert after is not before
    assert after.allow("https://study.example.org", "127.0.0.1:8000", secure=False)
    assert after.allow("https://room-2.lab.example.org", "127.0.0.1:8000", secure=False)
    assert not after.allow("http://room-2.lab.example.org", "127.0.0.1:8000", secure=False)


def test_a_setting_the_rule_does_not_read_leaves_it_as_it_was(settings):
    before = allowed_origins()

    settings.PARLEY_CHAT_MAX_SOCKETS = 7

    assert allowed_origins() is before


def test_the_handshake_is_read_from_the_headers_the_rule_needs(settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.USE_X_FORWARDED_HOST = True
    scope = {
        "type": "websocket",
        "scheme": "ws",
        "headers": [(b"Host", b"10.0.0.5:8000"), (b"Origin", b"https://parley.example"),
                    (b"X-Forwarded-Host", b"parley.example"), (b"X-Forwarded-Proto", b"https, http"),
                    (b"cookie", b"sessionid=abc")],
    }

    assert allowed_origins().handshake(scope) == ("https://parley.example", "parley.example", True)
