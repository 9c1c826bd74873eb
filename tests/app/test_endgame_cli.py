"""``damii endgame make`` and ``damii endgame probe``: a database made into a folder, found
there by the probe, a second make left alone, Sci-Damath refused with the reason."""

from __future__ import annotations

import pytest

from damii_app.cli import main


def test_make_then_probe(tmp_path, capsys) -> None:
    args = ["--variant", "international", "--dir", str(tmp_path)]
    assert main(["endgame", "make", *args, "--pieces", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "up to 2 pieces: 9,025 positions" in out and "MB in" in out
    assert main(["endgame", "make", *args, "--pieces", "2"]) == 0
    assert "already made" in capsys.readouterr().out
    # the king on the long diagonal takes the man on 28
    assert main(["endgame", "probe", *args, "W:WK46:B28"]) == 0
    assert capsys.readouterr().out.startswith("White to move wins (1 ply to")
    assert main(["endgame", "probe", *args, "W:WK46,K50:BK5"]) == 1  # 3 pieces: not held
    assert main(["endgame", "probe", "--variant", "damii", "--dir", str(tmp_path),
                 "W:WK46:B28"]) == 1
    assert "no endgame database for damii" in capsys.readouterr().err


def test_sci_damath_has_no_database(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["endgame", "make", "--variant", "damath"])
    assert "invalid choice" in capsys.readouterr().err


def test_info_tallies_each_material(tmp_path, capsys) -> None:
    args = ["--variant", "international", "--dir", str(tmp_path)]
    assert main(["endgame", "make", *args, "--pieces", "2", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["endgame", "info", *args]) == 0
    out = capsys.readouterr().out
    # a king against a king: 50 x 49 placements (the 50 x 50 entries less the shared
    # squares), draw limit 10 plies (the FMJD rule, 5 moves each)
    line = next(x for x in out.splitlines() if x.startswith("| 0+1K v 0+1K"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "2,450" and cells[-1] == "10"
    assert sum(int(c.replace(",", "")) for c in cells[2:5]) == 2450
