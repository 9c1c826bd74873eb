"""Matches between agents: round robins with clocks, results tables, Elo ratings and a PDN
file of every game (:func:`run_match`).

>>> from damii_agents.match import MatchConfig, reports, run_match
>>> result = run_match(MatchConfig("damii", ("random", "greedy"), games=4, workers=1),
...                    progress=False)                                    # doctest: +SKIP
>>> print(reports.to_text(result))                                       # doctest: +SKIP

A match is put together from modules that each read alone; this package holds them:

- :mod:`damii_agents.match.config`: the match set-up (:class:`MatchConfig`) and its
  players' names.
- :mod:`damii_agents.match.game_loop`: one game with clocks, resignation and agreed draws
  (:func:`play_game`, :class:`Clock`, :class:`GameEnd`, :func:`game_options`); a player
  signals with :class:`~damii_agents.base.Resign`, :class:`~damii_agents.base.OfferDraw`
  and :class:`~damii_agents.base.Abandon`.
- :mod:`damii_agents.match.scheduling`: the opening ballots, the list of games
  (:func:`schedule`) and the whole match (:func:`run_match`); the games are played by
  :mod:`damii_agents.match.worker` in this process or in worker processes, or on Ray
  (:mod:`damii_agents.match.ray`).
- :mod:`damii_agents.match.results`: each game, the tallies of each pairing and the Elo ratings
  (:class:`MatchResult`, via :mod:`damii_agents.match.elo`).
- :mod:`damii_agents.match.reports`: the output formats (plain text, Markdown, JSON) and the files a
  match saves (``results.json``, ``results.md``, ``games.pdn``).

A player can be given as a spec (``"alphabeta:depth=2"``, built in each worker) or as a
ready-made object through ``MatchConfig.players`` (a network in training); a match with
ready-made players is played in this process.

Rules of a match (see ``docs/RULES.md``):

- **Clock**: a player whose move takes longer than the per-move clock loses on time
  (``standard`` 60 s, ``blitz`` 15 s); in Damath capturing moves are exempt.
- **Resignation and draws**: before each move the player is asked ``wants_resign`` and
  ``offers_draw`` (the opponent's ``accepts_draw`` decides). A player's ``choose`` may
  also raise :class:`Resign`, :class:`OfferDraw` or :class:`Abandon` (human play).
- **Game end**: the variant's own rules; a turn limit of 400 plies is added for safety
  where the variant has none (Damath keeps its own 100). A game cut by the turn limit is
  recorded with result ``*`` and scores as a draw.
- **Ballots**: for each pair of games one random opening of ``opening_plies`` plies is
  played once with each player on each seat.
"""

from damii_agents.match import reports
from damii_agents.match.config import GameTask, MatchConfig, anchor_index, player_names
from damii_agents.match.game_loop import (
    CLOCK_PRESETS,
    SAFETY_TURN_LIMIT,
    Clock,
    GameEnd,
    MoveCallback,
    game_options,
    play_game,
)
from damii_agents.match.results import GameResult, MatchResult, PairingStats
from damii_agents.match.scheduling import ballots, default_out_dir, run_match, schedule

__all__ = [
    "CLOCK_PRESETS", "SAFETY_TURN_LIMIT", "Clock", "GameEnd", "GameResult", "GameTask",
    "MatchConfig", "MatchResult", "MoveCallback", "PairingStats", "anchor_index", "ballots",
    "default_out_dir", "game_options", "play_game", "player_names", "reports", "run_match",
    "schedule",
]
