"""Checkpoints: written atomically, loaded without executing pickled code.

A checkpoint is a ``torch.save`` file of plain data only (tensors, numbers, strings,
lists, dicts): the network weights, the network shape, the variant and its rule
options, the training step, and whatever state the trainer adds (optimizer, RNG).
It is loaded with ``torch.load(weights_only=True)``, which refuses arbitrary objects.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from pathlib import Path
from typing import Any

import torch

from damii_agents.io import write_atomic
from damii_agents.network import NetworkShape, PolicyValueNet
from damii_env.errors import DamiiError

FORMAT = "damii-env-checkpoint"
VERSION = 1


class CheckpointError(DamiiError):
    """A checkpoint that is missing, corrupt or not a damii-env checkpoint."""


def save_checkpoint(path: str | Path, net: PolicyValueNet, variant: str,
                    rule_options: dict[str, Any], step: int, **extra: Any) -> Path:
    """Write a checkpoint atomically (:func:`damii_agents.io.write_atomic`)."""
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "variant": variant,
        "rule_options": dict(rule_options),
        "network": net.shape.to_dict(),
        "step": int(step),
        "model": net.state_dict(),
        **extra,
    }
    return write_atomic(path, lambda f: torch.save(payload, f))


def _verify_zip(path: Path) -> None:
    """Check every member's CRC (``torch.save`` writes a zip): a damaged file is refused
    before anything is unpickled or loaded."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as exc:
        raise CheckpointError(
            f"checkpoint {str(path)!r} cannot be read: damaged or not a checkpoint ({exc}); "
            f"expected a file written by damii-env's trainer") from None
    if bad is not None:
        raise CheckpointError(
            f"checkpoint {str(path)!r} is damaged: {bad!r} fails its checksum; "
            f"restore the file from a good copy")


def load_checkpoint(path: str | Path, device: str = "cpu") -> dict[str, Any]:
    """Read a checkpoint's data (no code is executed); raises :class:`CheckpointError`."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    _verify_zip(path)
    try:
        data = torch.load(path, map_location=device, weights_only=True)
    except Exception as exc:  # torch raises many kinds for a damaged or foreign file
        raise CheckpointError(
            f"checkpoint {str(path)!r} cannot be read ({type(exc).__name__}: {exc}); "
            f"expected a file written by damii-env's trainer"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a damii-env checkpoint")
    for key in ("variant", "rule_options", "network", "step", "model"):
        if key not in data:
            raise CheckpointError(f"checkpoint {str(path)!r} lacks {key!r}")
    _check_fields(data, path)
    return data


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _check_fields(data: dict[str, Any], path: Path) -> None:
    """The types of a checkpoint's fields, and finite weights: a crafted or damaged file
    is refused here with the field it got wrong, not by a traceback later."""
    name = str(path)
    version = data.get("version", VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= VERSION:
        raise CheckpointError(f"checkpoint {name!r}: version {str(version)[:20]!r} is not one "
                              f"this damii-env reads (version {VERSION}); a newer damii-env "
                              f"wrote it, or it was altered: upgrade damii-env or export the "
                              f"checkpoint again")
    if not isinstance(data["variant"], str):
        raise CheckpointError(f"checkpoint {name!r}: variant must be a name, got "
                              f"{type(data['variant']).__name__}")
    options = data["rule_options"]
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise CheckpointError(f"checkpoint {name!r}: rule_options must be a mapping of option "
                              f"names to values, got {type(options).__name__}")
    if not isinstance(data["network"], dict):
        raise CheckpointError(f"checkpoint {name!r}: network must be a mapping of its shape, "
                              f"got {type(data['network']).__name__}")
    step = data["step"]
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise CheckpointError(f"checkpoint {name!r}: step must be a non-negative integer, got "
                              f"{step!r:.40}")
    potential = data.get("value_potential", {})
    if not isinstance(potential, dict) or not all(
            isinstance(k, str) and _is_number(v) and math.isfinite(v)
            for k, v in potential.items()):
        raise CheckpointError(f"checkpoint {name!r}: value_potential must map shaping names to "
                              f"finite numbers, got {str(potential)[:60]!r}")
    model = data["model"]
    if not isinstance(model, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in model.items()):
        raise CheckpointError(f"checkpoint {name!r}: model must map parameter names to "
                              f"tensors, got {type(model).__name__}")
    for key, tensor in model.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"checkpoint {name!r}: the weights {key!r} hold NaN or "
                                  f"infinite values; the network is broken (train it again, "
                                  f"or use an earlier checkpoint)")


def check_model(model: dict[str, torch.Tensor], expected: dict[str, torch.Tensor],
                path: str | Path) -> None:
    """Refuse weights whose names, shapes or dtypes differ from the network's own
    (`expected`, e.g. a state_dict on the meta device): loading would cast them silently,
    a complex tensor losing its imaginary part."""
    missing, extra = sorted(set(expected) - set(model)), sorted(set(model) - set(expected))
    if missing or extra:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has weights that do not fit its network: "
            f"missing {', '.join(missing[:5]) or 'none'}; "
            f"unexpected {', '.join(extra[:5]) or 'none'}")
    for key, want in expected.items():
        got = model[key]
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            raise CheckpointError(
                f"checkpoint {str(path)!r}: weights {key!r} are {got.dtype} "
                f"{tuple(got.shape)}, the network needs {want.dtype} {tuple(want.shape)}")


def load_network(path: str | Path, device: str = "cpu") -> tuple[PolicyValueNet, dict[str, Any]]:
    """The network of a checkpoint (in eval mode) and the checkpoint's data."""
    data = load_checkpoint(path, device)
    try:
        shape = NetworkShape(**data["network"])
        with torch.device("meta"):  # the weights' names, shapes and dtypes, built instantly
            expected = PolicyValueNet(shape).state_dict()
    except (TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} has weights that do not fit: {exc}") \
            from exc
    check_model(data["model"], expected, path)
    _check_orientation(shape, data, path)
    try:
        net = PolicyValueNet(shape)
        net.load_state_dict(data["model"])
    except (TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} has weights that do not fit: {exc}") \
            from exc
    net.to(device).eval()
    return net, data


def _check_orientation(shape: NetworkShape, data: dict[str, Any], path: str | Path) -> None:
    """Refuse a network whose board orientation is not its rules': its planes would put
    every square in the wrong place (a Damii net read as standard plays nonsense)."""
    from damii_env.rules import make_rules

    try:
        rules = make_rules(data["variant"], **data["rule_options"])
    except DamiiError:  # unknown variant or options: refused where the rules are built
        return
    if shape.orientation != rules.orientation or shape.board_size != rules.board_size:
        raise CheckpointError(
            f"checkpoint {str(path)!r}: its network is for a {shape.board_size}x"
            f"{shape.board_size} board in {shape.orientation!r} orientation, but "
            f"{data['variant']} with its rule options is {rules.board_size}x{rules.board_size} "
            f"{rules.orientation!r}; the file was altered or mislabelled")


def export_weights(source: str | Path, target: str | Path, **info: Any) -> Path:
    """Write a small playing checkpoint (weights and metadata, no trainer state) from a run's.

    Extra keyword `info` (training time, samples/s, ...) is stored alongside.
    """
    net, data = load_network(source)
    return save_checkpoint(target, net, data["variant"], data["rule_options"], data["step"],
                           **{k: v for k, v in info.items() if v is not None})
