#!/usr/bin/env python
"""The reference player, kept reproducible from its pinned commit (not packaged).

Figures of the project were measured against a reference alpha-beta: the search before
principal-variation search, killers, history, late-move reductions and the in-search
clock, with its move-ordering slip. It lived in the product as spec switches until commit
:data:`REFERENCE_COMMIT`; it now lives only there. This module unpacks that commit's tree
(``git archive``, once, under ``runs/reference-<commit>/``) with its packages under their
import names, and runs the reference's searches in a child process on it:

    python benchmarks/reference.py nodes --variant damii --depth 8 --positions 16

prints the reference's nodes and search seconds over the same positions as
``benchmarks/alphabeta_nodes.py`` (which calls it with ``--reference``). Matches against
the reference are played at that commit: see lab/README.md for the commands.

    python benchmarks/reference.py hub --player pretrained

is a Hub engine (docs/HUB.md) whose player is that commit's ``pretrained:<variant>`` (or
any spec of its registry, e.g. ``--player "alphabeta:$REF"``; a search given no
``time``, ``depth`` or ``nodes`` takes the ``level``'s move-time), so that today's players
meet it in one ``damii eval``::

    damii eval --variant damii --clock none pretrained:damii \
        'hub:"python benchmarks/reference.py hub",time=0.1'

The protocol is read and written by today's ``damii_env/hub.py``, loaded from its file onto
the pinned tree's ``Game`` (the same API), so there is one implementation of it.

``--commit C`` pins another commit instead (both jobs): ``--commit ba23c36`` is the
strength issue's fixed reference, the players as they were before the core was rewritten
(its ``pretrained:<variant>``; its search compiles on its first use, minutes)::

    damii eval --variant triestine --clock none pretrained:triestine \
        'hub:"python benchmarks/reference.py hub --commit ba23c36",time=0.1'
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_COMMIT = "37a3aee"
"""The last commit whose product held the reference player's switches."""
STRENGTH_REFERENCE_COMMIT = "ba23c36"
"""The strength issue's fixed reference (``--commit``): the players before the core was
rewritten."""
REFERENCE_OPTIONS = "pvs=0,killers=0,history=0,lmr=0,asp=0,tm=old,legacy=1"
"""The reference player's alpha-beta options at :data:`REFERENCE_COMMIT`
(``alphabeta:time=0.1,`` + these)."""
IMPORT_NAMES = {"damii_env": "damii_env", "damii_agents": "agents",
                "damii_training": "training", "damii_app": "app"}


def checkout(commit: str = REFERENCE_COMMIT) -> Path:
    """A folder to put first on ``PYTHONPATH`` so that the packages of `commit` are
    imported (unpacked once, under ``runs/``)."""
    base = ROOT / "runs" / f"reference-{commit}"
    tree, path = base / "tree", base / "path"
    if not (tree / "agents").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    path.mkdir(parents=True, exist_ok=True)
    for name, folder in IMPORT_NAMES.items():
        # relative links: the folder stays valid where runs/ is reached by another path
        # (a worktree's runs/ linked to this one); a link left dangling is replaced
        link = path / name
        target = Path("..") / "tree" / folder
        if link.is_symlink() and not link.exists():
            link.unlink(missing_ok=True)
        try:
            link.symlink_to(target, target_is_directory=True)
        except FileExistsError:  # made meanwhile by another process: check it resolves
            if not link.exists():
                raise
    return path


def run_nodes(variant: str, depth: int, positions: int, repeat: int,
              options: str = REFERENCE_OPTIONS, commit: str = REFERENCE_COMMIT) -> dict:
    """The reference's nodes and search seconds (child process on the pinned tree);
    `options`: the alphabeta spec options at that commit ("" its shipped search)."""
    env = {**os.environ, "PYTHONPATH": str(checkout(commit))}
    cmd = [sys.executable, str(Path(__file__).resolve()), "nodes", "--variant", variant,
           "--depth", str(depth), "--positions", str(positions), "--repeat", str(repeat),
           "--options", options, "--commit", commit]
    out = subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _pinned_factory():
    """The pinned tree's player factory: ``make_agent`` of the registry (37a3aee), or
    ``make_player`` (from d477db8 on, ba23c36 among them)."""
    try:
        from damii_agents.registry import make_agent
    except ImportError:
        from damii_env.player import make_player as make_agent
    return make_agent


def _nodes_here(variant: str, depth: int, count: int, repeat: int, options: str) -> dict:
    """Run in the child: the reference's searches over the benchmark's positions."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from alphabeta_nodes import positions  # the same positions as the benchmark

    from damii_env import Game

    make_agent = _pinned_factory()
    agent = make_agent(f"alphabeta:depth={depth}" + (f",{options}" if options else ""), variant)
    agent.choose(Game(variant))  # compile and warm up
    nodes, seconds = 0, 0.0
    for game in positions(variant, count):
        for _ in range(repeat):
            agent.reset()
            agent.choose(game)
            nodes += agent.nodes
            seconds += agent.search_time
    return {"nodes": nodes, "seconds": seconds}


def _hub_here(player: str, commit: str = REFERENCE_COMMIT) -> None:
    """Run in the child: a Hub engine (sequential: one search at a time) whose player is the
    pinned commit's `player` spec (``pretrained`` is ``pretrained:<variant>``)."""
    import importlib.util

    from damii_env.errors import DamiiError

    make_agent = _pinned_factory()

    loaded = importlib.util.spec_from_file_location("hub_protocol", ROOT / "damii_env" / "hub.py")
    H = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(H)  # today's protocol code over the pinned tree's Game

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    variant, agents, game, move_time = "international", {}, None, 0.1

    def agent_for(seconds: float):
        spec = f"pretrained:{variant}" if player == "pretrained" else player
        searcher = spec.split(":")[0] in ("pretrained", "alphabeta")
        if searcher and not any(f"{k}=" in spec for k in ("time", "depth", "nodes")):
            spec += ("," if ":" in spec else ":") + f"time={seconds:g}"  # the level's
        key = (variant, spec)
        if key not in agents:
            agents[key] = make_agent(spec, variant)
        return agents[key]

    for line in sys.stdin:
        command, args = H.parse_line(line)
        try:
            if command == "quit":
                return
            if command == "ping":
                say("pong")
            elif command == "hub":
                say(H.format_line("id", name=f"reference-{commit}",
                                  version=commit, author="damii-env"))
                say(H.format_line("param", name="variant", value=H.hub_variant(variant),
                                  type="enum", values=" ".join(H.VARIANTS)))
                say("wait")
            elif command == "set-param" and args.get("name") == "variant":
                variant = H.variant_of(args.get("value", ""))
            elif command == "init":
                from damii_env import Game
                agent_for(move_time).choose(Game(variant))  # compile before the first move
                say("ready")
            elif command == "new-game":
                for agent in agents.values():
                    if hasattr(agent, "reset"):
                        agent.reset()
            elif command == "pos":
                game = H.read_position(args, variant)
            elif command == "level" and "move-time" in args:
                move_time = float(args["move-time"])
            elif command == "go" and game is not None:
                say(H.format_line("done", move=H.move_text(agent_for(move_time).choose(game))))
        except DamiiError as exc:
            say(H.format_line("error", message=" ".join(str(exc).split())[:400]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="job", required=True)
    nodes = sub.add_parser("nodes", help="the reference's nodes/s (run on the pinned tree)")
    nodes.add_argument("--variant", default="damii")
    nodes.add_argument("--depth", type=int, default=6)
    nodes.add_argument("--positions", type=int, default=8)
    nodes.add_argument("--repeat", type=int, default=1)
    nodes.add_argument("--options", default=REFERENCE_OPTIONS,
                       help="alphabeta options at the pinned commit (default: the reference's; "
                            "'' its shipped search)")
    hub = sub.add_parser("hub", help="a Hub engine playing the pinned commit's player")
    hub.add_argument("--player", default="pretrained",
                     help="a player spec at the pinned commit (default: pretrained, i.e. "
                          "pretrained:<variant> at the level's move-time)")
    for job in (nodes, hub):
        job.add_argument("--commit", default=REFERENCE_COMMIT,
                         help=f"the pinned commit (default {REFERENCE_COMMIT}, the engine "
                              f"issue's reference; {STRENGTH_REFERENCE_COMMIT}: the strength "
                              f"issue's)")
    args = parser.parse_args()
    tree = str(checkout(args.commit))
    child = "PYTHONPATH" in os.environ and tree in os.environ["PYTHONPATH"]
    if args.job == "hub":
        if not child:  # the same command, with the pinned tree first on the path
            os.execve(sys.executable, [sys.executable, *sys.argv],
                      {**os.environ, "PYTHONPATH": tree})
        _hub_here(args.player, args.commit)
        return
    if not child:
        print(json.dumps(run_nodes(args.variant, args.depth, args.positions, args.repeat,
                                   args.options, args.commit)))
        return
    print(json.dumps(_nodes_here(args.variant, args.depth, args.positions, args.repeat,
                                 args.options)))


if __name__ == "__main__":
    main()
