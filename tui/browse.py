"""The Browse tab: both layer models → layers → the technologies placed in them, then workloads
and symptoms. Selecting a leaf opens its entity page; ``o`` opens the page of any node.

The tree is read from the engine in a thread worker once the graph has loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static, Tree

from stackgraph.tui import keys
from stackgraph.tui.messages import OpenEntity
from stackgraph.tui.threads import deliver

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import EntityRef


@dataclass(frozen=True)
class Branch:
    """A node of the tree: its label, the entity behind it (None for a heading) and its children."""

    label: str
    iri: str | None
    kind: str = ""
    children: tuple[Branch, ...] = ()


def _leaf(ref: EntityRef) -> Branch:
    return Branch(ref.display, ref.iri, ref.type)


def build_branches(engine: Engine) -> list[Branch]:
    """The whole tree as plain data (runs in a worker: a few SPARQL queries)."""
    from stackgraph.graph.engine import MODELS

    out: list[Branch] = []
    for name, model_iri in MODELS.items():
        layers = engine.layers(name)
        if not layers:
            continue
        title = engine.catalog.label(model_iri) if model_iri in engine.catalog else f"{name} model"
        children = tuple(
            Branch(
                info.layer.display,
                info.layer.iri,
                info.layer.type,
                tuple(_leaf(m) for m in sorted(info.members, key=lambda m: m.label.casefold())),
            )
            for info in layers
        )
        out.append(Branch(title, model_iri, "layer model", children))
    for heading, cls in (("Workloads", "Workload"), ("Symptoms", "Symptom")):
        refs = sorted(
            (engine.catalog.ref(iri) for iri in engine.entities_of(cls)), key=lambda r: r.label.casefold()
        )
        out.append(Branch(heading, None, "", tuple(_leaf(r) for r in refs)))
    return out


class BrowsePane(Vertical):
    """A Tree of the graph's main structure."""

    BINDINGS = keys.BROWSE

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.engine: Engine | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            "[dim]enter opens a technology, workload or symptom · o opens any node · e/c expand/collapse all[/dim]",
            id="browse-hint",
        )
        tree: Tree[str | None] = Tree("stack", id="browse-tree")
        tree.show_root = False
        tree.loading = True
        yield tree

    def focus_default(self) -> None:
        self.query_one("#browse-tree", Tree).focus()

    def engine_ready(self, engine: Engine) -> None:
        self.engine = engine
        self._load()

    @work(thread=True, exclusive=True, group="browse")
    def _load(self) -> None:
        assert self.engine is not None
        branches = build_branches(self.engine)
        deliver(self.app, self._fill, branches)

    def _fill(self, branches: list[Branch]) -> None:
        tree = self.query_one("#browse-tree", Tree)
        tree.clear()

        def add(parent, branch: Branch, depth: int) -> None:
            label = Text(branch.label, style="bold" if depth == 0 else "")
            if branch.children:
                label.append(f"  {len(branch.children)}", style="dim")
                node = parent.add(label, data=branch.iri, expand=depth == 0)
                for child in branch.children:
                    add(node, child, depth + 1)
            else:
                parent.add_leaf(Text.assemble(branch.label, (f"  {branch.kind}", "dim")), data=branch.iri)

        for branch in branches:
            add(tree.root, branch, 0)
        tree.loading = False
        tree.cursor_line = 0

    @on(Tree.NodeSelected, "#browse-tree")
    def _selected(self, event: Tree.NodeSelected) -> None:
        event.stop()
        if not event.node.children and event.node.data:
            self.post_message(OpenEntity(event.node.data))

    def action_open(self) -> None:
        node = self.query_one("#browse-tree", Tree).cursor_node
        if node is not None and node.data:
            self.post_message(OpenEntity(node.data))

    def action_expand_all(self) -> None:
        self.query_one("#browse-tree", Tree).root.expand_all()

    def action_collapse_all(self) -> None:
        tree = self.query_one("#browse-tree", Tree)
        for child in tree.root.children:
            child.collapse_all()
