"""The players ``damii serve`` offers and accepts: the specs on offer
(:data:`BASE_SPECS`, :func:`pretrained_specs`, the checkpoints of the weights folder), the
server's limits on searches (:data:`SERVER_LIMITS`) and the :class:`SpecChecker` that
holds every spec a page sends to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from damii_agents.match.game_loop import Clock
from damii_agents.registry import (
    HUB_NUMBERS,
    PlayerSpec,
    player_kinds,
    pretrained_folder,
    pretrained_names,
)
from damii_agents.search.patterns import EVALUATIONS
from damii_app.serve.classroom import MatchRules
from damii_env.errors import DamiiError, InvalidOptionError
from damii_env.player import PlayerSpecError, spec_kind
from damii_env.rules import PRESETS, make_rules

HUMAN = "human"
"""The seat of a person (in a game's ``white`` and ``black``)."""
BASE_SPECS = ("random", "greedy", "alphabeta:depth=2", "alphabeta:depth=4",
              "alphabeta:time=0.5")
SERVER_LIMITS: dict[str, dict[str, float]] = {
    "alphabeta": {"depth": 10, "time": 5.0, "nodes": 2_000_000, "tt": 20},
    "ckpt": {"depth": 4, "time": 5.0, "nodes": 200_000, "sims": 800},
    "pretrained": {"depth": 4, "time": 5.0, "nodes": 200_000, "sims": 800, "tt": 20},
    "hub": {"depth": 30, "time": 5.0, "nodes": 50_000_000, "timeout": 10.0},
}
"""The largest searches the server plays (a spec asking for more is refused): one job
must finish well within :data:`~damii_app.serve.jobs.JOB_DEADLINE`, and a transposition
table of 2**20 entries keeps a worker's memory small."""
MAX_MESSAGE_CHARS = 400
QUICK = {"depth": 4, "time": 0.5, "nodes": 50_000}
"""A search within one of these bounds is quick (:func:`is_quick`); network searches are
quick to ``depth`` 2 or ``sims`` 50."""
LIGHT = {"depth": 2, "nodes": 5_000}
"""A search within one of these bounds is light (:func:`is_light`): milliseconds."""


CLOCK_RANGE = (0.1, 86_400.0)
"""The seconds a move a game's clock may give (a number outside is refused: ``inf``,
``1e-300``)."""
CLOCKS = ("none", "blitz", "standard", "sci-damath", "sci-damath:touch")
"""The clocks the page offers: none, Damii's blitz (15 s a move) and standard (60 s), and
Sci-Damath's classroom match (:class:`~damii_app.serve.classroom.MatchRules`), with touch
move or without."""


def parse_clock(spec: Any, variant: str, **options: Any) -> Clock | MatchRules:
    """A game's clock: a classroom match (``sci-damath...``, Sci-Damath only) or a
    per-move :class:`~damii_agents.match.game_loop.Clock` (``standard``, ``blitz``,
    ``none``, seconds)."""
    match = MatchRules.parse(spec) if isinstance(spec, str) else None
    if match is None:
        if isinstance(spec, str) and spec.strip() != spec:
            raise InvalidOptionError(f"clock {spec!r:.40}: no spaces around it, please")
        if isinstance(spec, str) and "_" in spec:
            raise InvalidOptionError(f"clock {spec!r:.40}: write the seconds as digits "
                                     f"(e.g. 30)")
        clock = Clock.parse(spec, variant, **options)
        if clock.seconds is not None and not CLOCK_RANGE[0] <= clock.seconds <= CLOCK_RANGE[1]:
            raise InvalidOptionError(f"clock {spec!r:.40}: a move's seconds must be from "
                                     f"{CLOCK_RANGE[0]:g} to {CLOCK_RANGE[1]:g} (a day)")
        return clock
    rules = make_rules(variant, **options)
    if rules.scoring != "damath":
        raise InvalidOptionError(f"the clock {spec!r:.60} is Sci-Damath's classroom match; "
                                 f"choose the variant damath (got {rules.name})")
    return match


def pretrained_specs(variant: str) -> tuple[str, ...]:
    """The shipped players of a variant as the page offers them, named as in the help and
    the README: the strongest (the alpha-beta with the learned evaluation, 0.1 s a move),
    the network's policy alone, the network's own search."""
    if variant not in pretrained_names():
        return ()
    return (f"pretrained:{variant}", f"pretrained:{variant},net=policy",
            f"pretrained:{variant},net=search,depth=2")


def server_kinds(variant: str | None = None,
                 engines: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The kinds of player a page may name, as the help names them: a person, the
    registry's :func:`~damii_agents.registry.player_kinds` less ``hub:"COMMAND"`` (an
    outside engine's command is never run from a request), and ``hub:NAME`` for each
    engine the operator named."""
    return (HUMAN, *(k for k in player_kinds(variant) if not k.startswith("hub:")),
            *(f"hub:{name}" for name in engines))


HUB_OPTIONS = ("command", "time", "depth", "nodes", "timeout")
"""What a page may give a named engine: its level and the seconds it may take (no engine
parameters: those are the operator's)."""


def check_variant(variant: str) -> str:
    """The variant named (its preset's name), or a clear error."""
    name = variant.strip().lower()
    if name not in PRESETS:
        raise InvalidOptionError(f"unknown variant {variant!r}; expected one of: "
                                 f"{', '.join(PRESETS)}")
    return name


def default_weights_dir() -> Path:
    """The folder of the shipped weights, found through the package
    (:func:`damii_agents.registry.pretrained_folder`: ``agents/weights`` in a source
    checkout, ``damii_agents/weights`` in an installed wheel)."""
    return pretrained_folder()


class SpecChecker:
    """Checks player specs: each is parsed once; a ``ckpt:`` path must name a file in the
    weights folder and is rebuilt into the spec to run (no option can replace it); the
    server's :data:`SERVER_LIMITS` hold; the player must play the game's variant."""

    def __init__(self, weights_dir: Path, engines: Mapping[str, str] | None = None) -> None:
        self.weights_dir = weights_dir.resolve()
        self.engines = dict(engines or {})
        """The outside engines the operator named (name -> command): ``hub:NAME``."""
        self.workdir = Path.cwd()
        """The server's working directory, shown as ``.`` in messages."""

    def checkpoints(self) -> list[str]:
        """The checkpoint files offered (names relative to the weights folder; links that
        lead out of it are not offered)."""
        return self.files("*.pt")

    def files(self, pattern: str) -> list[str]:
        """The files of the weights folder that match `pattern` (names relative to it;
        links that lead out of it left out)."""
        if not self.weights_dir.is_dir():
            return []
        return sorted(str(p.relative_to(self.weights_dir))
                      for p in self.weights_dir.rglob(pattern)
                      if p.is_file() and p.resolve().is_relative_to(self.weights_dir))

    def public(self, text: str) -> str:
        """`text` fit to show: no server paths (the weights folder by its name, the
        working directory as ``.``), no engine command (an engine by its ``hub:NAME``),
        short."""
        hidden = [(self.weights_dir, self.weights_dir.name)]
        if self.workdir != self.workdir.parent:  # never the file system's root
            hidden.append((self.workdir, "."))
        for folder, name in hidden:
            text = text.replace(str(folder), name)
        for name, command in sorted(self.engines.items(), key=lambda kv: -len(kv[1])):
            if command.strip():  # the operator's command line: the engine by its name
                text = text.replace(repr(command), f"hub:{name}").replace(command,
                                                                          f"hub:{name}")
                program = command.split()[0]
                text = text.replace(repr(program), "its program")
        return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "..."

    def _evaluation(self, parsed: PlayerSpec) -> PlayerSpec:
        """An ``eval=`` file made absolute: only a ``.npz`` file inside the weights folder,
        named like a checkpoint; one message whether a refused path exists or not."""
        name = str(parsed.get("eval"))
        offered = ", ".join(self.files("*.npz")) or "none"
        where = (f"evaluation files come only from the weights folder "
                 f"{self.weights_dir.name}/ (offered: {offered}); e.g. eval=learned")
        path = self._inside(name, where, "evaluation")
        if path is None or path.suffix != ".npz":
            raise PlayerSpecError(f"evaluation {name!r:.80} refused: {where}")
        return with_options(parsed, eval=str(path))

    def resolve(self, spec: str, variant: str | None = None) -> PlayerSpec:
        """The spec to run, parsed once (:meth:`PlayerSpec.parse`; a ``hub:NAME`` by
        :meth:`_hub`) and checked: the server's limits, a checkpoint or evaluation path
        made absolute, a time cap on a heavy search (:func:`timed`); else a clear error
        (an empty spec is told the kinds of player of `variant`). The server carries the
        value to its workers; its :attr:`~PlayerSpec.text` is only shown and stored (a
        spec read back from the database comes through here again)."""
        kinds = ", ".join(server_kinds(variant, tuple(self.engines)))
        if not isinstance(spec, str) or not spec.strip():
            raise PlayerSpecError(f"empty player spec; expected one of: {kinds}")
        spec = spec.strip()
        if spec_kind(spec) == "hub":  # an outside engine: only one the operator named
            return self._hub(spec, kinds).within(SERVER_LIMITS)
        parsed = PlayerSpec.parse(spec)
        if parsed.kind not in SERVER_LIMITS and parsed.kind != "ckpt":
            return parsed
        parsed.within(SERVER_LIMITS)
        device = parsed.get("device")
        if device is not None and str(device).strip().lower() != "cpu":
            raise PlayerSpecError(f"{spec!r:.100}: this server runs networks on its CPU "
                                  f"only: device=cpu or no device, got device={device!r:.20}")
        if parsed.kind == "alphabeta" and parsed.get("eval") not in (None, *EVALUATIONS):
            parsed = self._evaluation(parsed)
        if parsed.kind == "ckpt":
            parsed = with_options(parsed, path=str(self._checkpoint(parsed.get("path"))))
        return timed(parsed)

    def _hub(self, spec: str, kinds: str) -> PlayerSpec:
        """``hub:NAME[,time=|depth=|nodes=|timeout=]``: the engine the operator named
        `NAME` (its command from :attr:`engines`, given to this checker: nothing is read
        from the environment), at the level the page asks; no engine parameter, no
        command of the page's own."""
        name, _, rest = spec.partition(":")[2].partition(",")
        name = name.strip()
        if name not in self.engines:
            raise PlayerSpecError(f"{spec!r:.100}: hub: specs are not accepted by this "
                                  f"server but for the engines named at its start; "
                                  f"expected one of: {kinds}")
        options: dict[str, Any] = {"command": self.engines[name]}
        extra = []
        for item in filter(None, (t.strip() for t in rest.split(","))):
            key, eq, value = item.partition("=")
            key = key.strip().lower()
            if not eq:
                raise PlayerSpecError(f"{spec!r:.100}: option {item!r:.60} must be key=value")
            if key not in HUB_OPTIONS or key == "command":
                extra.append(key)
                continue
            options[key] = _hub_number(spec, key, value)
        if extra:
            raise PlayerSpecError(f"{spec!r:.100}: this server sets no engine parameter "
                                  f"({', '.join(extra)}); hub:{name} takes time=, "
                                  f"depth=, nodes= or timeout=")
        levels = [key for key in ("time", "depth", "nodes") if key in options]
        if len(levels) > 1:
            raise PlayerSpecError(f"{spec!r:.100}: give one of time=, depth= or nodes= (the "
                                  f"engine's level), not {' and '.join(levels)}")
        return PlayerSpec(spec, "hub", tuple(options.items()))

    def _inside(self, path_text: str, where: str, what: str) -> Path | None:
        """The file `path_text` names inside the weights folder (relative to it, or to
        its parent as ``weights/NAME``), else None; a folder is said to be one."""
        path = Path(path_text.strip())
        candidates = [path] if path.is_absolute() else \
            [self.weights_dir / path, self.weights_dir.parent / path]
        for candidate in candidates:
            try:
                resolved = candidate.resolve()
                inside = resolved.is_relative_to(self.weights_dir)
                if inside and resolved.is_dir():
                    raise PlayerSpecError(f"{what} {path_text!r:.80} is a folder, not "
                                          f"{'an' if what[0] in 'aeiou' else 'a'} {what} "
                                          f"file; {where}")
                if inside and resolved.is_file():
                    return resolved
            except (OSError, ValueError) as exc:
                if isinstance(exc, DamiiError):
                    raise
                raise PlayerSpecError(f"{what} name {path_text!r:.80} cannot be used; "
                                      f"{where}") from None
        return None

    def _checkpoint(self, path_text: str) -> Path:
        offered = ", ".join(self.checkpoints()) or "none"
        where = (f"checkpoints come only from the weights folder {self.weights_dir.name}/ "
                 f"(offered: {offered}); e.g. ckpt:damii.pt")
        found = self._inside(path_text, where, "checkpoint")
        if found is None:
            raise PlayerSpecError(f"checkpoint {path_text!r:.80} refused: {where}")
        return found

    def check(self, spec: str, variant: str) -> PlayerSpec:
        """Resolve a spec (:meth:`resolve`: its one parse) and build its player once, so
        that bad options and a player of another variant are refused at the request."""
        resolved = self.resolve(spec, variant)
        plays = _build(resolved, variant)
        if plays is not None and plays != variant:
            raise PlayerSpecError(f"{spec.strip()!r:.100} plays {plays}, not {variant}")
        return resolved


def _hub_number(spec: str, key: str, value: str) -> float | int:
    """A level of ``hub:NAME`` typed and in range, as the registry's
    :data:`~damii_agents.registry.HUB_NUMBERS` say (``nan``, ``inf`` refused)."""
    cast, low, high = HUB_NUMBERS[key]
    text = value.strip()
    try:
        number = cast(text) if text.isascii() and len(text) <= 20 else None
    except ValueError:
        number = None
    if number is None or not low <= number <= high:
        raise PlayerSpecError(f"{spec!r:.100}: {key} must be a finite {cast.__name__} "
                              f">= {low:g} and <= {high:g}, got {value!r:.30}")
    return number


def _value_text(value: Any) -> str:
    """An option's value as a spec writes it (``5`` for 5.0)."""
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def with_options(spec: PlayerSpec, **changes: Any) -> PlayerSpec:
    """`spec` with `changes` (options whose values are typed already) set: a new value,
    not parsed again, whose text says them (a new option added at the end of the spec's
    own text; a changed one written in its place). Not for ``hub:``, whose text names the
    operator's engine, not its command."""
    options = dict(spec.options)
    replaced = changes.keys() & options.keys()
    options.update(changes)
    if spec.kind == "hub":
        raise ValueError("a hub: spec's options are not changed by the server")
    if not replaced:
        text = spec.text + ("" if spec.text.endswith(":") else
                            "," if ":" in spec.text else ":")
        text += ",".join(f"{key}={_value_text(value)}" for key, value in changes.items())
    else:
        heads = {"pretrained": "name", "ckpt": "path"}
        head = spec.kind
        if spec.kind in heads:
            first = str(options[heads[spec.kind]])
            if spec.kind == "ckpt" and '"' in first and "," in first:
                raise PlayerSpecError(f"checkpoint {Path(first).name!r:.80}: a file name with "
                                      f"both a double quote and a comma cannot be named in a "
                                      f"spec; rename the file")
            head += ":" + (first if spec.kind == "pretrained" or '"' in first
                           else f'"{first}"')
        rest = [f"{key}={_value_text(value)}" for key, value in options.items()
                if key != heads.get(spec.kind)]
        text = head + ("," if spec.kind in heads else ":") * bool(rest) + ",".join(rest)
    return PlayerSpec(text, spec.kind, tuple(options.items()))


def timed(spec: PlayerSpec) -> PlayerSpec:
    """`spec` with the server's time cap (:data:`SERVER_LIMITS`) added to a search that
    has a depth or node budget but no ``time``: every heavy search then stops in time,
    whatever its other options (a deep search without its enhancements took over 100 s a
    move; quick ones, :func:`is_quick`, are left as they are). A spec with no budget at
    all keeps its kind's default (depth 4, or 0.1 s); a tree search (``sims``) is bounded
    by its cap and the job's deadline."""
    cap = SERVER_LIMITS.get(spec.kind, {}).get("time")
    if cap is None or spec.kind == "hub" or spec.get("time") is not None or is_quick(spec):
        return spec
    if spec.get("sims") or (spec.get("depth") is None and spec.get("nodes") is None):
        return spec
    if spec.kind == "pretrained" and spec.get("net") == "policy":
        return spec
    return with_options(spec, time=cap)


def is_quick(parsed: PlayerSpec | None) -> bool:
    """Whether a spec's search is small (:data:`QUICK`): the pool keeps a worker free for
    quick searches, which heavy ones never take (:class:`~damii_app.serve.jobs.FairQueue`)."""
    if parsed is None:
        return True
    if parsed.kind in ("random", "greedy"):
        return True
    if parsed.kind == "hub":
        return False
    budget = {key: parsed.get(key) for key in ("depth", "time", "nodes", "sims")}
    network = parsed.kind == "ckpt" or parsed.get("net") is not None
    if network:
        if budget["sims"]:
            return budget["sims"] <= 50
        if all(v is None for v in budget.values()):
            return True  # the policy alone
        return (budget["depth"] or 99) <= 2 or (budget["time"] or 99) <= QUICK["time"]
    if all(v is None for v in budget.values()):
        return True  # the default: depth 4, or 0.1 s
    return any(budget[key] is not None and budget[key] <= limit
               for key, limit in QUICK.items())


def is_light(parsed: PlayerSpec | None) -> bool:
    """Whether a spec's answer takes milliseconds (:data:`LIGHT`; ``random``, ``greedy``,
    a network's policy alone or at depth 1): the pool runs such tasks before all others,
    so a light reply to a person keeps its target whatever else runs."""
    if parsed is None:
        return True
    if parsed.kind in ("random", "greedy"):
        return True
    if parsed.kind == "hub" or parsed.get("sims"):
        return False
    depth, nodes = parsed.get("depth"), parsed.get("nodes")
    if parsed.kind == "ckpt" or parsed.get("net") is not None:
        if depth is None and nodes is None and parsed.get("time") is None:
            return True  # the policy alone
        return depth is not None and depth <= 1
    return (depth is not None and depth <= LIGHT["depth"]) or (
        nodes is not None and nodes <= LIGHT["nodes"])


def check_name(name: str | None, default: str = "guest") -> str:
    """A person's name for the ladder: its spaces trimmed, not blank, and not the name of
    a kind of agent (``random``, ``alphabeta``...); else a clear error."""
    if name is None:
        return default
    text = " ".join(name.split())
    if not text:
        raise InvalidOptionError("a name needs a letter or a digit; got only spaces")
    agents = {k.partition(":")[0].lower() for k in server_kinds()} - {HUMAN}
    if text.lower() in agents or text.lower().partition(":")[0] in agents:
        raise InvalidOptionError(f"{text!r} is the name of an agent; choose another name "
                                 f"(agents are named {', '.join(sorted(agents))})")
    return text


@lru_cache(maxsize=64)
def _build(spec: PlayerSpec, variant: str) -> str | None:
    """Build the player once; the variant it was made for (None: any)."""
    player = spec.build(variant)
    rules = getattr(getattr(player, "engine", None), "rules", None)
    return None if rules is None else rules.name
