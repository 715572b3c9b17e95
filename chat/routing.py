"""Websocket routes; the participant chat consumer joins here."""

websocket_urlpatterns: list = []
