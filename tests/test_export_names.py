"""``stackgraph export`` names: every display name the tool prints is accepted, a corrected
spelling is said out loud, and ``-o`` means what it looks like (a directory, a known extension)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from stackgraph.cli.main import main
from stackgraph.graph.catalog import normalize
from stackgraph.graph.export.api import collect, resolve_names


def test_every_display_name_resolves_to_its_entity(engine) -> None:
    refs = [engine.catalog.ref(iri) for iri in engine.catalog.records]
    shared = Counter(normalize(name) for ref in refs for name in {ref.display, ref.label})
    for ref in refs:
        for name in {ref.display, ref.label}:
            resolved = engine.resolve(name)
            if shared[normalize(name)] > 1:  # two entities share the label: either is a fair answer
                assert normalize(name) in {normalize(resolved.display), normalize(resolved.label)}
            else:
                assert resolved.iri == ref.iri, f"{name!r} resolved to {resolved.iri}, not {ref.iri}"


def test_a_corrected_spelling_is_reported(engine) -> None:
    nvlink = engine.resolve("NVLink")
    iris, corrected = resolve_names(engine, ["nvlinc", "NVLink", nvlink.iri])
    assert iris == [nvlink.iri] * 3
    assert corrected == [("nvlinc", nvlink.display)]
    sub = collect(engine, ["nvlinc"], depth=1)
    assert sub.origin["corrected"] == (("nvlinc", nvlink.display),)


def test_cli_notes_a_correction(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "nvlinc", "--format", "mermaid"]) == 0
    err = capsys.readouterr().err
    assert "no entity is named 'nvlinc'" in err and "NVLink" in err


def test_output_into_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out"
    assert main(["export", "NVLink", "-o", f"{target}/"]) == 0
    written = list(target.iterdir())
    assert [p.suffix for p in written] == [".ttl"] and written[0].read_text().startswith("@prefix")
    assert main(["export", "NVLink", "--format", "mermaid", "-o", str(target)]) == 0  # an existing directory
    assert sorted(p.suffix for p in target.iterdir()) == [".mmd", ".ttl"]


def test_an_unknown_extension_needs_a_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.xyz"
    assert main(["export", "NVLink", "-o", str(out)]) != 0
    assert "--format" in capsys.readouterr().err and not out.exists()
    assert main(["export", "NVLink", "-o", str(out), "--format", "dot"]) == 0
    assert out.read_text().startswith("digraph")
