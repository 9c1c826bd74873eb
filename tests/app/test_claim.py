"""Claimed repetitions and draw offers through the API of `damii serve`: a game between two
people claims the threefold repetition (play goes on until someone claims), a game with an
agent keeps the automatic rule; no draw offers in blitz; the Sci-Damath match among the
clocks, opened in the lobby, and its score sheet exported as CSV."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from tests.app.test_serve_api import error_of, new  # noqa: E402

KINGS = "W:WK46:BK5"
SHUFFLE = ["46-41", "5-10", "41-46", "10-5"] * 2


def play(client, gid, moves):
    for text in moves:
        r = client.post(f"/api/games/{gid}/move", json={"move": text})
        assert r.status_code == 200, r.text
    return r.json()


def test_people_claim_the_third_occurrence_and_play_goes_on_until_they_do(client):
    state = new(client, white="human", black="human", fen=KINGS)
    gid = state["id"]
    assert (state["claim"], state["repetitions"]) == (False, 1)
    state = play(client, gid, SHUFFLE[:7])
    assert "a claim needs 3" in error_of(client.post(f"/api/games/{gid}/claim", json={}))
    state = play(client, gid, SHUFFLE[7:])  # the start position a third time
    assert not state["over"] and state["claim"] and state["repetitions"] == 3
    state = play(client, gid, ["46-41"])  # nobody claimed: play goes on, still a 3rd time
    assert not state["over"] and state["claim"]
    state = client.post(f"/api/games/{gid}/claim", json={"side": "black"}).json()
    assert (state["result"], state["termination"]) == \
        ("1/2-1/2", "threefold repetition claimed")
    assert state["message"] == "black claims the draw: the position has occurred 3 times"
    assert "repetition=0,repetition_claim=3" in state["pdn"]


def test_a_game_with_an_agent_keeps_the_automatic_rule(client):
    state = new(client, white="human", black="random", fen=KINGS)
    assert state["repetitions"] is None and not state["claim"]
    assert "repetition_claim is 0" in error_of(
        client.post(f"/api/games/{state['id']}/claim", json={}))


def test_no_draw_offers_in_blitz_but_in_standard_matches(client):
    blitz = new(client, white="human", black="human", clock="blitz")
    assert blitz["draws"] is False
    assert "no draw offers in blitz" in error_of(
        client.post(f"/api/games/{blitz['id']}/draw", json={"action": "offer"}))
    standard = new(client, white="human", black="human", clock="standard")
    state = client.post(f"/api/games/{standard['id']}/draw", json={"action": "offer"}).json()
    assert standard["draws"] and state["draw_offer"] == "white"


def test_the_match_clock_in_the_meta_the_lobby_and_its_score_sheet(client):
    assert "sci-damath" in client.get("/api/meta").json()["clocks"]
    r = client.post("/api/lobby", json={"variant": "damath", "clock": "sci-damath:touch",
                                        "name": "ana"})
    assert r.status_code == 200, r.text
    assert r.json()["match"]["touch_move"] and r.json()["message"].startswith("coin toss: ")
    lobby = client.get("/api/lobby").json()["games"]
    assert {"clock": "sci-damath:touch"}.items() <= lobby[-1].items()
    assert "choose the variant damath" in error_of(
        client.post("/api/games", json={"variant": "damii", "clock": "sci-damath",
                                        "white": "human", "black": "human"}))
    state = new(client, variant="damath", white="human", black="human",
                clock="sci-damath", fen="W:W22=10:B18=8,1=2")
    state = play(client, state["id"], ["22x13"])
    assert state["sheet"][0]["points"] == "18"  # 10 + 8 on the "+" square 13
    csv = client.get(f"/api/games/{state['id']}/sheet").text
    assert csv.splitlines()[1] == '1,1,white,22x13,"(3,2)x(1,4)",10,,10 + 8,18,18,0,'
    assert "violations of the minute,,,,,,,,,0,0," in csv
    damii = new(client, white="human", black="human")
    assert "kept in Sci-Damath games" in error_of(
        client.get(f"/api/games/{damii['id']}/sheet"))
