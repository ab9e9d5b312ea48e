"""Make the README's screenshot of the TUI from the app itself.

    python scripts/screenshot.py [--out docs/screenshot.svg] [--question "..."] [--size 100x32]

Runs the app headless on the built-in graph (name matching only, so the picture does not depend
on the embedding model), asks one question, opens "How I answered", and saves an SVG. A PNG is
written beside it when ``rsvg-convert`` (apt-get install librsvg2-bin) or chromium is installed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_QUESTION = "which layer owns CUDA OOM?"


async def capture(question: str, size: tuple[int, int]) -> str:
    from stackgraph.graph.engine import Engine
    from stackgraph.tui.app import StackgraphApp
    from stackgraph.tui.history import History

    with tempfile.TemporaryDirectory() as scratch:
        os.environ["STACKGRAPH_DATA_DIR"] = scratch  # leave the user's own history alone
        app = StackgraphApp(
            engine=Engine.load(semantic=False), history=History(Path(scratch) / "history.json")
        )
        async with app.run_test(size=size) as pilot:

            async def settle() -> None:
                for _ in range(3):
                    await pilot.pause()
                    await app.workers.wait_for_complete()
                await pilot.pause()

            await pilot.pause()
            await pilot.press(*question, "enter")
            await settle()
            await pilot.click(".details CollapsibleTitle")
            await settle()
            app.query_one("#ask-log").scroll_home(animate=False)
            app.query_one("#ask-input").focus()
            for widget in app.query("Input, TextArea"):
                widget.cursor_blink = False
            await settle()
            return app.export_screenshot(title="stackgraph")


def to_png(svg_path: Path) -> Path | None:
    """Convert with rsvg-convert or chromium; None when neither is installed."""
    png = svg_path.with_suffix(".png")
    if shutil.which("rsvg-convert"):
        # librsvg squeezes the non-breaking spaces Textual writes; plain spaces kept verbatim render right.
        svg = (
            svg_path.read_text(encoding="utf-8")
            .replace("&#160;", " ")
            .replace("<svg ", '<svg xml:space="preserve" ', 1)
        )
        subprocess.run(["rsvg-convert", "-w", "1400", "-o", str(png)], input=svg.encode(), check=True)
        return png
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--screenshot={png}",
                "--window-size=1400,1000",
                svg_path.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
        return png
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.svg")
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--size", default="100x32", help="terminal size, COLUMNSxROWS")
    args = parser.parse_args(argv)
    columns, rows = (int(n) for n in args.size.lower().split("x"))
    svg = asyncio.run(capture(args.question, (columns, rows)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(svg, encoding="utf-8")
    print(f"wrote {args.out}")
    png = to_png(args.out)
    print(f"wrote {png}" if png else "no SVG converter found (rsvg-convert or chromium): SVG only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
