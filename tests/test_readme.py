"""Every command the README shows runs, exits 0 and prints something (or writes its file).

The commands are read from the README's console blocks, so an example that is added or changed
is tested without touching this file. They run in-process through the CLI's ``main`` (the same
code as the ``stackgraph`` script, without an interpreter start per command) in a temporary
directory. Left out, each for a reason that is checked elsewhere: ``make`` targets (they are what
runs this suite), ``stackgraph serve`` (a long-running server: tests/test_sparql_http.py and
tests/test_mcp_e2e.py start it), and the triplestore round trip (``oxigraph serve``, ``push``,
``--store``: needs an Oxigraph server, tests/test_remote_store.py).
"""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from stackgraph.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"
SKIP = (
    re.compile(r"^make\b"),
    re.compile(r"^oxigraph\b"),
    re.compile(r"\bstackgraph (serve|push)\b"),
    re.compile(r"--store\b"),
)


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def _commands() -> list[str]:
    commands = []
    for block in _blocks("console") + _blocks("sh"):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ").strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


COMMANDS = _commands()
RUNNABLE = [c for c in COMMANDS if not any(p.search(c) for p in SKIP)]


def _argv(command: str) -> tuple[list[str], str | None]:
    """The CLI arguments of a README line, and the text piped into it (``printf '...' |``)."""
    stdin = None
    if "|" in command and command.startswith("printf"):
        left, command = command.split("|", 1)
        stdin = shlex.split(left)[1].replace("\\n", "\n")
    words = shlex.split(command, comments=True)
    words = [w for w in words if not re.fullmatch(r"\[.*\]", w)]  # "[FILE...]": an optional placeholder
    assert Path(words[0]).name == "stackgraph", command
    return words[1:], stdin


def test_the_readme_has_examples_to_run() -> None:
    assert len(RUNNABLE) >= 12
    assert any("export" in c for c in RUNNABLE) and any("docs" in c for c in RUNNABLE)


@pytest.mark.parametrize("command", RUNNABLE)
def test_readme_command_runs(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "query.rq").write_text(
        "SELECT ?layer WHERE { ?layer a sg:Layer } LIMIT 3\n", encoding="utf-8"
    )
    argv, stdin = _argv(command)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8"))))
    before = set(tmp_path.rglob("*"))
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, f"{command}\n{err}"
    assert "Traceback" not in err and "error:" not in err, err
    assert "note: no entity is named" not in err, err  # the README spells names the way the tool does
    written = set(tmp_path.rglob("*")) - before
    assert out.strip() or written, command


def test_readme_json_snippets_parse() -> None:
    for block in _blocks("json"):
        config = json.loads(block)
        assert "stackgraph" in config["mcpServers"]
