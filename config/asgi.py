"""ASGI entry point: HTTP through Django, websockets through Channels routes.

Websockets pass the origin check first (``config.origins``: the Origin header must be the very
origin the socket was opened on, or a trusted one, so another site's page cannot open a
participant's chat with their cookie), then get the Django session from the cookie, as the pages do.
The chat knows its participant from the session alone, so no user is looked up (Channels'
``AuthMiddlewareStack`` would read one in the process's single sync thread for every socket).

A server that may call a language model imports litellm and rehearses a call before it listens
(``benchmark.agents.loading.start``: 10+ s of CPU, once), so no participant's first agent reply waits
for it; the URL conf never imports it.

Everything loaded by then (Django, the apps, litellm: some 580,000 objects) lives as long as the
process, so it is moved out of the garbage collector's reach (``gc.freeze``): otherwise each full
collection walks all of it again, a pause of about 0.3 s on the 2-core machine during which no chat
of that process moves.
"""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.sessions import SessionMiddlewareStack  # noqa: E402

from benchmark.agents import loading  # noqa: E402
from chat.routing import websocket_urlpatterns  # noqa: E402
from config.origins import SameOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(SessionMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

loading.start()
gc.collect()
gc.freeze()
