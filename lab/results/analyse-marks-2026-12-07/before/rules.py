"""The ?? marks of diag.py's logs recomputed with the losses clamped at 10 men (the
review as it was, commit b52afd2) and at 5 men (review.DECIDED): how many, how many the
check (0.4 s, fresh player, cleared table) confirms, how many the deeper search
(diag.py --truth) confirms. The review's searches are the same for both clamps (those of
b52afd2); only the arithmetic differs.

    python rules.py diag_s0_02.log diag_s1_02.log ...
"""

import json
import sys


def clamp(value: float, limit: float) -> float:
    return max(-limit, min(limit, value))


def loss(before: float, best: str, after: float, played: str, limit: float,
         best_after: float | None = None) -> float:
    """review.move_loss on the logged numbers."""
    if best == played:
        return 0.0
    value = before if best_after is None else best_after
    return max(0.0, clamp(value, limit) - clamp(-after, limit))


def main() -> None:
    for path in sys.argv[1:]:
        rows = [json.loads(line) for line in open(path) if line.startswith("{")]
        for limit in (1000.0, 500.0):
            found = []
            for r in rows:
                if r["PV"] is None or r["QV"] is None:
                    continue
                p_v, q_v = r["PV"], r["QV"]
                if loss(p_v[0], p_v[2], q_v[0], r["move"], limit, p_v[3]) < 200:
                    continue
                check = loss(r["Pc"][0], r["Pc"][2], r["Qc"][0], r["move"], limit)
                truth = loss(r["Pt"][0], r["Pt"][2], r["Qt"][0], r["move"], limit)
                found.append((check >= 200, truth >= 200))
            print(f"{path} clamp {limit:g}: {len(found)} ??, check held "
                  f"{sum(c for c, _ in found)}, deeper search held {sum(t for _, t in found)}")


if __name__ == "__main__":
    main()
