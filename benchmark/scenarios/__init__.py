"""Scenarios: how they are made (templates filled with casts) and taken apart."""
