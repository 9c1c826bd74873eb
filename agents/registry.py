"""Agents named by short text specs: ``random``, ``greedy``, ``alphabeta:depth=4``,
``alphabeta:time=0.5``, ``alphabeta:depth=2,tt=12`` (a 2**12-entry transposition
table), ``ckpt:path/to/file.pt``, ``ckpt:path/to/file.pt,depth=2``
(options after ``:``, comma-separated)."""

from __future__ import annotations

from typing import Any

from damii_env.player import PlayerSpecError

from .base import Agent


class AgentSpecError(PlayerSpecError):
    """An agent spec that names no agent or has bad options."""


KINDS = ("random", "greedy", "alphabeta", "ckpt")


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``kind:key=value,key=value`` (``ckpt:PATH[,key=value]``) into kind and options."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"empty agent spec; expected one of: {', '.join(KINDS)}")
    kind, _, rest = spec.strip().partition(":")
    kind = kind.lower()
    if kind not in KINDS:
        raise AgentSpecError(
            f"unknown agent {kind!r} in {spec!r}; expected one of: random, greedy, "
            f"alphabeta:depth=N, alphabeta:time=SECONDS, ckpt:PATH"
        )
    options: dict[str, str] = {}
    if kind == "ckpt":
        path, *extra = rest.split(",")
        if not path:
            raise AgentSpecError(
                f"{spec!r}: a checkpoint spec needs a path, e.g. ckpt:runs/x/best.pt"
            )
        options["path"] = path
        rest = ",".join(extra)
    for item in filter(None, (t.strip() for t in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise AgentSpecError(f"{spec!r}: option {item!r} must be key=value")
        options[key.strip().lower()] = value.strip()
    return kind, options


def _number(spec: str, key: str, value: str, cast: type, low: float) -> Any:
    try:
        x = cast(value)
    except ValueError:
        raise AgentSpecError(f"{spec!r}: {key} must be a {cast.__name__}, got {value!r}") from None
    if x < low:
        raise AgentSpecError(f"{spec!r}: {key} must be >= {low}, got {value!r}")
    return x


def make_agent(spec: str, variant: str = "damii", seed: int | None = None,
               **rule_options: Any) -> Agent:
    """Build the agent a spec names, for a variant (rule options as for ``Game``)."""
    kind, opts = parse_spec(spec)
    allowed = {"random": {"seed"}, "greedy": {"seed"},
               "alphabeta": {"depth", "time", "seed", "nodes", "tt"},
               "ckpt": {"path", "mode", "sims", "depth", "nodes", "seed", "device"}}[kind]
    unknown = set(opts) - allowed
    if unknown:
        raise AgentSpecError(
            f"{spec!r}: unknown option(s) {', '.join(sorted(unknown))}; "
            f"{kind} takes: {', '.join(sorted(allowed))}"
        )
    if "seed" in opts:
        seed = _number(spec, "seed", opts["seed"], int, 0)
    if kind == "random":
        from .simple import RandomAgent

        return RandomAgent(seed=seed, name=spec)
    if kind == "greedy":
        from .simple import GreedyAgent

        return GreedyAgent(seed=seed, name=spec)
    if kind == "alphabeta":
        from .alphabeta import AlphaBetaAgent

        depth = _number(spec, "depth", opts["depth"], int, 1) if "depth" in opts else None
        time_limit = _number(spec, "time", opts["time"], float, 0.001) if "time" in opts else None
        nodes = _number(spec, "nodes", opts["nodes"], int, 1) if "nodes" in opts else None
        tt_bits = _number(spec, "tt", opts["tt"], int, 4) if "tt" in opts else 18
        if tt_bits > 26:
            raise AgentSpecError(f"{spec!r}: tt (transposition table size, as a power of 2) "
                                 f"must be from 4 to 26, got {tt_bits}")
        if depth is None and time_limit is None and nodes is None:
            depth = 4
        return AlphaBetaAgent(variant, depth=depth, time_limit=time_limit, max_nodes=nodes,
                              seed=seed, name=spec, tt_bits=tt_bits, **rule_options)
    from .neural import NeuralAgent  # needs torch (the train extra)

    sims = _number(spec, "sims", opts["sims"], int, 0) if "sims" in opts else 0
    depth = _number(spec, "depth", opts["depth"], int, 1) if "depth" in opts else 0
    if sims and depth:
        raise AgentSpecError(f"{spec!r}: give sims (PUCT search) or depth (minimax), not both")
    mode = opts.get("mode", "argmax")
    if mode not in ("argmax", "sample"):
        raise AgentSpecError(f"{spec!r}: mode must be argmax or sample, got {mode!r}")
    agent = NeuralAgent.load(opts["path"], mode=mode, simulations=sims, seed=seed,
                             device=opts.get("device", "cpu"), name=spec, depth=depth)
    if "nodes" in opts:
        agent.max_nodes = _number(spec, "nodes", opts["nodes"], int, 1)
    return agent
