"""``damii train NAME`` runs a config shipped with the package (issue 60): the configs are
package data (``damii_training.configs``, the folder ``configs/`` of a clone), found by
name from any directory; an unknown name is refused with the list of shipped ones."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("yaml")

from damii_training.config import (  # noqa: E402
    ConfigError,
    config_file,
    load_config,
    shipped_config_path,
    shipped_configs,
)

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_the_shipped_configs_are_the_folder_configs():
    assert shipped_configs() == tuple(sorted(p.stem for p in CONFIGS.glob("*.yaml")))
    assert "damii_quick" in shipped_configs() and len(shipped_configs()) >= 20
    assert shipped_config_path("damii_quick").samefile(CONFIGS / "damii_quick.yaml")


def test_a_name_is_found_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("damii_quick", "damii_quick.yaml"):
        assert config_file(name).samefile(CONFIGS / "damii_quick.yaml")
    config = load_config("international_tdleaf", ["total_steps=1000"])
    assert config.name == "international-tdleaf" and config.total_steps == 1000


def test_a_file_wins_over_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "damii_quick").write_text("name: mine\nvariant: damii\n")
    assert config_file("damii_quick") == Path("damii_quick")
    assert load_config("damii_quick").name == "mine"


@pytest.mark.parametrize("wrong", ["damii_quik", "chess", "nowhere/damii_quick.yaml"])
def test_an_unknown_name_lists_the_shipped_configs(wrong, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as error:
        load_config(wrong)
    message = str(error.value)
    assert f"config file {wrong!r} does not exist" in message
    assert ", ".join(shipped_configs()) in message
    if wrong == "damii_quik":
        assert "(did you mean damii_quick?)" in message


def test_damii_train_names_the_shipped_configs_on_a_wrong_name(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    from damii_app.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["train", "damii_quik", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("damii: error: config file 'damii_quik' does not exist")
    assert "did you mean damii_quick?" in err and "triestine_tdleaf" in err
    assert not (tmp_path / "runs").exists()
