"""R6: the server parses a player spec once, where the request gives it, into a
:class:`~damii_agents.registry.PlayerSpec` that it carries to its workers (games, arena
matches, tournaments' boards); text is only shown and stored. A bad spec is refused at
the request, with a clear message, and nothing is made."""

from __future__ import annotations

import time
from collections import Counter

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from damii_agents.registry import PlayerSpec  # noqa: E402
from damii_app.serve import create_app, jobs  # noqa: E402
from damii_app.serve.specs import SpecChecker, default_weights_dir, with_options  # noqa: E402
from tests.app.test_serve_api import wait_for  # noqa: E402

EVENT_WAIT = 1800.0
"""Seconds a test waits for an event before it calls it hung (a guard, not a margin)."""


@pytest.fixture()
def parses(monkeypatch):
    """Every text given to PlayerSpec.parse from now on, counted."""
    seen: Counter[str] = Counter()
    parse = PlayerSpec.parse.__func__

    def counted(cls, spec):
        if isinstance(spec, str):
            seen[spec.strip()] += 1
        return parse(cls, spec)

    monkeypatch.setattr(PlayerSpec, "parse", classmethod(counted))
    return seen


def ok(r):
    assert r.status_code == 200, r.text
    return r.json()


def test_game_specs_are_parsed_once_at_the_request_and_carried_as_values(parses):
    app = create_app(workers=0, agent_delay=0.0)
    with TestClient(app) as client:
        jobs._AGENTS.clear()
        state = ok(client.post("/api/games", json={"white": "alphabeta:depth=1",
                                                   "black": "greedy", "seed": 1}))
        state = wait_for(client, state["id"], lambda s: s["over"], EVENT_WAIT)
        assert len(state["moves"]) > 10
        assert parses == {"alphabeta:depth=1": 1, "greedy": 1}, parses
        specs = {key[1] for key in jobs._AGENTS}  # what the worker built its players from
        assert specs and all(isinstance(spec, PlayerSpec) for spec in specs), specs
        assert [seat["label"] for seat in state["seats"]] == ["alphabeta:depth=1", "greedy"]


def test_a_person_against_an_agent_parses_the_spec_once_however_many_moves(parses):
    with TestClient(create_app(workers=0, agent_delay=0.0)) as client:
        state = ok(client.post("/api/games", json={"white": "human",
                                                   "black": "alphabeta:depth=2"}))
        for _ in range(4):
            state = ok(client.post(f"/api/games/{state['id']}/move",
                                   json={"move": state["position"]["legal"][0]["text"]}))
            plies = len(state["moves"])
            state = wait_for(client, state["id"],
                             lambda s, n=plies: len(s["moves"]) > n or s["over"], EVENT_WAIT)
            if state["over"]:
                break
        ok(client.post(f"/api/games/{state['id']}/draw", json={"action": "offer"}))
        assert parses == {"alphabeta:depth=2": 1}, parses


def test_an_arena_parses_each_spec_once(parses):
    with TestClient(create_app(workers=0, agent_delay=0.0)) as client:
        arena = ok(client.post("/api/arena", json={"specs": ["greedy", "alphabeta:depth=1"],
                                                   "games": 2, "delay": 0}))
        aid = arena["id"]
        for _ in range(int(EVENT_WAIT * 50)):
            arena = ok(client.get(f"/api/arena/{aid}"))
            if not arena["running"]:
                break
            time.sleep(0.02)
        assert arena["played"] == 2 and arena["error"] is None, arena
        assert parses["greedy"] == 1 and parses["alphabeta:depth=1"] == 1, parses


def test_a_tournament_parses_an_agent_at_entry_and_once_a_round_from_the_database(
        parses, tmp_path):
    app = create_app(workers=0, agent_delay=0.0, db=tmp_path / "s.sqlite3")
    with TestClient(app) as org:
        t = ok(org.post("/api/tournaments", json={"name": "Bots", "rated": False}))
        ok(org.post(f"/api/tournaments/{t['id']}/agents",
                    json={"spec": "alphabeta:depth=1", "name": "ab"}))
        ok(org.post(f"/api/tournaments/{t['id']}/agents", json={"spec": "greedy"}))
        assert parses == {"alphabeta:depth=1": 1, "greedy": 1}, parses
        ok(org.post(f"/api/tournaments/{t['id']}/rounds"))
        (board,) = [g for g in app.state.server.games.values()]
        wait_for(org, board.id, lambda s: s["over"], EVENT_WAIT)
        # the database keeps the text; the round start reads it back, once an agent
        assert parses == {"alphabeta:depth=1": 2, "greedy": 2}, parses
        assert all(isinstance(seat.spec, PlayerSpec) for seat in board.seats)


@pytest.mark.parametrize("spec, words", [
    ("nonsense", "unknown agent 'nonsense'"),
    ("alphabeta:dept=2", "unknown option(s) dept"),
    ("alphabeta:depth=99", "depth must be"),
    ("alphabeta:depth=12", "this server plays depth up to 10"),
    ("alphabeta:time=nan", "time must be a finite float"),
    ("alphabeta:eval=/etc/x.npz", "evaluation '/etc/x.npz' refused"),
    ("ckpt:nope.pt", "checkpoint 'nope.pt' refused"),
    ('hub:"touch x"', "not accepted by this server"),
    ("hub:fake", "not accepted by this server"),
    ("pretrained:nobody", "nobody"),
    ("pretrained:international", "plays international, not damii"),
])
def test_a_bad_spec_is_refused_at_the_request_and_nothing_is_made(client, spec, words):
    server = client.app.state.server
    before = (len(server.games), len(server.arenas))
    for r in (client.post("/api/games", json={"white": spec, "black": "human"}),
              client.post("/api/arena", json={"specs": ["random", spec]})):
        assert r.status_code == 400, r.text
        assert words in r.json()["error"], r.json()
    assert (len(server.games), len(server.arenas)) == before


def test_a_checked_spec_s_text_reads_back_as_the_same_value():
    """What the database keeps (the text) parses back into the value the server ran."""
    checker = SpecChecker(default_weights_dir())
    for text in ("random", "alphabeta", "alphabeta:depth=6", "alphabeta:nodes=100000,tt=12",
                 "pretrained:damii,depth=3", "ckpt:damii.pt,depth=4",
                 "ckpt:damii.pt",
                 "pretrained:damii,net=search,depth=2", "alphabeta:depth=7,seed=3"):
        spec = checker.resolve(text, "damii")
        assert isinstance(spec, PlayerSpec)
        assert PlayerSpec.parse(spec.text) == spec, (text, spec)
        assert checker.resolve(spec.text, "damii") == spec  # read back: the same value


def test_with_options_writes_the_text_of_the_changed_value():
    spec = PlayerSpec.parse("alphabeta:depth=6,eval=learned")
    changed = with_options(spec, eval="/w/x.npz", time=5.0)
    assert changed.text == "alphabeta:depth=6,eval=/w/x.npz,time=5"
    assert changed == PlayerSpec.parse(changed.text)
    added = with_options(PlayerSpec.parse("pretrained:damii,depth=3"), time=0.25)
    assert added.text == "pretrained:damii,depth=3,time=0.25" \
        and added == PlayerSpec.parse(added.text)
    with pytest.raises(ValueError):
        with_options(PlayerSpec.parse('hub:"dame hub"'), time=1.0)
