"""The chat app's pages: ``participant`` (the study link's flow) and ``research`` (studies and monitor)."""
