"""Positions and games as JSON for the page: squares, pieces, Sci-Damath chips,
operations and scores, legal moves, and the frames of a replayed PDN game."""

from __future__ import annotations

from typing import Any

from damii_env import Game, Move
from damii_env.damath import OPS, chips_of
from damii_env.errors import DamiiError
from damii_env.pdn import PdnError, PdnGame, loads

MAX_PDN_CHARS = 1_000_000
"""Longest PDN text the page may send (about 1 MB); a replay runs in the search pool,
one at a time, under the pool's deadline."""
MAX_REPLAY_PLIES = 2000


def layout(game: Game) -> dict[str, Any]:
    """What does not change during a game: size, orientation, where each square is drawn
    (row, column as White sees the board, row 0 at the top) and Sci-Damath's operations."""
    rules, engine = game.rules, game.engine
    out: dict[str, Any] = {
        "variant": rules.name,
        "size": rules.board_size,
        "orientation": rules.orientation,
        "squares": [[int(r), int(c)] for r, c in engine.geometry.square_rc],
        "scoring": bool(engine.scoring),
    }
    if engine.scoring:
        out["ops"] = [OPS[int(op)] for op in engine.square_info[:, 0]]
        out["chip_set"] = rules.chip_set
    return out


def move_json(move: Move) -> dict[str, Any]:
    """A legal move: its text, path, captured squares and (Sci-Damath) points."""
    out: dict[str, Any] = {"text": str(move), "path": list(move.path),
                           "captured": list(move.captured)}
    if move.score is not None:
        out["score"] = str(move.score)
    return out


def position(game: Game, legal: bool = False) -> dict[str, Any]:
    """The position: pieces by square (+ White, - Black, 1 man, 2 king), the side to move,
    the last move, Sci-Damath chips and scores, and the legal moves when asked."""
    out: dict[str, Any] = {
        "board": [int(x) for x in game.board()],
        "turn": game.turn,
        "ply": game.ply,
        "fen": game.fen(),
        "last": list(game.move_stack[-1].path) if game.move_stack else None,
        "last_captured": list(game.move_stack[-1].captured) if game.move_stack else [],
    }
    if game.engine.scoring:
        table = chips_of(game.rules.chip_set)
        out["chips"] = [table[int(c)].label if c >= 0 else None for c in game.chips()]
        sw, sb = game.scores()
        tw, tb = game.totals()
        out["scores"] = [str(sw), str(sb)]
        out["score_values"] = [float(sw), float(sb)]
        out["totals"] = [str(tw), str(tb)]
    if legal:
        out["legal"] = [move_json(m) for m in game.legal_moves()]
    return out


def replay(text: str, index: int = 0) -> dict[str, Any]:
    """Read a PDN text and replay its game `index`: the list of games (tags, result,
    length), then that game's layout, moves, comments and one position per ply."""
    if len(text) > MAX_PDN_CHARS:
        raise PdnError(f"the PDN is {len(text):,} characters long; the limit is "
                       f"{MAX_PDN_CHARS:,}")
    games = loads(text)
    if not games:
        raise PdnError("no game found in the PDN text")
    if not 0 <= index < len(games):
        raise PdnError(f"there is no game {index + 1}: the PDN holds {len(games)} game(s)")
    chosen: PdnGame = games[index]
    if len(chosen.moves) > MAX_REPLAY_PLIES:
        raise PdnError(f"game {index + 1} has {len(chosen.moves)} moves; the limit is "
                       f"{MAX_REPLAY_PLIES}")
    options = chosen.rule_options
    fen = chosen.tags.get("FEN")
    try:
        game = Game.from_fen(fen, chosen.variant, **options) if fen else \
            Game(chosen.variant, **options)
    except (DamiiError, ValueError, TypeError) as exc:
        raise PdnError(f"game {index + 1}: cannot set up the position: {exc}") from exc
    frames = [position(game)]
    for i, move in enumerate(chosen.moves):
        try:
            game.push(move)
        except DamiiError as exc:
            raise PdnError(f"game {index + 1}, move {i // 2 + 1} ({move}) cannot be played: "
                           f"{str(exc).split(';')[0]}") from exc
        frames.append(position(game))
    return {
        "games": [{"white": g.tags.get("White", "?"), "black": g.tags.get("Black", "?"),
                   "round": g.tags.get("Round", str(i + 1)), "result": g.result,
                   "plies": len(g.moves), "variant": g.tags.get("Variant", "")}
                  for i, g in enumerate(games[:1000])],
        "count": len(games),
        "index": index,
        "tags": chosen.tags,
        "result": chosen.result,
        "moves": chosen.moves,
        "comments": {str(k): v for k, v in chosen.comments.items()},
        "layout": layout(game),
        "frames": frames,
    }


def replay_task(args: tuple[str, int]) -> dict[str, Any] | DamiiError:
    """:func:`replay` as a pool task: a bad PDN comes back as its error, not raised."""
    try:
        return replay(*args)
    except DamiiError as exc:
        return exc
