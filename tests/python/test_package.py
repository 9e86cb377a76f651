"""The package's surface: top-level API, one version, the Triton version check, the command
entry points."""

import pathlib
import subprocess
import sys
import sysconfig
from importlib.metadata import entry_points

import pytest

import disttune
from disttune import _triton_hook
from disttune.autotuner import contextual_autotune
from disttune.tune import autotune

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_top_level_api_is_the_spec_paths():
    assert disttune.autotune is autotune
    assert disttune.contextual_autotune is contextual_autotune
    assert {"autotune", "contextual_autotune", "__version__", "DisttuneError"} <= set(disttune.__all__)


def test_one_version_for_cmake_pyproject_and_the_module():
    version = (ROOT / "VERSION").read_text().strip()
    assert disttune.__version__ == version
    from importlib.metadata import version as installed_version

    assert installed_version("disttune") == version


@pytest.mark.parametrize("version", ["3.2.0", "3.6.0", "3.6.1+git1234", "3.5"])
def test_supported_triton_versions_pass(version):
    _triton_hook.check_triton_version(version)


@pytest.mark.parametrize("version", ["3.1.0", "3.7.0", "4.0.0", "2.3.1", "unknown", ""])
def test_other_triton_versions_are_one_clear_error(version):
    with pytest.raises(disttune.DisttuneError) as raised:
        _triton_hook.check_triton_version(version)
    assert isinstance(raised.value, RuntimeError)
    message = str(raised.value)
    assert f"this process has Triton {version}" in message
    assert "supports Triton >= 3.2, < 3.7" in message


def test_python_dash_m_and_the_console_script_run_the_same_command(tmp_path):
    module = subprocess.run([sys.executable, "-m", "disttune", "verify", "--root", str(tmp_path)],
                            capture_output=True, text=True, check=True)
    (declared,) = [e for e in entry_points(group="console_scripts") if e.name == "disttune"]
    assert declared.value == "disttune.cli:main"
    script = pathlib.Path(sysconfig.get_path("scripts")) / "disttune"
    assert script.exists(), f"the package installs the disttune console script as {script}"
    console = subprocess.run([str(script), "verify", "--root", str(tmp_path)],
                             capture_output=True, text=True, check=True)
    assert module.stdout == console.stdout == "0 record files checked, 0 good, 0 bad\n"
