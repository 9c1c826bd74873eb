"""The searches the players and trainers share: the compiled alpha-beta
(:mod:`~damii_agents.search.alphabeta`), the batched full-width minimax with a value
function at the leaves (:mod:`~damii_agents.search.minimax`), and the batched PUCT and
Gumbel tree searches of the AlphaZero trainer (:mod:`~damii_agents.search.puct`,
:mod:`~damii_agents.search.gumbel`)."""
