"""PDN (Portable Draughts Notation): write games, read them back, replay them.

>>> from damii_env import Game
>>> from damii_env.pdn import loads, record
>>> g = Game("international"); _ = g.push("32-28"); _ = g.push("19-23")
>>> text = record(g, white="me", black="you").to_text()
>>> [p.moves for p in loads(text)]
[['32-28', '19-23']]

A record carries the Seven Tag Roster (Event, Site, Date, Round, White, Black, Result),
``GameType "20"`` for International draughts, a ``Variant`` tag naming the variant, a
``Rules`` tag with the rule options that differ from the preset, and a ``FEN`` tag when the
game does not start from the variant's start position or Black moves first. Moves are
written with every landing square (``28x19x10``), so the text is never ambiguous. Damath
games carry each capture's points and the running scores as comments
(``{+8, scores 8 : 0}``) and the final totals as a comment before the result.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from damii_env import Game
from damii_env.errors import DamiiError
from damii_env.rules import PRESETS, Rules


class PdnError(DamiiError):
    """PDN text that cannot be read or replayed."""


ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
RESULTS = ("1-0", "0-1", "1/2-1/2", "*", "2-0", "0-2", "1-1", "0-0")
_WHITE_POINTS = {"1-0": 1.0, "2-0": 1.0, "0-1": 0.0, "0-2": 0.0, "1/2-1/2": 0.5, "1-1": 0.5}


def white_points(result: str) -> float | None:
    """White's points for a PDN result (``1-0``/``2-0`` 1, ``0-1``/``0-2`` 0,
    ``1/2-1/2``/``1-1`` 0.5); None for a game without a result (``*``, ``0-0``)."""
    if result not in RESULTS:
        raise PdnError(f"unknown PDN result {result!r}; expected one of {', '.join(RESULTS)}")
    return _WHITE_POINTS.get(result)


GAME_TYPES = {"international": "20"}
"""PDN GameType numbers of the variants draughts software knows."""

_TOKEN = re.compile(
    r"""\[\s*(?P<tag>\w+)\s+"(?P<value>(?:[^"\\]|\\.)*)"\s*\]   # [Tag "value"]
      | \{(?P<comment>[^}]*)\}                                 # {comment}
      | (?P<open>\() | (?P<close>\))                           # variations (skipped)
      | (?P<result>1-0|0-1|1/2-1/2|2-0|0-2|1-1|0-0|\*)(?=\s|$|\[)
      | (?P<number>\d+\.(?:\.\.)?)                             # 12. or 12...
      | (?P<move>\d+(?:\s*[-x:]\s*\d+)+)                       # 32-28, 28x19x10
      | (?P<skip>\$\d+|[!?]+|;[^\n]*)                          # NAGs, annotations
      | (?P<space>\s+)
      | (?P<bad>\S+)""",
    re.VERBOSE,
)


@dataclass
class PdnGame:
    """One game of a PDN file: its tags, its moves as PDN text, comments and result."""

    tags: dict[str, str] = field(default_factory=dict)
    moves: list[str] = field(default_factory=list)
    comments: dict[int, str] = field(default_factory=dict)
    """Comment after move ``i`` (0-based ply); key -1 holds a comment before the first move."""
    result: str = "*"

    @property
    def variant(self) -> str:
        """The variant the tags name (``Variant``, else GameType 20 = International)."""
        name = self.tags.get("Variant", "").strip().lower()
        if name in PRESETS:
            return name
        if self.tags.get("GameType", "").split(",")[0].strip() == "20":
            return "international"
        game = "the PDN game" + (f" of round {self.tags['Round']!r:.20}"
                                 if "Round" in self.tags else "")
        expected = (f"expected e.g. [Variant \"damii\"] (one of {', '.join(PRESETS)}) or "
                    f"[GameType \"20\"] (International)")
        if "Variant" in self.tags:
            raise PdnError(f"{game} has an unknown variant {self.tags['Variant']!r:.60} in "
                           f"its Variant tag; {expected}")
        if "GameType" in self.tags:
            raise PdnError(f"{game} has no Variant tag and GameType "
                           f"{self.tags['GameType']!r:.60} is not one this reader plays; "
                           f"{expected}")
        raise PdnError(f"{game} has no Variant or GameType tag; {expected}")

    @property
    def rule_options(self) -> dict[str, Any]:
        """Rule options of the ``Rules`` tag (``orientation=standard,turn_limit=400``)."""
        return parse_rule_options(self.tags.get("Rules", ""))

    def replay(self, **options: Any) -> Game:
        """Play the moves on a fresh :class:`Game` (rule options: the Rules tag, then
        `options`) and return it; raises :class:`PdnError` on an illegal move."""
        opts = {**self.rule_options, **options}
        fen = self.tags.get("FEN")
        game = Game.from_fen(fen, self.variant, **opts) if fen else Game(self.variant, **opts)
        for i, text in enumerate(self.moves):
            try:
                game.push(text)
            except DamiiError as exc:
                raise PdnError(f"move {i // 2 + 1} ({text}) of game "
                               f"{self.tags.get('Round', '?')} cannot be played: {exc}") from exc
        return game

    def to_text(self, width: int = 79) -> str:
        """The game as PDN text (tags, a blank line, wrapped movetext ending in the result)."""
        tags = dict(self.tags)
        tags["Result"] = self.result
        order = [t for t in ROSTER if t in tags] + [t for t in tags if t not in ROSTER]
        lines = [f'[{t} "{_escape(str(tags[t]))}"]' for t in order]
        black_first = self.tags.get("FEN", "W").strip().upper().startswith("B")
        tokens: list[str] = []
        if -1 in self.comments:
            tokens.append(f"{{{self.comments[-1]}}}")
        for i, move in enumerate(self.moves):
            ply = i + (1 if black_first else 0)
            if ply % 2 == 0:
                tokens.append(f"{ply // 2 + 1}. {move}")
            elif i == 0:
                tokens.append(f"{ply // 2 + 1}... {move}")
            else:
                tokens.append(move)
            if i in self.comments:
                tokens.append(f"{{{self.comments[i]}}}")
        tokens.append(self.result)
        lines.append("")
        lines.extend(_wrap(tokens, width))
        return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _wrap(tokens: list[str], width: int) -> list[str]:
    lines, line = [], ""
    for tok in tokens:
        if line and len(line) + 1 + len(tok) > width:
            lines.append(line)
            line = tok
        else:
            line = f"{line} {tok}" if line else tok
    return lines + [line] if line else lines


# --- rule options in a tag ---------------------------------------------------------------
def rule_options_text(rules: Rules) -> str:
    """The options in which `rules` differ from its preset, as ``key=value,...``."""
    base = PRESETS.get(rules.name)
    if base is None:
        return ""
    diff = [(f.name, getattr(rules, f.name)) for f in dataclasses.fields(Rules)
            if f.name != "name" and getattr(rules, f.name) != getattr(base, f.name)]
    return ",".join(f"{k}={v}" for k, v in diff)


def parse_rule_options(text: str) -> dict[str, Any]:
    """Read ``key=value,...`` back into typed rule options."""
    types = {f.name: f.type for f in dataclasses.fields(Rules)}
    options: dict[str, Any] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        kind = types.get(key.strip(), "str")
        if kind == "int":
            options[key.strip()] = int(value)
        elif kind == "bool":
            options[key.strip()] = value.strip().lower() == "true"
        else:
            options[key.strip()] = value.strip()
    return options


@lru_cache(maxsize=32)
def _start_fen(rules: Rules) -> str:
    return Game(rules).fen()


# --- games to records --------------------------------------------------------------------
def record(game: Game, white: str = "White", black: str = "Black", result: str | None = None,
           event: str = "damii-env", site: str = "damii-env", round: str = "1",
           date: _dt.date | None = None, extra_tags: Mapping[str, str] | None = None) -> PdnGame:
    """The PDN record of a played game (its whole move stack).

    `result` overrides the game's own (resignation, time forfeit, agreed draw, ...).
    """
    history = game._history
    moves = [move for _, move in history]
    start_turn = int(history[0][0].turn[0]) if history else game.turn
    rules = game.rules
    tags = {
        "Event": event, "Site": site, "Date": (date or _dt.date.today()).strftime("%Y.%m.%d"),
        "Round": round, "White": white, "Black": black,
        "Result": result if result is not None else game.result(),
    }
    if rules.name in GAME_TYPES:
        tags["GameType"] = GAME_TYPES[rules.name]
    tags["Variant"] = rules.name
    options = rule_options_text(rules)
    if options:
        tags["Rules"] = options
    if game.start_fen != _start_fen(rules) or start_turn == 1:
        tags["FEN"] = game.start_fen
    tags.update(extra_tags or {})
    comments: dict[int, str] = {}
    if game.engine.scoring:
        # the scores after each move, from the start's (today's less every move's points)
        movers = [int(before.turn[0]) for before, _ in history]
        scores = list(game.scores())
        for mover, move in zip(movers, moves, strict=True):
            if move.score is not None:
                scores[mover] -= move.score
        for i, (mover, move) in enumerate(zip(movers, moves, strict=True)):
            if move.score is not None:
                scores[mover] += move.score
            if move.is_capture and move.score is not None:
                sw, sb = scores
                sign = "" if str(move.score).startswith("-") else "+"
                comments[i] = f"{sign}{move.score}, scores {sw} : {sb}"
        tw, tb = game.totals()
        final = f"totals: White {tw}, Black {tb}"
        last = len(moves) - 1
        comments[last] = f"{comments[last]}; {final}" if last in comments else final
    return PdnGame(tags=tags, moves=[str(m) for m in moves], comments=comments,
                   result=tags["Result"])


# --- text to records ---------------------------------------------------------------------
def loads(text: str) -> list[PdnGame]:
    """Read every game of a PDN text (variations and NAGs are skipped)."""
    games: list[PdnGame] = []
    current: PdnGame | None = None
    movetext = finished = False
    depth = 0
    for m in _TOKEN.finditer(text):
        kind = "tag" if m.group("tag") is not None else m.lastgroup
        if kind in ("space", "skip"):
            continue
        if kind in ("open", "close"):
            depth = depth + 1 if kind == "open" else max(0, depth - 1)
            continue
        if depth:
            continue
        if kind == "bad":
            raise PdnError(f"cannot read {m.group('bad')!r} at character {m.start()} of the PDN")
        new_game = current is None or (movetext if kind == "tag" else finished)
        if new_game:
            current, movetext, finished = PdnGame(), False, False
            games.append(current)
        if kind == "tag":
            current.tags[m.group("tag")] = re.sub(r"\\(.)", r"\1", m.group("value"))
            continue
        movetext = True
        if kind == "comment":
            key, note = len(current.moves) - 1, m.group("comment").strip()
            current.comments[key] = f"{current.comments[key]} {note}" \
                if key in current.comments else note
        elif kind == "move":
            current.moves.append(re.sub(r"\s+", "", m.group("move")).replace(":", "x"))
        elif kind == "result":
            current.result, finished = m.group("result"), True
    return games


def read_file(path: str | Path) -> list[PdnGame]:
    """Read every game of a PDN file (UTF-8, else Latin-1)."""
    raw = Path(path).read_bytes()
    try:
        return loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return loads(raw.decode("latin-1"))


def dumps(games: Iterable[PdnGame]) -> str:
    """Several games as one PDN text, separated by blank lines."""
    return "\n".join(g.to_text() for g in games)


def write_file(path: str | Path, games: Iterable[PdnGame], append: bool = False) -> Path:
    """Write games to a PDN file (UTF-8); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(games)
    if append and path.exists() and path.stat().st_size:
        text = "\n" + text
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


__all__ = ["PdnError", "PdnGame", "dumps", "loads", "read_file", "record", "write_file",
           "parse_rule_options", "rule_options_text"]

