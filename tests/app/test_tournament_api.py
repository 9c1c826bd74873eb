"""Clubs and tournaments of `damii serve` through its API, on a real server with a
database (one browser a cookie jar): a club made and joined with its code, a round robin
of four pupils played to its standings with a restart of the server in the middle of a
round, a Swiss with agents, the exports, and bad input answered clearly with nothing
changed."""

from __future__ import annotations

import sqlite3

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from damii_app.serve import create_app  # noqa: E402
from damii_app.serve.store import Store  # noqa: E402
from damii_env.pdn import loads  # noqa: E402
from tests.app.test_serve_api import served  # noqa: E402
from tests.app.test_serve_db import again, ok, wait  # noqa: E402


def refused(r, status: int, *words: str) -> str:
    """The error of a refused request (its status and the words it must say)."""
    assert r.status_code == status, r.text
    text = r.json()["error"]
    for word in words:
        assert word in text, text
    return text


def a_club(teacher, pupils: dict, name: str = "Class 5B") -> dict:
    """The teacher makes a club; each pupil joins it with its code."""
    club = ok(teacher.post("/api/clubs", json={"name": name}))
    for name, http in pupils.items():
        ok(http.post("/api/clubs/join", json={"code": club["code"].lower(), "name": name}))
    return club


def board_game(http, tid: str, rnd: int, board: int) -> str:
    view = ok(http.get(f"/api/tournaments/{tid}"))
    (row,) = [b for b in view["boards"] if (b["round"], b["board"]) == (rnd, board)]
    return row["game"]


def pairings(http, tid: str, rnd: int) -> list[tuple[str, str | None]]:
    view = ok(http.get(f"/api/tournaments/{tid}"))
    return [(b["white"], b["black"]) for b in view["boards"] if b["round"] == rnd]


def test_a_club_round_robin_survives_a_restart_in_the_middle_of_a_round(tmp_path):
    db = tmp_path / "serve.sqlite3"
    with served(create_app(workers=0, agent_delay=0.0, db=db, grace=60)) as (base, _):
        teacher, ana, ben, cat, dan = (httpx.Client(base_url=base, timeout=30)
                                       for _ in range(5))
        pupils = {"ana": ana, "ben": ben, "cat": cat, "dan": dan}
        club = a_club(teacher, pupils)
        assert ok(teacher.get(f"/api/clubs/{club['id']}"))["members"] == list(pupils)
        assert "code" not in ok(ana.get(f"/api/clubs/{club['id']}"))  # the organizer's only
        listed = ok(ana.get("/api/clubs"))["clubs"]
        assert [(c["name"], c["members"], c["you"], c["organizer"]) for c in listed] == [
            ("Class 5B", 4, "ana", False)]
        t = ok(teacher.post("/api/tournaments", json={
            "name": "Spring cup", "system": "round-robin", "club": club["id"],
            "max_players": 4}))
        for http in pupils.values():
            ok(http.post(f"/api/tournaments/{t['id']}/join", json={}))
        tid = t["id"]
        ok(teacher.post(f"/api/tournaments/{tid}/rounds"))
        # the circle method by hand for seeds ana, ben, cat, dan: ana fixed, the others
        # turning: round 1 ana-dan and cat-ben (board 2's colours alternate)
        assert pairings(teacher, tid, 1) == [("ana", "dan"), ("cat", "ben")]
        ok(dan.post(f"/api/games/{board_game(dan, tid, 1, 1)}/resign", json={}))
        ok(ben.post(f"/api/games/{board_game(ben, tid, 1, 2)}/resign", json={}))
        ok(teacher.post(f"/api/tournaments/{tid}/rounds"))
        assert pairings(teacher, tid, 2) == [("cat", "ana"), ("ben", "dan")]
        draw = board_game(cat, tid, 2, 1)
        ok(cat.post(f"/api/games/{draw}/draw", json={"action": "offer"}))
        ok(ana.post(f"/api/games/{draw}/draw", json={"action": "accept"}))
        playing = board_game(ben, tid, 2, 2)
        state = wait(ben, playing, lambda s: True)
        ok(ben.post(f"/api/games/{playing}/move",
                    json={"move": state["position"]["legal"][0]["text"]}))
        before = ok(teacher.get(f"/api/tournaments/{tid}"))
    # the server stops in the middle of round 2 and starts again on the same database
    with served(create_app(workers=0, agent_delay=0.0, db=db, grace=60)) as (base, _):
        teacher, ana, ben, cat, dan = (again(h, base) for h in (teacher, ana, ben, cat, dan))
        after = ok(teacher.get(f"/api/tournaments/{tid}"))
        assert after == before and after["organizer"] and after["round"] == 2
        assert [b["result"] for b in after["boards"]] == ["1-0", "1-0", "1/2-1/2", None]
        assert len(ok(dan.get(f"/api/games/{playing}"))["moves"]) == 1
        refused(teacher.post(f"/api/tournaments/{tid}/rounds"), 400,
                "round 2 is still being played", "ben - dan")
        ok(dan.post(f"/api/games/{playing}/resign", json={}))  # dan, the same browser
        ok(teacher.post(f"/api/tournaments/{tid}/rounds"))
        assert pairings(teacher, tid, 3) == [("ana", "ben"), ("dan", "cat")]
        ok(ben.post(f"/api/games/{board_game(ben, tid, 3, 1)}/resign", json={}))
        final = board_game(dan, tid, 3, 2)
        ok(dan.post(f"/api/games/{final}/draw", json={"action": "offer"}))
        ok(cat.post(f"/api/games/{final}/draw", json={"action": "accept"}))
        view = ok(ana.get(f"/api/tournaments/{tid}"))
        assert view["status"] == "finished" and view["you"] == "ana"
        # points: ana 1 + 1/2 + 1 = 2.5; cat 1 + 1/2 + 1/2 = 2; ben 0 + 1 + 0 = 1;
        # dan 0 + 0 + 1/2 = 0.5. Sonneborn-Berger (opponent's points x own score):
        # ana: dan 0.5x1 + cat 2x0.5 + ben 1x1 = 2.5; cat: ben 1x1 + ana 2.5x0.5 +
        # dan 0.5x0.5 = 2.5; ben: cat 0 + dan 0.5x1 + ana 0 = 0.5; dan: cat 2x0.5 = 1
        assert [(r["rank"], r["name"], r["points"], r["tiebreak"]) for r in
                view["standings"]] == [(1, "ana", 2.5, 2.5), (2, "cat", 2.0, 2.5),
                                       (3, "ben", 1.0, 0.5), (4, "dan", 0.5, 1.0)]
        assert view["tiebreak"] == "Sonneborn-Berger"
        csv = teacher.get(f"/api/tournaments/{tid}/standings.csv").text.splitlines()
        assert csv[0] == "rank,name,points,Sonneborn-Berger,played,wins,draws,losses"
        assert csv[1] == "1,ana,2.5,2.5,3,2,1,0"
        records = loads(teacher.get(f"/api/tournaments/{tid}/pdn").text)
        assert [(r.tags["Event"], r.tags["Round"], r.result) for r in records][:2] == [
            ("Spring cup", "1.1", "1-0"), ("Spring cup", "1.2", "1-0")]
        assert len(records) == 6
        # rated games feed the club's ladder: 6 games, each pupil played 3
        ladder = ok(teacher.get(f"/api/ladder?club={club['id']}"))["players"]
        assert [p["name"] for p in ladder][0] == "ana"
        assert sorted(p["games"] for p in ladder) == [3, 3, 3, 3]
        assert len(ok(teacher.get(f"/api/history?club={club['id']}"))["games"]) == 6
        listed = ok(teacher.get(f"/api/tournaments?club={club['id']}"))["tournaments"]
        assert [(x["name"], x["status"], x["players"]) for x in listed] == [
            ("Spring cup", "finished", 4)]
        refused(teacher.post(f"/api/tournaments/{tid}/rounds"), 400, "has finished")


def test_a_swiss_of_five_with_agents_and_a_bye(tmp_path):
    with served(create_app(workers=0, agent_delay=0.0, db=tmp_path / "s.sqlite3")) as (base, _):
        org, ana, ben, cat = (httpx.Client(base_url=base, timeout=30) for _ in range(4))
        t = ok(org.post("/api/tournaments", json={"name": "Open Swiss", "system": "swiss",
                                                  "rounds": 2, "variant": "damii"}))
        tid = t["id"]
        for name, http in (("ana", ana), ("ben", ben), ("cat", cat)):
            ok(http.post(f"/api/tournaments/{tid}/join", json={"name": name}))
        ok(org.post(f"/api/tournaments/{tid}/agents", json={"spec": "random"}))
        ok(org.post(f"/api/tournaments/{tid}/agents", json={"spec": "greedy", "name": "bot"}))
        ok(org.post(f"/api/tournaments/{tid}/rounds"))
        # round 1, all on 0 points, seeds ana, ben, cat, random, bot: the bye to the
        # lowest (bot); the group ana, ben, cat, random split in halves: ana-cat,
        # ben-random (White to the higher seed in odd rounds)
        assert pairings(org, tid, 1) == [("ana", "cat"), ("ben", "random"), ("bot", None)]
        ok(cat.post(f"/api/games/{board_game(cat, tid, 1, 1)}/resign", json={}))
        game = board_game(ben, tid, 1, 2)
        ok(ben.post(f"/api/games/{game}/resign", json={}))
        ok(org.post(f"/api/tournaments/{tid}/rounds"))
        # round 2 by hand: ana 1 (had White), random 1 (Black), bot 1 (the bye), ben 0
        # (White), cat 0 (Black). The bye goes to the lowest ranked without one: cat.
        # The 1-point group ana, random, bot: ana meets the top of its bottom half,
        # random; bot floats down to ben. Colours: random (one Black) gets White against
        # ana (one White); bot (no game) gets White against ben (one White)
        assert pairings(org, tid, 2) == [("random", "ana"), ("bot", "ben"), ("cat", None)]
        view = ok(org.get(f"/api/tournaments/{tid}"))
        assert view["tiebreak"] == "Buchholz" and view["status"] == "running"
        assert [e["kind"] for e in view["entrants"]] == ["person"] * 3 + ["agent"] * 2


def test_bad_input_is_refused_clearly_and_changes_nothing(tmp_path):
    db = tmp_path / "s.sqlite3"
    with served(create_app(workers=0, agent_delay=0.0, db=db)) as (base, _):
        teacher, other, ana, ben, eve = (httpx.Client(base_url=base, timeout=30)
                                         for _ in range(5))
        club = a_club(teacher, {"ana": ana, "ben": ben})
        elsewhere = a_club(other, {"eve": eve}, "Class 6A")
        members = ok(teacher.get(f"/api/clubs/{club['id']}"))["members"]
        wrong = "ZZZZZZ" if club["code"] != "ZZZZZZ" else "YYYYYY"
        refused(eve.post("/api/clubs/join", json={"code": wrong, "name": "eve2"}), 400,
                "no club has the code", "ask your organizer")
        refused(ana.post("/api/clubs/join", json={"code": club["code"], "name": "anna"}), 400,
                "already in Class 5B as 'ana'")
        refused(teacher.post("/api/clubs", json={"name": "class 5b"}), 400, "exists already")
        assert ok(teacher.get(f"/api/clubs/{club['id']}"))["members"] == members
        # another club's organizer cannot run a tournament in this club
        refused(other.post("/api/tournaments", json={"name": "x", "club": club["id"]}), 403,
                "only the organizer of Class 5B")
        t = ok(teacher.post("/api/tournaments", json={"name": "Duel", "club": club["id"],
                                                      "max_players": 2}))
        tid = t["id"]
        refused(eve.post(f"/api/tournaments/{tid}/join", json={}), 403,
                "not a member of Class 5B", "code")
        ok(ana.post(f"/api/tournaments/{tid}/join", json={}))
        refused(ana.post(f"/api/tournaments/{tid}/join", json={}), 400, "already entered")
        ok(ben.post(f"/api/tournaments/{tid}/join", json={}))
        ok(teacher.post("/api/clubs/join", json={"code": club["code"], "name": "teach"}))
        refused(teacher.post(f"/api/tournaments/{tid}/join", json={}), 400,
                "is full (2 of 2 places taken)")
        refused(ana.post(f"/api/tournaments/{tid}/rounds"), 403, "only the organizer")
        refused(teacher.post(f"/api/tournaments/{tid}/agents", json={"spec": "nonsense"}),
                400)
        ok(teacher.post(f"/api/tournaments/{tid}/rounds"))
        gid = board_game(ana, tid, 1, 1)
        # results posted for another pupil's game: a spectator of the same club and a
        # pupil of another club may not resign or agree a draw in it
        for outsider in (teacher, eve):
            refused(outsider.post(f"/api/games/{gid}/resign", json={}), 403,
                    "only its players move")
            refused(outsider.post(f"/api/games/{gid}/draw", json={"action": "offer"}), 403)
        refused(eve.post(f"/api/games/{gid}/resign", json={"side": "black"}), 403)
        for pupil in (ana, eve, other):  # a result posted for the board: the organizer's
            refused(pupil.post(f"/api/tournaments/{tid}/result",
                               json={"round": 1, "board": 1, "result": "1-0"}), 403,
                    "only the organizer of Duel")
        assert not ok(ana.get(f"/api/games/{gid}"))["over"]
        assert [b["result"] for b in ok(ana.get(f"/api/tournaments/{tid}"))["boards"]] == [None]
        ok(ben.post(f"/api/games/{gid}/resign", json={}))
        with sqlite3.connect(db) as con:  # written as the game ended, before any read
            assert con.execute("SELECT result, termination FROM pairings WHERE game = ?",
                               (gid,)).fetchone() == ("1-0", "resignation")
            assert con.execute("SELECT status FROM tournaments WHERE id = ?",
                               (tid,)).fetchone() == ("finished",)
        view = ok(ana.get(f"/api/tournaments/{tid}"))
        assert view["status"] == "finished"
        refused(eve.post(f"/api/tournaments/{tid}/join", json={}), 403, "not a member")
        ok(teacher.post("/api/clubs/join", json={"code": elsewhere["code"], "name": "t2"}))
        late = httpx.Client(base_url=base, timeout=30)
        ok(late.post("/api/clubs/join", json={"code": club["code"], "name": "late"}))
        refused(late.post(f"/api/tournaments/{tid}/join", json={}), 400, "has finished")
        # a club lobby game: members only
        refused(eve.post("/api/lobby", json={"name": "eve", "club": club["id"]}), 403,
                "not a member of Class 5B")
        lobby = ok(ana.post("/api/lobby", json={"name": "ana", "club": club["id"]}))["id"]
        refused(eve.post(f"/api/lobby/{lobby}/join", json={"name": "eve"}), 403, "not a member")
        assert [g["id"] for g in ok(eve.get(f"/api/lobby?club={elsewhere['id']}"))["games"]] == []
        assert lobby in [g["id"] for g in ok(ben.get(f"/api/lobby?club={club['id']}"))["games"]]
        # a Swiss asked for more rounds than its players allow, and bad set-ups
        s = ok(teacher.post("/api/tournaments", json={"name": "S", "system": "swiss",
                                                      "rounds": 3, "club": club["id"]}))
        for http in (ana, ben):
            ok(http.post(f"/api/tournaments/{s['id']}/join", json={}))
        refused(teacher.post(f"/api/tournaments/{s['id']}/rounds"), 400,
                "a Swiss of 2 players has at most 1 rounds")
        refused(teacher.post("/api/tournaments", json={"name": "S", "system": "swiss"}), 400,
                "number of rounds")
        refused(teacher.post("/api/tournaments", json={"name": "S", "clock": "soon"}), 400)
        refused(teacher.post("/api/tournaments", json={"name": "S", "clock": "sci-damath"}),
                400, "choose the variant damath")
        refused(teacher.get("/api/tournaments/nope"), 404, "no tournament 'nope'")
        refused(teacher.get("/api/clubs/nope"), 404, "no club 'nope'")
    with sqlite3.connect(db) as con:  # nothing refused was written
        assert con.execute("SELECT COUNT(*) FROM club_members").fetchone()[0] == 6
        assert con.execute("SELECT COUNT(*) FROM entrants").fetchone()[0] == 4


def test_the_organizer_decides_a_board_whose_player_never_came(tmp_path):
    with served(create_app(workers=0, agent_delay=0.0, db=tmp_path / "s.sqlite3")) as (base, _):
        org, ana, ben = (httpx.Client(base_url=base, timeout=30) for _ in range(3))
        tid = ok(org.post("/api/tournaments", json={"name": "Cup"}))["id"]
        for name, http in (("ana", ana), ("ben", ben)):
            ok(http.post(f"/api/tournaments/{tid}/join", json={"name": name}))
        ok(org.post(f"/api/tournaments/{tid}/rounds"))
        gid = board_game(org, tid, 1, 1)
        refused(org.post(f"/api/tournaments/{tid}/result",
                         json={"round": 1, "board": 2, "result": "1-0"}), 400,
                "Cup has no board 2 in round 1")
        view = ok(org.post(f"/api/tournaments/{tid}/result",
                           json={"round": 1, "board": 1, "result": "0-1"}))
        assert [(b["result"], b["termination"]) for b in view["boards"]] == [
            ("0-1", "adjudicated")]
        assert view["status"] == "finished"
        assert [(r["name"], r["points"]) for r in view["standings"]] == [("ben", 1.0),
                                                                          ("ana", 0.0)]
        refused(ana.get(f"/api/games/{gid}"), 404)  # its game is stopped
        refused(org.post(f"/api/tournaments/{tid}/result",
                         json={"round": 1, "board": 1, "result": "1-0"}), 400,
                "board 1 of round 1 has its result already (0-1, adjudicated)")
        refused(org.post(f"/api/tournaments/{tid}/result",
                         json={"round": 1, "board": 1, "result": "2-0"}), 400, "result")


def test_a_board_ended_or_lost_in_a_crash_is_taken_up_after_the_restart(tmp_path):
    db = tmp_path / "s.sqlite3"
    with served(create_app(workers=0, agent_delay=0.0, db=db)) as (base, _):
        org, ana, ben, cat, dan = (httpx.Client(base_url=base, timeout=30) for _ in range(5))
        tid = ok(org.post("/api/tournaments", json={"name": "Cup"}))["id"]
        for name, http in (("ana", ana), ("ben", ben), ("cat", cat), ("dan", dan)):
            ok(http.post(f"/api/tournaments/{tid}/join", json={"name": name}))
        ok(org.post(f"/api/tournaments/{tid}/rounds"))
        ended, lost = board_game(org, tid, 1, 1), board_game(org, tid, 1, 2)
    # a crash after board 1's game was kept as finished (0-1) but before the tournament
    # read it; board 2's game was never written
    store = Store(db)
    store.record_game(ended, "damii", ("ana", "person"), ("dan", "person"), "0-1",
                      "resignation", True, '[Result "0-1"]\n0-1')
    store.drop_live(lost)
    store.close()
    with served(create_app(workers=0, agent_delay=0.0, db=db)) as (base, _):
        org, cat, ben = (again(h, base) for h in (org, cat, ben))
        view = ok(org.get(f"/api/tournaments/{tid}"))
        assert [(b["result"], b["termination"]) for b in view["boards"]] == [
            ("0-1", "resignation"), (None, None)]
        state = ok(cat.get(f"/api/games/{lost}"))  # opened again, the same seats
        assert [s["label"] for s in state["seats"]] == ["cat", "ben"] and not state["moves"]
        ok(ben.post(f"/api/games/{lost}/resign", json={}))
        assert [b["result"] for b in ok(org.get(f"/api/tournaments/{tid}"))["boards"]] == [
            "0-1", "1-0"]


def test_a_sci_damath_tournament_plays_the_classroom_match_clock(tmp_path):
    with served(create_app(workers=0, agent_delay=0.0, db=tmp_path / "s.sqlite3")) as (base, _):
        org, ana = (httpx.Client(base_url=base, timeout=30) for _ in range(2))
        tid = ok(org.post("/api/tournaments", json={"name": "Damath day", "variant": "damath",
                                                    "clock": "sci-damath"}))["id"]
        ok(ana.post(f"/api/tournaments/{tid}/join", json={"name": "ana"}))
        ok(org.post(f"/api/tournaments/{tid}/agents", json={"spec": "random"}))
        ok(org.post(f"/api/tournaments/{tid}/rounds"))
        state = ok(ana.get(f"/api/games/{board_game(ana, tid, 1, 1)}"))
        assert state["layout"]["variant"] == "damath"
        assert state["clock"]["name"].startswith("Sci-Damath match: 20 min a game")
        assert [s["label"] for s in state["seats"]] == ["ana", "random"]


def test_without_a_database_clubs_say_how_to_keep_them():
    with served(create_app(workers=0, agent_delay=0.0)) as (base, _):
        with httpx.Client(base_url=base, timeout=30) as http:
            assert ok(http.get("/api/clubs")) == {"clubs": [], "kept": False}
            refused(http.post("/api/clubs", json={"name": "x"}), 503, "--db")
