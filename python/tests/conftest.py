"""Shared fixtures: TPC-H data made by the sloth command line."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def sloth_binary() -> Path | None:
    """The `sloth` command line: $SLOTH_BIN, else one built in target/."""
    if "SLOTH_BIN" in os.environ:
        path = Path(os.environ["SLOTH_BIN"])
        if not path.exists():
            raise FileNotFoundError(f"SLOTH_BIN={path} does not exist")
        return path
    for profile in ("release", "debug"):
        path = REPO / "target" / profile / "sloth"
        if path.exists():
            return path
    found = shutil.which("sloth")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def sloth_cli() -> Path:
    path = sloth_binary()
    if path is None:
        pytest.skip("no sloth command line (build it with `cargo build` or set SLOTH_BIN)")
    return path


@pytest.fixture(scope="session")
def tpch_dir(sloth_cli, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tpch-sf0.01")
    subprocess.run(
        [str(sloth_cli), "gen", "tpch", "--scale", "0.01", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out
