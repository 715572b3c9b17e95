"""Recordings the tests make: a short WAV of a tone, built with the standard library's ``wave``."""

from __future__ import annotations

import io
import math
import struct
import wave

RATE = 8000


def wav_bytes(seconds: float, *, frequency: float = 440.0, rate: int = RATE) -> bytes:
    """A mono 16-bit WAV of ``seconds`` of a soft sine tone."""
    frames = int(seconds * rate)
    samples = (int(6000 * math.sin(2 * math.pi * frequency * n / rate)) for n in range(frames))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(struct.pack("<h", sample) for sample in samples))
    return buffer.getvalue()
