"""The routes of ``damii serve``, one :class:`fastapi.APIRouter` per concern, each route
taking the server's state as a :data:`~damii_app.serve.state.Server` parameter:

- :mod:`.page`: the page itself and what it offers (``/``, ``/favicon.ico``,
  ``/api/ping``, ``/api/meta``);
- :mod:`.games`: games in the browser (``/api/games...``): start, move, resign, draws,
  take-backs, heartbeats, the PDN and the websocket;
- :mod:`.lobby`: games between people at different browsers (``/api/lobby...``);
- :mod:`.records`: the database's ladder and finished games (the ``/ladder`` page,
  ``/api/ladder``, ``/api/history``);
- :mod:`.replay`: a PDN text replayed position by position (``/api/replay``);
- :mod:`.arena`: round robins between agents watched live (``/api/arena...``);
- :mod:`.clubs`: clubs, their page and members (``/clubs``, ``/api/clubs...``);
- :mod:`.tournaments`: round robins and Swiss events (``/api/tournaments...``);
- :mod:`.analysis`: game review and the analysis board (``/api/analysis...``).
"""

from damii_app.serve.routes import (
    analysis,
    arena,
    clubs,
    games,
    lobby,
    page,
    records,
    replay,
    tournaments,
)

ROUTERS = (page.router, games.router, lobby.router, records.router, replay.router,
           arena.router, clubs.router, tournaments.router, analysis.router)
"""Every router, in the order the app includes them."""

__all__ = ["ROUTERS"]
