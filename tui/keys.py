"""Every key binding of the app, as data: one list per screen, each binding with an id and a description.

Widgets take their ``BINDINGS`` from here, the command palette lists every action from here (so a
new binding is searchable the moment it is added), and the ids let a user remap keys through
Textual's keymap. ``show=False`` only keeps a binding out of the one-line footer; the key panel
(F1) and the palette show them all.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

#: The tabs in the order the tab bar shows them: (pane id, title, key).
TABS: tuple[tuple[str, str, str], ...] = (
    ("ask", "Ask", "f2"),
    ("browse", "Browse", "f3"),
    ("entity", "Entity", "f4"),
    ("triage", "Triage", "f5"),
    ("sparql", "SPARQL", "f6"),
    ("export", "Export", "f7"),
)

APP: list[Binding] = [
    Binding("f1", "toggle_keys", "Keys", priority=True, id="stackgraph.keys"),
    # Not priority: in a text box "?" is a character, and the box takes it first.
    Binding("question_mark", "toggle_keys", "Keys", show=False, id="stackgraph.keys-question"),
    # Priority, so that no focused widget can take them (the SPARQL editor binds F6 and F7).
    *(
        Binding(key, f"show_tab('{pane}')", title, show=False, priority=True, id=f"stackgraph.tab.{pane}")
        for pane, title, key in TABS
    ),
    Binding("ctrl+g", "goto_entity", "Go to", priority=True, id="stackgraph.goto"),
    Binding("ctrl+q", "quit", "Quit", priority=True, id="stackgraph.quit"),
]

ASK: list[Binding] = [
    Binding("ctrl+o", "open_sparql", "SPARQL", id="stackgraph.ask.open-sparql"),
    Binding("ctrl+t", "open_entity", "Entity", id="stackgraph.ask.open-entity"),
    Binding("ctrl+n", "new_conversation", "New chat", id="stackgraph.ask.new-conversation"),
    Binding("shift+tab", "focus_answer", "Select answer", show=False, id="stackgraph.ask.focus-answer"),
    Binding("ctrl+y", "copy_answer", "Copy answer", show=False, id="stackgraph.ask.copy"),
    Binding("pageup", "scroll_log(-1)", "Scroll up", show=False, id="stackgraph.ask.page-up"),
    Binding("pagedown", "scroll_log(1)", "Scroll down", show=False, id="stackgraph.ask.page-down"),
]

#: Keys of an answer that has focus (shift+tab from the question box).
ANSWER: list[Binding] = [
    Binding("y,ctrl+c", "copy_answer", "Copy", id="stackgraph.answer.copy"),
    Binding("s", "copy_sparql", "Copy SPARQL", id="stackgraph.answer.copy-sparql"),
    Binding("up", "focus_sibling(-1)", "Older answer", show=False, id="stackgraph.answer.previous"),
    Binding("down", "focus_sibling(1)", "Newer answer", show=False, id="stackgraph.answer.next"),
]

#: The question box's own keys (the Ask pane also answers to them, for the palette).
HISTORY_INPUT: list[Binding] = [
    Binding("up", "history_previous", "Older question", show=False, id="stackgraph.history.previous"),
    Binding("down", "history_next", "Newer question", show=False, id="stackgraph.history.next"),
]

BROWSE: list[Binding] = [
    Binding("o", "open", "Open page", id="stackgraph.browse.open"),
    Binding("e", "expand_all", "Expand all", id="stackgraph.browse.expand-all"),
    Binding("c", "collapse_all", "Collapse all", id="stackgraph.browse.collapse-all"),
]

ENTITY: list[Binding] = [
    Binding("alt+left,b", "back", "Back", id="stackgraph.entity.back"),
    Binding("alt+right,f", "forward", "Forward", id="stackgraph.entity.forward"),
    Binding("x", "export", "Export", id="stackgraph.entity.export"),
    Binding("a", "ask_about", "Ask", id="stackgraph.entity.ask"),
    Binding("y,ctrl+c", "copy_iri", "Copy IRI", id="stackgraph.entity.copy-iri"),
]

TRIAGE: list[Binding] = [
    Binding("backspace,u", "undo", "Undo answer", id="stackgraph.triage.undo"),
    Binding("r", "restart", "Restart", id="stackgraph.triage.restart"),
    *(
        Binding(str(n), f"pick({n})", "Pick", show=False, id=f"stackgraph.triage.pick-{n}")
        for n in range(1, 10)
    ),
]

#: Keys of the triage conclusion's command rows.
COMMANDS: list[Binding] = [
    Binding("y,ctrl+c", "copy_command", "Copy command", id="stackgraph.triage.copy-command"),
]

SPARQL: list[Binding] = [
    Binding("ctrl+r,ctrl+enter", "run", "Run", id="stackgraph.sparql.run"),
    Binding("escape", "cancel", "Cancel", show=False, id="stackgraph.sparql.cancel"),
    Binding("ctrl+f", "search_history", "History", id="stackgraph.sparql.search-history"),
    Binding("alt+up", "history_previous", "Older query", show=False, id="stackgraph.sparql.history-previous"),
    Binding("alt+down", "history_next", "Newer query", show=False, id="stackgraph.sparql.history-next"),
    Binding("ctrl+l", "focus_limit", "Time limit", show=False, id="stackgraph.sparql.time-limit"),
]

#: The SPARQL editor's own keys (F6/F7 switch tabs, so select-line/select-all move here).
EDITOR: list[Binding] = [
    Binding("alt+a", "select_all", "Select all", show=False, id="stackgraph.sparql.select-all"),
    Binding("alt+l", "select_line", "Select line", show=False, id="stackgraph.sparql.select-line"),
    Binding("tab", "accept_suggestion", "Complete", show=False, id="stackgraph.sparql.complete"),
]

#: Keys of the results table.
RESULTS: list[Binding] = [
    Binding("y,ctrl+c", "copy_cell", "Copy cell", id="stackgraph.sparql.copy-cell"),
    Binding("Y", "copy_row", "Copy row", id="stackgraph.sparql.copy-row"),
]

EXPORT: list[Binding] = [
    Binding("ctrl+s", "save", "Save file", id="stackgraph.export.save"),
]


@dataclass(frozen=True)
class KeyGroup:
    """The bindings of one screen, for the palette: ``pane`` is None for app-wide actions."""

    title: str
    pane: str | None
    bindings: tuple[Binding, ...]


GROUPS: tuple[KeyGroup, ...] = (
    KeyGroup("App", None, tuple(APP)),
    KeyGroup("Ask", "ask", tuple(ASK + HISTORY_INPUT)),
    KeyGroup("Answer", "ask", tuple(ANSWER)),
    KeyGroup("Browse", "browse", tuple(BROWSE)),
    KeyGroup("Entity", "entity", tuple(ENTITY)),
    KeyGroup("Triage", "triage", tuple(TRIAGE + COMMANDS)),
    KeyGroup("SPARQL", "sparql", tuple(SPARQL + EDITOR + RESULTS)),
    KeyGroup("Export", "export", tuple(EXPORT)),
)

#: Longer help for the palette, by binding id; the footer keeps the short description.
HELP: dict[str, str] = {
    "stackgraph.keys": "Show or hide the keys of every screen, this one's first",
    "stackgraph.keys-question": "The same, outside a text box",
    "stackgraph.goto": "Jump to any entity by name",
    "stackgraph.quit": "Leave stackgraph",
    "stackgraph.ask.open-sparql": "Open the SPARQL behind the last answer in the SPARQL tab",
    "stackgraph.ask.open-entity": "Open the page of the entity the last answer is about",
    "stackgraph.ask.new-conversation": "Forget earlier turns: the next question starts afresh",
    "stackgraph.ask.focus-answer": "Select the newest answer (then y copies it, s its SPARQL, ↑/↓ move)",
    "stackgraph.ask.copy": "Copy the newest answer's text from the question box",
    "stackgraph.ask.page-up": "Scroll the chat up a page (from the question box)",
    "stackgraph.ask.page-down": "Scroll the chat down a page",
    "stackgraph.answer.copy": "Copy the focused answer's text",
    "stackgraph.answer.copy-sparql": "Copy the SPARQL behind the focused answer",
    "stackgraph.answer.previous": "Focus the answer above",
    "stackgraph.answer.next": "Focus the answer below (past the last: the question box)",
    "stackgraph.history.previous": "Recall the previous question",
    "stackgraph.history.next": "Recall the next question",
    "stackgraph.browse.open": "Open the page of the highlighted node",
    "stackgraph.browse.expand-all": "Expand every branch of the tree",
    "stackgraph.browse.collapse-all": "Collapse every branch of the tree",
    "stackgraph.entity.back": "Go back to the previous entity page",
    "stackgraph.entity.forward": "Go forward again",
    "stackgraph.entity.export": "Export this entity's neighbourhood",
    "stackgraph.entity.ask": "Ask where this entity fits",
    "stackgraph.entity.copy-iri": "Copy the highlighted link's IRI (or the page's)",
    "stackgraph.triage.undo": "Take back the last answer",
    "stackgraph.triage.restart": "Start the symptom's tree again",
    "stackgraph.triage.copy-command": "Copy the highlighted command (enter does too)",
    "stackgraph.sparql.run": "Run the query in the editor",
    "stackgraph.sparql.cancel": "Cancel the running query (its result is dropped)",
    "stackgraph.sparql.search-history": "Search the query history and load a query",
    "stackgraph.sparql.time-limit": "Set the query's time limit",
    "stackgraph.sparql.select-all": "Select the whole query (in the editor)",
    "stackgraph.sparql.select-line": "Select the line (in the editor)",
    "stackgraph.sparql.complete": "Take the suggested keyword, prefix or term (right does too); without one, next field",
    "stackgraph.sparql.copy-cell": "Copy the highlighted cell (full IRI or value); enter on an IRI opens it",
    "stackgraph.sparql.copy-row": "Copy the highlighted row, tab-separated",
    "stackgraph.sparql.history-previous": "Load the previous query from history",
    "stackgraph.sparql.history-next": "Load the next query from history",
    "stackgraph.export.save": "Write the preview to the file named below it",
}
for _n in range(1, 10):
    HELP[f"stackgraph.triage.pick-{_n}"] = "Answer with the numbered option"
for _pane, _title, _key in TABS:
    HELP[f"stackgraph.tab.{_pane}"] = f"Switch to the {_title} tab"
