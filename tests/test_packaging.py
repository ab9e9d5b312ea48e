"""The wheel: it ships the Turtle and the engine under ``stackgraph/``, nothing at top level, and an
installed copy (not this source tree) loads the built-in graph.

The repository is copied to a temporary directory first, so the build neither writes ``build/`` or
``*.egg-info`` into the working tree nor races with files being edited there. The wheel is built
offline (no build isolation: setuptools comes from the project's environment) and installed with
``pip --target``. The installed copy runs in ``python -S``: no site-packages ``.pth`` files are
processed, so the editable install's import hook is never loaded; site-packages is then appended
to ``sys.path`` for the dependencies only.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from stackgraph.graph.store import new_graph

ROOT = Path(__file__).resolve().parents[1]
IGNORE = shutil.ignore_patterns(
    ".venv",
    ".git",
    "__pycache__",
    "*.egg-info",
    "build",
    "dist",
    "tests",
    ".notes",
    ".ruff_cache",
    ".pytest_cache",
    "out",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(snapshot of the source tree, the wheel built from it)."""
    base = tmp_path_factory.mktemp("packaging")
    source = base / "src"
    shutil.copytree(ROOT, source, ignore=IGNORE)
    out = base / "wheel"
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-q",
        "-w",
        str(out),
        str(source),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    wheels = list(out.glob("stackgraph-*.whl"))
    assert len(wheels) == 1
    return source, wheels[0]


def test_wheel_contents(built: tuple[Path, Path]) -> None:
    source, wheel = built
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names}
    assert top == {"stackgraph", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    assert not any(name.startswith(("graph/", "server/", "ontology/", "cli/", "tui/")) for name in names)

    assert "stackgraph/graph/store.py" in names
    assert "stackgraph/graph/validate.py" in names
    assert "stackgraph/cli/main.py" in names
    assert {"stackgraph/ontology/vocabulary.ttl", "stackgraph/ontology/shapes.ttl"} <= set(names)
    data = {
        name.rsplit("/", 1)[1]
        for name in names
        if name.startswith("stackgraph/ontology/data/") and name.endswith(".ttl")
    }
    assert data == {path.name for path in (source / "ontology" / "data").glob("*.ttl")}
    assert "sources.ttl" in data

    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "stackgraph = stackgraph.cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def _expected_triples(source: Path) -> int:
    graph = new_graph()
    for path in [
        source / "ontology" / "vocabulary.ttl",
        *sorted((source / "ontology" / "data").glob("*.ttl")),
    ]:
        graph.parse(str(path), format="ox-turtle")
    return len(graph)


PROBE = """
import importlib.util, json, sys
sys.path.extend(SITE)
import stackgraph
import stackgraph.graph.store as store
graph = store.load_graph().graph
print(json.dumps({
    "store": store.__file__,
    "package_paths": list(stackgraph.__path__),
    "files": [str(p) for p in store.builtin_files()],
    "shapes": str(store.shapes_file()),
    "triples": len(graph),
    "editable_hooks": sorted(m for m in sys.modules if "editable" in m),
    "top_level_graph": importlib.util.find_spec("graph") is not None,
    "top_level_server": importlib.util.find_spec("server") is not None,
}))
"""

CLI = """
import sys
sys.path.extend(SITE)
from stackgraph.cli.main import main
sys.exit(main(["stats", "--json"]))
"""


def _run_installed(code: str, target: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    program = code.replace("SITE", repr(site.getsitepackages()))
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-S", "-c", program], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_installed_wheel_loads_the_builtin_graph(built: tuple[Path, Path], tmp_path: Path) -> None:
    source, wheel = built
    target = tmp_path / "site"
    install = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--no-index",
        "--no-compile",
        "-q",
        "--target",
        str(target),
        str(wheel),
    ]
    result = subprocess.run(install, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert not (target / "graph").exists() and not (target / "server").exists()

    probe = _run_installed(PROBE, target, tmp_path)
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout)
    assert seen["store"].startswith(str(target)), seen["store"]
    assert all(path.startswith(str(target)) for path in seen["package_paths"]), seen["package_paths"]
    assert seen["files"] and all(path.startswith(str(target)) for path in seen["files"])
    assert seen["shapes"].startswith(str(target)) and Path(seen["shapes"]).is_file()
    assert seen["editable_hooks"] == []
    assert not seen["top_level_graph"] and not seen["top_level_server"]
    expected = _expected_triples(source)
    assert seen["triples"] == expected > 1000

    cli = _run_installed(CLI, target, tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["triples"] == expected
