"""Agents named by short text specs: ``random``, ``greedy``, ``alphabeta:depth=4``,
``alphabeta:time=0.5``, ``alphabeta:depth=2,tt=12`` (a 2**12-entry transposition
table), ``ckpt:path/to/file.pt``, ``ckpt:path/to/file.pt,depth=2``,
``ckpt:path/to/file.pt,repeat=allow`` (the policy alone without its rule that avoids
repetitions and other draws by rule while ahead),
``pretrained:damii`` (the strongest player shipped for a variant, from any directory and
in an installed wheel: the compiled alpha-beta with the variant's learned evaluation,
:data:`PRETRAINED_TIME` seconds a move; ``pretrained:damii,time=1`` or ``depth=8`` to
search longer; ``pretrained:damii,net=policy`` the shipped network's policy alone and
``pretrained:damii,net=search,depth=2`` its own minimax, which take ckpt's options),
``hub:"dame hub",time=0.1`` (an outside engine that speaks the Hub protocol,
:mod:`damii_agents.players.hub`, docs/HUB.md) (options after ``:``, comma-separated)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from damii_agents import deprecation
from damii_agents.search import patterns as EV
from damii_env.errors import InvalidOptionError
from damii_env.player import Player, PlayerSpecError

MAX_DEPTH = 30
"""The deepest alpha-beta or minimax search a spec may ask for (full moves)."""


KINDS = ("random", "greedy", "alphabeta", "ckpt", "hub", "pretrained")

PLAYER_KINDS = ("random", "greedy", "alphabeta:depth=N", "alphabeta:time=SECONDS",
                "ckpt:PATH", 'hub:"COMMAND"', "pretrained:NAME")
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
        raise PlayerSpecError(f"no pretrained network {name!r}; shipped: "
                             f"{', '.join(names) or 'none (the package has no weights)'}")
    return pretrained_folder() / f"{name}.pt"


MAX_PATH_CHARS = 1024
"""The longest checkpoint path a spec may name (each folder or file name at most 255)."""


def _head(spec: str, rest: str, what: str, example: str) -> tuple[str, str]:
    """The first item of a spec's text after ``kind:`` (a path, a command) and the options'
    text after it; an item that holds a comma or a space is written in double quotes."""
    if not rest.startswith('"'):
        head, _, rest = rest.partition(",")
        return head, rest
    head, quote, after = rest[1:].partition('"')
    if not quote or (after and not after.startswith(",")):
        raise PlayerSpecError(f"{spec!r:.100}: a quoted {what} needs its closing quote, then "
                              f"options after a comma: {example}")
    return head, after[1:]


def _checkpoint_path(spec: str, rest: str) -> tuple[str, str]:
    """The path of ``ckpt:PATH[,options]`` and the options' text. A path that holds a
    comma is written in double quotes: ``ckpt:"runs/a,b/best.pt",depth=2``."""
    path, rest = _head(spec, rest, "checkpoint path", 'ckpt:"a,b.pt",depth=2')
    if not path.strip():
        raise PlayerSpecError(f"{spec!r:.100}: a checkpoint spec needs a path, e.g. "
                             f"ckpt:runs/x/best.pt")
    bad = next((c for c in path if not c.isprintable()), None)
    if bad is not None:
        raise PlayerSpecError(f"{spec!r:.100}: the checkpoint path holds the character "
                             f"{bad!r}; expected a file name")
    if len(path) > MAX_PATH_CHARS or any(len(part.encode()) > 255 for part in
                                         path.replace("\\", "/").split("/")):
        raise PlayerSpecError(f"{spec!r:.60}...: the checkpoint path is too long (at most "
                             f"{MAX_PATH_CHARS} characters, 255 a name)")
    return path, rest


def _check_file(spec: str, path: str) -> None:
    """A clear error for a checkpoint path that is a folder or cannot be named."""
    try:
        is_dir, odd = Path(path).is_dir(), Path(path).exists() and not Path(path).is_file()
    except (OSError, ValueError) as exc:
        raise PlayerSpecError(f"{spec!r:.100}: the checkpoint path cannot be used "
                             f"({type(exc).__name__})") from None
    if is_dir:
        raise PlayerSpecError(f"{spec!r:.100}: {path!r:.80} is a folder, not a checkpoint "
                             f"file; name a .pt file in it")
    if odd:
        raise PlayerSpecError(f"{spec!r:.100}: {path!r:.80} is not a regular file")


def _number(spec: str, key: str, value: str, cast: type, low: float,
            high: float = 1e9) -> Any:
    text = value.strip()
    if not text.isascii() or len(text) > 20:
        raise PlayerSpecError(f"{spec!r:.100}: {key} must be a {cast.__name__} from {low:g} "
                              f"to {high:g}, got {value!r:.30}")
    try:
        x = cast(text)
    except ValueError:
        raise PlayerSpecError(f"{spec!r:.100}: {key} must be a {cast.__name__}, "
                              f"got {value!r:.30}") from None
    if not low <= x <= high:  # also refuses nan and inf
        raise PlayerSpecError(f"{spec!r:.100}: {key} must be a finite {cast.__name__} "
                              f">= {low:g} and <= {high:g}, got {value!r:.30}")
    return x


NUMBERS: dict[str, tuple[type, float, float]] = {
    "seed": (int, 0, 2**63 - 1), "depth": (int, 1, MAX_DEPTH), "time": (float, 0.001, 86_400),
    "nodes": (int, 1, 1e9), "tt": (int, 4, 1e9), "sims": (int, 0, 100_000)}
"""The numeric options of every kind: type and range."""


@dataclass(frozen=True)
class PlayerSpec:
    """A player spec, parsed and checked once (:meth:`parse`): its kind and its options
    with their values typed. It pickles, so it travels to worker processes as it is;
    :meth:`build` makes the player for a variant."""

    text: str
    """The spec as given: the player's name in tables, PDN and the page."""
    kind: str
    options: tuple[tuple[str, Any], ...] = ()
    """(key, value) pairs: numbers typed (:data:`NUMBERS`), the rest text; ``path`` of
    ``ckpt:``, ``name`` of ``pretrained:``."""

    @classmethod
    def parse(cls, spec: str | PlayerSpec) -> PlayerSpec:
        """Parse ``kind:key=value,key=value`` (``ckpt:PATH[,...]``, ``pretrained:NAME[,...]``)
        and check everything that does not depend on the variant; a clear
        :class:`~damii_env.player.PlayerSpecError` otherwise."""
        if isinstance(spec, PlayerSpec):
            return spec
        kind, raw = _split(spec)
        if kind == "hub":
            return cls(spec, kind, _hub_options(spec, raw))
        allowed = {"random": {"seed"}, "greedy": {"seed"},
                   "alphabeta": ALPHABETA_OPTIONS,
                   "ckpt": {"path"} | NETWORK_OPTIONS,
                   "pretrained": {"name", "net"} | (NETWORK_OPTIONS if "net" in raw
                                                    else SEARCH_OPTIONS)}[kind]
        unknown = set(raw) - allowed
        if unknown:
            hint = ""
            if kind == "pretrained" and "net" not in raw and unknown <= NETWORK_OPTIONS:
                hint = (f" ({', '.join(sorted(unknown))}: the network's options, after "
                        f"net=policy or net=search)")
            raise PlayerSpecError(
                f"{spec!r}: unknown option(s) {', '.join(sorted(unknown))}; "
                f"{kind} takes: {', '.join(sorted(allowed - {'name'}))}{hint}")
        values: dict[str, Any] = {key: (_number(spec, key, text, *NUMBERS[key])
                                        if key in NUMBERS else text)
                                  for key, text in raw.items()}
        if values.get("tt", 18) > 26:
            raise PlayerSpecError(f"{spec!r}: tt (transposition table size, as a power of 2) "
                                  f"must be from 4 to 26, got {values['tt']}")
        evaluation = values.get("eval")
        if evaluation is not None and evaluation not in EV.EVALUATIONS \
                and not evaluation.endswith(".npz"):
            raise PlayerSpecError(f"{spec!r}: eval must be handwritten, learned or a "
                                  f".npz weights file, got {evaluation!r:.30}")
        if kind == "pretrained":
            pretrained_path(values["name"])  # an unknown name: says which are shipped
            if "net" in values:
                _check_net(spec, values)
        return cls(spec, kind, tuple(values.items()))

    def get(self, key: str, default: Any = None) -> Any:
        """The value of an option, or `default` when the spec does not give it."""
        return dict(self.options).get(key, default)

    def __str__(self) -> str:
        return self.text

    def within(self, limits: Mapping[str, Mapping[str, float]]) -> PlayerSpec:
        """This spec, when none of its numbers is over its kind's cap in `limits`
        (``{"alphabeta": {"depth": 8, "time": 5}}``); else a clear error."""
        for key, cap in limits.get(self.kind, {}).items():
            value = self.get(key)
            if isinstance(value, (int, float)) and value > cap:
                raise PlayerSpecError(f"{self.text!r:.100}: this server plays {key} up to "
                                      f"{cap:g}")
        return self

    def with_path(self, path: Path) -> PlayerSpec:
        """A ``ckpt:`` spec that plays the file at `path` instead (its options kept): its
        text names that path, quoted (unquoted when the path holds a double quote, which
        a quoted path cannot; a path with both a quote and a comma cannot be named)."""
        rest = "".join(f",{key}={value}" for key, value in self.options if key != "path")
        text = str(path)
        if '"' in text and "," in text:
            raise PlayerSpecError(f"checkpoint {path.name!r:.80}: a file name with both a "
                                  f"double quote and a comma cannot be named in a spec; "
                                  f"rename the file")
        named = text if '"' in text else f'"{text}"'
        return PlayerSpec(f"ckpt:{named}{rest}", "ckpt",
                          (("path", str(path)),) + tuple(o for o in self.options
                                                         if o[0] != "path"))

    def build(self, variant: str = "damii", seed: int | None = None,
              **rule_options: Any) -> Player:
        """The player this spec names, for a variant (rule options as for ``Game``); a
        ``seed`` option overrides `seed`."""
        seed = self.get("seed", seed)
        if self.kind == "random":
            from damii_agents.players.simple import RandomAgent

            return RandomAgent(seed=seed, name=self.text)
        if self.kind == "greedy":
            from damii_agents.players.simple import GreedyAgent

            return GreedyAgent(seed=seed, name=self.text)
        if self.kind == "hub":  # the rule options cannot be sent: the engine plays its own
            from damii_agents.players.hub import LEVELS, HubPlayer

            values = dict(self.options)
            return HubPlayer(values.pop("command"), variant, name=self.text,
                             level={k: values.pop(k) for k in LEVELS if k in values},
                             timeout=values.pop("timeout", None), params=values)
        if self.kind == "alphabeta":
            return self._alphabeta(variant, seed, self.get("eval", "handwritten"),
                                   self.get("depth", 4), rule_options)
        if self.kind == "pretrained":
            _check_variant(self, variant)
            if self.get("net") is None:
                return self._alphabeta(variant, seed, _strongest_evaluation(variant,
                                                                            rule_options),
                                       None, rule_options, default_time=PRETRAINED_TIME)
            path = str(pretrained_path(self.get("name")))
        else:
            path = self.get("path")
        _check_file(self.text, path)
        # needs torch (the train extra); the options' rules are NetworkOptions' own
        from damii_agents.players.neural import NetworkOptions, load_player

        given = {key: self.get(key) for key in ("sims", "depth", "time", "nodes")
                 if self.get(key) is not None}
        try:
            options = NetworkOptions(mode=self.get("mode", "argmax"), mcts=self.get("mcts"),
                                     repeat=self.get("repeat", "avoid"), **given)
        except InvalidOptionError as exc:
            raise PlayerSpecError(f"{self.text!r}: {exc}") from None
        return load_player(path, options, device=self.get("device", "cpu"), seed=seed,
                           name=self.text)

    def _alphabeta(self, variant: str, seed: int | None, evaluation: str,
                   default_depth: int | None, rule_options: Mapping[str, Any],
                   default_time: float | None = None) -> Player:
        """The compiled alpha-beta of ``alphabeta:`` and ``pretrained:NAME``: to the
        spec's depth, time or nodes (else `default_depth`, or `default_time` seconds)."""
        from damii_agents.players.alphabeta import AlphaBetaAgent

        depth, time_limit, nodes = self.get("depth"), self.get("time"), self.get("nodes")
        if depth is None and time_limit is None and nodes is None:
            depth, time_limit = default_depth, default_time
        return AlphaBetaAgent(variant, depth=depth, time_limit=time_limit, max_nodes=nodes,
                              seed=seed, name=self.text, tt_bits=self.get("tt", 18),
                              evaluation=evaluation, **rule_options)


ALPHABETA_OPTIONS = {"depth", "time", "seed", "nodes", "tt", "eval"}
"""The options of ``alphabeta:``: the shipped search to a depth, a time or a node budget,
with an evaluation (``eval=handwritten|learned|FILE.npz``) and a table size (``tt``)."""


def _split(spec: Any) -> tuple[str, dict[str, str]]:
    """Split ``kind:key=value,key=value`` into kind and options (the text of each)."""
    if not isinstance(spec, str) or not spec.strip():
        raise PlayerSpecError(f"empty agent spec; expected one of: {', '.join(PLAYER_KINDS)}")
    kind, _, rest = spec.strip().partition(":")
    kind = kind.lower()
    if kind not in KINDS:
        raise PlayerSpecError(
            f"unknown agent {kind!r} in {spec!r}; expected one of: {', '.join(PLAYER_KINDS)}"
        )
    options: dict[str, str] = {}
    if kind == "pretrained":
        name, *extra = rest.split(",")
        if not name.strip():
            raise PlayerSpecError(f"{spec!r}: a pretrained spec needs a name, e.g. "
                                  f"pretrained:damii (shipped: {', '.join(pretrained_names())})")
        options["name"] = name.strip().lower()
        rest = ",".join(extra)
    if kind == "ckpt":
        path, rest = _checkpoint_path(spec, rest)
        options["path"] = path
    if kind == "hub":
        options["command"], rest = _hub_command(spec, rest)
    for item in filter(None, (t.strip() for t in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise PlayerSpecError(f"{spec!r:.100}: option {item!r:.60} must be key=value")
        key = key.strip().lower()
        if key in ("path", "name", "command") and key in options:
            raise PlayerSpecError(f"{spec!r:.100}: the {key} comes right after '{kind}:', "
                                  f"not as an option")
        options[key] = value.strip()
    return kind, options


HUB_REFUSED = "DAMII_NO_HUB_COMMANDS"
"""An environment variable: when set (``damii serve`` sets it for itself and its worker
processes), ``hub:`` specs that give a command are refused, so that no command is run
from a request; only the engines the operator named (:data:`HUB_ENGINES`) are played."""
HUB_ENGINES = "DAMII_HUB_ENGINES"
"""An environment variable: the engines an operator named (``damii serve --engine
NAME="COMMAND"``), as JSON ``{"NAME": "COMMAND"}``; with :data:`HUB_REFUSED` set,
``hub:NAME`` plays the engine of that name and nothing else is run."""


def named_engines() -> dict[str, str]:
    """The engines an operator named (:data:`HUB_ENGINES`): name -> command."""
    text = os.environ.get(HUB_ENGINES, "")
    try:
        table = json.loads(text) if text else {}
    except json.JSONDecodeError:
        raise PlayerSpecError(f"{HUB_ENGINES} must be a JSON object of engine names and "
                              f"commands, got {text!r:.80}") from None
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in table.items()):
        raise PlayerSpecError(f"{HUB_ENGINES} must be a JSON object of engine names and "
                              f"commands, got {text!r:.80}")
    return table
HUB_NUMBERS: dict[str, tuple[type, float, float]] = {
    "time": (float, 0.001, 86_400), "depth": (int, 1, 999), "nodes": (int, 1, 1e15),
    "timeout": (float, 0.01, 86_400)}
"""The options of ``hub:`` that the player reads itself (time, depth, nodes as ``level``;
timeout: the seconds a move may take before the engine loses); the others are engine
parameters."""


def _hub_command(spec: str, rest: str) -> tuple[str, str]:
    """The command of ``hub:COMMAND[,options]`` and the options' text; a command with a
    space or a comma is written in double quotes: ``hub:"dame hub",time=0.1``."""
    name, _, after = rest.partition(",")
    engines = named_engines()
    if name.strip() in engines:  # an engine the operator named (damii serve --engine)
        return engines[name.strip()], after
    if os.environ.get(HUB_REFUSED):
        offered = ", ".join(f"hub:{n}" for n in engines)
        others = ", ".join(k for k in PLAYER_KINDS if not k.startswith("hub"))
        raise PlayerSpecError(f"{spec!r:.100}: hub: specs (outside engines) are not "
                              f"accepted here, but for the engines named at start "
                              f"({offered or 'none'}); expected one of: {others}")
    command, rest = _head(spec, rest, "engine command", 'hub:"dame hub",time=0.1')
    if not command.strip():
        raise PlayerSpecError(f"{spec!r:.100}: a hub spec needs the engine's command, e.g. "
                              f'hub:"dame hub",time=0.1')
    bad = next((c for c in command if not c.isprintable()), None)
    if bad is not None or len(command) > MAX_PATH_CHARS:
        raise PlayerSpecError(f"{spec!r:.100}: the engine command holds the character "
                              f"{bad!r} or is over {MAX_PATH_CHARS} characters")
    return command.strip(), rest


def _hub_options(spec: str, raw: Mapping[str, str]) -> tuple[tuple[str, Any], ...]:
    """The options of a ``hub:`` spec: the command, time/depth/nodes/timeout typed, the
    rest engine parameters (names of letters, digits, ``-`` and ``_``)."""
    values: list[tuple[str, Any]] = [("command", raw["command"])]
    levels = [key for key in ("time", "depth", "nodes") if key in raw]
    if len(levels) > 1:
        raise PlayerSpecError(f"{spec!r:.100}: give one of time=, depth= or nodes= (the "
                              f"engine's level), not {' and '.join(levels)}")
    for key, text in raw.items():
        if key == "command":
            continue
        if key in HUB_NUMBERS:
            values.append((key, _number(spec, key, text, *HUB_NUMBERS[key])))
            continue
        if not key or not all(c.isascii() and (c.isalnum() or c in "-_") for c in key):
            raise PlayerSpecError(f"{spec!r:.100}: engine parameter {key!r:.40} must be "
                                  f"letters, digits, - or _")
        if not text.isprintable():
            raise PlayerSpecError(f"{spec!r:.100}: the value of {key} must be printable")
        values.append((key, text))
    return tuple(values)


def _check_net(spec: str, values: dict[str, Any]) -> None:
    """``pretrained:NAME,net=...``: policy (no search options) or search (one needed)."""
    net, name = values["net"], values["name"]
    if net not in PRETRAINED_NETS:
        raise PlayerSpecError(f"{spec!r:.100}: net must be policy (the network's policy "
                              f"alone) or search (its own search), got {net!r:.30}")
    searches = {"depth", "time", "nodes", "sims"} & set(values)
    if net == "policy" and searches:
        raise PlayerSpecError(f"{spec!r:.100}: net=policy plays the policy alone and takes "
                              f"no {', '.join(sorted(searches))}; for the network's own "
                              f"search say net=search")
    if net == "search" and not searches:
        raise PlayerSpecError(f"{spec!r:.100}: net=search needs depth=, time=, nodes= or "
                              f"sims=, e.g. pretrained:{name},net=search,depth=2")


def _check_variant(spec: PlayerSpec, variant: Any) -> None:
    """A ``pretrained:NAME`` spec plays its own variant only."""
    name = spec.get("name")
    if isinstance(variant, str) and name != variant.lower():
        raise PlayerSpecError(f"{spec.text!r} plays {name}, not {variant}; for {variant} use "
                              f"pretrained:{variant}")


def _strongest_evaluation(variant: Any, rule_options: Mapping[str, Any]) -> str:
    """``pretrained:NAME``'s evaluation: the variant's learned tables, or the handwritten
    one where none is shipped or these rules' board differs."""
    from damii_env.rules import make_rules

    try:
        EV.learned_weights(make_rules(variant, **rule_options))
    except EV.PatternWeightsError:
        return "handwritten"
    return "learned"


def _old_make_agent(spec: str, variant: str = "damii", seed: int | None = None,
                    **rule_options: Any) -> Player:
    """0.1.0's ``make_agent``: the player a spec names."""
    return PlayerSpec.parse(spec).build(variant, seed, **rule_options)


def _old_parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """0.1.0's ``parse_spec``: a spec's kind and the text of each of its options."""
    return _split(spec)


def deprecated_name(module: str, name: str,
                    names: tuple[str, ...] = tuple(deprecation.DEPRECATED)) -> Any:
    """The object behind a name removed in 0.2.0 (one of `names`, those `module` had), with
    a DeprecationWarning naming its replacement; AttributeError for any other name (a
    module's ``__getattr__``)."""
    if name not in names:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    deprecation.warn(module, name, stacklevel=4)
    return {"make_agent": _old_make_agent, "AgentSpecError": PlayerSpecError,
            "parse_spec": _old_parse_spec, "Agent": Player}[name]


def __getattr__(name: str) -> Any:
    return deprecated_name(__name__, name, ("make_agent", "AgentSpecError", "parse_spec"))
