"""Shared test fixtures. Data paths are module constants in `data_paths.py` (parametrize needs
them when a module is collected); fixtures that need no collection-time value live here."""

from __future__ import annotations

import pytest


def _script(name: str):
    """scripts/<name>.py as a module (a script, not part of the package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_script", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def accuracy_script():
    """scripts/accuracy.py: its statistics and rules."""
    return _script("accuracy")


@pytest.fixture(scope="session")
def band_stats():
    """scripts/band_stats.py: the error-band statistics scripts/accuracy.py uses."""
    return _script("band_stats")


@pytest.fixture
def cli():
    """Run the perfmodel CLI in-process: ``cli("predict", "gemm", "m=1", ...)`` -> click Result.
    Arguments may be paths; exceptions are caught so exit codes and messages can be asserted."""
    from click.testing import CliRunner

    from perfmodel.cli.main import cli as main

    def invoke(*args, **kw):
        return CliRunner().invoke(main, [str(a) for a in args], **kw)

    return invoke


@pytest.fixture(scope="session")
def mi300x():
    from perfmodel.arch import load_arch

    return load_arch("mi300x")


@pytest.fixture
def edited_arch(tmp_path):
    """A shipped archspec changed by ``edit`` (a function of its YAML tree), loaded from a copy
    in tmp_path: ``edited_arch("rx7900xtx", lambda spec: ...)`` -> Arch."""
    import yaml

    from perfmodel.arch import archspec_dir, load_arch

    def load(key: str, edit) -> object:
        spec = yaml.safe_load((archspec_dir() / f"{key}.yaml").read_text())
        edit(spec)
        p = tmp_path / f"{key}-edited.yaml"
        p.write_text(yaml.safe_dump(spec, sort_keys=False))
        return load_arch(str(p))

    return load


@pytest.fixture(scope="session")
def suite_size() -> int:
    """Cases in the built-in suite (kernels/suite.yaml): what `predict --suite` rows and skip notes add up to."""
    import yaml

    from perfmodel.arch import data_path

    return len(yaml.safe_load(data_path("kernels", "suite.yaml").read_text()))
