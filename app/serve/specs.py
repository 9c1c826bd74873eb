"""The players ``damii serve`` offers and accepts: the specs on offer
(:data:`BASE_SPECS`, :func:`pretrained_specs`, the checkpoints of the weights folder), the
server's limits on searches (:data:`SERVER_LIMITS`) and the :class:`SpecChecker` that
holds every spec a page sends to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from damii_agents.registry import PlayerSpec, player_kinds, pretrained_folder, pretrained_names
from damii_env.errors import DamiiError, InvalidOptionError
from damii_env.player import PlayerSpecError, make_player, spec_kind
from damii_env.rules import PRESETS

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
        if not self.weights_dir.is_dir():
            return []
        return sorted(str(p.relative_to(self.weights_dir))
                      for p in self.weights_dir.rglob("*.pt")
                      if p.is_file() and p.resolve().is_relative_to(self.weights_dir))

    def public(self, text: str) -> str:
        """`text` fit to show: no server paths (the weights folder by its name, the
        working directory as ``.``), short."""
        hidden = [(self.weights_dir, self.weights_dir.name)]
        if self.workdir != self.workdir.parent:  # never the file system's root
            hidden.append((self.workdir, "."))
        for folder, name in hidden:
            text = text.replace(str(folder), name)
        return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "..."

    def resolve(self, spec: str, variant: str | None = None) -> str:
        """The spec to run (a checkpoint path made absolute), or a clear error (an empty
        spec is told the kinds of player of `variant`). Specs are kept as text (games and
        their seats survive a restart in the database); the worker that plays one parses
        it where it builds the player."""
        kinds = ", ".join(server_kinds(variant, tuple(self.engines)))
        if not isinstance(spec, str) or not spec.strip():
            raise PlayerSpecError(f"empty player spec; expected one of: {kinds}")
        spec = spec.strip()
        if spec_kind(spec) == "hub":  # an outside engine: only one the operator named
            name = spec.partition(":")[2].partition(",")[0].strip()
            if name not in self.engines:
                raise PlayerSpecError(f"{spec!r:.100}: hub: specs are not accepted by this "
                                      f"server but for the engines named at its start; "
                                      f"expected one of: {kinds}")
            extra = [key for key, _ in PlayerSpec.parse(spec).options
                     if key not in HUB_OPTIONS]
            if extra:
                raise PlayerSpecError(f"{spec!r:.100}: this server sets no engine parameter "
                                      f"({', '.join(extra)}); hub:{name} takes time=, "
                                      f"depth=, nodes= or timeout=")
        if spec_kind(spec) not in SERVER_LIMITS and spec_kind(spec) != "ckpt":
            return spec
        parsed = PlayerSpec.parse(spec).within(SERVER_LIMITS)
        if parsed.kind != "ckpt":
            return spec
        return parsed.with_path(self._checkpoint(parsed.get("path"))).text

    def _checkpoint(self, path_text: str) -> Path:
        offered = ", ".join(self.checkpoints()) or "none"
        where = (f"checkpoints come only from the weights folder {self.weights_dir.name}/ "
                 f"(offered: {offered}); e.g. ckpt:damii.pt")
        path = Path(path_text.strip())
        candidates = [path] if path.is_absolute() else \
            [self.weights_dir / path, self.weights_dir.parent / path]
        for candidate in candidates:
            try:
                resolved = candidate.resolve()
                inside = resolved.is_relative_to(self.weights_dir)
                if inside and resolved.is_dir():
                    raise PlayerSpecError(f"checkpoint {path_text!r:.80} is a folder, not a "
                                          f"checkpoint file; {where}")
                if inside and resolved.is_file():
                    return resolved
            except (OSError, ValueError) as exc:
                if isinstance(exc, DamiiError):
                    raise
                raise PlayerSpecError(f"checkpoint name {path_text!r:.80} cannot be used; "
                                      f"{where}") from None
        raise PlayerSpecError(f"checkpoint {path_text!r:.80} refused: {where}")

    def check(self, spec: str, variant: str) -> str:
        """Resolve a spec and build its player once, so that bad options are reported."""
        resolved = self.resolve(spec, variant)
        plays = _build(resolved, variant)
        if plays is not None and plays != variant:
            raise PlayerSpecError(f"{spec.strip()!r:.100} plays {plays}, not {variant}")
        return resolved


@lru_cache(maxsize=64)
def _build(spec: str, variant: str) -> str | None:
    """Build the player once; the variant it was made for (None: any)."""
    player = make_player(spec, variant)
    rules = getattr(getattr(player, "engine", None), "rules", None)
    return None if rules is None else rules.name
