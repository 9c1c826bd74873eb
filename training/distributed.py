"""Self-play on a Ray cluster: actors play, the learner (this process) learns.

``damii train CONFIG --ray [ADDRESS]`` (or the config key ``ray_address``) swaps the
trainer's own self-play for ``ray_actors`` actors, one CPU each. Every actor builds the
same trainer from the run's config (its own seed), runs the batched engine and a CPU copy
of the network, and returns a batch of samples each call:

- AlphaZero-style and TD-leaf: the replay samples of the games it finished (the same
  targets as the local trainer's), which the learner adds to its replay buffer before
  its gradient steps;
- PPO: a rollout (positions, hops, the acting policy's log-probabilities, GAE targets),
  on which the learner runs its PPO update; the ratio to the acting policy is clipped as
  in any PPO update.

Every batch carries the **policy version** that played it: the learner's update count
when the weights were sent. The learner sends new weights through the object store every
``ray_weights_every`` updates, and an actor loads them at its next call. Each iteration
the learner takes every batch that is ready, gives the actors their next call (so they
play while it learns), then learns once; a batch more than ``ray_max_staleness`` versions
behind is dropped and not counted.

**Counting and faults.** Every batch is numbered by its actor (actor id, call number) and
counted once, when the learner takes it. An actor that dies is replaced by a new one
(new id, new seed); the batches it delivered stay counted, the call it was playing never
arrived and is not counted, so no sample is lost from the count or counted twice.

**Checkpoints.** The learner's checkpoint is the local trainer's (network, optimizer,
replay buffer, random state), plus the counters above; the actors' games in progress are
not kept, so ``--resume`` starts them afresh (new seeds) and the run goes on from the
checkpoint's samples and iteration. A run can be resumed with or without Ray.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from damii_agents.match.ray import (
    MAX_REPLACEMENTS,
    DistributedError,
    actor_count,
    connect,
    import_ray,
)
from damii_training.config import TrainConfig, config_from_dict, config_to_dict
from damii_training.ppo import PPOTrainer, Rollout
from damii_training.replay import ReplayTrainer
from damii_training.selfplay import SelfPlayTrainer
from damii_training.trainers import TRAINERS

WAIT_S = 600.0
"""Longest wait for any actor's batch before the run stops with an error."""

STARVED_TAKES = 10_000
"""Rounds of batches without a sample to learn from before the run stops with an error."""

Weights = dict[str, np.ndarray]


@dataclass
class Batch:
    """What one actor call returns."""

    actor: int
    """The actor's id (a replacement gets a new one)."""
    seq: int
    """The call's number for that actor, from 1."""
    version: int
    """The learner's update count when the weights that played it were sent."""
    size: int
    """Samples in it."""
    episodes: int
    """Games finished during the call."""
    payload: Any
    """Replay samples (a dict of arrays) or a PPO :class:`~damii_training.ppo.Rollout`."""


def actor_seed(seed: int, actor: int, iteration: int) -> int:
    """The seed of actor `actor` started at learner iteration `iteration`."""
    return int(np.random.SeedSequence([seed, actor, iteration]).generate_state(1)[0])


def _weights(net: torch.nn.Module) -> Weights:
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


class SelfPlayActor:
    """A Ray actor: one trainer's self-play, with a CPU copy of the network."""

    def __init__(self, config: dict[str, Any], actor: int, seed: int) -> None:
        import numba

        numba.set_num_threads(1)
        cfg = config_from_dict({**config, "seed": seed, "device": "cpu", "init_weights": "",
                                "ray_address": "", "torch_threads": 1,
                                "replay_size": 1}, "actor config")
        self.trainer = TRAINERS[cfg.algorithm](cfg)
        self.actor, self.seq, self.version = actor, 0, -1
        self.outbox: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]] = []
        if isinstance(self.trainer, ReplayTrainer):  # finished games' samples go out
            self.trainer._add_samples = self._post

    def _post(self, obs: np.ndarray, legal: np.ndarray, policy: np.ndarray,
              z: np.ndarray) -> None:
        """The trainer's samples, one by one, to the outbox instead of its replay."""
        self.outbox.extend(zip(obs, legal, policy, z.tolist(), strict=True))

    def play(self, weights: list[Any], version: int) -> Batch:
        """Load the weights of `version` (a one-element list of an object-store
        reference) if they are new, play one rollout, return its samples."""
        t = self.trainer
        if version != self.version:
            import ray

            state = ray.get(weights[0])
            t.net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
            if isinstance(t, PPOTrainer) and t.config.pool_size > 0 and \
                    version // t.config.snapshot_every > max(self.version, 0) // \
                    t.config.snapshot_every:  # the opponent pool, as the learner's would be
                t.pool = (t.pool + [{k: v.detach().clone() for k, v in
                                     t.net.state_dict().items()}])[-t.config.pool_size:]
            self.version = version
        self.seq += 1
        if isinstance(t, PPOTrainer):
            ro = t.collect()
            return Batch(self.actor, self.seq, version, ro.size, ro.episodes_finished, ro)
        stats = t.play()
        out, self.outbox = self.outbox, []
        payload = {"obs": np.array([s[0] for s in out], np.float16),
                   "legal": np.array([s[1] for s in out], np.int16),
                   "policy": np.array([s[2] for s in out], np.float16),
                   "z": np.array([s[3] for s in out], np.float32)}
        return Batch(self.actor, self.seq, version, len(out), int(stats["episodes"]), payload)


class RayLearner:
    """Mixed in before a trainer class: ``iterate`` learns from the actors' batches."""

    config: TrainConfig

    def __init__(self, config: TrainConfig) -> None:
        super().__init__(config)  # type: ignore[call-arg]
        self.ray: Any = None
        self._started = False
        self.actors: dict[int, Any] = {}
        """Live actors by id."""
        self.running: dict[Any, int] = {}
        """In-flight calls: object reference -> actor id."""
        self.next_actor = 0
        self.last_seq: dict[int, int] = {}
        self.taken: list[tuple[int, int, int]] = []
        """(actor, seq, samples) of every batch received since this process started."""
        self.accepted: list[tuple[int, int, int]] = []
        """Those of them counted (not stale, not empty)."""
        self.dropped = 0
        self.replaced = 0
        self.version = 0
        self._weights_ref: Any = None
        self._weights_version = -1

    # --- the cluster -----------------------------------------------------------------
    def start(self) -> None:
        """Connect, put the weights in the object store and start the actors."""
        if self.ray is not None:
            return
        self.ray, self._started = connect(self.config.ray_address)
        self.version = self.iteration
        self._put_weights()
        n = actor_count(self.ray, self.config.ray_actors, "self-play actors")
        self._remote = self.ray.remote(num_cpus=1, max_restarts=0)(SelfPlayActor)
        self._config_dict = config_to_dict(self.config)
        for _ in range(n):
            self._call(self._spawn())

    def _spawn(self) -> int:
        uid = self.next_actor
        self.next_actor += 1
        seed = actor_seed(self.config.seed, uid, self.iteration)
        self.actors[uid] = self._remote.remote(self._config_dict, uid, seed)
        self.last_seq[uid] = 0
        return uid

    def _call(self, uid: int) -> None:
        ref = self.actors[uid].play.remote([self._weights_ref], self._weights_version)
        self.running[ref] = uid

    def _put_weights(self) -> None:
        self._weights_ref = self.ray.put(_weights(self.net))  # type: ignore[attr-defined]
        self._weights_version = self.version

    def close(self) -> None:
        """Stop the actors (and leave the cluster if this run joined it)."""
        if self.ray is None:
            return
        for actor in self.actors.values():
            self.ray.kill(actor)
        if self.accepted:
            print(f"damii train: {len(self.actors)} Ray actors; {len(self.accepted)} batches "
                  f"taken, {self.dropped} stale samples dropped, {self.replaced} actors "
                  f"replaced", file=sys.stderr)
        self.actors, self.running = {}, {}
        if self._started:
            self.ray.shutdown()
        self.ray = None

    # --- taking batches --------------------------------------------------------------
    def _take(self) -> list[Batch]:
        """Every batch ready now (waiting for the first), each actor called again at once;
        dead actors replaced, stale batches dropped."""
        ray = self.ray
        ready, _ = ray.wait(list(self.running), num_returns=1, timeout=WAIT_S)
        if not ready:
            raise DistributedError(f"no self-play batch arrived in {WAIT_S:.0f} s from "
                                   f"{len(self.running)} Ray actors")
        ready, _ = ray.wait(list(self.running), num_returns=len(self.running), timeout=0)
        batches = []
        for ref in ready:
            uid = self.running.pop(ref)
            try:
                batch: Batch = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                self.replaced += 1
                if self.replaced > MAX_REPLACEMENTS:
                    raise DistributedError(f"self-play actors keep dying ({self.replaced} "
                                           f"replaced); last: {exc}") from None
                del self.actors[uid]
                print(f"damii train: Ray actor {uid} died; starting a new one",
                      file=sys.stderr)
                self._call(self._spawn())
                continue
            self._call(uid)
            if batch.actor != uid or batch.seq != self.last_seq[uid] + 1:
                raise DistributedError(f"actor {uid} sent batch {batch.actor}/{batch.seq} "
                                       f"after {self.last_seq[uid]}")
            self.last_seq[uid] = batch.seq
            self.taken.append((uid, batch.seq, batch.size))
            if self.version - batch.version > self.config.ray_max_staleness:
                self.dropped += batch.size
                continue
            if batch.size:
                batches.append(batch)
        return batches

    def iterate(self) -> dict[str, float]:
        """Take the ready batches (waiting until one has samples), learn from them once."""
        self.start()
        batches: list[Batch] = []
        dropped = self.dropped
        for _ in range(STARVED_TAKES):
            batches = self._take()
            if batches:
                break
        else:
            if self.dropped > dropped:
                raise DistributedError(
                    f"every batch of the last {STARVED_TAKES} arrived more than "
                    f"ray_max_staleness ({self.config.ray_max_staleness}) updates behind the "
                    f"learner; raise ray_max_staleness or lower ray_actors")
            raise DistributedError(f"the actors' last {STARVED_TAKES} batches held no sample; "
                                   f"do the games end (rule_options turn_limit)?")
        n = sum(b.size for b in batches)
        episodes = sum(b.episodes for b in batches)
        staleness = float(np.mean([self.version - b.version for b in batches]))
        stats = self._learn_from(batches)
        self.accepted += [(b.actor, b.seq, b.size) for b in batches]
        self.iteration += 1
        self.samples += n
        self.version = self.iteration
        if self.iteration % self.config.ray_weights_every == 0:
            self._put_weights()
        stats.update(rollout_samples=n, episodes=episodes, staleness=staleness,
                     actors=len(self.actors))
        return stats

    def _learn_from(self, batches: list[Batch]) -> dict[str, float]:
        if isinstance(self, PPOTrainer):
            ro = _concat_rollouts([b.payload for b in batches])
            stats = self.update(ro)
            stats["episode_plies"] = ro.mean_episode_plies
            return stats
        assert isinstance(self, ReplayTrainer)
        n = 0
        for b in batches:
            p = b.payload
            self._add_samples(p["obs"], p["legal"], p["policy"], p["z"])
            n += b.size
        cfg = self.config
        stats = self.learn(max(1, cfg.epochs * -(-n // cfg.minibatch_size)))
        stats["replay"] = self.replay_len
        return stats

    # --- checkpointing ---------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(),  # type: ignore[misc]
                "distributed": {"dropped": self.dropped, "replaced": self.replaced,
                                "batches": len(self.accepted)}}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        super().load_state_dict(data)  # type: ignore[misc]
        info = data.get("distributed", {})
        self.dropped = int(info.get("dropped", 0))
        self.replaced = int(info.get("replaced", 0))


def _concat_rollouts(rollouts: list[Rollout]) -> Rollout:
    """One PPO rollout of several actors' (their samples side by side)."""
    if len(rollouts) == 1:
        return rollouts[0]
    fields = ("obs", "mask", "actions", "logp", "values", "targets")
    teacher = [r for r in rollouts if r.teacher_actions is not None]
    extra = {}
    if teacher:
        extra = {k: torch.cat([getattr(r, k) for r in teacher])
                 for k in ("teacher_obs", "teacher_mask", "teacher_actions")}
    episodes = sum(r.episodes_finished for r in rollouts)
    plies = [r.mean_episode_plies * r.episodes_finished for r in rollouts if r.episodes_finished]
    return Rollout(**{k: torch.cat([getattr(r, k) for r in rollouts]) for k in fields},
                   episodes_finished=episodes,
                   mean_episode_plies=sum(plies) / episodes if episodes else float("nan"),
                   **extra)


def distributed_trainer(config: TrainConfig) -> SelfPlayTrainer:
    """The trainer of ``config.algorithm`` with its self-play on Ray actors."""
    import_ray()  # a missing extra stops the run before anything is written
    base = TRAINERS[config.algorithm]
    cls = type(f"Ray{base.__name__}", (RayLearner, base), {})
    return cls(config)
