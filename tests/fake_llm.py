"""A local OpenAI-compatible HTTP server for tests (filled in with the LLM gateway)."""
