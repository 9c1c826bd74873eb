"""PDN: the arena's files read back to the same games; pydraughts reads them too."""

from __future__ import annotations

import pytest

import damii_env as d
from damii_agents.match import MatchConfig, reports, run_match
from damii_env.pdn import PdnError, PdnGame, dumps, loads, read_file, record, white_points


@pytest.fixture(scope="module")
def matches(tmp_path_factory):
    """Small saved matches of three variants: variant -> (result, path of games.pdn)."""
    out = {}
    for variant in ("international", "damii", "damath"):
        config = MatchConfig(variant, ("random", "greedy"), games=2, seed=11, workers=1)
        result = run_match(config, progress=False, elo_samples=10)
        paths = reports.save(result, tmp_path_factory.mktemp(variant))
        out[variant] = (result, paths["pdn"])
    return out


@pytest.mark.parametrize("variant", ["international", "damii", "damath"])
def test_arena_pdn_reads_back_to_the_same_games(matches, variant):
    result, path = matches[variant]
    games = read_file(path)
    assert len(games) == len(result.games)
    for played, read in zip(result.games, games, strict=True):
        assert read.moves == played.pdn.moves and read.result == played.end.result
        assert read.tags["White"] == played.white and read.tags["Black"] == played.black
        assert read.tags["Variant"] == variant and read.variant == variant
        assert read.replay().fen() == played.final_fen


def test_tags(matches):
    game = read_file(matches["international"][1])[0]
    assert list(game.tags)[:7] == ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
    assert game.tags["GameType"] == "20" and "FEN" not in game.tags
    assert game.rule_options == {"turn_limit": 400}
    assert "GameType" not in read_file(matches["damii"][1])[0].tags


def test_damath_scores_and_totals_in_comments(matches):
    result, path = matches["damath"]
    text = path.read_text(encoding="utf-8")
    assert "scores" in text and "totals: White" in text
    for played, read in zip(result.games, read_file(path), strict=True):
        game = read.replay()
        assert game.fen() == played.final_fen
        tw, tb = game.totals()
        assert read.comments[len(read.moves) - 1].endswith(f"totals: White {tw}, Black {tb}")
        scoring = [i for i, m in enumerate(game.move_stack) if m.is_capture]
        assert scoring and all(i in read.comments for i in scoring)
        first = game.move_stack[scoring[0]]
        assert read.comments[scoring[0]].startswith(
            ("" if str(first.score).startswith("-") else "+") + str(first.score))


def test_pydraughts_reads_international_pdn(matches):
    draughts = pytest.importorskip("draughts", reason="pydraughts (dev extra)")
    from draughts.PDN import PDNReader

    result, path = matches["international"]
    games = PDNReader(filename=str(path)).games
    assert len(games) == len(result.games)
    for played, read in zip(result.games, games, strict=True):
        assert read.variant == "standard" and read.game_ending == played.end.result
        assert read.moves == played.pdn.moves
        assert read.tags["White"] == played.white
        board = draughts.Board(variant="standard")
        for text in read.moves:
            board.push(draughts.Move(board, pdn_move=text))
        assert d.Game.from_fen(board.fen, "international").fen() == \
            d.Game.from_fen(played.final_fen, "international").fen()


def test_from_a_fen_black_to_move_and_short_captures():
    game = d.Game.from_fen("B:W28,33,K46:B18,19,5", "international")
    game.push(game.legal_moves()[0])
    game.push(game.legal_moves()[0])
    rec = record(game, white="a", black="b", round="7")
    text = rec.to_text()
    assert '[FEN "B:W28,33,K46:B5,18,19"]' in text and "1... " in text
    back = loads(text)[0]
    assert back.tags["Round"] == "7" and back.replay().fen() == game.fen()


def test_reader_skips_variations_nags_and_reads_short_captures():
    text = """[Event "x"]
[White "A \\"the\\" player"]
[Variant "international"]
[FEN "W:W28:B22,23,12,13,16"]

{start} 1. 28x17x8x19x28! $1 (1. 28x19x8x17x28 {the other way}) 16-21 *
"""
    game = loads(text)[0]
    assert game.tags["White"] == 'A "the" player'
    assert game.moves == ["28x17x8x19x28", "16-21"] and game.comments == {-1: "start"}
    assert game.result == "*"
    assert game.replay().fen() == "W:W28:B21"
    assert loads(dumps([game, game]))[1].tags["White"] == 'A "the" player'


def test_replay_names_the_bad_move():
    bad = PdnGame(tags={"Variant": "damii", "Round": "3"}, moves=["32-27", "1-99"])
    with pytest.raises(PdnError, match="1-99"):
        bad.replay()
    with pytest.raises(PdnError,
                       match=r"no Variant or GameType tag; expected e.g. \[Variant \"damii\"\]"):
        _ = PdnGame(tags={}).variant
    with pytest.raises(PdnError, match="cannot read"):
        loads("1. 32-28 banana")


def test_games_without_tags():
    games = loads("1. 32-28 19-23 1-0\n1. 33-28 18-22 0-1")
    assert [(g.moves, g.result) for g in games] == [(["32-28", "19-23"], "1-0"),
                                                    (["33-28", "18-22"], "0-1")]


def test_white_points_of_each_pdn_result():
    """The PDN standard's results, both notations (1-0 and the older 2-0 style)."""
    assert [white_points(r) for r in ("1-0", "2-0", "0-1", "0-2", "1/2-1/2", "1-1")] == \
        [1.0, 1.0, 0.0, 0.0, 0.5, 0.5]
    assert white_points("*") is None and white_points("0-0") is None
    with pytest.raises(PdnError, match="unknown PDN result '3-0'"):
        white_points("3-0")
