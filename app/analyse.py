"""``damii analyse GAME.pdn``: every position of a game searched by the engine, out come an
annotated PDN (each move's evaluation; the marks ``?!``, ``?``, ``??`` and the better line
where a move loses more than a threshold), a summary a side and an evaluation graph (PNG).

The review itself is :mod:`damii_agents.review` (docs/ANALYSE.md); this module reads the
file, shows the progress, writes the outputs (atomically) and draws the graph.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from damii_env.errors import DamiiError, InvalidArgumentError, UnwritablePathError

GRAPH_MISSING = ("the evaluation graph needs matplotlib, which is not installed: "
                 "pip install matplotlib (or the train extra: pip install 'damii-env[train]'); "
                 "or pass --no-graph for the annotated PDN and the summary alone")


def add_parser(sub: Any) -> None:
    """The ``analyse`` subcommand (`sub`: the CLI's subparsers)."""
    from damii_agents.review import DEFAULT_TIME, Thresholds

    t = Thresholds()
    p = sub.add_parser(
        "analyse", aliases=["analyze"],
        help="review a game: each move's evaluation, marks ?! ? ??, the better lines, a graph",
        description="Search every position of the games of a PDN file (any variant: the "
                    "Variant tag, or GameType 20 for International) and write an annotated "
                    "PDN, a summary a side and an evaluation graph (docs/ANALYSE.md).")
    p.add_argument("pdn", help="PDN file (as damii eval, damii play and damii serve write)")
    p.add_argument("--player", default=None,
                   help="the searching player: pretrained:NAME or alphabeta:... (default: the "
                        "variant's strongest shipped player, e.g. pretrained:international)")
    p.add_argument("--time", type=float, default=DEFAULT_TIME,
                   help=f"seconds of search a position (default: {DEFAULT_TIME})")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes (default: min(2, CPUs))")
    p.add_argument("--game", type=int, default=None, metavar="N",
                   help="analyse only the N-th game of the file (1-based; default: all)")
    p.add_argument("--out", default=None,
                   help="annotated PDN to write (default: GAME.analysed.pdn beside the input)")
    p.add_argument("--graph", default=None, metavar="PNG",
                   help="evaluation graph (default: the --out name with .png; with several "
                        "games, -N before .png)")
    p.add_argument("--no-graph", action="store_true", help="no evaluation graph")
    p.add_argument("--thresholds", default=None, metavar="I,M,B[,MARGIN]",
                   help=f"losses marking ?!, ? and ?? in search units, a man = 100 "
                        f"(Sci-Damath: 10 = a point of the totals' lead), and how far a "
                        f"?? must clear B (below: a ?); default "
                        f"{t.inaccuracy:g},{t.mistake:g},{t.blunder:g},{t.blunder_margin:g}")
    p.add_argument("--seed", type=int, default=0, help="seed of the player (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_analyse)


def cmd_analyse(args: argparse.Namespace) -> int:
    """Run ``damii analyse``: 0 when every game was analysed and written."""
    from damii_agents.review import Thresholds, analyse_game, searchers
    from damii_env.pdn import PdnError, read_file

    games = _read_games(args.pdn, args.game, read_file, PdnError)
    if args.workers is not None and not 1 <= args.workers <= 256:
        raise InvalidArgumentError(f"--workers must be 1 to 256, got {args.workers}")
    workers = args.workers or min(2, os.cpu_count() or 1)
    thresholds = Thresholds.parse(args.thresholds) if args.thresholds else Thresholds()
    out = Path(args.out) if args.out else _default_out(Path(args.pdn))
    if out.resolve() == Path(args.pdn).resolve():
        raise UnwritablePathError(f"--out {str(out)!r} is the input file; damii analyse does "
                                  f"not overwrite the game it reads: give another name")
    if not args.no_graph:
        _check_matplotlib()
    reviews = []
    with searchers(workers) as runner:  # one set of worker processes for every game
        for number, game in games:
            label = f"game {number}" if len(games) > 1 else Path(args.pdn).name
            try:
                review = _with_progress(game, label, args, runner, thresholds,
                                        analyse_game)
            except PdnError as exc:
                raise PdnError(f"{label}: {exc}") from exc
            reviews.append((number, review))
            print(f"{label}: {game.tags.get('White', 'White')} - "
                  f"{game.tags.get('Black', 'Black')} {game.result} ({review.variant}, "
                  f"{len(review.moves)} moves, {review.elapsed:.1f} s)")
            print(review.summary_text())
    from damii_env.pdn import dumps

    _write_atomic(out, dumps(r.annotated() for _, r in reviews))
    print(f"annotated PDN: {out}")
    if not args.no_graph:
        for number, review in reviews:
            png = _graph_path(args.graph, out, number, len(reviews))
            draw_graph(review, png)
            print(f"evaluation graph: {png}")
    return 0


def _read_games(path: str, only: int | None, read_file: Any, pdn_error: type) -> list:
    if not os.path.isfile(path):
        raise InvalidArgumentError(f"no PDN file {path!r}")
    try:
        games = read_file(path)
    except pdn_error as exc:
        raise pdn_error(f"{path}: {exc}") from exc
    if not games:
        raise pdn_error(f"{path}: no game in the file; expected PDN tags and moves, e.g. "
                        f"[Variant \"damii\"] 1. 22-18 ...")
    numbered = list(enumerate(games, 1))
    if only is not None:
        if not 1 <= only <= len(games):
            raise InvalidArgumentError(f"--game {only}: the file has {len(games)} game(s)")
        numbered = [numbered[only - 1]]
    return numbered


def _with_progress(game: Any, label: str, args: argparse.Namespace, runner: Any,
                   thresholds: Any, analyse_game: Any) -> Any:
    from tqdm import tqdm

    total = len(game.moves) + 1
    with tqdm(total=total, desc=f"analyse {label}", unit="pos", file=sys.stderr,
              disable=args.no_progress or None, leave=False) as bar:
        def more(n: int) -> None:  # the marked moves' longer searches
            bar.total += n
            bar.refresh()

        return analyse_game(game, args.player, args.time, thresholds=thresholds,
                            seed=args.seed, progress=bar.update, more=more, runner=runner)


def _default_out(pdn: Path) -> Path:
    return pdn.with_name(pdn.stem + ".analysed.pdn")


def _graph_path(given: str | None, out: Path, number: int, count: int) -> Path:
    base = Path(given) if given else out.with_suffix(".png")
    return base if count == 1 else base.with_name(f"{base.stem}-{number}{base.suffix}")


def _write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file beside it (never half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        _usual_mode(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _usual_mode(path: str) -> None:
    """The mode a file written the ordinary way gets (a temporary file is private)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def _check_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise DamiiError(GRAPH_MISSING) from None


def draw_graph(review: Any, path: Path) -> Path:
    """The evaluation for White after each ply, with the marked moves as dots (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from damii_agents.review import CLAMP, MAN_UNIT, TOTALS_UNIT

    scale = TOTALS_UNIT if review.scoring else MAN_UNIT
    values = [v / scale for v in review.graph()]
    fig, ax = plt.subplots(figsize=(9, 3.2), dpi=100)
    ax.fill_between(range(len(values)), values, 0, color="#888888", alpha=0.35)
    ax.plot(values, color="#333333", linewidth=1.2)
    colours = {"?!": "#e6b800", "?": "#e67e00", "??": "#d62728"}
    for mark, colour in colours.items():
        xs = [r.ply + 1 for r in review.moves if r.mark == mark]
        ax.scatter(xs, [values[x] for x in xs], color=colour, zorder=3, s=22,
                   label=f"{mark} ({len(xs)})")
    ax.axhline(0, color="black", linewidth=0.6)
    limit = min(CLAMP / scale, max(1.0, *(abs(v) for v in values)))
    ax.set_ylim(-limit * 1.1, limit * 1.1)
    ax.set_xlim(0, max(1, len(values) - 1))
    ax.set_xlabel("ply")
    ax.set_ylabel("totals' lead (points), White" if review.scoring else "men, White's view")
    tags = review.game.tags
    ax.set_title(f"{tags.get('White', 'White')} - {tags.get('Black', 'Black')} "
                 f"{review.game.result} ({review.variant}; {review.player}, "
                 f"{review.seconds:g} s a position)", fontsize=9)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp)
        _usual_mode(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        plt.close(fig)
    return path
