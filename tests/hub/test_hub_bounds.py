"""``damii hub`` bounded (issue 63, finding H16): ``stop`` ends a ``move-time`` search
after its iteration in progress, a huge input line is cut as it is read, and the
protocol's ``set-param name=player`` runs no program unless the engine was started with
``--allow-programs``."""

from __future__ import annotations

import io
import threading

from damii_app.hub import HubEngine, read_lines
from damii_env import hub as H


class Lines(io.StringIO):
    """An output that tells when a line of some command was written."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = threading.Condition()

    def write(self, text: str) -> int:
        with self.seen:
            n = super().write(text)
            self.seen.notify_all()
        return n

    def wait_for(self, command: str, timeout: float = 120.0) -> list[str]:
        with self.seen:
            ok = self.seen.wait_for(lambda: any(H.parse_line(x)[0] == command
                                                for x in self.getvalue().splitlines()),
                                    timeout)
        assert ok, f"no {command}: {self.getvalue()[-500:]}"
        return self.getvalue().splitlines()


def started(player: str = "alphabeta", allow: bool = False) -> tuple[HubEngine, Lines]:
    out = Lines()
    engine = HubEngine(out, "damii", player, allow_programs=allow)
    for line in ("hub", "init"):
        engine.handle(line)
    out.wait_for("ready")
    return engine, out


def test_h16_stop_ends_a_move_time_search_with_its_best_move_so_far():
    engine, out = started("alphabeta:tt=16")
    engine.handle(H.format_line("pos", pos="W" + "b" * 20 + "e" * 10 + "w" * 20))
    engine.handle("level move-time=20")
    engine.handle("go think")
    out.wait_for("info")  # the search runs (its first iteration is done)
    engine.handle("stop")
    lines = out.wait_for("done")
    # before: one search of the whole time, and done came 19 s after stop. The search's
    # own time in its last info line (not this test's clock) says where it stopped
    infos = [H.parse_line(x)[1] for x in lines if x.startswith("info")]
    assert float(infos[-1]["time"]) < 10.0, infos[-1]
    engine.thread.join(30)
    assert not engine.thread.is_alive()


def test_h16_a_huge_line_is_cut_as_it_is_read():
    text = "ping " + "x" * 3_000_000 + "\nping\n" + "y" * 50 + "\n"
    lines = list(read_lines(io.StringIO(text), limit=1000))
    assert [len(x) for x in lines] == [1000, 5, 51]
    assert lines[1] == "ping\n"


def test_h16_set_param_player_runs_no_program_unless_allowed():
    engine, out = started("random")
    engine.handle('set-param name=player value="hub:touch-me-never"')
    engine.handle("ping")
    lines = out.wait_for("pong")
    assert any("runs a program" in x and x.startswith("error") for x in lines), lines
    assert engine.player_spec == "random"
    allowed = HubEngine(Lines(), "damii", "random", allow_programs=True)
    allowed.handle('set-param name=player value="hub:true"')
    assert allowed.player_spec == "hub:true"
