"""A fake Hub engine for tests/hub: it plays one legal first move (32-28 as White from the
start, 19-23 as Black after any first move), then misbehaves as its MODE says:

- ``exit``: exits (status 3, a word on stderr) at the next ``go``;
- ``hang``: stops reading its input and never answers;
- ``noise``: prints lines that are no command, and never ``done``;
- ``garbage``: answers ``done move=hello``;
- ``illegal``: answers the illegal move 1-2;
- ``hang-start``: never answers ``hub``;
- ``error-init``: says ``error`` then exits at ``init``;
- ``info-flood``: prints ``info`` lines without end (never ``done``);
- ``long-line``: writes 1 MB chunks without a newline, without end;
- ``child``: starts a ``sleep 900`` child in its process group (its pid on stderr as
  ``child=PID``) and plays on.

Usage: ``python fake_engine.py MODE``.
"""

from __future__ import annotations

import sys
import time


def main(mode: str) -> int:
    goes, side = 0, "W"
    for line in sys.stdin:
        words = line.split()
        command = words[0] if words else ""
        if command == "hub":
            if mode == "child":
                import subprocess
                child = subprocess.Popen(["sleep", "900"])
                print(f"child={child.pid}", file=sys.stderr, flush=True)
            if mode == "hang-start":
                time.sleep(3600)
            print("id name=fake version=1")
            print("param name=hash value=1 type=int min=1 max=8")
            print("wait")
        elif command == "init":
            if mode == "error-init":
                print('error message="no tables here"', flush=True)
                return 2
            print("ready")
        elif command == "pos":
            side = line.split("pos=", 1)[1][0] if "pos=" in line else "W"
        elif command == "go":
            goes += 1
            if goes == 1:
                print("info depth=1 score=0.00")
                print("done move=" + ("32-28" if side == "W" else "19-23"))
            elif mode == "exit":
                print("fake engine: bye", file=sys.stderr, flush=True)
                return 3
            elif mode == "hang":
                time.sleep(3600)
            elif mode == "noise":
                print("@@@ zzz not a command")
            elif mode == "info-flood":
                n = 0
                while True:
                    n += 1
                    print(f"info depth={n} score=0.00 nodes=1 pv=32-28", flush=True)
            elif mode == "long-line":
                chunk = "x" * 1_000_000
                while True:
                    sys.stdout.write(chunk)
                    sys.stdout.flush()
            elif mode == "garbage":
                print("done move=hello")
            elif mode == "illegal":
                print("done move=1-2")
        elif command == "quit":
            return 0
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "exit"))
