"""Writes web/static/sounds/turn.wav, the "your turn" sound (server/web/sound.py): two short
soft sine tones, 8 kHz mono 8-bit, about 2 KB. Run it again only to change the sound."""

from __future__ import annotations

import math
import wave
from pathlib import Path

RATE = 8000
OUT = Path(__file__).resolve().parent.parent / "web" / "static" / "sounds" / "turn.wav"


def tone(freq: float, seconds: float, volume: float = 0.35) -> bytes:
    n = int(RATE * seconds)
    fade = int(RATE * 0.02)
    samples = bytearray()
    for i in range(n):
        envelope = min(1.0, i / fade, (n - i) / fade)
        samples.append(int(128 + 127 * volume * envelope * math.sin(2 * math.pi * freq * i / RATE)))
    return bytes(samples)


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(OUT), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(RATE)
        out.writeframes(tone(660, 0.09) + bytes([128]) * int(RATE * 0.03) + tone(880, 0.12))


if __name__ == "__main__":
    main()
