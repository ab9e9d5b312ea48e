"""Bounds on what a caller can hand any surface: long names, empty paths, batches of nothing,
oversized prompt arguments. Each is refused quickly with one line, never a traceback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import McpError

from stackgraph.cli.main import main
from stackgraph.graph.engine import Engine
from stackgraph.graph.model import MAX_NAME_CHARS, NameTooLong, UnknownEntity
from stackgraph.server.mcp_resources import MAX_SYMPTOM_CHARS
from stackgraph.server.mcp_server import build_server

LONG = "x" * 100_000


def _cli(args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "stackgraph.cli", *args], input=stdin, capture_output=True, timeout=120
    )


def test_a_long_name_is_refused_at_once_by_the_engine(engine: Engine) -> None:
    started = time.monotonic()
    with pytest.raises(NameTooLong) as caught:
        engine.resolve(LONG)
    assert time.monotonic() - started < 0.5
    assert str(caught.value) == f"name is 100,000 characters; the limit is {MAX_NAME_CHARS:,}"
    assert isinstance(caught.value, UnknownEntity)  # every surface already reports those
    assert engine.resolve("NVLink").display  # a name of ordinary length still resolves


@pytest.mark.parametrize("command", ["describe", "export"])
def test_the_cli_refuses_a_long_name_in_one_line(command: str, capsys) -> None:
    started = time.monotonic()
    assert main([command, LONG]) != 0
    err = capsys.readouterr().err
    assert time.monotonic() - started < 10
    assert err.count("\n") == 1 and "limit is 300" in err and len(err) < 200


def test_docs_refuses_an_empty_directory_and_writes_nothing(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["docs", ""]) != 0
    assert "OUTDIR is empty" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_ask_batch_of_only_invalid_lines_exits_non_zero() -> None:
    done = _cli(["ask", "--json", "--no-semantic", "-"], b"\n   \n\xff\xfe\n")
    assert done.returncode == 2, done.stderr
    assert [json.loads(line)["answered"] for line in done.stdout.decode().splitlines()] == [False] * 3
    assert done.stderr.decode().strip().count("\n") == 0 and b"Traceback" not in done.stderr
    empty = _cli(["ask", "--no-semantic", "-"], b"")
    assert empty.returncode == 2 and b"no questions" in empty.stderr


def test_ask_batch_with_one_good_line_still_exits_zero() -> None:
    done = _cli(["ask", "--json", "--no-semantic", "-"], b"\nwhere does UALink fit?\n")
    assert done.returncode == 0, done.stderr


def test_prompt_arguments_are_bounded(engine: Engine, caplog) -> None:
    server = build_server(lambda: engine, semantic=False)

    async def run() -> tuple[list[str], str]:
        errors = []
        async with Client(server) as client:
            for prompt, argument, limit in (
                ("triage_incident", "symptom", MAX_SYMPTOM_CHARS),
                ("place_technology", "name", MAX_NAME_CHARS),
                ("explain_layer", "layer", MAX_NAME_CHARS),
            ):
                for value in ("x" * (limit + 1), "  "):
                    with pytest.raises(McpError) as caught:
                        await client.get_prompt(prompt, {argument: value})
                    errors.append(str(caught.value))
            fine = await client.get_prompt("place_technology", {"name": "NVLink"})
        return errors, fine.messages[0].content.text

    errors, fine = asyncio.run(run())
    assert all(len(e) < 200 and "bad argument" in e for e in errors), errors
    assert "NVLink" in fine
    assert "x" * 1000 not in caplog.text  # the value is not echoed into the log
