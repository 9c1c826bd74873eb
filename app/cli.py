"""The ``damii`` command line, for the four variants (``--variant damii``, ``international``,
``triestine`` or ``damath``, i.e. Sci-Damath).

``damii perft --variant international --depth 6`` counts moves from a position;
``damii show FEN --variant damii`` prints a position and its legal moves;
``damii eval --variant damii random greedy --games 20`` plays a round robin between agents;
``damii play --variant damii --opponent alphabeta:depth=4`` plays against an agent in the
terminal; ``damii hub`` is the players as a Hub engine for draughts GUIs (docs/HUB.md);
``damii train CONFIG`` and ``damii export RUN_DIR --out FILE`` train and ship
networks; ``damii endgame make`` solves the endgames (docs/ENDGAME.md); ``damii serve``
starts the web app on http://127.0.0.1:8000/. The agents are
imported only by the commands that need them (the help reads the list of player kinds from
the light spec registry, which loads neither torch nor a search).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from damii_agents.registry import player_kinds
from damii_app.analyse import add_parser as add_analyse_parser
from damii_app.compile import add_parser as add_compile_parser
from damii_env import __version__
from damii_env.engine import MAX_PERFT_DEPTH
from damii_env.errors import DamiiError, InvalidArgumentError
from damii_env.game import Game
from damii_env.rules import ORIENTATIONS, PRESETS, make_rules

PERFT_CHUNK = 7
"""Deeper perfts are split by Python over the first moves, down to compiled calls of at
most this depth, so that Ctrl-C is honoured between them."""


PRETRAINED_HELP = ("pretrained:NAME is the strongest shipped player, the alpha-beta with the "
                   "learned evaluation at 0.1 s a move (pretrained:NAME,net=policy: the "
                   "network's policy alone; pretrained:NAME,net=search,depth=2: its own "
                   "minimax)")
"""How the help names the pretrained players (the README and docs/SEARCH.md say the same)."""
HUB_HELP = ('hub:"COMMAND" is an outside engine that speaks the Hub protocol, e.g. '
            "'hub:\"dame hub\",time=0.1' (time=, depth=, nodes=; other key=value pairs are "
            "its parameters; docs/HUB.md)")


def _int_arg(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an ASCII integer from `low` to `high`."""
    def parse(text: str) -> int:
        t = text.strip()
        if not (t.lstrip("-").isascii() and t.lstrip("-").isdigit()) or len(t) > 20 \
                or not low <= int(t) <= high:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {low} to {high}, got {text!r:.40}")
        return int(t)
    parse.__name__ = "integer"
    return parse


def _perft(game: Game, depth: int) -> int:
    """Perft of `game` (its rules with the draw rules off), interruptible between chunks."""
    if depth <= PERFT_CHUNK:
        return game.engine.perft(game.state, depth)
    total = 0
    for move in game.legal_moves():
        child = game.copy()
        child.push(move)
        total += _perft(child, depth - 1)
    return total


def _add_position_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", default="damii", choices=sorted(PRESETS),
                   help="rule preset (default: damii)")
    p.add_argument("--orientation", choices=ORIENTATIONS, default=None,
                   help="board orientation (default: the variant's own)")


def _add_ray_arg(p: argparse.ArgumentParser, what: str) -> None:
    """``--ray [ADDRESS]``: auto (the cluster `ray start` runs here), HOST:PORT or local."""
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help=f"{what}: auto (default; the cluster `ray start` runs), HOST:PORT of "
                        f"its head, or local (needs the distributed extra; docs/DISTRIBUTED.md)")


def _is_ray_address(text: str) -> bool:
    """Whether `--ray`'s value reads as an address (else it was the next argument)."""
    host, sep, port = text.rpartition(":")
    return text in ("auto", "local") or bool(sep and host and port.isdigit())


def _game(args: argparse.Namespace, fen: str | None, **options: object) -> Game:
    if fen:
        return Game.from_fen(fen, args.variant, orientation=args.orientation, **options)
    return Game(args.variant, orientation=args.orientation, **options)


def cmd_perft(args: argparse.Namespace) -> int:
    if args.divide and args.depth < 1:
        raise InvalidArgumentError("--divide needs --depth 1 or more")
    # perft counts paths: the draw rules are off (as damii_env.perft has them)
    rules = make_rules(args.variant, orientation=args.orientation).without_draw_rules()
    game = Game.from_fen(args.fen, rules) if args.fen else Game(rules)
    print(f"perft {game.rules.name} ({game.rules.orientation}) from {game.fen()}", flush=True)
    if args.divide:
        total = 0
        for move in game.legal_moves():
            child = game.copy()
            child.push(move)
            n = _perft(child, args.depth - 1)
            total += n
            print(f"{str(move):>16} {n}", flush=True)
        print(f"total {total}")
        return 0
    for depth in range(1, args.depth + 1):
        t0 = time.perf_counter()
        n = _perft(game, depth)
        dt = time.perf_counter() - t0
        print(f"depth {depth:2d} {n:>14,d}   {dt:8.3f} s", flush=True)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    game = _game(args, args.fen)
    print(game.board_text(numbers=args.numbers))
    print(f"FEN: {game.fen()}")
    moves = game.legal_moves()
    if moves:
        print(f"{len(moves)} legal moves: " + " ".join(str(m) for m in moves))
    return 0


@contextlib.contextmanager
def _sigterm_as_ctrl_c(terminated: list[int]) -> Iterator[None]:
    """SIGTERM (kill, job schedulers) stops the command as Ctrl-C does, so that its
    clean-up runs (worker processes ended, the last checkpoint kept); it is noted in
    `terminated` (exit status 143 rather than 130)."""
    def stop(signum: int, frame: object) -> None:
        terminated.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_eval(args: argparse.Namespace) -> int:
    from damii_agents.match import MatchConfig, default_out_dir, reports
    from damii_agents.match.reports import check_writable

    if args.ray is not None and not _is_ray_address(args.ray):  # `--ray SPEC ...`: a spec
        args.specs, args.ray = [args.ray, *args.specs], "auto"
    out = check_writable(args.out or default_out_dir(), folder=True)
    config = MatchConfig(variant=args.variant, specs=tuple(args.specs), games=args.games,
                         clock=args.clock, workers=args.workers, seed=args.seed,
                         opening_plies=args.opening_plies, gauntlet=args.gauntlet)
    if not args.no_progress:  # the bar waits on the first game: say why
        print("damii eval: starting the players (the engine says so if it must compile "
              "first)", file=sys.stderr, flush=True)
    terminated: list[int] = []
    result, total = _play_match(config, not args.no_progress, args.ray, terminated)
    interrupted = len(result.games) < total
    if interrupted and not result.games:
        print("damii eval: interrupted before the first game ended; nothing to save",
              file=sys.stderr)
        return 143 if terminated else 130
    print(reports.to_text(result))
    try:
        paths = reports.save(result, out)
    except OSError as exc:  # the folder broke during the match: keep the games anyway
        paths = reports.save(result, default_out_dir())
        print(f"cannot write {str(out)!r} ({exc.strerror or exc}); saved to the default "
              f"folder instead", file=sys.stderr)
    print("saved: " + ", ".join(str(p) for p in paths.values()))
    if interrupted:
        where = Path(next(iter(paths.values()))).parent
        print(f"damii eval: interrupted after {len(result.games)} of {total} games; the "
              f"results of those games are saved in {where}", file=sys.stderr)
        return 143 if terminated else 130
    return 0


def _play_match(config: Any, progress: bool, ray: str | None,
                terminated: list[int]) -> tuple[Any, int]:
    """The match's games as :func:`~damii_agents.match.run_match` plays them (a bar on
    stderr when `progress`), tallied; Ctrl-C or SIGTERM stops it and the games finished
    so far are tallied (the worker processes end with the match). Returns the result and
    the number of games scheduled."""
    from tqdm import tqdm

    from damii_agents.match.results import MatchResult
    from damii_agents.match.scheduling import play_all, schedule

    tasks = schedule(config)
    games: list[Any] = []
    try:
        with _sigterm_as_ctrl_c(terminated), \
                tqdm(total=len(tasks), desc=f"eval {config.variant}", unit="game",
                     disable=not progress) as bar:
            for game in play_all(config, tasks, ray):
                games.append(game)
                bar.update(1)
    except KeyboardInterrupt:
        pass
    return MatchResult.from_games(config, games), len(tasks)


def cmd_play(args: argparse.Namespace) -> int:
    from damii_app.play import play_human

    if args.pdn is not None and os.path.lexists(args.pdn) and not os.path.isdir(args.pdn):
        from damii_env.errors import UnwritablePathError

        raise UnwritablePathError(
            f"--pdn {args.pdn!r} already exists; damii play does not overwrite a file: give "
            f"a new file name (or remove that file first)")
    result = play_human(args.variant, args.opponent, clock=args.clock, colour=args.colour,
                        pdn_path=args.pdn, seed=args.seed)
    if result.interrupted:
        print(f"damii play: interrupted; the game is saved unfinished in {result.pdn_path}",
              file=sys.stderr, flush=True)
        if result.agent_busy:  # a compiled search cannot be stopped: leave it at once
            sys.stdout.flush()
            os._exit(130)
        return 130
    # an unfinished game is a failure only when the input ran out; quit is the person's choice
    return 0 if result.end.termination != "abandoned" or result.quit else 1


def cmd_train(args: argparse.Namespace) -> int:
    if not args.no_progress and sys.stderr.isatty():  # the imports take seconds: say so
        print("damii train: loading torch and the trainers...", file=sys.stderr, flush=True)
    from damii_training.run import TrainingInterrupted, run_training

    if args.config is None and args.ray is not None and not _is_ray_address(args.ray):
        args.config, args.ray = args.ray, "auto"  # `--ray CONFIG`: the config, not an address
    if args.config is None and args.resume is None:
        raise SystemExit("damii train: give a CONFIG file or the name of a shipped config "
                         "(e.g. damii train damii_quick), or --resume RUN_DIR")
    terminated: list[int] = []
    try:
        overrides = list(args.set)
        if args.ray is not None:  # a JSON string is YAML, whatever the address looks like
            overrides.append(f"ray_address={json.dumps(args.ray)}")
        with _sigterm_as_ctrl_c(terminated):
            report = run_training(args.config, overrides=overrides, resume=args.resume,
                                  run_dir=args.run_dir, progress=not args.no_progress)
    except TrainingInterrupted as exc:
        print(f"damii train: {exc}", file=sys.stderr)
        return 143 if terminated else 130
    # the report is Markdown for a viewer; a terminal gets it without the image link
    print("\n".join(line for line in report.read_text().splitlines()
                    if not line.startswith("![")))
    curve = report.parent / "learning_curve.png"
    if curve.exists():
        print(f"learning curve: {curve}")
    print(f"run directory: {report.parent}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from damii_agents.match.reports import check_writable
    from damii_training.export import export_run

    check_writable(args.out)
    if args.plot:
        check_writable(args.plot)
    info = export_run(args.runs, args.out, checkpoint=args.checkpoint, plot=args.plot)
    for stage in info["stages"]:
        print(f"{stage['run']}: {stage['config']} ({stage['algorithm']}), "
              f"{stage['samples']:,} samples, {stage['seconds'] / 60:.1f} min")
    print(f"wrote {args.out}: {info['step']:,} samples, {info['training_seconds'] / 60:.1f} min, "
          f"{info['samples_per_second']:.0f} samples/s; play it as ckpt:{args.out}")
    if args.plot:
        print(f"learning curve: {args.plot}")
    return 0


def cmd_hub(args: argparse.Namespace) -> int:
    from damii_app.hub import run

    engine = run(sys.stdin, sys.stdout, variant=args.variant, player=args.player,
                 allow_programs=args.allow_programs)
    if engine.thread is not None and engine.thread.is_alive():
        sys.stdout.flush()  # a compiled search cannot be interrupted: leave it at once
        os._exit(0)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from damii_app.serve import run_server
    except ImportError as exc:
        raise SystemExit(f"damii serve needs the serve extra: pip install -e \".[serve]\" "
                         f"({exc})") from None
    if not 0 <= args.grace <= 86_400:
        raise SystemExit(f"damii serve: --grace must be from 0 to 86400 seconds, "
                         f"got {args.grace}")
    engines = _engines(args.engine)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"damii serve: listening on {args.host}: anyone who can reach this machine on "
              f"port {args.port} can play (your network, maybe more)", file=sys.stderr)
    else:
        print("damii serve: only this machine can reach it (--host 0.0.0.0 for a class)")
    # run_server says which database keeps the games, that the engine compiles, and the
    # address ("open http://...") only once the server answers there
    run_server(args.host, args.port, weights_dir=args.weights, workers=args.workers,
               db=args.db, grace=args.grace, engines=engines)
    return 0


def _engines(items: Sequence[str]) -> dict[str, str]:
    """``--engine NAME=COMMAND`` (repeated) as name -> command, or a clear exit."""
    engines: dict[str, str] = {}
    for item in items:
        name, eq, command = item.partition("=")
        name, command = name.strip(), command.strip().strip('"').strip()
        if not eq or not name or not command:
            raise SystemExit(f'damii serve: --engine takes NAME="COMMAND", e.g. '
                             f'--engine dame="dame hub"; got {item!r:.80}')
        if not all(c.isascii() and (c.isalnum() or c in "-_") for c in name) or \
                len(name) > 40 or name in engines:
            raise SystemExit(f"damii serve: --engine name {name!r:.50} must be letters, "
                             f"digits, - or _ (at most 40) and named once")
        engines[name] = command
    return engines


def cmd_compile(args: argparse.Namespace) -> int:
    from damii_app import compile as compiling
    from damii_env import compile_cache

    if args.ship:
        for folder in compiling.ship(progress=not args.no_progress):
            print(f"shipped {folder}")
        return 0
    seconds = compiling.warm_up(progress=not args.no_progress)
    print(f"compiled in {seconds:.0f} s; cached in {compile_cache.cache_root()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="damii", description="Damii, International, Triestine and Sci-Damath draughts for RL."
    )
    parser.add_argument("--version", action="version", version=f"damii-env {__version__}")
    sub = parser.add_subparsers(dest="command")  # none: main prints this help

    p = sub.add_parser("perft", help="count complete moves to a depth")
    _add_position_args(p)
    p.add_argument("--depth", type=_int_arg(0, MAX_PERFT_DEPTH), required=True,
                   help=f"depth in moves (plies), 0 to {MAX_PERFT_DEPTH}")
    p.add_argument("--fen", default=None, help="start position (default: the initial one)")
    p.add_argument("--divide", action="store_true", help="count per first move at --depth")
    p.set_defaults(func=cmd_perft)

    p = sub.add_parser("show", help="print a position and its legal moves")
    p.add_argument("fen", nargs="?", default=None, help="PDN FEN, e.g. W:W31-50:B1-20")
    _add_position_args(p)
    p.add_argument("--numbers", action="store_true", help="show square numbers")
    p.set_defaults(func=cmd_show)

    clock_help = ("per-move clock: standard (60 s), blitz (15 s), none, or seconds "
                  "(default: standard)")
    p = sub.add_parser("eval", help="round robin between agents: results, Elo, PDN")
    p.add_argument("--variant", default="damii", choices=sorted(PRESETS),
                   help="rule preset (default: damii)")
    p.add_argument("specs", nargs="+", metavar="SPEC",
                   help=f"agents: {', '.join(player_kinds())} (options after a comma, e.g. "
                        f"alphabeta:time=0.1,eval=learned); {PRETRAINED_HELP}; {HUB_HELP}")
    p.add_argument("--games", type=_int_arg(1, 1_000_000), default=10,
                   help="games per pairing, rounded up to even (default: 10)")
    p.add_argument("--clock", default="standard", help=clock_help)
    p.add_argument("--workers", type=_int_arg(1, 256), default=None,
                   help="worker processes (default: min(2, CPUs))")
    p.add_argument("--seed", type=_int_arg(0, 2**32 - 1), default=0,
                   help="seed of ballots and agents (default: 0)")
    p.add_argument("--out", default=None, help="output folder (default: runs/eval/<timestamp>)")
    p.add_argument("--opening-plies", type=_int_arg(0, 200), default=2,
                   help="plies of each random opening ballot (default: 2)")
    p.add_argument("--gauntlet", action="store_true",
                   help="the first agent meets each other one; the others do not meet")
    _add_ray_arg(p, "play the games on a Ray cluster, --workers actors (default: one a free "
                    "CPU)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("play", help="play against an agent in the terminal")
    p.add_argument("--variant", default="damii", choices=sorted(PRESETS),
                   help="rule preset (default: damii)")
    p.add_argument("--opponent", default="alphabeta:depth=4",
                   help=f"agent spec: {', '.join(player_kinds())} (default: "
                        f"alphabeta:depth=4); {PRETRAINED_HELP}; {HUB_HELP}")
    p.add_argument("--clock", default="none",
                   help="per-move clock, for you and the agent: none (default: casual, no "
                        "time limit, as in the web app), standard (60 s), blitz (15 s) or "
                        "seconds; with a clock the prompt counts down the time left, and "
                        "the game is lost the moment it runs out")
    p.add_argument("--colour", "--color", dest="colour", choices=("white", "black"),
                   default="white",
                   help="your colour (default: white, who moves first)")
    p.add_argument("--pdn", default=None, help="PDN file for the game (default: runs/play/...)")
    p.add_argument("--seed", type=_int_arg(0, 2**32 - 1), default=None,
                   help="seed of the agent")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("train", help="self-play training from a config (needs the train extra)")
    p.add_argument("config", nargs="?", default=None,
                   help="a YAML config file, or the name of a config shipped with the "
                        "package, e.g. damii_quick (the quick run) or damii_tdleaf; an "
                        "unknown name lists them")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key (repeatable), e.g. --set total_steps=50000")
    p.add_argument("--resume", default=None, metavar="RUN_DIR",
                   help="continue a run from its last checkpoint")
    p.add_argument("--run-dir", default=None, help="run directory (default: runs/<name>-<time>)")
    _add_ray_arg(p, "self-play on a Ray cluster, the learner here (config keys ray_*)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("export", help="a run's checkpoint as a small playing file "
                                      "(needs the train extra)")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR",
                   help="the run, or the runs of a chain in order (each started from the "
                        "previous one's weights with init_weights)")
    p.add_argument("--out", required=True, help="file to write, e.g. agents/weights/damii.pt")
    p.add_argument("--checkpoint", default="best.pt", choices=("best.pt", "last.pt"),
                   help="checkpoint of the last run (default: best.pt)")
    p.add_argument("--plot", default=None, metavar="PNG",
                   help="also draw the learning curve of the whole chain here")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("hub", help="the players as a Hub engine on stdin/stdout, for draughts "
                                   "GUIs (docs/HUB.md)",
                       description="Speak the Hub protocol (Scan's, version 2) on standard "
                                   "input and output: a draughts GUI, lidraughts-bot or "
                                   "pydraughts' HubEngine runs `damii hub` as an engine. Its "
                                   "parameters (set-param) are variant (normal, i.e. "
                                   "International, damii, triestine, damath) and player (a "
                                   "player spec; pretrained is pretrained:<variant>). "
                                   "Sci-Damath positions come as pos fen=\"<FEN>\". The other "
                                   "way round, any Hub engine plays in damii eval and damii "
                                   "play as hub:\"COMMAND\" (docs/HUB.md).")
    p.add_argument("--variant", default="normal", choices=("normal", "damii", "triestine",
                                                           "damath"),
                   help="the variant parameter's start value (default: normal, i.e. "
                        "International)")
    p.add_argument("--player", default="pretrained",
                   help="the player parameter's start value (default: pretrained, the "
                        "variant's pretrained:NAME)")
    p.add_argument("--allow-programs", action="store_true",
                   help="let set-param name=player choose a hub:\"COMMAND\" player, which "
                        "runs that program (refused by default: the GUI's input runs no "
                        "program)")
    p.set_defaults(func=cmd_hub)

    p = sub.add_parser("serve", help="play, watch and replay in the browser (needs the serve "
                                     "extra)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--weights", default=None, metavar="DIR",
                   help="the only folder ckpt: specs may load from (default: the shipped weights)")
    p.add_argument("--workers", type=int, default=2,
                   help="search processes for the agents (default: 2; 0: threads)")
    p.add_argument("--db", default=None, metavar="PATH",
                   help="SQLite database of players, finished games, the Elo ladder and "
                        "the games in progress, which a restart takes up again (default: "
                        "$DAMII_DATA/serve.sqlite3 or "
                        "~/.local/share/damii/serve.sqlite3)")
    p.add_argument("--grace", type=float, default=90.0, metavar="SECONDS",
                   help="seconds a lobby player who lost the connection, or any player "
                        "after a server restart, has to come back before losing by "
                        "disconnection (default: 90)")
    p.add_argument("--engine", action="append", default=[], metavar='NAME="COMMAND"',
                   help="an outside engine that speaks the Hub protocol, offered to the page "
                        "as hub:NAME (repeat for more), e.g. --engine dame=\"dame hub\"; a "
                        "page can never name a command itself (docs/HUB.md)")
    p.set_defaults(func=cmd_serve)

    add_compile_parser(sub, cmd_compile)  # damii compile (app/compile.py)

    add_analyse_parser(sub)  # damii analyse GAME.pdn (app/analyse.py)

    from damii_app.endgame import add_parser as add_endgame_parser

    add_endgame_parser(sub, _int_arg)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # `damii` alone: the commands, as git does, and a usage error
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except DamiiError as exc:
        print(f"damii: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("damii: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `damii show | head`: the reader left; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the flush at exit must not fail again
        return 141  # as a command killed by SIGPIPE


def _one_line(text: str, limit: int = 2000) -> str:
    """An error message as one line of bounded length."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
