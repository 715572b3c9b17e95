from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Participant chat"

    def ready(self) -> None:
        from benchmark.instrument_builder.previews import register_preview

        from .questionnaire import participant_preview

        # The instrument builder's preview shows the participant's questionnaire, drawn by this app's form.
        register_preview("participant", "Participants (the questionnaire after a chat)", participant_preview, order=20)
