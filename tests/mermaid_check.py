"""Run diagrams through the real Mermaid parser (npm ``mermaid`` under jsdom, tests/js).

CI installs it with ``cd tests/js && npm ci``; without node or node_modules the tests that need
it skip, saying so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

JS_DIR = Path(__file__).parent / "js"
SCRIPT = JS_DIR / "mermaid_parse.mjs"


def require_mermaid() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (Mermaid parser needs Node 20)")
    if not (JS_DIR / "node_modules" / "mermaid").is_dir():
        pytest.skip("Mermaid parser not installed: run `cd tests/js && npm ci`")


def parse_files(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    """Parse every diagram in ``paths`` (.mmd files, or .md/.html pages holding diagrams)."""
    require_mermaid()
    return subprocess.run(
        ["node", str(SCRIPT), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=JS_DIR,
    )
