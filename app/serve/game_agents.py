"""The agents of a game in play (:class:`AgentTurns`, a part of
:class:`~damii_app.serve.live.LiveGame`): each agent's move a job in the server's search
pool (:mod:`damii_app.serve.jobs`), awaited without blocking the event loop, and its reply
applied by the game's :meth:`~damii_agents.match.game_loop.Referee.apply`, the same path
as in ``damii eval``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from damii_app.serve.jobs import STOPPING, AgentJob, AgentReply, ServerStopping, run_job
from damii_app.serve.specs import is_light, is_quick


class AgentTurns:
    """Plays the agents' turns of one game: while an agent is to move, one job at a time
    in the pool (it takes the turn of the game's owner, round robin between sessions, and
    replaces a queued job of the same seat); a reply that comes back after the game moved
    on (a take-back, the end) is dropped."""

    def __init__(self, live: Any, agent_delay: float) -> None:
        self.live = live
        """The :class:`~damii_app.serve.live.LiveGame` this part belongs to (typed Any: the
        game imports its parts, not the other way round)."""
        self.agent_delay = agent_delay
        """Seconds between moves when agents play each other (0 in tests)."""
        self.thinking = False
        """Whether an agent's search of this game is under way (the page says so)."""
        self._task: asyncio.Task | None = None

    def job(self, side: int, hook: str | None = None) -> AgentJob:
        """The question to the agent of `side` about the position now."""
        live = self.live
        spec = live.seats[side].spec
        assert spec is not None
        return AgentJob(spec=spec, variant=live.variant,
                        options=tuple(sorted(live.options.items())),
                        start_fen=live.start_fen,
                        moves=tuple(str(m) for m in live.game.move_stack),
                        slot=f"{live.id}:{side}", seed=live.seed, hook=hook)

    async def submit(self, side: int, hook: str | None = None) -> AgentReply:
        """The agent's answer, from the pool; a job the stopping server could not run
        raises :class:`ServerStopping`. A light search answering a person goes first."""
        live = self.live
        job = self.job(side, hook)
        future = live.pool.submit(run_job, job, key=job.slot + (f":{hook}" if hook else ""),
                                  share=live.owner, heavy=not is_quick(job.spec),
                                  light=is_light(job.spec) and live.seats[1 - side].human,
                                  replace=True)
        reply = await asyncio.wrap_future(future)
        if reply.error == STOPPING:
            raise ServerStopping(STOPPING)
        return reply

    def schedule(self) -> None:
        """Start the agent's turn when an agent is to move (once)."""
        live = self.live
        if live.over or live.seats[live.game.turn].human:
            return
        if self._task is not None and not self._task.done():
            return
        self._task = asyncio.get_running_loop().create_task(self._turns())

    def stop(self) -> None:
        """The game is gone: its agents' turn ends (the pool's jobs are cancelled by the
        game)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _turns(self) -> None:
        """The agents' moves, one job in the pool each, while an agent is to move."""
        live = self.live
        while not live.over and not live.seats[live.game.turn].human:
            side, generation, ply = live.game.turn, live.generation, len(live.game.move_stack)
            if not self.thinking:
                self.thinking = True
                live.announce()
            try:
                reply = await self.submit(side)
            except ServerStopping:
                return  # the game is taken up again at the next start (with --db)
            finally:
                self.thinking = False
            if live.generation != generation or len(live.game.move_stack) != ply or live.over:
                live.announce()
                if live.generation != generation and not live.over:
                    continue
                return
            self._replied(side, reply)  # the loop goes on if an agent is to move
            if self.agent_delay and not live.over and not live.seats[live.game.turn].human:
                await asyncio.sleep(self.agent_delay)

    def _replied(self, side: int, reply: AgentReply) -> None:
        """The referee applies the agent's reply, and the page is told what happened. An
        agent's draw offer stands for a person to answer (between agents none is made)."""
        live = self.live
        label = live.seats[side].label
        if reply.error is not None:
            live.referee.abandon("agent error")
            live.ended(f"{label} failed: {live.public(reply.error)}")
            return
        offer, ply = live.draw_offer, len(live.game.move_stack)
        began = live.referee.turn_started
        offers = reply.offers_draw and live.seats[1 - side].human and live.draws.allowed
        end = live.referee.apply(replace(reply, offers_draw=offers))
        if reply.resign:
            live.ended(f"{label} resigns")
        elif len(live.game.move_stack) == ply:  # not played: over the clock, or illegal
            assert end is not None
            live.ended(f"{label} overstepped the clock ({reply.seconds:.1f} s)"
                       if end.termination == "time forfeit"
                       else f"{label} played an illegal move {reply.move}")
        else:
            if live.match is not None:
                live.match.turn_over(side, time.monotonic() - began)
            note = f"{label} played {live.game.move_stack[-1]}"
            if offers and live.draw_offer == side:
                note += " and offers a draw"
            live.moved(side, note, offer)
