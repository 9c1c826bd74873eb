"""``damii endgame``: make the endgame databases and probe them (docs/ENDGAME.md).

``damii endgame make --variant international --pieces 4`` solves every position of up to
4 pieces with a progress bar and writes it to ``$DAMII_ENDGAME_DIR`` (default
``~/.cache/damii/endgame``), where the searches find it; ``damii endgame probe FEN
--variant international`` prints a position's value.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from damii_env.rules import ORIENTATIONS, PRESETS

VARIANTS = sorted(v for v in PRESETS if PRESETS[v].scoring == "none")
"""The variants with databases (Sci-Damath's results depend on its score totals)."""


def add_parser(sub: argparse._SubParsersAction, int_arg: Callable[[int, int], Callable]
               ) -> None:
    """Add ``endgame make`` and ``endgame probe`` to the ``damii`` command line."""
    p = sub.add_parser("endgame", help="make and probe endgame databases (docs/ENDGAME.md)")
    inner = p.add_subparsers(dest="endgame_command", required=True)
    for name, help_text in (("make", "solve every position of up to N pieces"),
                            ("probe", "the value of a position from the database"),
                            ("info", "won, drawn and lost positions of each material")):
        q = inner.add_parser(name, help=help_text)
        q.add_argument("--variant", default="international", choices=VARIANTS,
                       help="rule preset (default: international; Sci-Damath has none, its "
                            "results depend on the score totals)")
        q.add_argument("--orientation", choices=ORIENTATIONS, default=None,
                       help="board orientation (default: the variant's own)")
        q.add_argument("--dir", default=None, metavar="DIR",
                       help="folder of the databases (default: $DAMII_ENDGAME_DIR or "
                            "~/.cache/damii/endgame)")
        if name == "make":
            q.add_argument("--pieces", type=int_arg(2, 4), default=3,
                           help="the most pieces on the board, both sides together "
                                "(default: 3, seconds; 4 takes about 3 CPU minutes and 47 MB; 5 is "
                                "out of reach of a small machine)")
            q.add_argument("--force", action="store_true", help="make it again if present")
            q.add_argument("--no-progress", action="store_true", help="no progress bar")
        elif name == "probe":
            q.add_argument("fen", help="PDN FEN, e.g. W:WK46,K50:BK5")
    p.set_defaults(func=cmd_endgame)


def cmd_endgame(args: argparse.Namespace) -> int:
    from damii_agents.search import endgame as E
    from damii_env.rules import make_rules

    rules = make_rules(args.variant, orientation=args.orientation)
    root = Path(args.dir) if args.dir else E.default_dir()
    if args.endgame_command == "probe":
        return _probe(E, rules, root, args.fen)
    if args.endgame_command == "info":
        return _info(E, rules, root)
    folder = root / E.folder_name(rules, args.pieces)
    if (folder / "meta.json").is_file() and not args.force:
        print(f"already made: {folder} (--force to make it again)")
        return 0
    from tqdm import tqdm

    total = E.count_positions(rules, args.pieces)
    started = time.time()
    with tqdm(total=total, desc=f"endgame {rules.name} {args.pieces} pieces", unit="pos",
              unit_scale=True, disable=args.no_progress, file=sys.stderr) as bar:
        db = E.build(rules, args.pieces, progress=bar.update)
    db.save(folder)
    seconds = time.time() - started
    size = sum(f.stat().st_size for f in folder.iterdir())
    values = db.values
    print(f"{rules.name}, up to {args.pieces} pieces: {total:,} positions indexed "
          f"({int((values > 0).sum()):,} won, {int((values < 0).sum()):,} lost for the "
          f"player to move, the rest drawn or no position) in {seconds:.0f} s; "
          f"{size / 1e6:.1f} MB in {folder}")
    return 0


def _load(E, rules, root: Path):  # noqa: N803 (the module)
    path = E.find(rules, root)
    if path is None:
        print(f"no endgame database for {rules.name} in {root}: make one with "
              f"`damii endgame make --variant {rules.name}`", file=sys.stderr)
        return None
    return E.EndgameDatabase.load(path, rules)


def _info(E, rules, root: Path) -> int:  # noqa: N803 (the module)
    db = _load(E, rules, root)
    if db is None:
        return 1
    print(f"{rules.name}, up to {db.max_pieces} pieces ({db.info.get('built', '?')}, "
          f"{db.info.get('build_seconds', '?')} s); player to move; men+kings v men+kings")
    print("| material | positions | won | drawn | lost | longest win | longest loss | "
          "draw limit |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in db.tally():
        m = row["material"]
        print(f"| {m.men}+{m.kings}K v {m.enemy_men}+{m.enemy_kings}K | {row['positions']:,} | "
              f"{row['won']:,} | {row['drawn']:,} | {row['lost']:,} | {row['longest_win']} | "
              f"{row['longest_loss']} | {row['limit'] or '-'} |")
    return 0


def _probe(E, rules, root: Path, fen: str) -> int:  # noqa: N803 (the module)
    from damii_env.game import Game

    db = _load(E, rules, root)
    if db is None:
        return 1
    game = Game.from_fen(fen, rules)
    result = db.probe(game)
    if result is None:
        print(f"not in the database (up to {db.max_pieces} pieces, a game going on at a "
              f"turn's start)")
        return 1
    value, distance = result
    side = "White" if game.turn == 0 else "Black"
    word = {1: "wins", 0: "draws", -1: "loses"}[value]
    plies = "ply" if distance == 1 else "plies"
    tail = f" ({distance} {plies} to the next capture, promotion or man move, or the end)" \
        if value else ""
    print(f"{side} to move {word}{tail}")
    return 0
