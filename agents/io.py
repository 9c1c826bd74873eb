"""The one atomic file write: a file is either its old content or its new one, never half of
either (a temporary file in the same folder, flushed to disk, then renamed over the target).

Used for checkpoints, learned weights and a training run's files (config, logs, report)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

FILE_MODE = 0o644
"""The written file's permissions: readable by all (``mkstemp`` alone makes it private)."""


def write_atomic(path: str | Path, content: str | bytes | Callable[[BinaryIO], object]) -> Path:
    """Replace the file at `path` in one step with `content`: text (written as UTF-8),
    bytes, or a function that writes into the binary file it is given (``torch.save``,
    ``np.savez_compressed``). Creates the parent folder; on any error (Ctrl-C included)
    the temporary file is removed and the old file is left as it was. Returns `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(content, str):
                f.write(content.encode("utf-8"))
            elif isinstance(content, bytes):
                f.write(content)
            else:
                content(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
