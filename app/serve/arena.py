"""Arena matches watched live (:class:`ArenaWatch`): a round robin between agents played
game after game in a thread of its own, each move a job in the server's search pool and
each game a :class:`~damii_agents.match.game_loop.Referee`; the latest position is kept
for the page, and its :class:`~damii_app.serve.live.Notifier` wakes the page's websocket
when it changes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from damii_agents.match import MatchConfig, player_names, schedule
from damii_agents.match.game_loop import GameEnd, Referee, game_options
from damii_agents.registry import PlayerSpec
from damii_app.serve.jobs import AgentJob, AgentReply, Pool, run_job
from damii_app.serve.live import Notifier
from damii_app.serve.specs import is_quick
from damii_app.serve.views import layout, position
from damii_env import Game
from damii_env.pdn import dumps, record


class ArenaWatch:
    """A round robin played game after game in a thread, watched live by the page."""

    def __init__(self, aid: str, owner: str, variant: str, specs: Sequence[PlayerSpec],
                 labels: Sequence[str], games: int, clock: str, pool: Pool,
                 delay: float = 0.3, seed: int = 0,
                 public: Callable[[str], str] = str) -> None:
        self.id, self.owner = aid, owner
        self.public = public
        self.specs = tuple(specs)
        """The players, as the server checked them (one a seat of the round robin)."""
        # the round robin's games (pairings, openings, seeds) depend on the number of
        # players, not on who they are: the config names placeholders, so that the specs
        # are not turned into text and parsed again
        self.config = MatchConfig(variant=variant, specs=("random",) * len(self.specs),
                                  games=games, clock=clock, workers=1, seed=seed,
                                  event="damii-env serve")
        self.labels = player_names(labels)
        self.clock = self.config.make_clock()
        self.options = game_options(variant)
        self.pool, self.delay = pool, delay
        self.tasks = schedule(self.config)
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.version = 0
        self.records: list[Any] = []
        self.results: list[dict[str, Any]] = []
        self.points = {name: 0.0 for name in self.labels}
        self.current: dict[str, Any] | None = None
        self.running = True
        self.error: str | None = None
        self.changed = Notifier()
        self.thread = threading.Thread(target=self._run, name=f"arena-{aid}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        """Stop after the move being searched (its worker is stopped too)."""
        self.stop_event.set()
        self.pool.cancel(f"{self.id}:")

    def _publish(self, game: Game, task_index: int, white: str, black: str,
                 end: GameEnd | None = None) -> None:
        with self.lock:
            self.current = {"index": task_index + 1, "white": white, "black": black,
                            "layout": layout(game), "position": position(game),
                            "moves": [str(m) for m in game.move_stack],
                            "result": end.result if end else None,
                            "termination": end.termination if end else None}
            self.version += 1
        self.changed.notify()

    def _ask(self, job: AgentJob) -> AgentReply:
        """The answer of a job, from the pool (this thread waits for it)."""
        return self.pool.submit(run_job, job, key=job.slot, share=self.owner,
                                heavy=not is_quick(job.spec)).result()

    def _accepts_draw(self, job: AgentJob, seat: int) -> bool:
        """Whether the player of `seat` accepts a draw in the position of `job`."""
        return self._ask(replace(job, spec=self.specs[seat], slot=f"{self.id}:{seat}",
                                 hook="accepts_draw")).answer

    def _play_one(self, task: Any) -> tuple[Game, GameEnd]:
        """Play one game of the round robin, each move a job and each reply applied by a
        Referee; the page sees each position."""
        game = Game(self.config.variant, **self.options)
        for text in task.opening:
            game.push(text)
        referee = Referee(game, self.clock)
        seats = (task.white, task.black)
        white, black = self.labels[task.white], self.labels[task.black]
        self._publish(game, task.index, white, black)
        while referee.end is None:
            if self.stop_event.is_set():
                return game, referee.abandon()
            side, ply = referee.to_move, len(game.move_stack)
            job = AgentJob(spec=self.specs[seats[side]], variant=self.config.variant,
                           options=tuple(sorted(self.options.items())), start_fen=None,
                           moves=tuple(str(m) for m in game.move_stack),
                           slot=f"{self.id}:{seats[side]}", seed=task.seed)
            reply = self._ask(job)
            if reply.error is not None:
                raise RuntimeError(f"{self.labels[seats[side]]}: {reply.error}")
            end = referee.apply(reply, partial(self._accepts_draw, job, seats[1 - side]))
            if end is not None and len(game.move_stack) == ply \
                    and end.termination != "time forfeit":
                break  # resigned, a draw agreed or an illegal move: no position to show
            self._publish(game, task.index, white, black)
            self.stop_event.wait(self.delay)
        assert referee.end is not None
        return game, referee.end

    def _run(self) -> None:
        try:
            for task in self.tasks:
                if self.stop_event.is_set():
                    break
                game, end = self._play_one(task)
                white, black = self.labels[task.white], self.labels[task.black]
                self._publish(game, task.index, white, black, end)
                pdn = record(game, white=white, black=black, result=end.result,
                             event="damii-env serve", round=str(task.index + 1),
                             extra_tags={"Termination": end.termination,
                                         "Clock": str(self.clock)})
                with self.lock:
                    self.records.append(pdn)
                    self.results.append({"round": task.index + 1, "white": white,
                                         "black": black, "result": end.result,
                                         "termination": end.termination,
                                         "plies": len(game.move_stack)})
                    self.points[white] += end.white_points
                    self.points[black] += 1.0 - end.white_points
                    self.version += 1
                self.changed.notify()
                self.stop_event.wait(self.delay * 3)
        except Exception as exc:  # noqa: BLE001 - shown in the page
            with self.lock:
                self.error = self.public(f"{type(exc).__name__}: {exc}")
        finally:
            with self.lock:
                self.running = False
                self.version += 1
            self.changed.notify()

    def pdn(self) -> str:
        """Every finished game as PDN."""
        with self.lock:
            return dumps(self.records)

    def state(self) -> dict[str, Any]:
        """Everything the page shows."""
        with self.lock:
            return {"id": self.id, "version": self.version, "variant": self.config.variant,
                    "players": list(self.labels), "games": len(self.tasks),
                    "played": len(self.results), "results": list(self.results),
                    "points": dict(self.points), "current": self.current,
                    "running": self.running, "stopped": self.stop_event.is_set(),
                    "error": self.error}
