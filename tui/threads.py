"""Handing a thread worker's result back to the UI thread, safely.

An exclusive worker is cancelled when a newer one starts (a second query, another entity), but a
thread cannot be stopped: it finishes its engine call anyway. ``deliver`` drops the result of a
cancelled worker, so a slow old query never overwrites the newer one's table, and drops anything
that arrives after the app has closed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from textual.worker import NoActiveWorker, get_current_worker


def deliver(app: Any, callback: Callable[..., Any], *args: Any) -> None:
    """Run ``callback(*args)`` on the UI thread unless this worker was cancelled or the app is gone."""
    with contextlib.suppress(NoActiveWorker):
        if get_current_worker().is_cancelled:
            return
    with contextlib.suppress(RuntimeError):  # the app has closed meanwhile
        app.call_from_thread(callback, *args)
