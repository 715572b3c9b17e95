"""Annotator views, split by audience: annotators (``annotate``), researchers (``research``), invites."""
