"""What the real server (daphne, through ``config.serve``) does with a websocket message it will not take."""

import asyncio

import aiohttp
from django.conf import settings

from tests.chat.conftest import make_chat

TOO_BIG = 1024 * 1024 + 1  # one byte over daphne's limit on a websocket message


async def send_and_close(base_url: str, path: str, session_key: str, text: str) -> tuple[str, int, str]:
    """Open the chat socket as the participant's browser, send ``text``, and report how the socket ended."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as client:
        jar.update_cookies({settings.SESSION_COOKIE_NAME: session_key}, response_url=aiohttp.client.URL(base_url))
        url = base_url.replace("http://", "ws://") + path
        async with client.ws_connect(url, origin=base_url, timeout=aiohttp.ClientWSTimeout(ws_close=10)) as socket:
            first = await socket.receive_json(timeout=10)
            await socket.send_str(text)
            while True:
                message = await socket.receive(timeout=10)
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                    return first["type"], socket.close_code, message.extra or ""


def test_a_message_over_the_limit_is_refused_with_close_code_1009_and_a_reason(asgi_server):
    chat = make_chat()

    first, code, reason = asyncio.run(send_and_close(asgi_server, chat.path, chat.session_key, "x" * TOO_BIG))

    assert first == "history"  # the socket worked before the message
    assert code == 1009
    assert "exceeds payload limit" in reason
