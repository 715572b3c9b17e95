"""The episode browser and the episode page, for researchers: every transcript, whatever produced it."""
