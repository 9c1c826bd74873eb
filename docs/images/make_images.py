#!/usr/bin/env python
"""Draw the pictures of docs/images: one mid-game position of each variant.

Each picture is the first position, in seeded random play, where a capture is in
progress (so the moving piece's ring, the highlighted squares and, where pieces are
lifted at the end, the crossed captured pieces show) and both sides have a king.

    python docs/images/make_images.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from damii_env import Engine
from damii_env.render import Position, to_image

HERE = Path(__file__).resolve().parent


def interesting_position(variant: str, seed: int = 0, batch: int = 512) -> Position:
    eng = Engine(variant)
    state = eng.init(batch)
    rng = np.random.default_rng(seed)
    for _ in range(2000):
        eng.step(state, eng.sample_actions(state, rng))
        eng.reset_where(state, rng=rng)
        ok = (state.continuing_square >= 0) & (state.board == 2).any(1) & (state.board == -2).any(1)
        if variant not in ("triestine", "damath"):  # these lift captured pieces at once
            ok &= state.pending.sum(1) >= 2
        rows = np.flatnonzero(ok)
        if rows.size:
            return Position.from_state(eng, state, int(rows[0]))
    raise RuntimeError(f"no position found for {variant}")


def main() -> None:
    for variant in ("damii", "international", "triestine", "damath"):
        pos = interesting_position(variant)
        to_image(pos).save(HERE / f"{variant}.png", optimize=True)
        print(variant, pos.status())


if __name__ == "__main__":
    main()
