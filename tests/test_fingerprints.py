"""Behaviour unchanged: the fingerprints of fixed searches, games and a ``damii eval`` match
in all four variants equal the record (``tests/fingerprints.py``; the record was made at
ba23c36, before the core was rewritten, its ``fit`` part at e792ffd, before the fit's
memory was cut; it is only made again by a change meant to alter behaviour)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import fingerprints as F

RECORD = Path(__file__).parent / "data" / "fingerprints.json"


@pytest.mark.slow
@pytest.mark.timeout(3000)
@pytest.mark.parametrize("variant", F.VARIANTS)
@pytest.mark.parametrize("part", ["searches", "games", "eval", "fit"])
def test_fingerprints_equal_the_record(variant: str, part: str) -> None:
    record = json.loads(RECORD.read_text())[variant][part]
    now = {"searches": F.search_prints, "games": F.game_prints, "eval": F.eval_print,
           "fit": F.fit_print}[part](
        variant)
    differences = sorted(key for key in set(record) | set(now) if record.get(key) != now.get(key))
    assert not differences, f"{variant} {part} differ from the record: {differences}"
