"""Tournament pairings and standings, pure functions (no server, no database): round
robins by the circle method (Berger tables), Swiss rounds (no pairing repeated, colours
balanced, pairing within score groups, a bye when the count is odd) and standings with
the usual tie-breaks (Sonneborn-Berger for round robins, Buchholz for Swiss).

A result is White's ``1-0``, ``0-1`` or ``1/2-1/2``, or ``bye`` for a player who sits a
round out. A Swiss bye scores a win (1 point), as in club Swiss events; a round robin's
bye (odd count) scores nothing, since every player sits out once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

ROUND_ROBIN, SWISS = "round-robin", "swiss"
SYSTEMS = (ROUND_ROBIN, SWISS)
BYE = "bye"
POINTS = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}
"""Each result's points for (White, Black)."""
Pairing = tuple[str, str | None]
"""(White, Black) of one board; Black None: White has the bye."""
PAIRING_BUDGET = 20_000
"""Choices a Swiss pairing's search tries (all its attempts together) before it gives up
looking for a pairing without a repeat and pairs greedily (:func:`swiss_round`): the
search backtracks, which is exponential in late rounds of a big Swiss (a 48-player round
took 224 s unbounded); 20,000 choices take well under a second."""


class _Budget:
    """What is left of a pairing search's :data:`PAIRING_BUDGET`."""

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


class _OutOfBudget(Exception):
    """The pairing search used its budget."""


def round_robin(players: Sequence[str]) -> list[list[Pairing]]:
    """Every round of a round robin between `players` (in their order, the seeds): the
    circle method, the first player fixed and the others turning; an odd count adds a
    bye. Each pair meets once, and each player's whites and blacks differ by at most one."""
    names: list[str | None] = list(players)
    if len(set(players)) != len(players):
        raise ValueError("a player is named twice")
    if len(names) % 2:
        names.insert(0, None)  # the fixed place is the bye's: the others' colours even out
    n = len(names)
    rounds = []
    circle = names[1:]
    for r in range(n - 1):
        order = [names[0], *circle]
        boards: list[Pairing] = []
        for i in range(n // 2):
            a, b = order[i], order[n - 1 - i]
            if i == 0 and r % 2 == 1 or i > 0 and i % 2 == 1:
                a, b = b, a  # the fixed player alternates; the other boards alternate too
            if a is None or b is None:
                boards.append((a or b, None))  # type: ignore[arg-type]
            else:
                boards.append((a, b))
        rounds.append(sorted(boards, key=lambda board: board[1] is None))  # the bye last
        circle = circle[-1:] + circle[:-1]
    return rounds


@dataclass
class Record:
    """What a Swiss pairing needs to know of a player so far."""

    name: str
    points: float = 0.0
    opponents: set[str] = field(default_factory=set)
    colours: list[str] = field(default_factory=list)
    """``w`` or ``b`` for each game played, in order."""
    had_bye: bool = False

    @property
    def balance(self) -> int:
        """Whites minus blacks."""
        return self.colours.count("w") - self.colours.count("b")


def records(players: Sequence[str], games: Sequence[tuple[str, str | None, str]]
            ) -> dict[str, Record]:
    """Each player's :class:`Record` after `games` ((White, Black, result); a bye is
    (player, None, ``bye``) and scores 1, as in a Swiss)."""
    out = {name: Record(name) for name in players}
    for white, black, result in games:
        if black is None or result == BYE:
            out[white].had_bye = True
            out[white].points += 1.0
            continue
        pw, pb = POINTS.get(result, (0.0, 0.0))
        for me, other, colour, pts in ((white, black, "w", pw), (black, white, "b", pb)):
            out[me].opponents.add(other)
            out[me].colours.append(colour)
            out[me].points += pts
    return out


def swiss_round(players: Sequence[str], games: Sequence[tuple[str, str | None, str]],
                round_number: int, budget: int = PAIRING_BUDGET) -> list[Pairing]:
    """The pairings of the next Swiss round: players ranked by points then seed (their
    order in `players`); with an odd count the lowest-ranked player who has had no bye
    gets it; the others are paired within their score group (top half against bottom
    half), floating to the nearest group only where needed, and never twice against the
    same opponent. Raises ValueError when no such pairing exists (more rounds than
    players less one). The search tries at most `budget` choices; when it runs out, the
    round is paired greedily (top down, each player against the first it has not met,
    else the nearest in rank: a repeat only where the greedy order leaves no other), so a
    round is always paired in bounded time."""
    recs = records(players, games)
    seed = {name: i for i, name in enumerate(players)}
    order = sorted(players, key=lambda p: (-recs[p].points, seed[p]))
    byes: list[str | None] = [None]
    if len(order) % 2:
        low = list(reversed(order))  # who had a bye already gets one only if all did
        byes = [p for p in low if not recs[p].had_bye] + [p for p in low if recs[p].had_bye]
    left = _Budget(budget)
    try:
        for strict, bye in ((strict, bye) for strict in (True, False) for bye in byes):
            rest = [p for p in order if p != bye]
            found = _pair(rest, recs, strict, left)
            if found is not None:
                boards = [_colours(a, b, recs, round_number) for a, b in found]
                return boards + ([(bye, None)] if bye is not None else [])
    except _OutOfBudget:
        bye = byes[0]
        found = _greedy([p for p in order if p != bye], recs)
        boards = [_colours(a, b, recs, round_number) for a, b in found]
        return boards + ([(bye, None)] if bye is not None else [])
    raise ValueError(f"no pairing of round {round_number} avoids a repeat: {len(players)} "
                     f"players have met every opponent they can (a Swiss of n players has "
                     f"at most n - 1 rounds)")


def _candidates(first: str, rest: list[str], recs: dict[str, Record]) -> list[str]:
    """`first`'s opponents in order of preference: its score group's bottom half first
    (the Dutch system's top-half-against-bottom-half), then the nearest groups."""
    points = recs[first].points
    group = [p for p in rest if recs[p].points == points]
    half = (len(group) + 1) // 2 - 1 if group else 0
    same = group[half:] + list(reversed(group[:half]))
    others = sorted((p for p in rest if recs[p].points != points),
                    key=lambda p: (abs(recs[p].points - points), -recs[p].points))
    return [p for p in same + others if p not in recs[first].opponents]


def must_have(rec: Record) -> str | None:
    """The colour a player must have next (``w`` or ``b``): the other one after two more
    of one colour than of the other, or after the same colour twice running; else None."""
    if abs(rec.balance) >= 2 or rec.colours[-2:] in (["w", "w"], ["b", "b"]):
        return "b" if rec.balance > 0 or rec.colours[-1:] == ["w"] and rec.balance >= 0 \
            else "w"
    return None


def _pair(order: list[str], recs: dict[str, Record], strict: bool = True,
          budget: _Budget | None = None) -> list[tuple[str, str]] | None:
    """Pair `order` (ranked) top down, backtracking where a choice leaves a repeat (or,
    `strict`, two players who must both have the same colour); each choice tried takes
    one from `budget` (:class:`_OutOfBudget` when it is spent)."""
    if not order:
        return []
    first, rest = order[0], order[1:]
    need = must_have(recs[first]) if strict else None
    for other in _candidates(first, rest, recs):
        if need is not None and must_have(recs[other]) == need:
            continue
        if budget is not None:
            budget.left -= 1
            if budget.left < 0:
                raise _OutOfBudget
        below = _pair([p for p in rest if p != other], recs, strict, budget)
        if below is not None:
            return [(first, other), *below]
    return None


def _greedy(order: list[str], recs: dict[str, Record]) -> list[tuple[str, str]]:
    """Pair `order` (ranked) top down without backtracking: each player against its first
    candidate (:func:`_candidates`: not met yet), else the next in rank (a repeat)."""
    rest, out = list(order), []
    while len(rest) >= 2:
        first = rest.pop(0)
        choices = _candidates(first, rest, recs)
        other = choices[0] if choices else rest[0]
        rest.remove(other)
        out.append((first, other))
    return out


def _colours(a: str, b: str, recs: dict[str, Record], round_number: int) -> Pairing:
    """White goes to the player with fewer whites than blacks so far; when even, to the
    one who had Black last; when that is even too, to the higher ranked (`a`) in odd
    rounds, the other in even rounds."""
    ra, rb = recs[a], recs[b]
    need_a, need_b = must_have(ra), must_have(rb)
    if need_a != need_b:
        wants = need_a or ("w" if need_b == "b" else "b")
        return (a, b) if wants == "w" else (b, a)
    if ra.balance != rb.balance:
        return (a, b) if ra.balance < rb.balance else (b, a)
    last_a, last_b = (ra.colours or [""])[-1], (rb.colours or [""])[-1]
    if last_a != last_b and "b" in (last_a, last_b):
        return (a, b) if last_a == "b" else (b, a)
    return (a, b) if round_number % 2 else (b, a)


def standings(players: Sequence[str], games: Sequence[tuple[str, str | None, str]],
              system: str) -> list[dict[str, object]]:
    """The table: points, then the tie-break (Sonneborn-Berger in a round robin: the
    points of each beaten opponent plus half those of each drawn one; Buchholz in a
    Swiss: the sum of the opponents' points), then the name. Each row: ``rank`` (shared
    by equal points and tie-break), ``name``, ``points``, ``tiebreak``, ``played``,
    ``wins``, ``draws``, ``losses``. Games without a result yet are left out."""
    if system not in SYSTEMS:
        raise ValueError(f"system must be one of {', '.join(SYSTEMS)}, got {system!r}")
    done = [g for g in games if g[2] in POINTS or g[2] == BYE]
    if system == ROUND_ROBIN:  # a round robin's bye scores nothing
        done = [g for g in done if g[2] != BYE and g[1] is not None]
    recs = records(players, done)
    tiebreak = dict.fromkeys(players, 0.0)
    tally = {p: [0, 0, 0] for p in players}
    for white, black, result in done:
        if black is None or result == BYE:
            continue
        pw, pb = POINTS[result]
        for me, other, mine in ((white, black, pw), (black, white, pb)):
            tally[me][0 if mine == 1.0 else 1 if mine == 0.5 else 2] += 1
            theirs = recs[other].points
            tiebreak[me] += theirs * mine if system == ROUND_ROBIN else theirs
    rows = sorted(players, key=lambda p: (-recs[p].points, -tiebreak[p], p))
    out: list[dict[str, object]] = []
    for i, name in enumerate(rows):
        prev = out[-1] if out else None
        same = prev is not None and prev["points"] == recs[name].points \
            and prev["tiebreak"] == tiebreak[name]
        wins, draws, losses = tally[name]
        out.append({"rank": prev["rank"] if same else i + 1, "name": name,
                    "points": recs[name].points, "tiebreak": tiebreak[name],
                    "played": wins + draws + losses, "wins": wins, "draws": draws,
                    "losses": losses})
    return out
