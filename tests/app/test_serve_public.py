"""Issue 63's findings H10 and H11, settled as documented behaviour (docs/SERVE.md, *What
is public*): a club's members, tournaments, games and ladder are readable by anyone who
can reach the server, its code by its organizer only; playing is for members; names are
per club and per tournament (in a club, a member's own name; in an open tournament any
free name). These tests hold the server to those sentences, from the probe's
reproducers: a browser that is not a member reads the club (200, no code) but cannot
enter its tournament or take a member's name in it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from damii_app.serve import create_app  # noqa: E402
from tests.app.test_serve_hardening import OPEN, new_session, ok, use  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs" / "SERVE.md"


def refused(r, status: int, *words: str) -> None:
    assert r.status_code == status, r.text
    for word in words:
        assert word in r.json()["error"], r.json()["error"]


def test_h10_a_club_is_readable_by_anyone_but_its_code_and_that_is_documented(tmp_path):
    text = DOCS.read_text(encoding="utf-8")
    assert "**What is public.**" in text and "Only the club's code\nis the organizer's" in text
    app = create_app(workers=0, agent_delay=0.0, db=tmp_path / "s.sqlite3",
                     session_limits=OPEN)
    with TestClient(app) as c:
        teacher = new_session(c)
        club = ok(c.post("/api/clubs", json={"name": "Class 5B"}))
        tid = ok(c.post("/api/tournaments", json={"name": "Spring", "club": club["id"]}))["id"]
        ana = new_session(c)
        ok(c.post("/api/clubs/join", json={"code": club["code"], "name": "ana"}))
        new_session(c)  # eve: not a member
        view = ok(c.get(f"/api/clubs/{club['id']}"))
        assert "code" not in view and club["code"] not in str(view)
        assert "ana" in str(view["members"])
        assert [t["id"] for t in view["tournaments"]] == [tid]
        ok(c.get(f"/api/tournaments/{tid}"))
        refused(c.post(f"/api/tournaments/{tid}/join", json={"name": "eve"}), 403,
                "not a member")
        use(c, teacher)
        assert ok(c.get(f"/api/clubs/{club['id']}"))["code"] == club["code"]
        use(c, ana)
        assert "code" not in ok(c.get(f"/api/clubs/{club['id']}"))


def test_h11_names_are_a_members_own_in_a_club_and_free_ones_in_an_open_tournament(tmp_path):
    app = create_app(workers=0, agent_delay=0.0, db=tmp_path / "s.sqlite3",
                     session_limits=OPEN)
    with TestClient(app) as c:
        new_session(c)
        club = ok(c.post("/api/clubs", json={"name": "Class 5B"}))
        in_club = ok(c.post("/api/tournaments", json={"name": "Spring",
                                                      "club": club["id"]}))["id"]
        open_one = ok(c.post("/api/tournaments", json={"name": "Open"}))["id"]
        ok(c.post(f"/api/tournaments/{open_one}/agents", json={"spec": "random",
                                                               "name": "ben"}))
        new_session(c)
        ok(c.post("/api/clubs/join", json={"code": club["code"], "name": "ana"}))
        # in the club, a member enters under her member name, whatever she types
        view = ok(c.post(f"/api/tournaments/{in_club}/join", json={"name": "ben"}))
        assert [e["name"] for e in view["entrants"]] == ["ana"]
        # in an open tournament a name already entered is refused, whatever its case
        new_session(c)
        refused(c.post(f"/api/tournaments/{open_one}/join", json={"name": "BEN"}), 400,
                "already entered")
        ok(c.post(f"/api/tournaments/{open_one}/join", json={"name": "ana"}))  # a free one
