"""Entity linking: from the words of a question to the entities of the graph.

Matching runs cheapest first and stops as soon as it is sure:
1. exact surface forms: labels, alternative and hidden labels, their parenthesised acronyms and
   simple plural/singular variants, found as the longest non-overlapping word runs;
2. layer codes ("L5", "layer 5"), qualified by the model the question names ("eight-layer",
   "operational map") and the nine-layer model by default;
3. fuzzy spelling (rapidfuzz) for words that matched nothing;
4. semantic matching with the packaged MiniLM model over the labels and the graph's sentences,
   only when 1-3 leave the question without an entity (the model is loaded on first need).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from stackgraph.graph.catalog import EntityRecord, normalize
from stackgraph.graph.layer_refs import EIGHT, NINE, find_layer_refs, find_relative_refs, whole_layer_ref
from stackgraph.graph.model import MAX_NAME_CHARS, EntityRef, NameTooLong, UnknownEntity
from stackgraph.graph.store import KG, SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

#: Single words too common to name an entity on their own, whatever a label says.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "into",
        "onto",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "how",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "where",
        "when",
        "can",
        "could",
        "should",
        "would",
        "will",
        "may",
        "might",
        "must",
        "i",
        "we",
        "you",
        "it",
        "its",
        "it's",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "my",
        "our",
        "your",
        "their",
        "me",
        "us",
        "them",
        "he",
        "she",
        "his",
        "her",
        "as",
        "if",
        "then",
        "than",
        "so",
        "not",
        "no",
        "yes",
        "all",
        "any",
        "some",
        "each",
        "every",
        "other",
        "else",
        "more",
        "most",
        "less",
        "fit",
        "fits",
        "sit",
        "sits",
        "go",
        "goes",
        "belong",
        "belongs",
        "layer",
        "layers",
        "stack",
        "model",
        "models",
        "use",
        "used",
        "using",
        "about",
        "tell",
        "explain",
        "show",
        "check",
        "test",
        "get",
        "gets",
        "got",
        "gotten",
        "went",
        "gone",
        "give",
        "make",
        "between",
        "vs",
        "versus",
        "compare",
        "difference",
        "same",
        "like",
        "also",
        "just",
        "only",
        "one",
        "two",
        "three",
        "up",
        "down",
        "out",
        "over",
        "under",
        "through",
        "mean",
        "means",
        # What is left of a contraction once its apostrophe splits it ("isn't" -> "isn" "t"):
        # "not" and "are" or "have", never what a question is about.
        "isn",
        "aren",
        "wasn",
        "weren",
        "doesn",
        "don",
        "didn",
        "hasn",
        "haven",
        "hadn",
        "couldn",
        "wouldn",
        "shouldn",
        "won",
        "mustn",
        "needn",
        "ain",
        "re",
        "ve",
        "ll",
        # The same words typed without their apostrophe ("whats the first thing to check"), and
        # the "ok" a reply opens with.
        "whats",
        "hows",
        "wheres",
        "whos",
        "thats",
        "im",
        "ive",
        "isnt",
        "dont",
        "doesnt",
        "didnt",
        "cant",
        "wont",
        "ok",
        "okay",
    ]
)

#: Words that frame a question about the stack rather than say what it is about.
FRAME_WORDS = frozenset(
    [
        "own",
        "owns",
        "owned",
        "owner",
        "responsible",
        "responsibility",
        "handle",
        "handles",
        "handled",
        "deal",
        "deals",
        "cover",
        "covers",
        "manage",
        "manages",
        "care",
        "eight",
        "nine",
        "operational",
        "map",
        "model",
        "place",
        "placed",
        "belong",
    ]
)

#: What joins the parts of a compound word ("EFA-enabled", "libibverbs.so", "NCCL/RCCL").
_JOINERS = re.compile(r"[-._/+]")
_PAREN = re.compile(r"\s*\(([^)]*)\)\s*")
#: A single lower-case word in a label's parenthesis: a qualifier, not another name ("OOM" is one).
_QUALIFIER = re.compile(r"[a-z][a-z-]*")
_EIGHT_CUES = (
    "eight-layer",
    "eight layer",
    "8-layer",
    "8 layer",
    "operational map",
    "operational layer",
    "ops layer",
    "operational model",
    "operations map",
    "ops map",
)
_NINE_CUES = ("nine-layer", "nine layer", "9-layer", "9 layer", "co-design", "codesign")
#: The layer models by the keys layer references and tools use ("nine", "eight").
MODEL_IRIS = {NINE: str(KG["nine-layer-model"]), EIGHT: str(KG["eight-layer-map"])}

#: Semantic matches below this cosine are not evidence of anything.
SEMANTIC_MIN = 0.45
#: How many semantic hits are kept per text, and for how many recent texts.
SEMANTIC_CACHE_K, SEMANTIC_CACHE_SIZE = 30, 256
#: Questions this long start their encode before they are parsed (see ``Linker.prefetch_meaning``).
PREFETCH_MIN_WORDS = 6
#: Fuzzy matches below this score (0-100) are ignored.
FUZZY_MIN = 88
#: Ratio below which a run of words cannot be one slip of the keys from a name (a swap in a run of
#: eight letters is 75% alike).
SLIP_RATIO = 75
#: Words up to this long that differ from a name by one changed character are a slip of the keys
#: only when the key struck is next to the one meant (or doubles a neighbour, "NCLL"): one letter
#: in four is another word more often than a typo ("nvml" is not NVMe, nor "vcpus" vGPU).
SHORT_WORD = 5
_KEY_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbouring_keys() -> dict[str, set[str]]:
    """Each key of a QWERTY keyboard with the keys around it (same row and the rows beside it)."""
    near: dict[str, set[str]] = {}
    for r, row in enumerate(_KEY_ROWS):
        for c, key in enumerate(row):
            near[key] = {
                other[k]
                for other in _KEY_ROWS[max(0, r - 1) : r + 2]
                for k in range(c - 1, c + 2)
                if 0 <= k < len(other) and other[k] != key
            }
    return near


_NEAR_KEYS = _neighbouring_keys()


def _english(word: str, common: frozenset[str]) -> bool:
    """Whether a word is plain English: in the vocabulary, or the plural of a word that is
    ("docs", "repos", "configs"; the model's vocabulary often holds only the singular)."""
    return word in common or (word.endswith("s") and (word[:-1] in common or word[:-2] in common))


def _other_words(typed: str, name: str, common: frozenset[str]) -> bool:
    """Whether a run of words close in spelling to a name is other words, each spelt right: every
    word is plain English and one is more than a letter from each of the name's words ("control
    panel" and "control plane"). Inflections ("memory errors", "job stalls"), spellings ("low utilization"), part of
    a name ("low memory"), a name written apart ("no valid host") and a word no dictionary holds
    ("kv cahce") still read as the name."""
    words = typed.split()
    if not all(w in STOPWORDS or _english(w, common) for w in words):
        return False
    if typed.replace(" ", "") == name.replace(" ", "").replace("-", ""):
        return False
    named = [_singular(n) for n in name.replace("-", " ").split()]
    if any(len(w) <= 2 and w not in named for w in words):
        return True  # "to size" is no slip of "tp size": a two-letter word is too short to mistype
    return any(min(OSA.distance(_singular(w), n) for n in named) > 1 for w in words if w not in STOPWORDS)


def _singular(word: str) -> str:
    """The word less an inflection ("stalls", "stalled" and "stalling" are all "stall")."""
    for _ in range(2):  # the name tables' plurals of inflected forms: "stalleds"
        for ending in ("ing", "ed", "es", "s"):
            if word.endswith(ending) and len(word) > len(ending) + 2 and not word.endswith("ss"):
                word = word[: -len(ending)]
                break
    return word


def _slip_of_the_keys(typed: str, name: str) -> bool:
    """Whether a short word one edit from a name reads as that name mistyped. Longer words and
    letters added, dropped or swapped always do; a changed letter in a short word must be a key
    beside the one meant, or repeat a letter next to it ("NCLL" for NCCL), and a digit in place of
    a letter is a version number ("gpt2"), not a slip."""
    if len(typed) > SHORT_WORD or len(typed) != len(name):
        return True
    changed = [k for k in range(len(typed)) if typed[k] != name[k]]
    if len(changed) != 1:
        return True  # a swap of two neighbours ("nvilnk"), which OSA counts as one edit
    k = changed[0]
    key, meant = typed[k], name[k]
    if key.isdigit():
        return False  # "gpt2" is a version of something, not GPTQ mistyped
    doubled = any(0 <= n < len(typed) and typed[n] == key for n in (k - 1, k + 1))
    return key in _NEAR_KEYS.get(meant, ()) or doubled


@dataclass(frozen=True)
class Mention:
    """A run of the question's words that names an entity."""

    iri: str
    start: int  # word index
    end: int  # word index, exclusive
    surface: str
    score: float
    how: str  # "exact", "code", "fuzzy", "semantic"


def _plural_forms(form: str) -> set[str]:
    """The form with its last word made singular or plural. A final "s" after a letter is a
    plural's: after a slash it is a unit ("tokens/s" has no singular "tokens/"). A model number
    takes an "s" too ("our H100s")."""
    words = form.split()
    if not words:
        return set()
    last = words[-1]
    if len(last) > 3 and last.endswith("s") and not last.endswith("ss") and last[-2].isalpha():
        return {" ".join([*words[:-1], last[:-1]])}
    if len(last) > 2 and (last.isalpha() or (last[-1].isdigit() and any(c.isalpha() for c in last))):
        return {" ".join([*words[:-1], last + "s"])}  # "gpus", and "h100s" of a model number
    return set()


def _variants(label: str) -> tuple[set[str], set[str]]:
    """The forms under which a label is matched: (direct, derived).

    Direct forms are the label itself and its plural or singular; derived forms are the label
    without its parenthesis and the pieces inside it ("CUDA Out of Memory (OOM)" -> "oom"), which
    rank below any entity that carries the form as a label of its own.
    """
    whole = normalize(label)
    direct = {whole} | _plural_forms(whole)
    derived: set[str] = set()
    inner = _PAREN.findall(label)
    if inner:
        outer = normalize(_PAREN.sub(" ", label).strip())
        derived |= {outer} | _plural_forms(outer)
        for text in inner:
            for raw in re.split(r",|;|/| or ", text):
                if _QUALIFIER.fullmatch(raw.strip()):
                    continue  # "(parallel)", "(intra-node)" qualify the name; they name nothing
                piece = normalize(raw)
                if len(piece) >= 2:
                    derived |= {piece} | _plural_forms(piece)
    return {f for f in direct if f}, {f for f in derived - direct if f}


#: Classes whose entities win a shared name over others, best first (a name people type for a
#: technology means the technology, not the flow step or section that mentions it).
CLASS_PRIORITY = (
    "Layer",
    "Technology",
    "Symptom",
    "Diagnostic",
    "ConfigurationParameter",
    "Workload",
    "Cause",
    "DesignChoice",
    "Practice",
    "TriageBranch",
    "TriageStep",
    "CrossCuttingConcern",
    "Plane",
    "LayerModel",
    "FlowStep",
)


class Linker:
    """Finds entities in text. Built once per engine; read-only afterwards."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.catalog = engine.catalog
        tables = _load_tables(engine)
        if tables is None:
            from stackgraph.graph.cachefiles import paused_gc

            with paused_gc():  # a set per name form: hundreds of thousands of small objects
                tables = self._build_tables()
            _save_tables(engine, tables)
        forms, primary, direct, self._class_rank = tables
        self.forms: dict[str, set[str]] = defaultdict(set, forms)
        self.primary: dict[str, set[str]] = defaultdict(set, primary)  # forms of rdfs:label
        self.direct: dict[str, set[str]] = defaultdict(set, direct)  # forms of any label, not derived
        self._derive_lookups()
        self._semantic = None
        self._semantic_lock = threading.Lock()
        #: Recent semantic lookups: one question asks several answerers, each would encode again.
        self._semantic_cache: dict[str, list[tuple[str, float, str]]] = {}
        self._orders: dict[str, list[str]] = {}

    def _build_tables(
        self,
    ) -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, set[str]], dict[str, int]]:
        """(forms, primary forms, direct forms, class rank): every name of every entity, normalised."""
        forms: dict[str, set[str]] = defaultdict(set)
        primary: dict[str, set[str]] = defaultdict(set)
        direct_forms: dict[str, set[str]] = defaultdict(set)
        for rec in self.catalog.records.values():
            for table, form in self._forms_of(rec):
                (forms, primary, direct_forms)[table][form].add(rec.iri)
        rank_of_types: dict[frozenset[str], int] = {}  # entities share a few type sets: rank each once
        class_rank: dict[str, int] = {}
        for rec in self.catalog.records.values():
            types = frozenset(rec.types)
            rank = rank_of_types.get(types)
            if rank is None:
                rank = rank_of_types[types] = self._rank_of(rec)
            class_rank[rec.iri] = rank
        return dict(forms), dict(primary), dict(direct_forms), class_rank

    def _rank_of(self, rec: EntityRecord) -> int:
        """Position of ``rec``'s first class in :data:`CLASS_PRIORITY` (its length when none)."""
        return min(
            (i for i, cls in enumerate(CLASS_PRIORITY) if self.catalog.is_a(rec.iri, str(SG[cls]))),
            default=len(CLASS_PRIORITY),
        )

    def _derive_lookups(self) -> None:
        """What is derived from the name tables: the longest name in words, the fuzzy choices."""
        # Forms are normalised (single spaces), so words are spaces plus one; counted in C, as
        # splitting every one of 100k+ forms cost 0.15 s of each start with a large inventory.
        self.max_words = max(map(str.count, self.forms, itertools.repeat(" ")), default=0) + 1
        #: Names long enough to suggest for a close spelling ("did you mean ...").
        self._fuzzy_choices = [f for f in self.forms if len(f) >= 4]
        self._name_words = frozenset(w for f in self.forms for w in f.split())
        #: The names a misspelt mention may stand for: those without a digit. A name with digits
        #: is an identifier ("gpu-000005", "H100"), and a near miss of one is another identifier
        #: (gpu-000006, H200), not a typo; they are matched exactly. An inventory of 100k such
        #: names also made every question compare its words with each of them (22 ms a question).
        has_digit = re.compile(r"\d").search
        self._spelling_choices = [f for f in self._fuzzy_choices if not has_digit(f)]
        #: Those names grouped by first letter, on first use: a candidate meets only its group.
        self._spelling_by_first: dict[str, list[str]] | None = None

    def _forms_of(self, rec: EntityRecord) -> Iterator[tuple[int, str]]:
        """(table, form) for each name form of ``rec``: 0 forms, 1 primary forms, 2 direct forms."""
        for label in self.catalog.all_labels(rec):
            direct, derived = _variants(label)
            for form in sorted(direct | derived):  # sets: sorted, so the tables' order never varies
                yield 0, form
            for form in direct:
                yield 2, form
        for form in _variants(rec.label)[0]:
            yield 1, form

    def add(self, records: Iterable[EntityRecord]) -> None:
        """Take entities the catalog learnt of after the tables were built (a remote store's,
        read as questions name them: graph/remote_catalog.py). The tables are copied, extended
        and swapped in, so that concurrent readers never see one change size under them."""
        records = list(records)
        if not records:
            return
        tables = [defaultdict(set, self.forms), defaultdict(set, self.primary), defaultdict(set, self.direct)]
        rank = dict(self._class_rank)
        for rec in records:
            for table, form in self._forms_of(rec):
                tables[table][form] = tables[table][form] | {rec.iri}
            rank[rec.iri] = self._rank_of(rec)
        self.forms, self.primary, self.direct = tables
        self._class_rank = rank
        self._derive_lookups()

    # ------------------------------------------------------------------ mentions

    def mentions(
        self,
        text: str,
        fuzzy: bool = True,
        prefer: str | None = None,
        model: str | None = None,
        near: str | None = None,
    ) -> list[Mention]:
        """Entities named in ``text``, longest match first, without overlaps, in text order.

        ``prefer`` (a class local name, "Workload") breaks ties between entities sharing a name in
        favour of that class ("RAG" the workload rather than RAG the technology). ``model`` is the
        layer model to read its names in when the text names none (a conversation's); ``near``
        the layer "the layer below it" is below (the one a conversation last named).
        """
        words = normalize(text).split()
        model = self.model_hint(text) or model
        taken = [False] * len(words)
        # Before single words take the shared one ("parallelism" of "tensor/pipeline parallelism").
        found: list[Mention] = self._shared_head(words, taken, model, prefer)
        for size in range(min(self.max_words, len(words)), 0, -1):
            for start in range(0, len(words) - size + 1):
                if any(taken[start : start + size]):
                    continue
                form = " ".join(words[start : start + size])
                iris = self.forms.get(form)
                if not iris or (size == 1 and (form in STOPWORDS or len(form) < 2)):
                    continue
                if all(w in STOPWORDS or w in FRAME_WORDS for w in words[start : start + size]):
                    continue  # a label made of question words ("which layer owns") names nothing
                for iri in self._rank(iris, form, model, prefer):
                    found.append(Mention(iri, start, start + size, form, 1.0, "exact"))
                    break
                for i in range(start, start + size):
                    taken[i] = True
        found += self._joined(words, taken, model, prefer)
        found += self._relative_layers(text, taken, model, near)
        found += self._layer_codes(text, words, taken, model)
        if fuzzy:
            found += self._fuzzy(words, taken)
        found.sort(key=lambda m: m.start)
        return found

    def _shared_head(
        self, words: list[str], taken: list[bool], model: str | None, prefer: str | None
    ) -> list[Mention]:
        """Names that share their last word, written once after a slash: "gpu/network operators"
        names the GPU Operator and the Network Operator, "tensor/pipeline parallelism" both
        strategies. Both words are the span of each name."""
        found: list[Mention] = []
        for i, word in enumerate(words[:-1]):
            if "/" not in word or taken[i] or taken[i + 1]:
                continue
            head = words[i + 1]
            heads = [head, head[:-1]] if head.endswith("s") else [head]
            named = []
            for part in word.split("/"):
                form = next((f"{part} {h}" for h in heads if f"{part} {h}" in self.forms), None)
                if form is not None:
                    named.append((self._rank(self.forms[form], form, model, prefer)[0], form))
            if len(named) < 2:
                continue  # "tcp/ip stack": a name only when every part makes one with the word after
            for iri, form in named:
                found.append(Mention(iri, i, i + 2, form, 1.0, "exact"))
            taken[i] = taken[i + 1] = True
        return found

    def _joined(
        self, words: list[str], taken: list[bool], model: str | None, prefer: str | None
    ) -> list[Mention]:
        """Names inside a compound word that is no name itself: "EFA-enabled", "libibverbs.so",
        "NCCL/RCCL", "nccl_debug". Each part run is matched as a name, longest first, the whole
        word its span."""
        found: list[Mention] = []
        common = self.engine.common_words
        for i, word in enumerate(words):
            if taken[i] or not _JOINERS.search(word):
                continue
            parts = _JOINERS.split(word)
            extension = word.rpartition(".")[2]
            if "." in word and extension == parts[-1] and extension in self.forms and len(extension) >= 2:
                # A file name is a file of the kind its extension names: "pytorch_model.bin" is a
                # .bin file, whatever words its own name is made of.
                iri = self._rank(self.forms[extension], extension, model, prefer)[0]
                found.append(Mention(iri, i, i + 1, word, 1.0, "exact"))
                taken[i] = True
                continue
            used = [False] * len(parts)
            for size in range(len(parts) - 1, 0, -1):
                for start in range(0, len(parts) - size + 1):
                    if any(used[start : start + size]):
                        continue
                    form = " ".join(parts[start : start + size])
                    iris = self.forms.get(form)
                    if not iris or len(form) < 2 or all(p in STOPWORDS for p in parts[start : start + size]):
                        continue
                    if "_" in word and all(p in common for p in parts[start : start + size]):
                        # Ordinary words inside a code identifier ("list_integration_resources",
                        # "check_resources") are part of the identifier's own name, not a name of
                        # the graph's; a name among them ("nccl_debug") still is.
                        continue
                    iri = self._rank(iris, form, model, prefer)[0]
                    if all(m.iri != iri for m in found if m.start == i):
                        found.append(Mention(iri, i, i + 1, form, 1.0, "exact"))
                    for j in range(start, start + size):
                        used[j] = True
            if any(used):
                taken[i] = True
        return found

    def _rank(self, iris: set[str], form: str, model: str | None, prefer: str | None = None) -> list[str]:
        """Order candidates for one surface form: the preferred class, the model the question
        names, names over derived forms, rdfs:label over alternative labels, class priority, then
        the more central entity (more sources)."""

        def key(iri: str) -> tuple:
            rec = self.catalog.get(iri)
            preferred = 0 if prefer is None or self.catalog.is_a(iri, SG[prefer]) else 1
            in_model = 0
            if rec is not None and rec.model:
                wanted = model or str(KG["nine-layer-model"])
                in_model = 0 if rec.model == wanted else 1
            direct = 0 if iri in self.direct.get(form, ()) else 1
            primary = 0 if iri in self.primary.get(form, ()) else 1
            return (
                preferred,
                in_model,
                direct,
                primary,
                self._class_rank.get(iri, 99),
                -len(rec.sources) if rec else 0,
                iri,
            )

        return sorted(iris, key=key)

    def model_hint(self, text: str) -> str | None:
        low = text.lower()
        if any(cue in low for cue in _EIGHT_CUES):
            return MODEL_IRIS[EIGHT]
        if any(cue in low for cue in _NINE_CUES):
            return MODEL_IRIS[NINE]
        return None

    def _layer_codes(
        self, text: str, words: list[str], taken: list[bool], model: str | None
    ) -> list[Mention]:
        """Layer codes, each in the model written beside it ("ops L5", "L2 of the operational
        map"), else in the model the question names, else the nine-layer model."""
        found = []
        for ref in find_layer_refs(text):
            if not ref.code.startswith("L"):
                continue  # "S layer" / "CP layer" are matched as names
            start = len(normalize(text[: ref.start]).split())
            end = len(normalize(text[: ref.end]).split())
            free = [i for i in range(start, end) if not taken[i]]
            if not free or free != list(range(free[0], free[-1] + 1)):
                continue
            # "L4 of the eight-layer operational map": the model's words may already name the
            # model; the code keeps the rest of the reference, and still reads in that model.
            start, end = free[0], free[-1] + 1
            while end - start > 1 and words[end - 1] in STOPWORDS:
                end -= 1
            if ref.model is None and len(both := self.models_named(text)) > 1:
                models = both  # "nine-layer vs the ops map, what's L2 in each?": L2 of each
            else:
                models = [MODEL_IRIS.get(ref.model or "", model)]
            layers = [layer for m in models if (layer := self.layer_by_code(ref.code, m))]
            for layer in layers:
                found.append(Mention(layer, start, end, " ".join(words[start:end]), 1.0, "code"))
            if layers:
                for i in range(start, end):
                    taken[i] = True
        return found

    def models_named(self, text: str) -> list[str]:
        """The layer models the text names, eight-layer first (as ``model_hint`` prefers it)."""
        low = text.lower()
        cues = ((EIGHT, _EIGHT_CUES), (NINE, _NINE_CUES))
        return [MODEL_IRIS[key] for key, words in cues if any(cue in low for cue in words)]

    def _relative_layers(
        self, text: str, taken: list[bool], model: str | None, near: str | None
    ) -> list[Mention]:
        """Layers named by their place in a stack: "the top layer" of the model the question
        names (else the nine-layer model), "the layer below L5", "the one above it" (``near``)."""
        found = []
        for ref in find_relative_refs(text):
            start = len(normalize(text[: ref.start]).split())
            end = len(normalize(text[: ref.end]).split())
            if start >= end or any(taken[start:end]):
                continue
            before = [r for r in find_layer_refs(text[: ref.start]) if r.code.startswith("L")]
            if ref.base is None and ref.points_back and before:
                ref = replace(ref, base=before[-1])  # "what does L5 assume about the layer below it?"
            if ref.base is not None:
                base = self.layer_by_code(ref.base.code, MODEL_IRIS.get(ref.base.model or "", model))
            else:
                base = near if ref.points_back else None
            if ref.points_back and base is None:
                continue
            rec = self.catalog.get(base) if base else None
            order = self.layer_order((rec.model if rec else None) or model or str(KG["nine-layer-model"]))
            if ref.direction in ("top", "bottom"):
                layer = order[0] if ref.direction == "top" and order else order[-1] if order else None
            elif base in order:
                i = order.index(base) + (-1 if ref.direction == "up" else 1)
                layer = order[i] if 0 <= i < len(order) else None
            else:
                layer = None
            if layer is None:
                continue
            found.append(
                Mention(layer, start, end, " ".join(normalize(text).split()[start:end]), 1.0, "code")
            )
            for i in range(start, end):
                taken[i] = True
        return found

    def layer_order(self, model: str) -> list[str]:
        """The numbered layers of a model from the top of its stack down (``sg:topLayer`` says
        which end the codes count from); empty for a model that says neither end."""
        cached = self._orders.get(model)
        if cached is not None:
            return cached
        top, bottom = self.engine.stack_ends.get(model, (None, None))
        layers = sorted(
            (r for r in self.catalog.layers(model) if r.code and r.code.startswith("L")),
            key=lambda r: self.engine.positions.get(r.iri, 99),
        )
        order = [r.iri for r in layers]
        if top not in order or bottom not in order:
            order = []
        elif order.index(top) > order.index(bottom):
            order.reverse()
        self._orders[model] = order
        return order

    def layer_by_code(self, code: str, model: str | None = None) -> str | None:
        model = model or str(KG["nine-layer-model"])
        for rec in self.catalog.layers(model):
            if rec.code and rec.code.lower() == code.lower():
                return rec.iri
        return None

    def _layer_named(self, name: str, model: str | None) -> str | None:
        """The layer a whole name refers to: "L5", "eight L5", "L5 (eight-layer)", "the
        operational map's L2", or a code with the layer's label ("L8 Node Interconnect")."""
        name = re.sub(r"^(?:the\s+)", "", name.strip(), flags=re.IGNORECASE)
        letter = re.fullmatch(r"(?:layer\s*)?(s|cp)(?:\s+(.+))?", name, flags=re.IGNORECASE)
        if letter and letter.group(2):  # "CP Control Plane": the letter code with its label
            return self._layer_with_label(letter.group(1).upper(), letter.group(2), model)
        if letter:
            name = letter.group(1) + " layer"  # a bare "S" or "CP" as a name is the nine-layer code
        whole = whole_layer_ref(name)
        if whole is None:
            return None
        ref, rest = whole
        named_model = MODEL_IRIS.get(ref.model or "") or model
        if not rest:
            return self.layer_by_code(ref.code, named_model or self.model_hint(name))
        return self._layer_with_label(ref.code, rest, named_model)

    def _layer_with_label(self, code: str, label: str, model: str | None) -> str | None:
        """The layer of ``code`` that carries ``label``; a label picks the model when none is named."""
        wanted = normalize(label)
        models = [model] if model else list(MODEL_IRIS.values())
        for model_iri in models:
            layer = self.layer_by_code(code, model_iri)
            rec = self.catalog.get(layer) if layer else None
            if rec is not None and wanted in {normalize(rec.label), *map(normalize, rec.alt_labels)}:
                return layer
        return None

    def _fuzzy(self, words: list[str], taken: list[bool]) -> list[Mention]:
        """Close spellings of names: runs of 2-3 words by edit ratio, single uncommon words by
        edit distance with transpositions ("NCLL" for NCCL, "NVLnik" for NVLink)."""
        common = self.engine.common_words
        candidates: list[tuple[int, int, str]] = []  # (size, start, form), in the order they are taken
        for size in (3, 2, 1):
            for start in range(0, len(words) - size + 1):
                chunk = words[start : start + size]
                if all(w in STOPWORDS for w in chunk):
                    continue
                if size > 1 and any(
                    w in STOPWORDS and w not in self._name_words for w in (chunk[0], chunk[-1])
                ):
                    # "accelerate our" is no slip of "accelerator": a run's edge words are a name's
                    # own ("nine layer model"), not "our" or "the".
                    continue
                form = " ".join(chunk)
                if size == 1 and (form in STOPWORDS or _english(form, common) or len(form) < 4):
                    continue

                candidates.append((size, start, form))
        best = self._closest_names(candidates)
        found = []
        for (size, start, form), match in zip(candidates, best, strict=True):
            if match is None or any(taken[start : start + size]):
                continue
            choice, score = match
            if size > 1 and _other_words(form, choice, common):
                continue  # "control panel" is a panel, spelt right: no slip for "control plane"
            iri = self._rank(self.forms[choice], choice, None)[0]
            found.append(Mention(iri, start, start + size, form, score, "fuzzy"))
            for i in range(start, start + size):
                taken[i] = True
        return found

    def _closest_names(self, candidates: list[tuple[int, int, str]]) -> list[tuple[str, float] | None]:
        """For each candidate, the closest name form and its score in [0, 1], or None below the cutoff.

        One ``cdist`` call per first letter and scorer compares those candidates with every name of
        that letter (a long report has a hundred runs of words; one ``extractOne`` each cost
        several ms a question). Of names equally close, the first in name order that reads as a slip
        of the keys wins.

        A slip of the keys keeps the first letter ("pytroch", "slignshot", "inferencce"); a word
        that differs there is another word, however close the rest: "icloud" is not "cloud", nor
        "flops" MLOps, nor "a cluster" Ray Cluster. Only names with the candidate's first letter
        compete."""
        import numpy as np  # rapidfuzz's cdist returns an array; numpy is loaded by then anyway

        out: list[tuple[str, float] | None] = [None] * len(candidates)
        choices = self._spelling_choices
        if not candidates or not choices:
            return out
        if self._spelling_by_first is None:
            groups: dict[str, list[str]] = {}
            # In name order, not the order the names were read in (sets of forms, whose order
            # changes with the process's hash seed): ties must go the same way in every process.
            for choice in sorted(choices):
                groups.setdefault(choice[0], []).append(choice)
            self._spelling_by_first = groups
        batches: dict[tuple[str, bool], list[int]] = {}
        for i, (size, _, form) in enumerate(candidates):
            batches.setdefault((form[0], size == 1), []).append(i)
        for (first, single), indexes in batches.items():
            group = self._spelling_by_first.get(first)
            if not group:
                continue
            scorer, scale = (OSA.normalized_similarity, 1.0) if single else (fuzz.ratio, 100.0)
            forms = [candidates[i][2] for i in indexes]
            scores = process.cdist(forms, group, scorer=scorer, dtype=np.float64)
            if not single:
                # One slip of the keys in a run of words is a slip however short the run: "kv
                # cahce" is 87.5% alike to "kv cache" by ratio (a swap counts twice there), one
                # transposition by OSA. Only runs near the cutoff can be one slip from a name.
                near = [k for k, row in enumerate(scores) if SLIP_RATIO <= row.max() < FUZZY_MIN]
                if near:
                    slips = process.cdist(
                        [forms[k] for k in near], group, scorer=OSA.distance, dtype=np.int32
                    )
                    scores[near] = np.where(slips == 1, np.maximum(scores[near], FUZZY_MIN), scores[near])
            for row, i in zip(scores, indexes, strict=True):
                form = candidates[i][2]
                best = float(row.max())
                cutoff = (1 - 1 / len(form) - 0.01) if single else FUZZY_MIN
                if best < cutoff or best <= 0:
                    continue
                # Names as close as each other: the first (in name order) that reads as a slip.
                for j in np.flatnonzero(row == best):
                    if not single or _slip_of_the_keys(form, group[j]):
                        out[i] = (group[j], best / scale)
                        break
        return out

    # ------------------------------------------------------------------ semantic

    def semantic_index(self):
        """The embedding index over labels and sentences, built or loaded from cache once."""
        if self._semantic is None:
            with self._semantic_lock:
                if self._semantic is None:
                    from stackgraph.graph.semantic import SemanticIndex

                    self._semantic = SemanticIndex.for_engine(self.engine)
        return self._semantic

    def prefetch_meaning(self, text: str) -> None:
        """Start encoding a question that ``semantic`` will likely be asked about (see
        ``SemanticIndex.prefetch``); nothing when matching is off, not yet loaded, or cached.

        Only for a question of ``PREFETCH_MIN_WORDS`` words or more: every real user's report of
        the development set needs its vector, while most questions of a few words name what they
        ask about and are answered without one (32 of the 50 development questions), so encoding
        them anyway would only cost the other core."""
        if (
            self.engine.semantic
            and self._semantic is not None
            and len(text.split()) >= PREFETCH_MIN_WORDS
            and text not in self._semantic_cache
        ):
            self._semantic.prefetch(text)

    def semantic(self, text: str, k: int = 5) -> list[tuple[str, float, str]]:
        """(iri, cosine, matched text) for the entities whose labels or sentences mean what
        ``text`` means, best first; empty when semantic matching is off or unavailable."""
        if not self.engine.semantic or not text.strip():
            return []
        hits = self._semantic_cache.get(text)
        if hits is None or len(hits) < k:
            hits = self.semantic_index().search(text, k=max(k, SEMANTIC_CACHE_K))
            if len(self._semantic_cache) >= SEMANTIC_CACHE_SIZE:
                self._semantic_cache.pop(next(iter(self._semantic_cache)))
            self._semantic_cache[text] = hits
        return hits[:k]

    # ------------------------------------------------------------------ names

    def resolve(self, name: str, model: str | None = None) -> EntityRef:
        """One entity for a name (see Engine.resolve)."""
        name = name.strip()
        if not name:
            raise UnknownEntity(name)
        if len(name) > MAX_NAME_CHARS:
            raise NameTooLong(name)
        if name in self.catalog:
            return self.catalog.ref(name)
        if ":" in name and not name.startswith("http"):
            prefix, _, local = name.partition(":")
            from stackgraph.graph.store import PREFIXES

            if prefix in PREFIXES and PREFIXES[prefix] + local in self.catalog:
                return self.catalog.ref(PREFIXES[prefix] + local)
        model_iri = MODEL_IRIS.get(model or "", model)
        layer = self._layer_named(name, model_iri)
        if layer:
            return self.catalog.ref(layer)
        form = normalize(name)
        iris = self.forms.get(form)
        if iris:
            return self.catalog.ref(self._rank(iris, form, model_iri)[0])
        mentions = self.mentions(name)
        covered = sum(m.end - m.start for m in mentions)
        if len(mentions) == 1 and covered >= max(1, len(form.split()) - 1):
            return self.catalog.ref(mentions[0].iri, score=mentions[0].score)
        raise UnknownEntity(name, tuple(self.closest(name)))

    def closest(self, text: str, limit: int = 5) -> list[EntityRef]:
        """The entities whose names are nearest to ``text`` (for suggestions): shared words first,
        then close spellings of its longer words, then meaning when the model is available."""
        seen: dict[str, float] = {}
        for iri, score in self.engine.lexical.search(text, k=limit * 2):
            seen[iri] = max(seen.get(iri, 0.0), score)
        words = sorted({w for w in normalize(text).split() if len(w) >= 4 and w not in STOPWORDS})
        if words and self._fuzzy_choices:
            # One comparison of all the words with all the names, not one search per word.
            choices = self._fuzzy_choices
            for row in process.cdist(words, choices, scorer=fuzz.ratio, score_cutoff=70):
                j = int(row.argmax())
                if row[j] > 0:
                    for iri in self.forms[choices[j]]:
                        seen[iri] = max(seen.get(iri, 0.0), float(row[j]) / 100 * 0.8)
        for iri, score, _ in self.semantic(text, k=limit):
            seen[iri] = max(seen.get(iri, 0.0), score)
        if not seen and normalize(text):
            for choice, score, _ in process.extract(
                normalize(text), list(self.forms), scorer=fuzz.WRatio, limit=limit
            ):
                for iri in self.forms[choice]:
                    seen[iri] = max(seen.get(iri, 0.0), score / 100 * 0.5)
        ranked = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return [self.catalog.ref(iri, score=score) for iri, score in ranked]

    def search(
        self, text: str, type: str | None = None, limit: int = 10, offset: int = 0
    ) -> tuple[list[EntityRef], int]:
        """Entities matching text (names first, then close spellings, then meaning)."""
        form = normalize(text)
        scores: dict[str, float] = {}
        for mention in self.mentions(text):
            scores[mention.iri] = max(
                scores.get(mention.iri, 0.0), 1.0 if mention.how != "fuzzy" else mention.score
            )
        if form:
            # Names that start with what was typed come first ("nvl" -> NVLink, NVL...), shortest first.
            for choice in self.forms:
                if choice.startswith(form):
                    bonus = 0.99 - min(0.2, (len(choice) - len(form)) / 100)
                    for iri in self.forms[choice]:
                        scores[iri] = max(scores.get(iri, 0.0), bonus)
            for choice, score, _ in process.extract(form, list(self.forms), scorer=fuzz.WRatio, limit=60):
                if score >= 70:
                    for iri in self.forms[choice]:
                        scores[iri] = max(scores.get(iri, 0.0), score / 100 * 0.95)
        for iri, score, _ in self.semantic(text, k=20):
            if score >= SEMANTIC_MIN:
                scores[iri] = max(scores.get(iri, 0.0), score * 0.9)
        # A text that is a whole layer reference ("eight L5", "L8 of the co-design model") finds
        # that layer first, ahead of the model and the words it names.
        named = self._layer_named(text, None)
        if named:
            scores[named] = 1.0
        records = [(self.catalog.get(i), s) for i, s in scores.items()]
        if type:
            records = [(r, s) for r, s in records if r is not None and _has_type(self, r, type)]
        ranked = sorted(
            ((r, s) for r, s in records if r is not None),
            key=lambda rs: (-rs[1], rs[0].iri != named, rs[0].label.lower()),
        )
        page = ranked[offset : offset + limit]
        return [self.catalog.ref(r.iri, score=s) for r, s in page], len(ranked)


def _has_type(linker: Linker, rec: EntityRecord, wanted: str) -> bool:
    wanted_norm = normalize(wanted).replace(" ", "")
    for t in rec.types:
        local = t.rsplit("#", 1)[-1].lower()
        label = normalize(rec.type_labels.get(t, "")).replace(" ", "")
        if wanted_norm in (local, label) or (
            t.startswith(str(SG)) and linker.catalog.is_a(rec.iri, SG[wanted.strip()])
        ):
            return True
    return any(
        linker.catalog.is_a(rec.iri, SG[w]) for w in (wanted.strip(), wanted.strip().title().replace(" ", ""))
    )


#: Bump when what the name tables hold changes (cached ones are then rebuilt).
_TABLES_FORMAT = 2  # 2: model numbers take a plural ("h100s")


def _tables_path(engine: Engine):
    from stackgraph.graph.cachefiles import cache_root

    return cache_root() / "linker" / f"{engine.loaded.content_hash}-{_TABLES_FORMAT}.pickle"


def _tables_header(engine: Engine) -> dict:
    return {"cache": "linker", "format": _TABLES_FORMAT, "content_hash": engine.loaded.content_hash}


def _load_tables(engine: Engine):
    """The name tables cached for this graph content (large graphs only), or None."""
    from stackgraph.graph.cachefiles import log, read_pickle
    from stackgraph.graph.catalog import CACHE_MIN_RECORDS

    if len(engine.catalog.records) < CACHE_MIN_RECORDS:
        return None
    path = _tables_path(engine)
    if not path.is_file():
        return None
    try:
        tables = read_pickle(path, _tables_header(engine))
        if not (isinstance(tables, tuple) and len(tables) == 4 and all(isinstance(t, dict) for t in tables)):
            raise ValueError("not the linker's tables")
        return tables
    except (OSError, ValueError) as error:
        log(f"name table cache {path.name} unusable ({' '.join(str(error).split())[:100]}); rebuilding it")
        return None


def _save_tables(engine: Engine, tables) -> None:
    from stackgraph.graph.cachefiles import write_pickle_later
    from stackgraph.graph.catalog import CACHE_MIN_RECORDS

    if len(engine.catalog.records) < CACHE_MIN_RECORDS:
        return
    write_pickle_later(_tables_path(engine), _tables_header(engine), tables, "name tables")
