"""The output formats of a match result: aligned plain text (:func:`to_text`), Markdown
(:func:`to_markdown`), a JSON-ready dict (:func:`to_json`) and the files ``results.json``,
``results.md`` and ``games.pdn`` (:func:`save`), each of a
:class:`damii_agents.match.results.MatchResult`."""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from damii_env.errors import UnwritablePathError
from damii_env.pdn import write_file

if TYPE_CHECKING:
    from damii_agents.match.results import MatchResult

Table = tuple[list[str], list[list[str]]]
"""A table: the header cells and the rows of cells."""


def check_writable(path: str | Path, folder: bool = False) -> Path:
    """Make sure `path` (a file, or a folder when `folder`) can be written, before the
    work whose results go there; raises :class:`UnwritablePathError` naming it."""
    path = Path(path)
    what = "folder" if folder else "file"
    if folder and path.exists() and not path.is_dir():
        raise UnwritablePathError(f"output folder {str(path)!r} is a file; give a folder")
    if not folder and path.is_dir():
        raise UnwritablePathError(f"output file {str(path)!r} is a folder; give a file name")
    where = path if folder else path.parent
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=where)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UnwritablePathError(
            f"cannot write the output {what} {str(path)!r} ({exc.strerror or exc}); "
            f"give a {what} in a writeable place") from None
    return path


def pairing_rows(result: MatchResult) -> Table:
    """One row a pairing: games, wins, draws, losses and score of its first player."""
    head = ["pairing", "games", "wins", "draws", "losses", "score"]
    rows = [[f"{p.a} vs {p.b}", str(p.games), str(p.wins), str(p.draws), str(p.losses),
             f"{p.points:g}/{p.games} ({100 * p.points / max(p.games, 1):.1f}%)"]
            for p in result.pairings]
    return head, rows


def rating_rows(result: MatchResult) -> Table:
    """One row a player, strongest first: games, score, Elo and its 95% interval."""
    head = ["player", "games", "score", "Elo", "95% CI"]
    order = sorted(result.ratings, key=lambda r: -r.elo)
    rows = [[r.name, str(r.games), f"{r.points:g} ({100 * r.score:.1f}%)", f"{r.elo:+.0f}",
             interval(r.low, r.high)] for r in order]
    return head, rows


def interval(low: float, high: float) -> str:
    """A rating interval: ``[-12, +85]``, or ``[+140, +inf)`` with an unbounded end."""
    return ("(-inf" if math.isinf(low) else f"[{low:+.0f}") + ", " + \
        ("+inf)" if math.isinf(high) else f"{high:+.0f}]")


def _unbounded_note(result: MatchResult) -> str:
    """The footer's note when a perfect or zero score left a rating unbounded."""
    if not any(math.isinf(r.low) or math.isinf(r.high) for r in result.ratings):
        return ""
    return (" inf: a perfect (zero) score bounds the rating on one side only; the other end "
            "is the one-sided binomial bound of the sweep against the anchor.")


def header(result: MatchResult) -> str:
    """One line on the match set-up."""
    c = result.config
    return (f"{c.variant}: {len(result.games)} games, {c.openings_per_pairing * 2} per "
            f"pairing, clock {c.make_clock()}, {c.opening_plies}-ply ballots, seed {c.seed}")


def footer(result: MatchResult) -> str:
    """How the ratings were computed and how the games ended."""
    ends = ", ".join(f"{k} {v}" for k, v in result.terminations().most_common())
    anchor = result.config.names[result.config.anchor]
    return (f"Elo: Bradley-Terry maximum likelihood on all games (draws half, one virtual "
            f"draw per pairing), {anchor} = 0, 95% CI by bootstrap over games."
            f"{_unbounded_note(result)}\n"
            f"Game ends: {ends}.")


def text_table(head: list[str], rows: list[list[str]]) -> str:
    """Columns padded to width: the first left-aligned, the others right-aligned."""
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=False)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    return "\n".join([line(head), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    """A Markdown table: the first column left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(head) + " |",
             "| " + " | ".join(["---"] + ["---:"] * (len(head) - 1)) + " |"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def to_text(result: MatchResult) -> str:
    """The tables as aligned plain text."""
    return "\n\n".join([header(result), text_table(*pairing_rows(result)),
                        text_table(*rating_rows(result)), footer(result)])


def to_markdown(result: MatchResult) -> str:
    """The tables as Markdown."""
    return "\n\n".join([f"# Match: {header(result)}", "## Pairings",
                        markdown_table(*pairing_rows(result)), "## Elo",
                        markdown_table(*rating_rows(result)), footer(result)]) + "\n"


def to_json(result: MatchResult) -> dict[str, Any]:
    """Set-up, tallies, ratings and every game as a JSON-ready dict."""
    c = result.config
    return {
        "variant": c.variant, "specs": list(c.specs), "players": c.names,
        "games_per_pairing": c.openings_per_pairing * 2, "clock": str(c.make_clock()),
        "seed": c.seed, "opening_plies": c.opening_plies, "rule_options": dict(c.rule_options),
        "anchor": c.names[c.anchor],
        "pairings": [{**asdict(p), "games": p.games, "points": p.points}
                     for p in result.pairings],
        "ratings": [{**asdict(r), "score": r.score,  # JSON has no inf: null, unbounded
                     "low": None if math.isinf(r.low) else r.low,
                     "high": None if math.isinf(r.high) else r.high} for r in result.ratings],
        "terminations": dict(result.terminations()),
        "games": [g.summary() for g in result.games],
    }


def save(result: MatchResult, out_dir: str | Path) -> dict[str, Path]:
    """Write ``results.json``, ``results.md`` and ``games.pdn`` into `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json", "markdown": out / "results.md",
             "pdn": out / "games.pdn"}
    paths["json"].write_text(json.dumps(to_json(result), indent=2) + "\n", encoding="utf-8")
    paths["markdown"].write_text(to_markdown(result), encoding="utf-8")
    write_file(paths["pdn"], [g.pdn for g in result.games])
    return paths
