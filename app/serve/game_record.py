"""What is written down of a game in play (:class:`GameRecord`, a part of
:class:`~damii_app.serve.live.LiveGame`): its PDN, the server's record of it, and the row
the database keeps of it while it is in progress; and a game taken up again from that row
after a restart (:func:`restored`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from damii_agents.registry import PlayerSpec
from damii_app.serve.game_seating import Seat
from damii_app.serve.jobs import Pool
from damii_app.serve.specs import parse_clock
from damii_env.errors import DamiiError, InvalidOptionError
from damii_env.pdn import record


class GameRecord:
    """The game's PDN (made once per version) and its row in the database; an agent's
    spec is written as its text."""

    def __init__(self, live: Any) -> None:
        self.live = live
        """The :class:`~damii_app.serve.live.LiveGame` this part belongs to (typed Any: the
        game imports its parts, not the other way round)."""
        self._pdn: tuple[int, str] | None = None

    def pdn(self) -> str:
        """The game as PDN (the server's record), made once per version."""
        live = self.live
        if self._pdn is not None and self._pdn[0] == live.version:
            return self._pdn[1]
        end, match = live.end, live.match
        extra = {"Clock": str(live.clock) if match is None else match.rules.describe()}
        if match is not None:
            extra["Violations"] = f"White {match.violations[0]}, Black {match.violations[1]}"
        if end is not None:
            extra["Termination"] = end.termination
        pgame = record(live.game, white=live.seats[0].label, black=live.seats[1].label,
                       result=end.result if end is not None else "*",
                       event="damii-env serve", extra_tags=extra)
        for ply in match.forced if match is not None else ():
            note = "forced by the arbiter after the minute"
            old = pgame.comments.get(ply)
            pgame.comments[ply] = f"{old}; {note}" if old else note
        self._pdn = (live.version, pgame.to_text())
        return self._pdn[1]

    def row(self) -> dict[str, Any]:
        """What the database keeps of the game in progress besides its moves (the fields
        of :data:`damii_app.serve.store.LIVE_FIELDS`)."""
        live, match = self.live, self.live.match
        return {"owner": live.owner, "variant": live.variant, "options": live.options,
                "start_fen": live.start_fen,
                "seats": [{"label": s.label, "spec": None if s.spec is None else s.spec.text,
                           "session": s.session,
                           **(match.kept(i) if match is not None else {})}
                          for i, s in enumerate(live.seats)],
                "clock": live.clock.seconds if match is None else str(match.rules),
                "casual": live.casual, "lobby": live.lobby,
                "seed": live.seed, "took_back": live.took_back,
                "draw_offer": live.draw_offer, "created": live.created}


def restored(cls: Any, kept: dict[str, Any], pool: Pool,
             spec_of: Callable[[str, str], PlayerSpec] | None = None,
             **kwargs: Any) -> Any:
    """A game in progress as the database kept it (:meth:`GameRecord.row`, with ``id`` and
    ``moves``), after a restart of the server: its agents' specs read back by `spec_of`
    (text, variant: :meth:`~damii_app.serve.specs.SpecChecker.resolve`; None:
    :meth:`PlayerSpec.parse`), its moves played again, the clock of the move in progress
    started afresh (a person's when the person is back), and each seat of a person given
    the grace time from now to come back
    (:meth:`~damii_app.serve.game_seating.Seating.back_after_restart`); `kwargs` as for
    the constructor of `cls`."""
    options = kept["options"]
    clock = parse_clock(kept["clock"], kept["variant"], **options)
    read = spec_of or (lambda text, _variant: PlayerSpec.parse(text))
    seats = [Seat(s["label"], read(s["spec"], kept["variant"]) if s.get("spec") else None,
                  s.get("session")) for s in kept["seats"]]
    if len(seats) != 2:
        raise InvalidOptionError(f"game {kept['id']}: {len(seats)} seats kept, not 2")
    game = cls(kept["id"], kept["owner"], kept["variant"], seats, clock,
               bool(kept["casual"]), pool, fen=kept.get("start_fen"), seed=kept.get("seed"),
               lobby=bool(kept["lobby"]), options=options, **kwargs)
    for i, text in enumerate(kept["moves"]):
        try:
            game.referee.play(text, 0.0)
        except DamiiError as exc:
            raise InvalidOptionError(f"game {game.id}: move {i // 2 + 1} ({text}) cannot "
                                     f"be played again: {exc}") from exc
    if game.match is not None:
        game.match.restore(kept["seats"])  # violations, time used, forced plies, touch
        if not game.over:
            game.match.check_touched(game.game)
    game.took_back = bool(kept.get("took_back"))
    if kept.get("draw_offer") is not None and not game.over:
        game.referee.offer_draw(int(kept["draw_offer"]))
    game.created = float(kept.get("created") or game.created)
    game.referee.turn_started = time.monotonic()  # the mover's clock starts afresh
    game.seating.back_after_restart()
    return game
