"""Where numba keeps the project's compiled code, and the cache the packages ship.

Numba compiles the rules engine, the search and the pattern trainer the first time they
run: about a minute of CPU for the environments and two more for the search, paid again on
every fresh machine, container and Ray node. The packages therefore ship that cache, made on
the development machine by ``damii compile --ship``, and this module points numba at it:

* every ``@njit(cache=True)`` function of a registered package (``damii_env`` registers
  itself; ``damii_agents`` and ``damii_training`` register in their ``__init__``) is cached
  under ``<cache>/<package>-<stamp>/``, where ``stamp`` hashes the Python files of that
  package and of the packages registered before it (the ones it calls). A change in a
  callee's file therefore gives its callers a fresh folder too: numba's own check compares a
  function with its own file only, and a cached caller kept running an edited callee's old
  code;
* the first use of a stamp copies the package's shipped folder of the same stamp, if there
  is one, into the cache (the shipped files stay read-only). Numba loads an entry only where
  its Python, numba version and CPU match the machine that made it; any other machine
  compiles as before and keeps its own entries (``DAMII_SHIPPED_CACHE=0`` ignores the shipped
  folders, to measure a compilation from nothing);
* ``<cache>`` is ``$DAMII_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/damii-env``, else
  ``$XDG_CACHE_HOME/damii-env`` (``~/.cache/damii-env``); where none can be written (a
  read-only home) a folder in the system's temporary directory, and where even that fails a
  fresh temporary folder for the process, never an error.

While a function of a registered package compiles for longer than a moment, one line on
standard error says so (:func:`compile_notice`), once a process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from numba.core import caching, event

SHIPPED_FOLDER = "_numba_cache"
"""The folder of a registered package that holds its shipped cache, one ``<package>-<stamp>``
folder inside."""
_PACKAGES: dict[str, Path] = {}  # package name -> its folder, in the order registered
_STAMPS: dict[str, str] = {}
_CACHE_ROOT: list[Path] = []
_LOCK = threading.Lock()


KEEP = 4
"""Cache folders kept a package (the most recently used): older stamps are removed."""


def compiled_sources(folder: Path) -> list[Path]:
    """The Python files of a package folder, its shipped cache aside: those that define
    compiled functions and those whose constants they compile in (numba freezes a global
    into the code; tracing which module's constants reach which function is not worth its
    risk, so every file counts)."""
    return sorted(p for p in folder.rglob("*.py") if SHIPPED_FOLDER not in p.parts)


def package_stamp(name: str) -> str:
    """Hash of the compiled sources of package `name` and of those registered before it."""
    if name not in _STAMPS:
        digest = hashlib.sha256()
        for package, folder in _PACKAGES.items():
            for path in compiled_sources(folder):
                digest.update(f"{package}/{path.relative_to(folder).as_posix()}\0".encode())
                digest.update(path.read_bytes())
            if package == name:
                break
        _STAMPS[name] = digest.hexdigest()[:16]
    return _STAMPS[name]


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def cache_root() -> Path:
    """The folder that holds this machine's compiled code (see the module's docstring)."""
    with _LOCK:
        if not _CACHE_ROOT:
            env = os.environ
            home = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            candidates = [env.get("DAMII_CACHE_DIR"),
                          env.get("NUMBA_CACHE_DIR") and os.path.join(env["NUMBA_CACHE_DIR"],
                                                                      "damii-env"),
                          os.path.join(home, "damii-env"),
                          os.path.join(tempfile.gettempdir(), f"damii-env-{os.getuid()}")]
            root = next((Path(c) for c in candidates if c and _writable(Path(c))), None)
            _CACHE_ROOT.append(root or Path(tempfile.mkdtemp(prefix="damii-env-")))
        return _CACHE_ROOT[0]


def package_cache(name: str) -> Path:
    """This machine's cache folder of package `name` at its current sources, seeded from the
    package's shipped cache on first use."""
    folder = cache_root() / f"{name}-{package_stamp(name)}"
    if not folder.exists() and os.environ.get("DAMII_SHIPPED_CACHE", "1") != "0":
        shipped = _PACKAGES[name] / SHIPPED_FOLDER / folder.name
        if shipped.is_dir():
            partial = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
            try:
                shutil.copytree(shipped, partial, dirs_exist_ok=True)
                os.replace(partial, folder)  # atomic: another process may be seeding it too
            except OSError:
                shutil.rmtree(partial, ignore_errors=True)
        _prune(name, folder)
    return folder


def _prune(name: str, current: Path) -> None:
    """Remove the package's cache folders of older stamps beyond the :data:`KEEP` most
    recently used (the current one always stays)."""
    try:
        others = [p for p in current.parent.glob(f"{name}-*")
                  if p != current and p.is_dir() and "." not in p.name]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[KEEP - 1:]:
            shutil.rmtree(old, ignore_errors=True)
    except OSError:
        pass


class PackageCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Numba's cache locator for the functions of registered packages (the module's
    docstring); functions elsewhere fall through to numba's own locators."""

    def __init__(self, py_func, py_file: str, package: str, relative: Path):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(package_cache(package) / relative.parent)

    def get_cache_path(self) -> str:
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        path = Path(py_file).resolve()
        for package, folder in _PACKAGES.items():
            if path.is_relative_to(folder):
                self = cls(py_func, py_file, package, path.relative_to(folder))
                try:
                    self.ensure_cache_path()
                except OSError:
                    return None
                return self
        return None


MACHINE_FILE = "MACHINE"
"""The file of a shipped folder that names the processor its code was compiled for."""


def machine() -> str:
    """This machine as numba's cache tells machines apart: target, processor, features."""
    from numba.core.registry import cpu_target

    return " ".join(cpu_target.target_context.codegen().magic_tuple())


def shipped_machine(name: str) -> str | None:
    """The machine package `name`'s shipped cache was compiled on, None if it ships none for
    its current sources."""
    path = (_PACKAGES[name] / SHIPPED_FOLDER / f"{name}-{package_stamp(name)}"
            / MACHINE_FILE)
    return path.read_text().strip() if path.is_file() else None


def registered_packages() -> dict[str, Path]:
    """The registered packages' folders by name, in the order they registered."""
    return dict(_PACKAGES)


def register_package(name: str, folder: str | os.PathLike) -> None:
    """Cache the compiled functions of package `name` (its folder) as this module says; call
    before the package defines any, after the packages it calls have registered."""
    _PACKAGES.setdefault(name, Path(folder).resolve())
    if PackageCacheLocator not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, PackageCacheLocator)
        event.register("numba:compile", _CompileNotice())


class _CompileNotice(event.Listener):
    """Says once a process, on standard error, that the project's code is being compiled,
    when an outermost compilation of a registered package's function has run a second."""

    def __init__(self):
        self.depth = 0
        self.timer: threading.Timer | None = None
        self.started = 0.0
        self.said = False

    def on_start(self, ev):
        self.depth += 1
        if self.depth == 1 and not self.said and _registered(ev.data.get("dispatcher")):
            self.started = time.perf_counter()
            self.timer = threading.Timer(1.0, self._say)
            self.timer.daemon = True
            self.timer.start()

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0 and self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _say(self):
        if not self.said:
            self.said = True
            compile_notice()


def _registered(dispatcher) -> bool:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.split(".")[0] in _PACKAGES


def compile_notice(stream=None) -> None:
    """The line printed while the project's code compiles on a machine for the first time."""
    stream = stream or sys.stderr
    shipped = shipped_machine("damii_env")
    why = ("the shipped compiled code does not fit these sources" if shipped is None
           else "the shipped compiled code is for another processor" if shipped != machine()
           else "a part the shipped cache does not hold")
    try:
        print(f"damii-env: compiling the engine for this machine ({why}; once, a minute or "
              f"more; cached in {cache_root()})...", file=stream, flush=True)
    except (OSError, ValueError):
        pass


register_package("damii_env", Path(__file__).parent)
