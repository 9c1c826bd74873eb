"""Human play with scripted input: moves by text and number, illegal input, commands."""

from __future__ import annotations

import io

import damii_env as d
from damii_agents import RandomAgent
from damii_agents.base import BaseAgent
from damii_agents.match import GameEnd, play_game
from damii_agents.players.human import HumanAgent
from damii_app.cli import main
from damii_app.play import play_human
from damii_env.pdn import read_file


class Script:
    """Input function that answers prompts from a list and records them."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


class DrawAgent(BaseAgent):
    def __init__(self, offer: bool = False, accept: bool = False) -> None:
        self.name, self.offer, self.accept = "drawish", offer, accept
        self.agent = RandomAgent(seed=0)

    def choose(self, game):
        return self.agent.choose(game)

    def offers_draw(self, game):
        return self.offer

    def accepts_draw(self, game):
        return self.accept


def test_scripted_game_text_number_illegal_resign(tmp_path):
    first = str(d.Game("international").legal_moves()[0])  # 31-26
    out: list[str] = []
    script = Script("help", first, "2", "99-1", "0", "resign")
    pdn = tmp_path / "game.pdn"
    result = play_human("international", "random:seed=4", clock="none", pdn_path=pdn,
                        input_fn=script, output_fn=out.append)
    text = "\n".join(out)
    assert result.end == GameEnd(1, "0-1", "resignation")
    assert "resign" in text and "quit" in text  # the help text
    human_moves = result.game.move_stack[0::2]
    assert str(human_moves[0]) == first
    assert "legal moves: 1) " in text  # the numbered list
    illegal = [line for line in out if line.startswith("move 99-1 is not legal")]
    assert illegal and "Legal moves: 1) " in illegal[0] and "W:" not in illegal[0]
    assert any(line.startswith("there is no move 0") for line in out)
    assert "black (random:seed=4) plays" in text
    saved = read_file(pdn)[0]
    assert saved.result == "0-1" and saved.tags["Termination"] == "resignation"
    assert saved.tags["White"] == "human" and saved.tags["Black"] == "random:seed=4"
    assert saved.moves == [str(m) for m in result.game.move_stack] and len(saved.moves) == 4


def test_short_capture():
    game = d.Game.from_fen("W:WK47,28:B22,32,33,12", "damii", orientation="standard")
    human = HumanAgent(input_fn=Script("28x8", "resign"), output_fn=[].append)
    end = play_game(game, [human, RandomAgent(seed=0)])
    assert end == GameEnd(1, "0-1", "resignation")
    assert str(game.move_stack[0]) == "28x17x8"


def test_ambiguous_short_capture_is_explained():
    game = d.Game.from_fen("W:W28:B22,23,12,13,16", "international")
    out: list[str] = []
    human = HumanAgent(input_fn=Script("28x28", "28x19x8x17x28"), output_fn=out.append)
    move = human.choose(game)
    assert str(move) == "28x19x8x17x28"
    assert any("ambiguous" in line and "Legal moves" in line for line in out)


def test_draw_offers_both_ways():
    human = HumanAgent(input_fn=Script("draw"), output_fn=[].append)
    end = play_game(d.Game("damii"), [human, DrawAgent(accept=True)])
    assert end == GameEnd(None, "1/2-1/2", "agreed draw")

    out: list[str] = []
    human = HumanAgent(input_fn=Script("draw", "quit"), output_fn=out.append)
    end = play_game(d.Game("damii"), [human, DrawAgent(accept=False)])
    assert end == GameEnd(None, "*", "abandoned") and "draw declined; play on" in out

    script = Script("maybe", "y")
    human = HumanAgent(input_fn=script, output_fn=[].append)
    end = play_game(d.Game("damii"), [DrawAgent(offer=True), human])
    assert end.termination == "agreed draw" and len(script.prompts) == 2


def test_end_of_input_leaves_the_game_unfinished(tmp_path):
    out: list[str] = []
    result = play_human("damath", "greedy", colour="black", pdn_path=tmp_path / "g.pdn",
                        input_fn=Script(), output_fn=out.append)
    assert result.end == GameEnd(None, "*", "abandoned")
    assert len(result.game.move_stack) == 1  # the agent (White) moved first
    assert "scores:" in "\n".join(out)  # the Damath board
    assert read_file(tmp_path / "g.pdn")[0].tags["Black"] == "human"


def test_play_cli(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("1\nresign\n"))
    rc = main(["play", "--variant", "triestine", "--opponent", "random", "--clock", "none",
               "--pdn", str(tmp_path / "p.pdn"), "--seed", "1"])
    assert rc == 0
    assert "result 0-1 (resignation)" in capsys.readouterr().out
    assert read_file(tmp_path / "p.pdn")[0].tags["Variant"] == "triestine"
