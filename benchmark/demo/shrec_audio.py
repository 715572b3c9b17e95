"""A stand-in audio track for a synthetic SHREC recording: a soft tone while someone speaks, silence between.

The demo's recordings have no real voices, yet the annotation page's player should have something to
play whose timing matches the transcript, so that the turn being spoken lights up and a span marked
with the player's buttons lands on the right words. Each turn is a hum at the turn's times, pulsing
about three times a second like syllables, lower for the user than for the robot, with short fades so
nothing clicks. Written with the standard library's ``wave`` module: 8 kHz, mono, 8-bit samples, so
a 25-second recording is about 200 KB.
"""

from __future__ import annotations

import io
import wave
from collections.abc import Iterable

import numpy as np

RATE = 8000  # samples per second
SILENCE = 128  # 8-bit WAV samples are unsigned
AGENT_HZ = 440.0
USER_HZ = 294.0
LOUDNESS = 40  # of 127: soft
PULSES_PER_SECOND = 3.0
FADE_S = 0.03


def turn_tones(turns: Iterable[tuple[float, float, bool]], duration_s: float) -> bytes:
    """A WAV file of ``duration_s`` seconds with a tone over each ``(start_s, end_s, is_agent)`` turn."""
    samples = np.zeros(int(round(duration_s * RATE)), dtype=np.float64)
    for start_s, end_s, is_agent in turns:
        first, last = int(start_s * RATE), min(int(end_s * RATE), len(samples))
        if last <= first:
            continue
        t = np.arange(last - first) / RATE
        pulse = 0.55 + 0.45 * np.abs(np.sin(np.pi * PULSES_PER_SECOND * t))
        fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / FADE_S)
        samples[first:last] += np.sin(2 * np.pi * (AGENT_HZ if is_agent else USER_HZ) * t) * pulse * fade
    pcm = (SILENCE + LOUDNESS * np.clip(samples, -1.0, 1.0)).round().astype(np.uint8)
    out = io.BytesIO()
    with wave.open(out, "wb") as track:
        track.setnchannels(1)
        track.setsampwidth(1)
        track.setframerate(RATE)
        track.writeframes(pcm.tobytes())
    return out.getvalue()
