"""Agents named by short text specs: ``random``, ``greedy``, ``alphabeta:depth=4``,
``alphabeta:time=0.5``, ``alphabeta:depth=2,tt=12`` (a 2**12-entry transposition
table), ``ckpt:path/to/file.pt``, ``ckpt:path/to/file.pt,depth=2``,
``ckpt:path/to/file.pt,repeat=allow`` (the policy alone without its rule that avoids
repetitions and other draws by rule while ahead),
``pretrained:damii`` (the strongest player shipped for a variant, from any directory and
in an installed wheel: the compiled alpha-beta with the variant's learned evaluation,
:data:`PRETRAINED_TIME` seconds a move; ``pretrained:damii,time=1`` or ``depth=8`` to
search longer; ``pretrained:damii,net=policy`` the shipped network's policy alone and
``pretrained:damii,net=search,depth=2`` its own minimax, which take ckpt's options)
(options after ``:``, comma-separated)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from damii_agents.base import Agent
from damii_env.errors import InvalidOptionError
from damii_env.player import PlayerSpecError

MAX_DEPTH = 30
"""The deepest alpha-beta or minimax search a spec may ask for (full moves)."""


class AgentSpecError(PlayerSpecError):
    """An agent spec that names no agent or has bad options."""


KINDS = ("random", "greedy", "alphabeta", "ckpt", "pretrained")

PLAYER_KINDS = ("random", "greedy", "alphabeta:depth=N", "alphabeta:time=SECONDS",
                "ckpt:PATH", "pretrained:NAME")
"""How each kind of player is named, the same in the help, the errors and the web app."""


def player_kinds(variant: str | None = None) -> tuple[str, ...]:
    """The player specs a person can give, in one order: :data:`PLAYER_KINDS`, or for a
    `variant` with a shipped network the same with ``pretrained:NAME`` made concrete
    (``pretrained:damii``)."""
    if variant is not None and variant.lower() in pretrained_names():
        return (*PLAYER_KINDS[:-1], f"pretrained:{variant.lower()}")
    return PLAYER_KINDS

PRETRAINED_PACKAGE = "damii_agents"
PRETRAINED_FOLDER = "weights"
"""The shipped networks are package data: ``damii_agents/weights/<name>.pt`` (the folder
agents/weights/)."""


PRETRAINED_TIME = 0.1
"""Seconds a move of ``pretrained:NAME`` (the alpha-beta with the learned evaluation)
when the spec gives no ``time``, ``depth`` or ``nodes``."""

PRETRAINED_NETS = ("policy", "search")
"""``pretrained:NAME,net=...``: the shipped network's policy alone, or its own search
(``depth``, ``time``, ``nodes`` or ``sims``)."""

SEARCH_OPTIONS = {"depth", "time", "nodes", "seed", "tt"}
"""The options of ``pretrained:NAME`` itself (the alpha-beta's)."""
NETWORK_OPTIONS = {"mode", "sims", "mcts", "depth", "time", "nodes", "seed", "device",
                   "repeat"}
"""The options of a network player (``ckpt:PATH``, ``pretrained:NAME,net=...``)."""


def pretrained_folder() -> Path:
    """The folder of the shipped weights, found through the package (``damii_agents/weights``
    in a source checkout and in an installed wheel alike)."""
    return Path(str(resources.files(PRETRAINED_PACKAGE) / PRETRAINED_FOLDER))


def pretrained_names() -> tuple[str, ...]:
    """Names of the shipped networks (``pretrained:NAME``): one per variant."""
    folder = pretrained_folder()
    if not folder.is_dir():
        return ()
    return tuple(sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".pt")))


def pretrained_path(name: str) -> Path:
    """The file of the shipped network `name` (``damii``, ``international``, ...)."""
    names = pretrained_names()
    if name not in names:
        raise AgentSpecError(f"no pretrained network {name!r}; shipped: "
                             f"{', '.join(names) or 'none (the package has no weights)'}")
    return pretrained_folder() / f"{name}.pt"


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``kind:key=value,key=value`` (``ckpt:PATH[,key=value]``) into kind and options."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"empty agent spec; expected one of: {', '.join(PLAYER_KINDS)}")
    kind, _, rest = spec.strip().partition(":")
    kind = kind.lower()
    if kind not in KINDS:
        raise AgentSpecError(
            f"unknown agent {kind!r} in {spec!r}; expected one of: {', '.join(PLAYER_KINDS)}"
        )
    options: dict[str, str] = {}
    if kind == "pretrained":
        name, *extra = rest.split(",")
        if not name.strip():
            raise AgentSpecError(f"{spec!r}: a pretrained spec needs a name, e.g. "
                                 f"pretrained:damii (shipped: {', '.join(pretrained_names())})")
        options["name"] = name.strip().lower()
        rest = ",".join(extra)
    if kind == "ckpt":
        path, rest = _checkpoint_path(spec, rest)
        options["path"] = path
    for item in filter(None, (t.strip() for t in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise AgentSpecError(f"{spec!r:.100}: option {item!r:.60} must be key=value")
        key = key.strip().lower()
        if key in ("path", "name") and key in options:
            raise AgentSpecError(f"{spec!r:.100}: the {key} comes right after '{kind}:', "
                                 f"not as an option")
        options[key] = value.strip()
    return kind, options


MAX_PATH_CHARS = 1024
"""The longest checkpoint path a spec may name (each folder or file name at most 255)."""


def _checkpoint_path(spec: str, rest: str) -> tuple[str, str]:
    """The path of ``ckpt:PATH[,options]`` and the options' text. A path that holds a
    comma is written in double quotes: ``ckpt:"runs/a,b/best.pt",depth=2``."""
    if rest.startswith('"'):
        path, quote, after = rest[1:].partition('"')
        if not quote or (after and not after.startswith(",")):
            raise AgentSpecError(f"{spec!r:.100}: a quoted checkpoint path needs its closing "
                                 f'quote, then options after a comma: ckpt:"a,b.pt",depth=2')
        rest = after[1:]
    else:
        path, _, rest = rest.partition(",")
    if not path.strip():
        raise AgentSpecError(f"{spec!r:.100}: a checkpoint spec needs a path, e.g. "
                             f"ckpt:runs/x/best.pt")
    bad = next((c for c in path if not c.isprintable()), None)
    if bad is not None:
        raise AgentSpecError(f"{spec!r:.100}: the checkpoint path holds the character "
                             f"{bad!r}; expected a file name")
    if len(path) > MAX_PATH_CHARS or any(len(part.encode()) > 255 for part in
                                         path.replace("\\", "/").split("/")):
        raise AgentSpecError(f"{spec!r:.60}...: the checkpoint path is too long (at most "
                             f"{MAX_PATH_CHARS} characters, 255 a name)")
    return path, rest


def _check_file(spec: str, path: str) -> None:
    """A clear error for a checkpoint path that is a folder or cannot be named."""
    try:
        is_dir, odd = Path(path).is_dir(), Path(path).exists() and not Path(path).is_file()
    except (OSError, ValueError) as exc:
        raise AgentSpecError(f"{spec!r:.100}: the checkpoint path cannot be used "
                             f"({type(exc).__name__})") from None
    if is_dir:
        raise AgentSpecError(f"{spec!r:.100}: {path!r:.80} is a folder, not a checkpoint "
                             f"file; name a .pt file in it")
    if odd:
        raise AgentSpecError(f"{spec!r:.100}: {path!r:.80} is not a regular file")


def _number(spec: str, key: str, value: str, cast: type, low: float,
            high: float = 1e9) -> Any:
    text = value.strip()
    if not text.isascii() or len(text) > 20:
        raise AgentSpecError(f"{spec!r:.100}: {key} must be a {cast.__name__} from {low:g} "
                             f"to {high:g}, got {value!r:.30}")
    try:
        x = cast(text)
    except ValueError:
        raise AgentSpecError(f"{spec!r:.100}: {key} must be a {cast.__name__}, "
                             f"got {value!r:.30}") from None
    if not low <= x <= high:  # also refuses nan and inf
        raise AgentSpecError(f"{spec!r:.100}: {key} must be a finite {cast.__name__} "
                             f">= {low:g} and <= {high:g}, got {value!r:.30}")
    return x


def make_agent(spec: str, variant: str = "damii", seed: int | None = None,
               **rule_options: Any) -> Agent:
    """Build the agent a spec names, for a variant (rule options as for ``Game``)."""
    kind, opts = parse_spec(spec)
    allowed = {"random": {"seed"}, "greedy": {"seed"},
               "alphabeta": {"depth", "time", "seed", "nodes", "tt", "pvs", "killers", "history",
                             "lmr", "asp", "tm", "legacy", "eval"},
               "ckpt": {"path"} | NETWORK_OPTIONS,
               "pretrained": {"name", "net"} | (NETWORK_OPTIONS if "net" in opts
                                                else SEARCH_OPTIONS)}[kind]
    unknown = set(opts) - allowed
    if unknown:
        hint = ""
        if kind == "pretrained" and "net" not in opts and unknown <= NETWORK_OPTIONS:
            hint = (f" ({', '.join(sorted(unknown))}: the network's options, after net=policy "
                    f"or net=search)")
        raise AgentSpecError(
            f"{spec!r}: unknown option(s) {', '.join(sorted(unknown))}; "
            f"{kind} takes: {', '.join(sorted(allowed - {'name'}))}{hint}"
        )
    if "seed" in opts:
        seed = _number(spec, "seed", opts["seed"], int, 0, 2**63 - 1)
    if kind == "random":
        from damii_agents.players.simple import RandomAgent

        return RandomAgent(seed=seed, name=spec)
    if kind == "greedy":
        from damii_agents.players.simple import GreedyAgent

        return GreedyAgent(seed=seed, name=spec)
    if kind == "pretrained" and "net" not in opts:
        return _strongest(spec, opts, variant, seed, rule_options)
    if kind == "alphabeta":
        from damii_agents.players.alphabeta import AlphaBetaAgent

        depth = (_number(spec, "depth", opts["depth"], int, 1, MAX_DEPTH)
                 if "depth" in opts else None)
        time_limit = (_number(spec, "time", opts["time"], float, 0.001, 86_400)
                      if "time" in opts else None)
        nodes = _number(spec, "nodes", opts["nodes"], int, 1) if "nodes" in opts else None
        tt_bits = _number(spec, "tt", opts["tt"], int, 4) if "tt" in opts else 18
        if tt_bits > 26:
            raise AgentSpecError(f"{spec!r}: tt (transposition table size, as a power of 2) "
                                 f"must be from 4 to 26, got {tt_bits}")
        if depth is None and time_limit is None and nodes is None:
            depth = 4
        search: dict[str, Any] = {}  # the search's parts (docs/SEARCH.md)
        for key, arg in (("pvs", "pvs"), ("killers", "killers"), ("history", "history"),
                         ("legacy", "legacy")):
            if key in opts:
                search[arg] = bool(_number(spec, key, opts[key], int, 0, 1))
        if "lmr" in opts:
            search["lmr"] = _number(spec, "lmr", opts["lmr"], int, 0, 3)
        if "asp" in opts:
            search["aspiration"] = _number(spec, "asp", opts["asp"], float, 0, 10_000)
        if "tm" in opts:
            if opts["tm"] not in ("new", "old"):
                raise AgentSpecError(f"{spec!r}: tm (time management) must be new or old, "
                                     f"got {opts['tm']!r:.30}")
            search["timing"] = opts["tm"]
        if "eval" in opts:
            if opts["eval"] not in ("handwritten", "learned") and \
                    not opts["eval"].endswith(".npz"):
                raise AgentSpecError(f"{spec!r}: eval must be handwritten, learned or a "
                                     f".npz weights file, got {opts['eval']!r:.30}")
            search["evaluation"] = opts["eval"]
        return AlphaBetaAgent(variant, depth=depth, time_limit=time_limit, max_nodes=nodes,
                              seed=seed, name=spec, tt_bits=tt_bits, **search, **rule_options)
    if kind == "pretrained":
        name = _pretrained_name(spec, opts, variant)
        net = opts.pop("net")
        if net not in PRETRAINED_NETS:
            raise AgentSpecError(f"{spec!r:.100}: net must be policy (the network's policy "
                                 f"alone) or search (its own search), got {net!r:.30}")
        searches = {"depth", "time", "nodes", "sims"} & set(opts)
        if net == "policy" and searches:
            raise AgentSpecError(f"{spec!r:.100}: net=policy plays the policy alone and takes "
                                 f"no {', '.join(sorted(searches))}; for the network's own "
                                 f"search say net=search")
        if net == "search" and not searches:
            raise AgentSpecError(f"{spec!r:.100}: net=search needs depth=, time=, nodes= or "
                                 f"sims=, e.g. pretrained:{name},net=search,depth=2")
        opts["path"] = str(pretrained_path(name))
    _check_file(spec, opts["path"])
    # needs torch (the train extra); the options' rules are NetworkOptions' own
    from damii_agents.players.neural import NetworkOptions, load_player

    numbers = {"sims": (int, 0, 100_000), "depth": (int, 1, MAX_DEPTH),
               "time": (float, 0.001, 86_400), "nodes": (int, 1, 1e9)}
    given = {key: _number(spec, key, opts[key], *bounds)
             for key, bounds in numbers.items() if key in opts}
    try:
        options = NetworkOptions(mode=opts.get("mode", "argmax"), mcts=opts.get("mcts"),
                                 repeat=opts.get("repeat", "avoid"), **given)
    except InvalidOptionError as exc:
        raise AgentSpecError(f"{spec!r}: {exc}") from None
    return load_player(opts["path"], options, device=opts.get("device", "cpu"), seed=seed,
                       name=spec)


def _pretrained_name(spec: str, opts: dict[str, str], variant: Any) -> str:
    """The shipped name of a ``pretrained:NAME`` spec (taken out of `opts`); an error
    naming the shipped ones, or the variant's own, when it is not for `variant`."""
    name = opts.pop("name")
    pretrained_path(name)  # an unknown name: says which are shipped
    if isinstance(variant, str) and name != variant.lower():
        raise AgentSpecError(f"{spec!r} plays {name}, not {variant}; for {variant} use "
                             f"pretrained:{variant}")
    return name


def _strongest(spec: str, opts: dict[str, str], variant: Any, seed: int | None,
               rule_options: dict[str, Any]) -> Agent:
    """``pretrained:NAME``: the alpha-beta with the variant's learned evaluation (the
    handwritten one where none is shipped or these rules' board differs), at
    :data:`PRETRAINED_TIME` seconds a move unless the spec says how long to search."""
    from damii_agents.players.alphabeta import learned_weights
    from damii_agents.search.evaluation import PatternWeightsError
    from damii_env.engine import Engine

    _pretrained_name(spec, opts, variant)
    try:
        learned_weights(Engine(variant, **rule_options))
        evaluation = "learned"
    except PatternWeightsError:
        evaluation = "handwritten"
    limits = {key: opts.pop(key) for key in ("depth", "time", "nodes") if key in opts}
    if not limits:
        limits["time"] = f"{PRETRAINED_TIME:g}"
    rest = "".join(f",{key}={value}" for key, value in {**limits, **opts}.items())
    agent = make_agent(f"alphabeta:eval={evaluation}{rest}", variant, seed=seed, **rule_options)
    agent.name = spec
    return agent
