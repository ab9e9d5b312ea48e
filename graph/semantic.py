"""Meaning-based matching: the graph's names and sentences embedded once, queries embedded live.

The texts are every entity's labels and its describing sentences (definitions, notes, reasons,
what a diagnostic shows, a triage branch's conclusion). The index is cached on disk keyed by the
texts it embeds (a hash of every (entity, text) pair), so only the first run after those change pays
for embedding them; a query then costs one encode (onnxruntime, a few ms) and one matrix product.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from stackgraph.graph.answering.text import first_sentences, prose
from stackgraph.graph.embeddings import Embedder, EmbeddingIndex
from stackgraph.graph.lexical import outside_topics

if TYPE_CHECKING:
    import numpy as np

    from stackgraph.graph.engine import Engine

#: Bump when the choice of texts changes, so cached indexes are rebuilt.
TEXTS_VERSION = "texts-1"
#: Each describing text is embedded by its leading sentences, up to this many characters: the
#: opening sentence carries the meaning, and long texts dominate the one-time embedding cost.
MAX_TEXT_CHARS = 240


class SemanticIndex:
    def __init__(self, index: EmbeddingIndex, embedder: Embedder) -> None:
        self.index = index
        self.embedder = embedder
        self._last: tuple[str, object] | None = None
        self._pending: tuple[str, Callable[[], object]] | None = None
        self._outside: EmbeddingIndex | None = None
        self._outside_lock = threading.Lock()

    @classmethod
    def for_engine(cls, engine: Engine) -> SemanticIndex:
        lexical = engine.lexical
        pairs: list[tuple[str, str]] = []
        for iri, rec in sorted(engine.catalog.records.items()):
            for label in engine.catalog.all_labels(rec):
                pairs.append((iri, label))
            for text in sorted(lexical.sentences.get(iri, ())):
                pairs.append((iri, first_sentences(text, MAX_TEXT_CHARS)))
        embedder = Embedder()
        # Keyed by the texts embedded, not by the whole graph: provenance, shapes or statement
        # nodes can change without costing a rebuild of the index.
        digest = hashlib.sha256("\n".join(f"{iri}\t{text}" for iri, text in pairs).encode()).hexdigest()[:16]
        index = EmbeddingIndex.load_or_build(pairs, digest + TEXTS_VERSION, embedder)
        return cls(index, embedder)

    def vector(self, text: str):
        """The embedding of the text's prose (pasted code blocks left out). The last one is kept:
        within one question, linking and the passage ranker both need it, and an encode is the
        costliest step of answering."""
        last = self._last
        if last is not None and last[0] == text:
            return last[1]
        pending = self._pending
        if pending is not None and pending[0] == text:
            vector = pending[1]()
        else:
            vector = self.embedder.encode_query(prose(text))
        self._last = (text, vector)
        return vector

    def prefetch(self, text: str) -> None:
        """Start encoding ``text`` beside the caller, for a ``vector(text)`` soon after.

        Why: a question's encode (about 3 ms for a real user's report) is most of a warm answer,
        and parsing and lexical linking (another two ms) need no vector; started first, the two
        run side by side (see ``Embedder.start_query``).
        """
        last, pending = self._last, self._pending
        if (last is not None and last[0] == text) or (pending is not None and pending[0] == text):
            return
        job = self.embedder.start_query(prose(text))
        if job is not None:
            self._pending = (text, job)

    def search(self, text: str, k: int = 5) -> list[tuple[str, float, str]]:
        vector = self.vector(text)
        return [(iri, score, "") for iri, score in self.index.search(vector, k=k)]

    def outside(self, text: str) -> tuple[str, float] | None:
        """The neighbouring topic the graph does not cover (``ontology/outside_topics.txt``) that
        is nearest in meaning to the text, with its cosine; None when the file lists none. The
        topics are embedded on first use (a dozen short texts) and cached like the index."""
        return self.outside_of(self.vector(text))

    def outside_of(self, vector: np.ndarray) -> tuple[str, float] | None:
        """``outside`` for a vector already encoded (a sentence of a question, which must not
        replace the question's own vector kept by ``vector``)."""
        if self._outside is None:
            with self._outside_lock:
                if self._outside is None:
                    topics = outside_topics()
                    if not topics:
                        return None
                    digest = hashlib.sha256("\n".join(topics).encode()).hexdigest()[:16]
                    pairs = [(topic, topic) for topic in topics]
                    self._outside = EmbeddingIndex.load_or_build(pairs, digest + "-outside", self.embedder)
        found = self._outside.search(vector, k=1)
        return found[0] if found else None
