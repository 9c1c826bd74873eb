"""Batched full-width minimax over the engine's hops, with capture quiescence and an
evaluator (:mod:`damii_agents.search.evaluator`) at the leaves: the search the
``ckpt:PATH,depth=D`` player plays with, and the one the TD-leaf trainer learns from.

The trees of many root positions are searched together, level by level: each level is
one engine state holding every node of that depth, one compiled pass of the engine makes
the next level (:meth:`~damii_env.engine.Engine.children`), and once every level is made
one batched call values the leaves of all of them where they stand, without copying them
out (a network then meets one batch per search, not one per level); small compiled
loops over the levels' counters (:mod:`damii_env.compiled`) choose the nodes to expand
and back the values up. Depth counts full moves; a hop that keeps the same player on
move (a capture that goes on) costs no depth and its value is not negated. Below the
depth the search goes on while the player to move must capture (captures are
compulsory: the quiescence search). Past a node budget the remaining nodes become
leaves.

>>> import numpy as np
>>> from damii_env import Engine
>>> from damii_agents.search.evaluator import LeafFunction
>>> from damii_env.episode import material_balance, for_colour
>>> eng = Engine("damii")
>>> def material(levels):   # the mover's material lead, as a leaf value
...     return np.concatenate([for_colour(material_balance(eng, states), states.turn)[rows]
...                            for states, rows in levels])
>>> result = search(eng, eng.init(2), 1, LeafFunction(material))
>>> result.root.tolist()[:3], len(result.values) == 2 * 9   # 9 opening moves per game
([0, 0, 0], True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from damii_agents.search.evaluator import Evaluator
from damii_env import compiled as C
from damii_env.engine import Engine, State


@dataclass
class SearchResult:
    """The minimax values of every legal hop of every root."""

    values: np.ndarray
    """float64 (H,): value of each root hop for the root's mover, grouped by root, each
    root's hops in the order of its legal list."""
    root: np.ndarray
    """int64 (H,): the root each hop belongs to."""
    hop_index: np.ndarray
    """int64 (H,): the hop's index in its root's legal list."""
    nodes: int
    """Positions generated (roots included)."""
    leaves: int
    """Positions valued by the evaluation."""


def search(engine: Engine, roots: State, depth: int, evaluator: Evaluator,
           max_nodes: int | None = None) -> SearchResult:
    """Minimax `depth` full moves deep from every root (plus capture quiescence).

    The `evaluator`'s ``leaf_values`` gets the leaf positions of every level at once
    (finished games included: it must value them by their result), as rows of the
    levels' states, and returns their values for the player to move there (see
    :class:`~damii_agents.search.evaluator.Evaluator`). Roots that are over or have no
    legal hop get no hops in the result.
    """
    if depth < 1:
        raise ValueError(f"search depth must be at least 1 full move, got {depth}")
    budget = max_nodes if max_nodes is not None else 1 << 62
    frontier = roots
    remaining = np.full(roots.batch_size, depth)
    levels: list[tuple[State, np.ndarray, np.ndarray]] = []  # (states, parent, expanded)
    parent = np.zeros(0, dtype=np.int64)
    nodes = roots.batch_size
    while True:
        expand = np.empty(frontier.batch_size, dtype=np.bool_)
        hops = _expandable(frontier.meta, remaining, expand)
        if levels and nodes + hops > budget:
            expand[:] = False
        levels.append((frontier, parent, expand))
        rows = np.flatnonzero(expand)
        if not len(rows):
            break
        child, parent = engine.children(frontier, rows)
        remaining = _remaining(child.meta, frontier.meta, parent, remaining)
        nodes += len(parent)
        frontier = child
    leaf_rows = [np.flatnonzero(~expand) if i > 0 else np.zeros(0, dtype=np.int64)
                 for i, (_states, _parent, expand) in enumerate(levels)]
    valued = [(levels[i][0], rows) for i, rows in enumerate(leaf_rows) if len(rows)]
    leaves = sum(len(rows) for _states, rows in valued)
    leaf_value = (np.asarray(evaluator.leaf_values(valued), dtype=np.float64) if valued
                  else np.zeros(0))
    if leaf_value.shape != (leaves,):
        raise ValueError(f"leaf_values returned shape {leaf_value.shape} for {leaves} leaves; "
                         f"expected ({leaves},): one value per leaf, levels in order")
    end = leaves
    below = np.zeros(0)
    for i in range(len(levels) - 1, -1, -1):
        states, parent, expand = levels[i]
        values = np.empty(states.batch_size)
        if len(leaf_rows[i]):
            values[leaf_rows[i]] = leaf_value[end - len(leaf_rows[i]):end]
            end -= len(leaf_rows[i])
        if i + 1 < len(levels):
            children, child_parent, _ = levels[i + 1]
            if i == 0:
                # a child where the other side is to move counts negated for its parent
                signed = np.where(children.turn == states.turn[child_parent], below, -below)
                counts = np.bincount(child_parent, minlength=states.batch_size)
                first = np.cumsum(counts) - counts
                hop_index = np.arange(len(child_parent)) - first[child_parent]
                return SearchResult(signed, child_parent, hop_index, nodes, leaves)
            _back_up(values, expand, states.meta, children.meta, child_parent, below)
        below = values
    empty = np.zeros(0, dtype=np.int64)
    return SearchResult(np.zeros(0), empty, empty, nodes, leaves)


@njit(cache=True)
def _expandable(meta: np.ndarray, remaining: np.ndarray, expand: np.ndarray) -> int:
    """Mark in `expand` the nodes to search further: ongoing games with hops, with full
    moves `remaining` or a capture to make. Returns the children they make."""
    hops = 0
    for c in range(expand.shape[0]):
        n = C.n_legal(meta, c)
        expand[c] = (C.outcome(meta, c) == C.ONGOING and n > 0
                     and (remaining[c] > 0 or C.capturing(meta, c)))
        if expand[c]:
            hops += n
    return hops


@njit(cache=True)
def _remaining(child_meta: np.ndarray, meta: np.ndarray, parent: np.ndarray,
               remaining: np.ndarray) -> np.ndarray:
    """Full moves left below each child: its parent's, one less where the other side is
    to move (a move was completed), not below 0."""
    out = np.empty(parent.shape[0], dtype=np.int64)
    for c in range(parent.shape[0]):
        p = parent[c]
        out[c] = max(remaining[p] - (C.turn(child_meta, c) != C.turn(meta, p)), 0)
    return out


@njit(cache=True)
def _back_up(values: np.ndarray, expand: np.ndarray, meta: np.ndarray,
             child_meta: np.ndarray, parent: np.ndarray, below: np.ndarray) -> None:
    """The value of each expanded node: the best of its children's values `below`, a
    child where the other side is to move negated. Of equal values (0.0 and -0.0) the
    last counts, and a NaN wins, as in ``np.maximum.at``."""
    best = np.full(values.shape[0], -np.inf)
    for c in range(parent.shape[0]):
        p = parent[c]
        v = below[c] if C.turn(child_meta, c) == C.turn(meta, p) else -below[c]
        if best[p] == best[p] and not best[p] > v:
            best[p] = v
    for p in range(values.shape[0]):
        if expand[p]:
            values[p] = best[p]
