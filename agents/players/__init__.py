"""The players: random and greedy (:mod:`~damii_agents.players.simple`), the compiled
alpha-beta (:mod:`~damii_agents.players.alphabeta`), the trained networks
(:mod:`~damii_agents.players.neural`, needs torch) and a person at the terminal
(:mod:`~damii_agents.players.human`). Build them by spec with
:class:`damii_agents.PlayerSpec` (``PlayerSpec.parse(text).build(variant)``) or
:func:`damii_env.player.make_player`."""
