"""Training configuration: one dataclass, loaded strictly from YAML.

Every field documents itself. :func:`load_config` rejects an unknown key, a value of
the wrong type or an impossible value with a message that names the key and what is
allowed; ``--set key=value`` overrides are applied the same way.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import reprlib
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, get_type_hints

import yaml

from damii_agents.registry import PlayerSpec
from damii_env.errors import DamiiError
from damii_env.observation import planes_for
from damii_env.rules import PRESETS, Rules, make_rules


class ConfigError(DamiiError):
    """A training config with an unknown key, a wrong type or an impossible value."""


ALGORITHMS = ("ppo", "alphazero", "tdleaf", "patterns")
"""The trainers, by config ``algorithm`` (:data:`damii_training.trainers.TRAINERS`)."""
PATTERN_RULE_OPTIONS: dict[str, Any] = {}
"""The rule options of an ``algorithm: patterns`` config that gives none: no turn limit
(its self-play cuts games at ``patterns.turn_limit`` itself)."""


MAX_ALIASES = 20
"""YAML aliases (``*name``) a config may use: a "billion laughs" file is refused."""
MAX_CONFIG_BYTES = 1 << 20
"""Largest config file read."""
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 80, 80, 40


def _show(value: Any) -> str:
    """A value for an error message, bounded in length however large the value is."""
    return _REPR.repr(value)


def unknown_keys_text(unknown: list[str], names: list[str]) -> str:
    """The unknown keys of a config, each with the allowed key it is nearest to
    (``gmaes (did you mean games?)``)."""
    def named(key: str) -> str:
        close = difflib.get_close_matches(key, names, 1, 0.6)
        return _show(key)[1:-1] + (f" (did you mean {close[0]}?)" if close else "")

    return ", ".join(named(k) for k in unknown)


class _DuplicateKey(yaml.YAMLError):
    """A mapping that gives one key twice (YAML would keep the last silently)."""


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base`: its keys may be
                continue  # given again here, as YAML's merge allows
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the mapping's own check says so
                continue
            if duplicate:
                raise _DuplicateKey(f"the key {_show(key)} is given twice (line "
                                    f"{key_node.start_mark.line + 1}); give each key once")
        return super().construct_mapping(node, deep)


def _yaml(text: str, source: str) -> Any:
    """Parse YAML safely: bounded aliases, no key given twice, errors as
    :class:`ConfigError`."""
    try:
        aliases = sum(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, yaml.SafeLoader))
        if aliases > MAX_ALIASES:
            raise ConfigError(f"{source}: {aliases} YAML aliases; at most {MAX_ALIASES} are "
                              f"allowed (write the values out)")
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader
    except _DuplicateKey as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {' '.join(str(exc).split())[:300]}") \
            from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to read; a config holds plain keys, "
                          f"numbers, text and short lists") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise ConfigError(f"{source}: a value cannot be read ({str(exc)[:120]}); numbers "
                          f"in a config have at most a few digits") from None


@dataclass
class PatternSettings:
    """The ``patterns:`` section of an ``algorithm: patterns`` config: the learned
    evaluation of the compiled alpha-beta (:mod:`damii_training.patterns`). The run's
    ``name``, ``variant``, ``rule_options`` and ``seed`` are the config's own keys."""

    games: int = 10000
    """Self-play games per round."""
    rounds: int = 1
    """Rounds of self-play and fitting (the run's iterations); rounds after the first play
    with the weights fitted in the round before (their positions are added to the earlier
    ones)."""
    depth: int = 2
    """Full moves each side's alpha-beta searches in self-play."""
    max_nodes: int = 20000
    """Node budget of one self-play search."""
    random_plies: list[int] = field(default_factory=lambda: [2, 12])
    """Random plies that open each game: drawn uniformly from this range [low, high]."""
    random_move_rate: float = 0.03
    """Share of later moves played at random (for variety; their positions are kept)."""
    epochs: int = 6
    """Passes of the fit over all positions so far, each round."""
    learning_rate: float = 0.02
    """Step size of the fit's stochastic gradient descent (per position, in logits)."""
    l2: float = 1e-6
    """L2 penalty per weight (in logits squared), per position."""
    pattern_lr: float = 0.0
    """Learning rate of the region tables, relative to the other weights' (there are many
    more of them, each seen less often); 0 leaves the tables out. Off by default: fitted
    on game results alone from a few hundred thousand positions they lost in play; with
    `value_weight: 0.5` and about 7 million positions (0.3) they won, and the
    International and Damii configs ship them (docs/SEARCH.md, "Region tables")."""
    pattern_l2: float = 0.01
    """L2 pull of the pattern weights (rare patterns stay near 0)."""
    king_regions: bool = False
    """With region tables (`pattern_lr` > 0): also a king table a region, indexed by every
    square's state in base 5 (5^8 = 390,625 weights a region), read where the region holds
    a king and added to its men's weight: the evaluation sees the kings where they stand
    among the men (docs/SEARCH.md, "King regions"). Fitted with `pattern_lr` and
    `pattern_l2`."""
    holdout: float = 0.1
    """Share of the games held out to measure the fit."""
    turn_limit: int = 300
    """Plies after which a self-play game is cut (a draw for the labels, unless
    `adjudicate` says otherwise)."""
    adjudicate: int = 0
    """A game drawn (by a rule or cut at `turn_limit`) with one side at least this many
    pieces up at its end (men and kings alike) is labelled a win for that side; 0: off.
    For Triestine, where most shallow self-play games end drawn with one side several
    kings up that a depth-2 search cannot convert (men cannot take kings there)."""
    value_weight: float = 0.0
    """Share of each position's label taken from the self-play search's own value there
    (TD-leaf style), the rest from the game's result: the value becomes a probability
    through a logistic scale fitted to the round's results (the first round's values
    are the handwritten evaluation's, in other units). 0: results alone."""
    phases: int = 1
    """1: one set of piece-square and whole-board weights for the whole game; 2: an
    opening and an ending set, blended by the pieces on the board (a tapered evaluation,
    as the strong engines' is)."""
    eval_games: int = 200
    """Games of the learned against the handwritten evaluation after each round."""
    eval_depth: int = 3
    """Full moves both sides search in that evaluation."""


_PATTERN_CHECKS: dict[str, tuple[Any, str]] = {
    "games": (lambda v: 10 <= v <= 10_000_000, "from 10 to 10,000,000"),
    "rounds": (lambda v: 1 <= v <= 20, "from 1 to 20"),
    "depth": (lambda v: 1 <= v <= 6, "from 1 to 6"),
    "max_nodes": (lambda v: 100 <= v <= 10_000_000, "from 100 to 10,000,000"),
    "random_plies": (lambda v: len(v) == 2 and 0 <= v[0] <= v[1] <= 100,
                     "[low, high] with 0 <= low <= high <= 100"),
    "random_move_rate": (lambda v: 0 <= v <= 0.5, "from 0 to 0.5"),
    "epochs": (lambda v: 1 <= v <= 200, "from 1 to 200"),
    "learning_rate": (lambda v: 1e-6 <= v <= 10, "from 1e-6 to 10"),
    "l2": (lambda v: 0 <= v <= 1, "from 0 to 1"),
    "pattern_lr": (lambda v: 0 <= v <= 10, "from 0 to 10"),
    "pattern_l2": (lambda v: 0 <= v <= 10, "from 0 to 10"),
    "king_regions": (lambda v: True, "true or false"),
    "holdout": (lambda v: 0.01 <= v <= 0.5, "from 0.01 to 0.5"),
    "turn_limit": (lambda v: 20 <= v <= 2000, "from 20 to 2000"),
    "adjudicate": (lambda v: 0 <= v <= 40, "from 0 to 40"),
    "value_weight": (lambda v: 0 <= v <= 1, "from 0 to 1"),
    "phases": (lambda v: 1 <= v <= 2, "1 or 2"),
    "eval_games": (lambda v: 0 <= v <= 100_000, "from 0 to 100,000"),
    "eval_depth": (lambda v: 1 <= v <= 8, "from 1 to 8"),
}


@dataclass
class TrainConfig:
    """A self-play training run."""

    name: str = "run"
    """Name of the run; the run directory is ``runs/<name>-<timestamp>`` by default."""
    variant: str = "damii"
    """Rule preset: damii, international, triestine or damath."""
    rule_options: dict[str, Any] = field(default_factory=lambda: {"turn_limit": 300})
    """Rule options for the variant (as for ``damii_env.Game``); a turn limit keeps games
    finite (``algorithm: patterns``: none by default, its games are cut at
    ``patterns.turn_limit``)."""
    algorithm: str = "ppo"
    """Trainer: ``ppo`` (self-play PPO with action masking), ``alphazero`` (PUCT search),
    ``tdleaf`` (minimax search, TD-leaf values and the search's policy) or ``patterns``
    (the learned evaluation of the compiled alpha-beta: the ``patterns`` section; of the
    other keys it reads ``name``, ``variant``, ``rule_options``, ``seed`` and
    ``checkpoint_every``, counted in rounds)."""
    seed: int = 0
    """Seeds numpy, torch and the games."""
    device: str = "cpu"
    """``cpu``, or ``cuda`` when asked and present."""
    total_steps: int = 200_000
    """Training samples (hops played by the learner) to collect in all."""
    num_envs: int = 128
    """Games played at once by the vectorized engine."""
    rollout_steps: int = 32
    """Engine steps per rollout; a rollout has up to num_envs * rollout_steps samples."""
    trunk: str = "conv"
    """Network trunk: ``conv`` (residual convnet) or ``mlp`` (a perceptron over the planes
    at the playable squares: far less arithmetic per position)."""
    channels: int = 64
    """Width of the trunk (convolution channels, or the perceptron's hidden units)."""
    blocks: int = 4
    """Residual blocks in the convnet (0: the stem convolution alone), or hidden layers
    after the first in the perceptron."""
    policy_head: str = "dense"
    """``dense`` (one linear layer to every action) or ``factorised`` (per-square logits
    for each direction and distance: far fewer weights)."""
    policy_trunk: str = "shared"
    """``shared`` (the policy head reads the trunk) or ``conv`` / ``mlp``: the policy gets
    a tower of its own, ``policy_channels`` wide and ``policy_blocks`` deep, and the trunk
    serves the value alone (a search's leaves stay cheap while the policy sees more)."""
    policy_channels: int = 32
    """Width of the policy's own tower (with ``policy_trunk`` conv or mlp)."""
    policy_blocks: int = 3
    """Depth of the policy's own tower, counted as ``blocks``."""
    policy_features: str = "none"
    """``none`` or ``capture_points`` (Sci-Damath, with ``policy_trunk: conv``): the
    policy's tower also reads planes of each one-jump capture and its points, computed from
    the observation, which its convolutions could not multiply out of the chip values."""
    value_prior: float = 0.0
    """> 0: the value is tanh(head + a learned linear prior over the planes' sums), the
    prior started at this weight times the material balance (Sci-Damath: the totals
    lead); 0: a plain tanh head."""
    torch_threads: int = 0
    """Threads torch may use (0: torch's default, all cores); 1 when runs share a machine."""
    learning_rate: float = 3e-4
    """Adam learning rate."""
    epochs: int = 3
    """Passes over each rollout."""
    minibatch_size: int = 1024
    """Samples per gradient step."""
    clip: float = 0.2
    """PPO ratio clipping."""
    value_coef: float = 0.5
    """Weight of the value loss."""
    entropy_coef: float = 0.01
    """Weight of the entropy bonus."""
    max_grad_norm: float = 0.5
    """Gradient norm clipping."""
    pool_prob: float = 0.2
    """Share of games in which one seat is played by an earlier snapshot."""
    pool_size: int = 5
    """Earlier snapshots kept in the opponent pool."""
    snapshot_every: int = 10
    """Iterations between snapshots added to the pool."""
    alphabeta_prob: float = 0.0
    """PPO: share of games in which one seat is played by the alpha-beta agent (its
    hops are not trained on); it punishes tactical mistakes self-play misses."""
    alphabeta_depth: int = 1
    """PPO: search depth (full moves) of that alpha-beta opponent."""
    seat_opponent_spec: str = ""
    """PPO: the player spec of that opponent seat instead (any spec: ``greedy``,
    ``alphabeta:depth=2``, ``ckpt:agents/weights/damii.pt``); empty: ``alphabeta`` at
    ``alphabeta_depth`` with a small transposition table."""
    alphabeta_imitation: float = 0.0
    """PPO: weight of a cross-entropy loss that teaches the policy the alpha-beta seat's
    hops in its games (0: those hops are only an opponent's; > 0: also a teacher's)."""
    score_shaping: float = 0.0
    """PPO, Sci-Damath: the value targets also count the change of the mover's point
    lead from the sample to the game's end, times this, in units of the largest chip
    value (potential-based shaping: the winner is still decided by the rules)."""
    material_shaping: float = 0.0
    """PPO: the value targets also count the change of the mover's material balance (men
    1, kings 3 when they fly, else 2) from the sample on, times this (potential-based: a
    piece lost is felt at once; the winner is still decided by the rules)."""
    gae_lambda: float = 1.0
    """PPO: GAE lambda along each player's hops (1: Monte-Carlo targets to the game's end;
    lower leans on the value head, less variance, quicker credit for a blunder)."""
    init_weights: str = ""
    """Start from the network of this checkpoint or weights file (same variant, rules
    and network shape; a shape that differs only in the policy's fields, ``policy_head``,
    ``policy_trunk``, ``policy_channels``, ``policy_blocks``, ``policy_features``, takes the
    value's weights and
    starts the policy fresh); empty: a freshly initialised network."""
    simulations: int = 16
    """AlphaZero: search simulations per move."""
    mcts: str = "puct"
    """AlphaZero: the search, ``puct`` (visit counts as policy targets, Dirichlet noise
    at the root) or ``gumbel`` (Gumbel AlphaZero: sequential halving at the root, the
    improved policy as targets; it keeps improving with 2-16 simulations)."""
    gumbel_considered: int = 16
    """AlphaZero with ``mcts: gumbel``: root candidates drawn by Gumbel-top-k."""
    replay_size: int = 50_000
    """AlphaZero and TD-leaf: samples kept in the replay buffer."""
    search_depth: int = 1
    """TD-leaf: depth (full moves, plus capture quiescence) of the minimax that plays."""
    search_nodes: int = 4000
    """TD-leaf: node budget of that search per game and move (past it, nodes are leaves)."""
    td_lambda: float = 0.7
    """TD-leaf: lambda of the value targets (0: the search value, 1: the game's result)."""
    temperature: float = 0.1
    """TD-leaf: softmax temperature over the searched hop values (policy targets and the
    opening plies' sampling)."""
    policy_temperature: float = 0.0
    """TD-leaf: temperature of the policy targets alone (0: ``temperature``). Lower than
    ``temperature`` where the searched values of a position's hops lie close together,
    so that the distilled policy learns which hop the search plays, while the openings
    are still sampled at ``temperature``."""
    explore_plies: int = 8
    """TD-leaf: plies at the start of each game whose hop is sampled (then the best)."""
    teacher: str = ""
    """TD-leaf: the spec of a player that picks single hops (an alpha-beta player) whose
    hops are every decision's policy target and, past the explore plies (uniformly random
    there), the hop self-play plays, instead of the network's own search:
    ``alphabeta:depth=4,eval=learned,tt=14`` distils the compiled alpha-beta with the
    variant's learned evaluation into the policy. The decisions then carry no search
    value, so the value targets are the games' results (``td_lambda`` 1); ``value_coef:
    0`` leaves the value head as ``init_weights`` had it. Empty: the network's search
    (``search_depth``) teaches."""
    policy_play: float = 0.0
    """TD-leaf: share of the games (the first ``round(policy_play * num_envs)`` rows) whose
    hops after the explore plies are the policy network's own first choice instead of the
    search's, both sides; the search still gives every decision's targets. The policy then
    learns in the positions its own play leads to (DAgger), not only in the search's."""
    opponents: list[str] = field(default_factory=list)
    """TD-leaf: player specs (``random``, ``greedy``, any agent) that play one seat of the
    last ``round(opponent_play * num_envs)`` games, from their first ply to their last:
    the game in row ``r`` against ``opponents[r % len(opponents)]``, which plays white
    where ``r // len(opponents)`` is even, else black. Their hops are neither trained on
    nor searched; the other seat's decisions teach as usual, in the positions that
    opponent leads to (with ``policy_play``: the policy's own play against it)."""
    opponent_play: float = 0.0
    """TD-leaf: share of the games whose one seat an ``opponents`` player takes."""
    eval_depth: int = 0
    """In-run and final evaluations: the learner searches this deep (0: the policy
    alone, as ``ckpt:PATH``; D: as ``ckpt:PATH,depth=D``)."""
    checkpoint_every: int = 10
    """Iterations between checkpoints (the last one is always written)."""
    eval_every: int = 20
    """Iterations between evaluations (0: only at the end)."""
    eval_games: int = 20
    """Games per opponent at each evaluation (seats alternated)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])
    """Player specs to evaluate against."""
    final_eval_games: int = 40
    """Games per opponent in the final evaluation."""
    final_eval_opponents: list[str] = field(
        default_factory=lambda: ["random", "greedy", "alphabeta:depth=1"])
    """Player specs of the final evaluation table."""
    ray_address: str = ""
    """Self-play on a Ray cluster (``damii train --ray [ADDRESS]``; docs/DISTRIBUTED.md):
    ``auto`` (the cluster ``ray start`` runs), ``HOST:PORT`` of its head node, or ``local``
    (a Ray instance the run starts); empty: the local trainer. Needs the distributed extra."""
    ray_actors: int = 2
    """With ``ray_address``: self-play actors, one CPU each (fewer, said so, when the
    cluster has fewer free CPUs)."""
    ray_weights_every: int = 1
    """With ``ray_address``: learner updates between the weights sent to the actors."""
    ray_max_staleness: int = 4
    """With ``ray_address``: a batch played by weights more than this many updates behind
    the learner's is dropped and not counted."""
    patterns: PatternSettings = field(default_factory=PatternSettings)
    """``algorithm: patterns``: the learned evaluation's keys (:class:`PatternSettings`)."""

    def seat_opponent(self) -> str:
        """The player spec of the PPO opponent seat (``seat_opponent_spec`` or alpha-beta)."""
        return self.seat_opponent_spec or f"alphabeta:depth={self.alphabeta_depth},tt=12"

    @cached_property
    def rules(self) -> Rules:
        """The run's rule set, made once from `variant` and `rule_options` (for the engine
        and every check that needs the rules); raises a DamiiError for a bad option."""
        return make_rules(self.variant, **self.rule_options)

def _host_port(text: str) -> bool:
    """Whether `text` reads as ``HOST:PORT``."""
    host, sep, port = text.rpartition(":")
    return bool(sep and host.strip() and port.isdigit() and 0 < int(port) < 65536)


_CHECKS: dict[str, tuple[Any, str]] = {
    "total_steps": (lambda v: 1 <= v <= 10**12, ">= 1 and <= 10**12"),
    "seed": (lambda v: 0 <= v < 2**32, "from 0 to 2**32 - 1"),
    "name": (lambda v: 0 < len(v) <= 100 and v not in (".", "..")
             and not set(v) & set("/\\:\0"), "1 to 100 characters without / \\ or :"),
    "num_envs": (lambda v: 1 <= v <= 65536, "from 1 to 65536"),
    "rollout_steps": (lambda v: 1 <= v <= 100_000, ">= 1 and <= 100,000"),
    "channels": (lambda v: 1 <= v <= 1024, "from 1 to 1024"),
    "blocks": (lambda v: 0 <= v <= 64, "from 0 to 64"),
    "learning_rate": (lambda v: 0 < v < 1, "between 0 and 1"),
    "epochs": (lambda v: 1 <= v <= 1000, ">= 1 and <= 1000"),
    "minibatch_size": (lambda v: 1 <= v <= 1 << 20, ">= 1 and <= 1,048,576"),
    "clip": (lambda v: 0 < v < 1, "between 0 and 1"),
    "value_coef": (lambda v: 0 <= v <= 100, "from 0 to 100"),
    "entropy_coef": (lambda v: 0 <= v <= 10, "from 0 to 10"),
    "max_grad_norm": (lambda v: 0 < v <= 1000, "above 0 and at most 1000"),
    "pool_prob": (lambda v: 0 <= v <= 1, "from 0 to 1"),
    "pool_size": (lambda v: 0 <= v <= 1000, ">= 0 and <= 1000"),
    "snapshot_every": (lambda v: 1 <= v <= 10**9, ">= 1 and <= 10**9"),
    "alphabeta_prob": (lambda v: 0 <= v <= 1, "from 0 to 1"),
    "alphabeta_depth": (lambda v: 1 <= v <= 8, "from 1 to 8"),
    "alphabeta_imitation": (lambda v: 0 <= v <= 100, "from 0 to 100"),
    "score_shaping": (lambda v: 0 <= v <= 100, "from 0 to 100"),
    "material_shaping": (lambda v: 0 <= v <= 100, "from 0 to 100"),
    "gae_lambda": (lambda v: 0 <= v <= 1, "from 0 to 1"),
    "simulations": (lambda v: 1 <= v <= 100_000, ">= 1 and <= 100,000"),
    "mcts": (lambda v: v in ("puct", "gumbel"), "puct or gumbel"),
    "gumbel_considered": (lambda v: 1 <= v <= 64, "from 1 to 64"),
    "replay_size": (lambda v: 1 <= v <= 100_000_000, ">= 1 and <= 100,000,000"),
    "checkpoint_every": (lambda v: 1 <= v <= 10**9, ">= 1 and <= 10**9"),
    "eval_every": (lambda v: 0 <= v <= 10**9, ">= 0 and <= 10**9"),
    "eval_games": (lambda v: 0 <= v <= 100_000, ">= 0 and <= 100,000"),
    "final_eval_games": (lambda v: 0 <= v <= 100_000, ">= 0 and <= 100,000"),
    "algorithm": (lambda v: v in ALGORITHMS, "ppo, alphazero, tdleaf or patterns"),
    "policy_head": (lambda v: v in ("dense", "factorised"), "dense or factorised"),
    "trunk": (lambda v: v in ("conv", "mlp"), "conv or mlp"),
    "policy_trunk": (lambda v: v in ("shared", "conv", "mlp"), "shared, conv or mlp"),
    "policy_channels": (lambda v: 1 <= v <= 1024, "from 1 to 1024"),
    "policy_blocks": (lambda v: 0 <= v <= 64, "from 0 to 64"),
    "policy_features": (lambda v: v in ("none", "capture_points"), "none or capture_points"),
    "value_prior": (lambda v: 0 <= v <= 10, "from 0 to 10"),
    "torch_threads": (lambda v: 0 <= v <= 256, "from 0 to 256"),
    "search_depth": (lambda v: 1 <= v <= 4, "from 1 to 4"),
    "search_nodes": (lambda v: 1 <= v <= 10**7, "from 1 to 10,000,000"),
    "td_lambda": (lambda v: 0 <= v <= 1, "from 0 to 1"),
    "temperature": (lambda v: 0 < v <= 10, "above 0 and at most 10"),
    "policy_temperature": (lambda v: 0 <= v <= 10, "from 0 (same as temperature) to 10"),
    "explore_plies": (lambda v: 0 <= v <= 1000, "from 0 to 1000"),
    "policy_play": (lambda v: 0 <= v <= 1, "from 0 to 1"),
    "opponent_play": (lambda v: 0 <= v <= 1, "from 0 to 1"),
    "eval_depth": (lambda v: 0 <= v <= 4, "from 0 to 4"),
    "variant": (lambda v: v in PRESETS, " or ".join(PRESETS)),
    "device": (lambda v: v == "cpu" or v.startswith("cuda"), "cpu or cuda[:N]"),
    "ray_address": (lambda v: v in ("", "auto", "local") or _host_port(v),
                    "empty (the local trainer), auto, local or HOST:PORT"),
    "ray_actors": (lambda v: 1 <= v <= 4096, "from 1 to 4096"),
    "ray_weights_every": (lambda v: 1 <= v <= 10**6, "from 1 to 1,000,000"),
    "ray_max_staleness": (lambda v: 0 <= v <= 10**6, "from 0 to 1,000,000"),
}


def _type_ok(value: Any, annotation: Any) -> bool:
    origin = getattr(annotation, "__origin__", None)
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is list:
        (item,) = annotation.__args__
        return isinstance(value, list) and all(_type_ok(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    return isinstance(value, annotation)


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", str(annotation)).replace("typing.", "")


def config_from_dict(data: dict[str, Any], source: str = "config") -> TrainConfig:
    """Build and check a config from a mapping; raises :class:`ConfigError`."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: expected a mapping of keys to values, got {type(data).__name__}"
        )
    hints = get_type_hints(TrainConfig)
    names = [f.name for f in dataclasses.fields(TrainConfig)]
    not_names = [k for k in data if not isinstance(k, str)]
    if not_names:
        raise ConfigError(f"{source}: keys must be names such as total_steps, got "
                          f"{', '.join(_show(k) for k in not_names[:5])}")
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ConfigError(
            f"{source}: unknown key(s) {unknown_keys_text(unknown, names)}; allowed keys: "
            f"{', '.join(names)}"
        )
    data = dict(data)
    section = data.pop("patterns", None)
    if data.get("algorithm") == "patterns":
        data.setdefault("rule_options", dict(PATTERN_RULE_OPTIONS))
    if isinstance(data.get("rule_options"), dict) and \
            not all(isinstance(k, str) for k in data["rule_options"]):
        raise ConfigError(f"{source}: rule_options: keys must be names such as turn_limit, "
                          f"got {_show(data['rule_options'])}")
    for key, value in data.items():
        if not _type_ok(value, hints[key]):
            raise ConfigError(
                f"{source}: {key} must be of type {_type_name(hints[key])}, got {_show(value)}"
            )
        if hints[key] is float and not math.isfinite(value):
            raise ConfigError(f"{source}: {key} must be a finite number, got {_show(value)}")
        if key in _CHECKS and not _CHECKS[key][0](value):
            raise ConfigError(f"{source}: {key} must be {_CHECKS[key][1]}, got {_show(value)}")
    config = TrainConfig(**{k: (float(v) if hints[k] is float else v) for k, v in data.items()})
    _set_pattern_section(config, section, source)
    try:
        rules = config.rules
    except DamiiError as exc:
        raise ConfigError(f"{source}: rule_options: {exc}") from exc
    if rules.men_rows < 1:
        raise ConfigError(f"{source}: rule_options: men_rows must be at least 1 for training "
                          f"(0 starts every game on an empty board), got {rules.men_rows}")
    memory = _memory_problem(config, rules)
    if memory:
        raise ConfigError(f"{source}: {memory}")
    if config.pool_prob + config.alphabeta_prob > 1:
        raise ConfigError(f"{source}: pool_prob + alphabeta_prob must be at most 1, got "
                          f"{config.pool_prob} + {config.alphabeta_prob}")
    if config.ray_address and config.ray_max_staleness < config.ray_weights_every:
        raise ConfigError(f"{source}: ray_max_staleness ({config.ray_max_staleness}) must be at "
                          f"least ray_weights_every ({config.ray_weights_every}), or every "
                          f"batch played between two weight updates would be dropped")
    from damii_agents.network import (  # torch: imported only when checked
        policy_features_problem,
        policy_tower_kind,
    )

    if policy_tower_kind(config.trunk, config.policy_trunk) == "mlp" \
            and config.policy_head != "dense":
        raise ConfigError(f"{source}: policy_head {config.policy_head!r} needs a conv trunk "
                          f"under the policy; with an mlp one use policy_head: dense (or "
                          f"policy_trunk: conv)")
    problem = policy_features_problem(config.policy_features, config.policy_trunk,
                                      len(planes_for(rules)))
    if problem:
        raise ConfigError(f"{source}: {problem}")
    if config.teacher:
        _check_teacher(config, source)
    _check_opponents(config, source)
    for key in ("eval_opponents", "final_eval_opponents", "seat_opponent_spec", "opponents"):
        specs = getattr(config, key)
        for spec in [specs] if isinstance(specs, str) else specs:
            if spec == "" and key == "seat_opponent_spec":
                continue
            try:
                parsed = PlayerSpec.parse(spec)
                if parsed.kind not in ("ckpt", "hub"):  # files and engines: at the start
                    parsed.build(config.variant, **config.rule_options)  # every option
            except DamiiError as exc:
                raise ConfigError(f"{source}: {key}: {exc}") from exc
    if config.score_shaping and rules.scoring == "none":
        raise ConfigError(f"{source}: score_shaping is for scoring variants (damath), "
                          f"not {config.variant}; leave it at 0")
    if config.init_weights and not Path(config.init_weights).is_file():
        raise ConfigError(f"{source}: init_weights {config.init_weights!r} is not a file; "
                          f"give a checkpoint (.pt) of the same variant, or leave it empty")
    return config


def _set_pattern_section(config: TrainConfig, section: Any, source: str) -> None:
    """Check and set the config's ``patterns`` section (None: not given), which belongs to
    ``algorithm: patterns``, a trainer without Ray."""
    if section is not None:
        if config.algorithm != "patterns":
            raise ConfigError(f"{source}: patterns is the section of algorithm: patterns, not "
                              f"{config.algorithm}'s; leave it out")
        config.patterns = _pattern_section(section, source)
    if config.algorithm == "patterns" and config.ray_address:
        raise ConfigError(f"{source}: algorithm patterns plays its self-play in compiled code "
                          f"in this process; ray_address is for ppo, alphazero and tdleaf")


def _pattern_section(data: Any, source: str) -> PatternSettings:
    """The checked ``patterns:`` section of a config; raises :class:`ConfigError` naming
    the key (``patterns.games``)."""
    hints = get_type_hints(PatternSettings)
    names = [f.name for f in dataclasses.fields(PatternSettings)]
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: patterns must be a mapping of its keys ({', '.join(names)})"
                          f", got {_show(data)}")
    unknown = sorted(str(k) for k in set(data) - set(names))
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) in patterns: "
                          f"{unknown_keys_text(unknown, names)}; allowed keys: {', '.join(names)}")
    for key, value in data.items():
        if not _type_ok(value, hints[key]):
            raise ConfigError(f"{source}: patterns.{key} must be of type "
                              f"{_type_name(hints[key])}, got {_show(value)}")
        if hints[key] is float and not math.isfinite(value):
            raise ConfigError(f"{source}: patterns.{key} must be a finite number, got "
                              f"{_show(value)}")
        check, allowed = _PATTERN_CHECKS[key]
        if not check(value):
            raise ConfigError(f"{source}: patterns.{key} must be {allowed}, got {_show(value)}")
    return PatternSettings(**{k: (float(v) if hints[k] is float else v)
                              for k, v in data.items()})


def _check_teacher(config: TrainConfig, source: str) -> None:
    """The ``teacher`` is a TD-leaf key and a player that picks a single hop in any
    position, mid-capture too (the alpha-beta players): explore plies play random hops
    where a whole-move player's planned capture would no longer fit."""
    if config.algorithm != "tdleaf":
        raise ConfigError(f"{source}: teacher is a TD-leaf key (algorithm: tdleaf), not "
                          f"{config.algorithm}'s; leave it empty")
    try:
        agent = PlayerSpec.parse(config.teacher).build(config.variant, **config.rule_options)
    except DamiiError as exc:
        raise ConfigError(f"{source}: teacher: {exc}") from exc
    if not callable(getattr(agent, "hop", None)):
        raise ConfigError(f"{source}: teacher {_show(config.teacher)} plays whole moves; a "
                          f"teacher must pick a hop in any position, mid-capture too: an "
                          f"alpha-beta player (alphabeta:depth=4,eval=learned or "
                          f"pretrained:{config.variant})")


def _check_opponents(config: TrainConfig, source: str) -> None:
    """``opponents`` and ``opponent_play`` are TD-leaf keys and come together."""
    if (config.opponents or config.opponent_play) and config.algorithm != "tdleaf":
        raise ConfigError(f"{source}: opponents and opponent_play are TD-leaf keys (algorithm: "
                          f"tdleaf), not {config.algorithm}'s; for PPO use seat_opponent_spec")
    if config.opponent_play and not config.opponents:
        raise ConfigError(f"{source}: opponent_play {config.opponent_play} needs opponents, "
                          f"the players of those seats (such as [random, greedy])")
    if config.opponents and not round(config.opponent_play * config.num_envs):
        raise ConfigError(f"{source}: opponents {config.opponents} play no game: "
                          f"opponent_play x num_envs = {config.opponent_play} x "
                          f"{config.num_envs} rounds to 0; raise opponent_play")


def _physical_memory() -> int | None:
    """Bytes of memory of this machine (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _memory_problem(config: TrainConfig, rules: Any) -> str:
    """Why the run's sample buffers cannot fit in this machine's memory ('' when they
    can): PPO keeps one iteration's ``num_envs x rollout_steps`` observations (float32),
    the replay trainers ``replay_size`` of them (float16). A lower bound: masks, policy
    targets and the network come on top."""
    c, n = len(planes_for(rules)), rules.board_size
    if config.algorithm == "ppo":
        samples, per_sample, what = config.num_envs * config.rollout_steps, 4 * c * n * n, \
            f"num_envs x rollout_steps = {config.num_envs * config.rollout_steps:,} samples"
    else:
        samples, per_sample, what = config.replay_size, 2 * c * n * n, \
            f"replay_size = {config.replay_size:,} samples"
    need, have = samples * per_sample, _physical_memory()
    if have is None or need <= have // 2:
        return ""
    return (f"{what} need at least {need / 2**30:,.1f} GiB for their observations alone, "
            f"more than half of this machine's {have / 2**30:,.1f} GiB; make it smaller")


def check_player_specs(config: TrainConfig, source: str = "config") -> None:
    """Load every checkpoint player a run will meet (``ckpt:`` specs in the evaluation
    opponents and the PPO seat), so that a missing or foreign file stops the run before
    training starts; the other specs were built by :func:`config_from_dict`. Raises
    :class:`ConfigError`."""
    variant = config.rules.name
    for key in ("eval_opponents", "final_eval_opponents", "seat_opponent_spec"):
        specs = getattr(config, key)
        for spec in [specs] if isinstance(specs, str) else specs:
            if not spec or not spec.strip().lower().startswith("ckpt:"):
                continue
            try:
                agent = PlayerSpec.parse(spec).build(config.variant, **config.rule_options)
            except DamiiError as exc:
                raise ConfigError(f"{source}: {key}: {exc}") from exc
            rules = getattr(getattr(agent, "engine", None), "rules", None)
            if rules is not None and rules.name != variant:
                raise ConfigError(f"{source}: {key}: {_show(spec)} plays {rules.name}, not "
                                  f"{variant}; give a checkpoint trained for {variant}")


def parse_override(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as YAML (``lr=1e-3``, ``eval_opponents=[random]``)."""
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise ConfigError(f"--set {text!r}: expected key=value")
    key = key.strip()
    parsed = _yaml(value, f"--set {key}") if value.strip() else ""
    if "." in key:  # rule_options.turn_limit=200
        head, sub = key.split(".", 1)
        return head, {sub: parsed}
    return key, parsed


SHIPPED_CONFIGS = "damii_training.configs"
"""The package that holds the shipped configs (the folder ``configs/`` of a clone)."""


def shipped_configs() -> tuple[str, ...]:
    """The names of the configs shipped with the package, for ``damii train NAME``
    (``damii_quick``, ``damii_tdleaf``, ...)."""
    folder = resources.files(SHIPPED_CONFIGS)
    return tuple(sorted(entry.name[:-len(".yaml")] for entry in folder.iterdir()
                        if entry.name.endswith(".yaml")))


def shipped_config_path(name: str) -> Path:
    """The file of the shipped config `name` (``damii_quick`` or ``damii_quick.yaml``)."""
    stem = name[:-len(".yaml")] if name.endswith(".yaml") else name
    if stem not in shipped_configs():
        raise ConfigError(f"no shipped config is named {name!r}; the shipped configs: "
                          f"{', '.join(shipped_configs())}")
    return Path(str(resources.files(SHIPPED_CONFIGS) / f"{stem}.yaml"))


def config_file(path: str | Path) -> Path:
    """The YAML file `path` names: a file, else the name of a shipped config; a clear error
    listing the shipped configs otherwise."""
    file = Path(path)
    if file.is_file():
        return file
    text = str(path)
    if "/" not in text and os.sep not in text and \
            (text in shipped_configs() or text[:-len(".yaml")] in shipped_configs()):
        return shipped_config_path(text)
    if file.exists():
        raise ConfigError(f"config {text!r} is not a file; give a YAML config file or the "
                          f"name of a shipped config")
    close = difflib.get_close_matches(Path(text).stem, shipped_configs(), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise ConfigError(f"config file {text!r} does not exist, and no shipped config has that "
                      f"name{hint}; give a YAML file or one of the shipped configs: "
                      f"{', '.join(shipped_configs())}")


def load_config(path: str | Path | None, overrides: list[str] = ()) -> TrainConfig:
    """Read a YAML config (or the defaults when `path` is None) and apply overrides."""
    data: dict[str, Any] = {}
    source = "defaults"
    if path is not None:
        path = config_file(path)
        source = str(path)
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{source}: larger than {MAX_CONFIG_BYTES} bytes; a config is "
                              f"a short YAML file")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                              f"save the config as UTF-8") from None
        data = _yaml(text, source) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of keys to values")
    names = [f.name for f in dataclasses.fields(TrainConfig)]
    for item in overrides:
        key, value = parse_override(item)
        if key not in names:  # the key came from --set, not from the file
            raise ConfigError(f"--set {_show(key)[1:-1]}=...: unknown key "
                              f"{unknown_keys_text([key], names)}; allowed keys: "
                              f"{', '.join(names)}")
        if isinstance(value, dict) and key in ("rule_options", "patterns"):
            merged = dict(data[key] if key in data
                          else _default_section(key, data.get("algorithm")))
            merged.update(value)
            value = merged
        data[key] = value
    return config_from_dict(data, source)


def _default_section(key: str, algorithm: Any) -> dict[str, Any]:
    """The default of the mapping-valued key `key` (``rule_options``, ``patterns``) that
    a ``--set key.sub=value`` override adds to."""
    if key == "patterns":
        return {}
    return dict(PATTERN_RULE_OPTIONS) if algorithm == "patterns" else TrainConfig().rule_options


def config_to_dict(config: TrainConfig) -> dict[str, Any]:
    """The config as plain data that :func:`config_from_dict` reads back to the same config
    (the ``patterns`` section only in an ``algorithm: patterns`` config)."""
    data = dataclasses.asdict(config)
    if config.algorithm != "patterns":
        del data["patterns"]
    return data


def config_to_yaml(config: TrainConfig) -> str:
    """The config as YAML that :func:`load_config` reads back to the same config."""
    return yaml.safe_dump(config_to_dict(config), sort_keys=False)
