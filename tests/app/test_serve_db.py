"""`damii serve --db`: players, finished games as PDN and the Elo ladder kept in SQLite
across a restart of the server; the schema made by the server; ratings hand-checked."""

from __future__ import annotations

import sqlite3

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from damii_app.serve import create_app  # noqa: E402
from damii_app.serve.store import SCHEMA, Store, expected_score  # noqa: E402
from damii_env.pdn import loads  # noqa: E402


def rated_game(client, name: str, resign: bool = True) -> dict:
    r = client.post("/api/games", json={"white": "human", "black": "random", "casual": False,
                                        "name": name, "seed": 1})
    assert r.status_code == 200, r.text
    state = r.json()
    r = client.post(f"/api/games/{state['id']}/resign", json={})
    assert r.status_code == 200, r.text
    return r.json()


def test_games_and_the_ladder_outlive_a_restart(tmp_path):
    db = tmp_path / "data" / "serve.sqlite3"
    with TestClient(create_app(workers=0, agent_delay=0.0, db=db)) as client:
        state = rated_game(client, "ana")
        assert (state["result"], state["termination"]) == ("0-1", "resignation")
        casual = client.post("/api/games", json={"white": "human", "black": "human",
                                                 "name": "ben"}).json()
        client.post(f"/api/games/{casual['id']}/resign", json={})
        ladder = client.get("/api/ladder").json()["players"]
    # hand-checked Elo: both at 1500, expected score 1/2, K 32: ana 1484, random 1516
    assert {p["name"]: (p["rating"], p["games"]) for p in ladder} == {
        "ana": (1484.0, 1), "random": (1516.0, 1), "ben": (1500.0, 0)}
    with TestClient(create_app(workers=0, agent_delay=0.0, db=db)) as client:  # restarted
        assert client.get("/api/ladder").json()["players"] == ladder
        games = client.get("/api/history").json()["games"]
        assert len(games) == 2 and {g["rated"] for g in games} == {0, 1}
        kept = next(g for g in games if g["id"] == state["id"])
        (record,) = loads(kept["pdn"])
        assert record.tags["White"] == "ana" and record.result == "0-1"
        state2 = rated_game(client, "ana")  # ana loses again, from 1484 against 1516
        assert state2["result"] == "0-1"
        ladder = {p["name"]: p["rating"] for p in client.get("/api/ladder").json()["players"]}
    change = 32 * (1 - expected_score(1516, 1484))
    assert ladder["random"] == round(1516 + change, 1) and ladder["ana"] == round(1484 - change, 1)
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("PRAGMA user_version").fetchone()[0] == len(SCHEMA)


def test_a_game_is_counted_once_and_the_schema_is_migrated_from_empty(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    assert store.version == len(SCHEMA)
    for _ in range(2):  # the same game kept twice changes the ratings once
        store.record_game("g1", "damii", ("a", "person"), ("b", "person"), "1-0",
                          "resignation", True, "[Result \"1-0\"]\n1-0")
    assert {p["name"]: p["rating"] for p in store.ladder()} == {"a": 1516.0, "b": 1484.0}
    store.close()
    assert Store(tmp_path / "s.sqlite3").version == len(SCHEMA)  # opened again: no change


def test_without_a_database_nothing_is_kept(tmp_path):
    with TestClient(create_app(workers=0, agent_delay=0.0)) as client:
        assert client.get("/api/ladder").json() == {"players": [], "kept": False}
        bad = client.post("/api/games", json={"name": "a\nb"})
        assert bad.status_code == 400 and "name" in bad.json()["error"]
