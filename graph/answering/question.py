"""A question parsed once: the value linking and every answerer read instead of the raw string.

Before, each step normalized, tokenized and re-linked the text on its own (the passage ranker,
the competition between answers, linking, the follow-up rules), and they could disagree. A
``Question`` holds, computed once per question:

- ``text``: the sanitized question as the user wrote it (what answers echo);
- ``normalized``: the folded form names are matched in (``catalog.normalize``);
- ``terms``: its content-word stems (``lexical.terms``), what word overlap and coverage use;
- ``mentions``: the entities it names, with word spans and how each matched (exact, code, fuzzy);
- ``layer_refs``: the layer references it writes, each with its model ("nine L8", "the
  operational map's L2"), from ``layer_refs``;
- ``model_hint``: the layer model the question names as a whole, if any;
- ``intent``: the intent guessed from the wording, with how clearly it was said;
- ``unknown_names``: words of the sentence that asks, written as names (an identifier, an
  acronym, a capitalised or CamelCase word inside a sentence), that name nothing in the graph and
  that the graph never uses;
- ``asks_for_remedy``: whether it asks for a fix ("are there any solutions?");
- ``asks_for_check``: whether it asks how to see or verify something ("how do I check GPU usage
  per pod?");
- ``asked_terms``: in a report of several sentences, the terms of the one that asks (the last
  ending in a question mark): the sentences before it say what happened, that one what is wanted;
- ``ruled_out``: terms it says only of what it checked and found fine ("queue + gen look normal")
  or only in its issue template's headings ("Expected behavior");
- ``pointing``: terms it says only in a phrase pointing back at its own trouble ("what's this
  problem called?", "how do I stop that error?"); ``ranking_terms`` are the ``terms`` less these
  and the ruled-out ones, what statements are matched against;
- ``changes_topic``: whether it opened with an aside saying it changes the subject ("unrelated,
  but ..."); the aside is dropped from ``text`` and everything read from it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.evidence import relation_words
from stackgraph.graph.answering.text import FENCED_BLOCK, SENTENCE_BREAK
from stackgraph.graph.catalog import normalize
from stackgraph.graph.layer_refs import LayerRef, find_layer_refs, find_relative_refs, model_naming_words
from stackgraph.graph.lexical import (
    chatter_words,
    environment_headings,
    relational_words,
    role_verbs,
    setting_words,
    synonyms,
    template_headings,
    terms,
)
from stackgraph.graph.linking import MODEL_IRIS, STOPWORDS
from stackgraph.graph.model import UnknownEntity

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.linking import Mention


@dataclass(frozen=True)
class Question:
    text: str
    normalized: str
    terms: tuple[str, ...]
    mentions: tuple[Mention, ...]
    layer_refs: tuple[LayerRef, ...]
    model_hint: str | None
    intent: intents.IntentGuess
    unknown_names: tuple[str, ...] = ()
    #: Settings the graph lacks whose value a short question asks ("what's the default
    #: NCCL_IB_TIMEOUT?"): ``_unknown_settings``.
    unknown_settings: tuple[str, ...] = ()
    #: Whether it asks for a remedy ("any solution?", "how can we improve this?").
    asks_for_remedy: bool = False
    #: Whether it asks how to see or verify something ("how do I check GPU usage per pod?").
    asks_for_check: bool = False
    #: Whether it reports a measurement changing ("TTFT went from 0.5s to 6s").
    reports_change: bool = False
    #: Whether it asks for a person, whom the graph never holds ("who invented the GPU?").
    asks_for_person: bool = False
    #: Whether it asks when something happened, a date the graph never holds ("when was it founded?").
    asks_for_date: bool = False
    #: The terms of the sentence that asks, when other sentences stand beside it; else empty.
    asked_terms: tuple[str, ...] = ()
    #: Terms the report rules out and says nowhere else ("retrieval and queueing look normal, it
    #: is all generation"): what was checked and found fine is not the problem; and those it says
    #: only in its template's headings ("Expected behavior"), which are no part of it.
    ruled_out: frozenset[str] = frozenset()
    #: Terms it says only in a phrase pointing back at what it reports ("this problem", "that
    #: error"): a word for the trouble already described, not another one ("scheduling problem").
    pointing: frozenset[str] = frozenset()
    #: Whether the sentence that asks wants a configuration setting ("which engine setting
    #: addresses that?"), not a report that mentions its configs in passing.
    asks_for_setting: bool = False
    #: The entity a question asks for a part or tool of ("which kubelet feature ...", "what
    #: Kubernetes mechanism ..."): the answer is a thing next to it, not it.
    part_of: str | None = None
    #: Terms it says only inside settings written as code ("--workers=10", "num_workers=4"): the
    #: name of an option of the asker's program, not the trouble ("fewer workers running").
    in_settings: frozenset[str] = frozenset()
    #: Whether it opens by saying it changes the subject ("unrelated, but ...", "different
    #: topic: ..."): a turn that says so does not lean on the conversation, whatever "it" it says.
    changes_topic: bool = False

    @classmethod
    def parse(
        cls,
        engine: Engine,
        text: str,
        intent: str | None = None,
        model: str | None = None,
        near: str | None = None,
    ) -> Question:
        """Parse sanitized ``text``; ``intent`` (a caller that already knows it) skips guessing.
        ``model``: the layer model a bare layer code means when the text names no model (the one
        a conversation is about: "what's the assumption baked into L2 there?"); ``near``: the
        layer "the layer below it" is below (the one the conversation last named)."""
        # "different topic, which gpu should I buy?" asks what follows the aside; the aside is
        # no part of the question, not even words of it the graph uses ("topic").
        aside = _TOPIC_CHANGE.sub(" ", text).strip()
        changes_topic = bool(aside) and aside != text
        text = _without_interjection(aside if changes_topic else text)
        guess = intents.IntentGuess(intent, 1.0) if intent else intents.detect(_unquoted(text))
        prefer = "Workload" if guess.intent == intents.STRESS else None
        refs = tuple(find_layer_refs(text))
        model_hint = engine.linker.model_hint(text)
        if (
            model_hint is None
            and model is not None
            and (any(r.model is None for r in refs) or find_relative_refs(text))
        ):
            model_hint = model  # "L2 there", "the top layer": of the model the conversation is in
        mentions = tuple(engine.linker.mentions(text, prefer=prefer, model=model_hint, near=near))
        sentences = _sentences(text)
        asking = _asking_sentence(sentences)
        text_terms = tuple(terms(text))
        return cls(
            text=text,
            normalized=normalize(text),
            terms=text_terms,
            mentions=mentions,
            layer_refs=refs,
            model_hint=model_hint,
            intent=guess,
            unknown_names=tuple(_unknown(engine, text, mentions, guess.intent)),
            unknown_settings=_unknown_settings(engine, sentences, len(text_terms)),
            asks_for_remedy=intents.asks_for_remedy(text),
            asks_for_check=intents.asks_for_check(text),
            reports_change=intents.reports_change(text),
            asks_for_person=_asks_for_a_person(engine, text),
            asks_for_date=bool(_ASKS_FOR_DATE.search(text)),
            asked_terms=tuple(terms(asking)),
            ruled_out=ruled_out_terms(text) | heading_terms(text) | environment_terms(text),
            pointing=pointing_terms(text),
            in_settings=_said_only_in(_CODE_SETTING, text),
            # Said in the sentence that asks, or in a question of one sentence ("which engine flag
            # for that?"); "I used the default configs" in a report asking why it is slow asks none.
            asks_for_setting=intents.asks_for_setting(text if len(sentences) <= 1 else asking),
            part_of=_part_asked_of(text, mentions),
            changes_topic=changes_topic,
        )

    @cached_property
    def model_words(self) -> set[str]:
        """The terms of the words naming a layer model whose layer the question asks for ("in the
        nine-layer stack, which layer covers ..."), when it says more than that."""
        models = set(MODEL_IRIS.values())
        naming = {i for m in self.mentions if m.iri in models for i in range(m.start, m.end)}
        if not naming or not intents.asks_for_layer(self.text):
            # "and in the nine-layer one?" asks what the model says: its own design choices count.
            return set()
        words = self.normalized.split()
        inside = {t for i in naming if i < len(words) for t in terms(words[i])}
        # A word also said outside the model's name ("kubernetes is its own layer") still counts.
        outside = {t for i, w in enumerate(words) if i not in naming for t in terms(w)}
        found = inside - outside
        return found if found and set(self.terms) - found else set()

    @cached_property
    def ranking_terms(self) -> tuple[str, ...]:
        """Its terms less those it rules out, and less the words naming a layer model beside what
        it asks ("in the nine-layer co-design stack, which layer covers the links inside a
        server?" asks about links; the model only says whose layers): what statements are matched
        against."""
        dropped = set(self.ruled_out) | self.pointing | self.model_words | self.qualifier_words
        return tuple(t for t in self.terms if t not in dropped) if dropped else self.terms

    @cached_property
    def qualifier_words(self) -> set[str]:
        """The terms of the words that say whose layer a code is ("ops" of "L1 of the ops map"):
        they name a model, not what is asked of its layer, and every crosswalk statement says
        "ops L7" too."""
        found: set[str] = set()
        for ref in self.layer_refs:
            if ref.model:
                found.update(terms(" ".join(model_naming_words(self.text[ref.start : ref.end]))))
        return found

    @property
    def named(self) -> list[str]:
        """The IRIs the question names, in the order it names them."""
        return [m.iri for m in self.mentions]

    @property
    def content_terms(self) -> tuple[str, ...]:
        """The terms less those of the words that cue its intent ("how do I see", "which command")
        and of a phrase saying where the asker stands ("on a node", "in our cluster"): they say
        what kind of answer is wanted and from where, which no statement needs to repeat."""
        return tuple(terms(_without_setting(intents.without_cues(self.text, self.intent.intent))))

    @property
    def naming(self) -> dict[str, set[str]]:
        """Each entity the question names, with the terms of the words that name it."""
        found: dict[str, set[str]] = {}
        for m in self.mentions:
            found.setdefault(m.iri, set()).update(terms(m.surface))
        return found

    @property
    def residual_terms(self) -> tuple[str, ...]:
        """The terms outside the words that name an entity: what the question says *about* the
        things it names ("equipment", "need" of "what equipment do I need to use RoCE?")."""
        naming = {t for m in self.mentions for t in terms(m.surface)}
        return tuple(t for t in self.terms if t not in naming)

    def _unnamed_words(self) -> Iterator[tuple[str, list[str]]]:
        """The question's words that no mention covers and that have stems, with their stems."""
        named = _positions(self.mentions)
        for i, word in enumerate(self.normalized.split()):
            stems = terms(word)
            if i not in named and stems:
                yield word, stems

    def own_words(self) -> list[list[str]]:
        """The stems of each word that says what the question is about in its own words: not a
        name, not a number, not a word that only says what is asked ("best", "problem")."""
        return [
            stems
            for word, stems in self._unnamed_words()
            if word.isalpha() and word not in relational_words()
        ]

    def known_own_words(self, engine: Engine) -> int:
        """How many of its own words (``own_words``) the graph uses."""
        return sum(_graph_uses(engine, stems) for stems in self.own_words())

    def words_beyond_names(self, engine: Engine) -> tuple[list[str], bool]:
        """The question's words outside its names that the graph never uses and that are ordinary
        English ("gaming"; not a name it lacks like "gdrcopy", nor words that only say what is
        asked), and whether it says any word the graph does use besides its names."""
        foreign: list[str] = []
        known = False
        for word, stems in self._unnamed_words():
            if _graph_uses(engine, stems):
                known = True
            elif word in engine.common_words and word not in relational_words():
                foreign.append(word)
        return foreign, known

    @property
    def chooses_among(self) -> bool:
        """Whether it asks for one of the things just said ("which one would I use?"), outside a
        name already resolved ("the layer under that one")."""
        named = _positions(self.mentions)
        return any(
            len(self.normalized[: m.start()].split()) not in named
            for m in _CHOOSES_AMONG.finditer(self.normalized)
        )

    @property
    def points_back(self) -> bool:
        """Whether it says "it", "that", "those" ...: words that point back at something said
        before ("how do I check it?")."""
        if self.chooses_among:
            return True  # "which one would I use?": one of the things just named
        return bool(self._pointers())

    @property
    def first_pointer(self) -> int | None:
        """The position (in the normalized words) of its first word pointing back, if any: where
        the subject it stands for would be written ("does it run on Kubernetes?")."""
        return next(iter(self._pointers()), None)

    def _pointers(self) -> list[int]:
        """Its words pointing back, less those inside a name already resolved ("the layer below
        it" names the layer under the one the conversation last named)."""
        named = _positions(self.mentions)
        return [i for i in _pointing_words(self.normalized.split()) if i not in named]

    @property
    def points_back_at_several(self) -> bool:
        """Whether its words pointing back are plural ("where do they land?", "are those on the
        host?"): they stand for every thing of a kind the turn before named, not its first."""
        words = self.normalized.split()
        pointers = self._pointers()
        return bool(pointers) and all(words[i] in _PLURAL_POINTERS for i in pointers)

    @property
    def points_at_own_names(self) -> bool:
        """Whether its pointing words are plural and follow two or more things it names itself:
        "observability and security: are those layers too?" asks about those two, not about
        anything said before."""
        words = self.normalized.split()
        pointers = _pointing_words(words)
        if not pointers or any(words[i] not in _PLURAL_POINTERS for i in pointers):
            return False
        before = {m.iri for m in self.mentions if m.end <= pointers[0]}
        return len(before) >= 2

    def only_foreign(self, engine: Engine) -> bool:
        """Whether the question says some ordinary word the graph never uses and nothing the graph
        knows besides its names and words that only say what is asked ("cost", "going"): "so how
        do I cook rice?" after "what is NCCL?" leans on context by its wording only. Pointing back
        at the conversation, it must say several such words: "and what eats into it?" asks one
        thing of "it", "will it snow on Christmas?" is about the weather."""
        foreign = 0
        for word, stems in self._unnamed_words():
            if word in relational_words():
                continue
            if _graph_uses(engine, stems):
                return False
            foreign += word in engine.common_words
        return foreign >= (FOREIGN_BESIDE_IT if self.points_back else 1)

    def foreign_subject(self, engine: Engine, ordinary: bool = False) -> str | None:
        """The first thing the question introduces with an article or a possessive ("a leaking
        tap", "my sourdough starter"), or a thing to do ("learn to swim"), that is outside the
        graph by its head word or an ordinary word before it ("my bike chain"), if any. A follow-up
        that brings its own subject from outside the graph is about that subject, not the
        conversation's ("what is PFC?" then "and what about knitting a scarf?"), however much
        it leans on context by its wording. The head is the phrase's last word before a stopword
        (at most ``PHRASE_WORDS``); a name, a word the graph uses (or a report-word synonym of
        one), a word that only says what is asked ("the best way") and a slip of the keys are
        not foreign. A phrase after a word pointing back at the conversation ("can it run on a
        desktop?") says something of that subject, not a subject of its own, unless it is a thing
        to do."""
        words = self.normalized.split()
        named = _positions(self.mentions)
        starts = _sentence_starts(self.text)
        pointers = set(_pointing_words(words))
        pointed_back = False
        for i, word in enumerate(words):
            if i in starts:
                pointed_back = False  # "that worked. whats a good lasagna recipe?": a new sentence
            # "can it run on a desktop?" asks about "it": what runs where. What is to be done
            # after it is a subject of its own: "is it going to rain?", "is it safe to eat
            # cookie dough?" say "it" only as English does before the thing meant.
            pointed_back = pointed_back or i in pointers
            if word not in _DETERMINERS:
                continue
            phrase = noun_phrase(words[i + 1 :])
            if not phrase or any(i + 1 + k in named for k in range(len(phrase))):
                continue
            after = i + 1 + len(phrase)
            if word == _TO_DO and after in pointers and (after + 1 == len(words) or after + 1 in starts):
                continue  # "what sits in the path to catch that?": a thing done to what was said
            # The head word, or an ordinary English word before it ("my bike chain": a chain,
            # but a bike's): either says the thing is not the graph's.
            # After "to", the first word is the verb of the thing to do, not a modifier: "supposed
            # to catch regressions" is about regressions, "learn to bake bread" about bread.
            before_head = phrase[1:-1] if word == _TO_DO else phrase[:-1]
            modifiers = [w for w in before_head if w in engine.common_words]
            said = [phrase[-1], *modifiers]
            if ordinary:  # only plain English counts, not a name the graph lacks ("the gdrcopy")
                said = [w for w in said if w in engine.common_words]
            foreign = sum(foreign_word(engine, w) for w in said)
            # After "it", a phrase says something of that subject ("can it run on a desktop?",
            # "is that a known bias?"); a thing of the asker's own said in several foreign words
            # ("does that happen to my cast iron pan?") is a subject of its own.
            of_it = pointed_back and word != _TO_DO
            if of_it and (word not in _POSSESSIVES or foreign < FOREIGN_AFTER_POINTER):
                continue
            if foreign:
                return " ".join(phrase)
        return None

    def with_intent(self, guess: intents.IntentGuess) -> Question:
        """The same question read with another intent (a follow-up taking its predecessor's)."""
        from dataclasses import replace

        return replace(self, intent=guess)


#: "which kubelet feature", "what Kubernetes mechanism", "which vLLM setting": asking words, a
#: name (one or two words) and a word for a part or tool of the thing named.
_ASKS_FOR_A_PART = re.compile(
    r"\b(?:which|what)\s+(?P<name>[\w.-]+(?:[\s-][\w.-]+)?)[\s-]+(?:side\s+)?"
    r"(?:feature|component|plugin|mechanism|setting|option|knob|flag|parameter|controller|"
    r"operator|extension|api|service|subsystem|module|tool)s?\b",
    re.IGNORECASE,
)


def _part_asked_of(text: str, mentions: tuple[Mention, ...]) -> str | None:
    """The entity named between the asking word and a word for a part ("which kubelet feature"):
    what the asked-for thing belongs to. None when no mention sits there."""
    found = _ASKS_FOR_A_PART.search(text)
    if found is None:
        return None
    start = len(normalize(text[: found.start("name")]).split())
    end = len(normalize(text[: found.end("name")]).split())
    return next((m.iri for m in mentions if start <= m.start and m.end <= end), None)


def noun_phrase(words: list[str]) -> list[str]:
    """The words of the phrase that opens ``words`` (at most ``PHRASE_WORDS``): up to a stopword,
    or a past participle after its first word ("the assumption baked into L2" is an assumption,
    "the pod stuck in Pending" a pod: what follows the thing says something of it). A word
    followed by an object pronoun is the verb after the phrase, not its head: "would the ops
    triage tree send me to" is about the tree; so is one ending in -s before "to" ("the team
    wants to swap it" is about the team)."""
    phrase: list[str] = []
    for n, word in enumerate(words[:PHRASE_WORDS]):
        if word in STOPWORDS or (phrase and (_PARTICIPLE.fullmatch(word) or _ADVERB.fullmatch(word))):
            break
        if phrase and n + 1 < len(words) and words[n + 1] in _OBJECT_PRONOUNS:
            break
        if phrase and word.endswith("s") and words[n + 1 : n + 2] == ["to"]:
            break  # "the team wants to swap it": a verb taking an infinitive ends the phrase
        phrase.append(word)
    return phrase


#: Pronouns that stand only as an object: the word before one is a verb ("send me", "tell us").
_OBJECT_PRONOUNS = frozenset({"me", "us", "him", "them"})


#: Foreign words a phrase a possessive opens after a word pointing back needs to be a subject of
#: its own ("my cast iron pan").
FOREIGN_AFTER_POINTER = 2
_POSSESSIVES = frozenset({"my", "our", "your", "his", "her", "their"})

#: A past participle, by its regular ending ("baked", "trained", "attached").
_PARTICIPLE = re.compile(r"[a-z]{3,}ed")
#: An adverb, by its ending ("the compute side actually came back"): the thing ended before it.
_ADVERB = re.compile(r"[a-z]{3,}ly")

#: Words that open a phrase introducing a thing or a thing to do: "a leaking tap", "my sourdough
#: starter", "(learn) to swim".
_TO_DO = "to"
_DETERMINERS = frozenset({"a", "an", "the", "my", "our", "your", "his", "her", "their", "some", _TO_DO})
#: A choice among what was said before: "which one", "that one", "the other one".
_CHOOSES_AMONG = re.compile(r"\b(?:which|that|the other|either|neither)\s+(?:one|ones|of the two)\b")
#: Words that point back at the conversation's subject ("can it run on a desktop?").
_REFERS_BACK = frozenset({"it", "its", "they", "them", "this", "that", "these", "those"})
#: Those of them that point at several things ("observability and security: are those layers?").
_PLURAL_POINTERS = frozenset({"they", "them", "these", "those"})
#: Words after "is it" that make the "it" stand for what follows, not for anything said before:
#: "is it worth refinancing my mortgage?", "is it possible to ...", "is it normal that ...".
_ANTICIPATED = frozenset(
    {"worth", "possible", "ok", "okay", "normal", "true", "safe", "wise", "better", "necessary", "advisable"}
)
#: Verbs that open such a question before "it".
_OPENING_BE = frozenset({"is", "was", "isn't", "would", "will"})


def _pointing_words(words: list[str]) -> list[int]:
    """The positions of the words that point back at something said before ("it", "those"),
    less an "it" that stands for what its sentence says after it."""
    return [i for i, w in enumerate(words) if w in _REFERS_BACK and not _anticipatory(words, i)]


def _anticipatory(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is an "it" standing for what the sentence says after it, as English
    puts "it" before a long subject ("is it worth getting an AWS certification?"), rather than
    pointing back at the conversation."""
    if words[i] == "it" and words[i + 1 : i + 2] == ["being"]:
        return True  # "without it being awkward": the subject of a clause, not a thing said before
    return (
        words[i] == "it"
        and i > 0
        and words[i - 1] in _OPENING_BE
        and i + 1 < len(words)
        and (
            words[i + 1] in _ANTICIPATED or (words[i + 1] == "a" and words[i + 2 : i + 4] == ["good", "idea"])
        )
    )


#: Ordinary words outside the graph a question pointing back must say, and nothing the graph
#: knows, to be about something else ("will it snow on Christmas?", not "what eats into it?").
FOREIGN_BESIDE_IT = 2
#: Words of such a phrase read to find its head word.
PHRASE_WORDS = 4
#: A word as written, with the joiners identifiers and versions use ("warp_drive_factor", "v2.1").
_WRITTEN = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/+]*")
#: The last sentence of a text (what follows the last sentence end that has more after it).
_LAST_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[^.!?]*[.!?]*\s*$)")
#: What ends a sentence: a capital after it starts a sentence, not a name.
_SENTENCE_END = (".", "?", "!", ":", ";")


def _without_setting(text: str) -> str:
    """``text`` less its phrases naming the place it is asked from ("on a node", "across our
    whole cluster"; ``lexical.setting_words``): a preposition, a determiner, perhaps a word that
    only says which or how much ("whole"), then a setting noun. A count is no setting ("on 16
    nodes", "on one node" are part of the problem), nor is "on my GPU nodes"."""
    global _SETTING
    if _SETTING is None:
        nouns = "|".join(sorted(map(re.escape, setting_words()), key=len, reverse=True))
        which = "|".join(sorted(map(re.escape, relational_words()), key=len, reverse=True))
        _SETTING = re.compile(
            rf"\b(?:in|on|of|for|from|across|at|within|throughout)\s+(?:{'|'.join(_PLACE_DETERMINERS)})\s+"
            rf"(?:(?:{which})\s+)?(?:{nouns})\b",
            re.IGNORECASE,
        )
    return _SETTING.sub(" ", text)


#: Determiners that make "on a node" a place rather than a count ("on 16 nodes").
_PLACE_DETERMINERS = (
    "a", "an", "the", "my", "our", "your", "their", "each", "every", "all", "all the", "all our",
    "this", "that", "these", "those", "some",
)  # fmt: skip
_SETTING: re.Pattern[str] | None = None


#: A quotation inside a longer text: what someone else asked or a message printed, in double quotes.
_QUOTED = re.compile(r"[\"“”][^\"“”]{3,200}[\"“”]")
#: Pasted code: a fenced block ("```$ openstack hypervisor list```") or an inline code span.
_PASTED_CODE = re.compile(rf"{FENCED_BLOCK.pattern}|`[^`\n]{{1,200}}`", re.DOTALL)


#: What a report says it checked and found fine: "retrieval and queueing look flat", "queue + gen
#: look normal", "the dataloader is fine", "workers aren't starved" (the subject and the trouble
#: denied are both ruled out).
_FOUND_FINE = re.compile(
    r"\b([\w/-]+(?:\s*(?:\+|&|\band\b|\bor\b)\s*[\w/-]+){0,3})\s+(?:itself\s+|themselves\s+)?"
    r"(?:(?:is|are|was|were|looks?|looked|seems?|seemed|stays?|stayed|works?|worked|working|runs?|both|all|still)\s+){0,2}"
    r"(?:fine|normal|ok|okay|flat|healthy|unchanged|stable|clean|fast|quick)\b"
    # Denied trouble only: "workers aren't starved", "the network isn't the bottleneck", "the
    # dataloader is NOT it"; "the fabric manager is not installed" or "the doc wasn't retrieved"
    # is the trouble itself.
    r"|\b([\w/-]+)\s+(?:isn'?t|aren'?t|wasn'?t|weren'?t|is not|are not|was not|were not)\s+(?:the\s+)?"
    r"(starved|starving|slow|stuck|saturated|throttled|bottleneck(?:ed)?|problem|issue|culprit|cause|it)\b"
    # "busbw is normal, so not the fabric", "it's not the network".
    r"|\b(?:so|it'?s|its|it\s+is|but)\s+not\s+the\s+([\w/-]+)"
    # A checklist of absences: "no xid, no ecc", "No Xid errors, no ECC errors" (one "no GPU
    # found" is the trouble itself; a run of them lists what was looked at and found clean).
    r"|\b(no\s+[\w/-]+(?:\s+errors?)?(?:\s*(?:,|;|\band\b)\s*(?:no|zero)\s+[\w/-]+(?:\s+errors?)?)+)",
    re.IGNORECASE,
)
#: Words of such a phrase that are no part of the thing ruled out.
_NOT_A_THING = frozenset(
    {"it", "its", "all", "everything", "that", "this", "the", "and", "or", "is", "are", "no", "zero", "error", "errors"}
)  # fmt: skip


#: A contrast that sets one thing against another: "the time goes to retrieval, not generation",
#: "retrieval rather than generation", "the storage instead of the fabric" (the second is ruled out).
_CONTRAST = re.compile(
    r"\b([a-z][\w/-]*)\s*,?\s+not\s+(?:the\s+|in\s+|on\s+|to\s+)?([a-z][\w/-]*)\b"
    r"|\b(?:rather\s+than|instead\s+of)\s+(?:the\s+)?([a-z][\w/-]*)\b",
    re.IGNORECASE,
)
#: Words before "not" that make it deny a verb ("it does not start", "why not", "or not").
_NOT_DENIES_A_VERB = frozenset(
    {"do", "does", "did", "is", "are", "was", "were", "am", "be", "been", "can", "could", "will",
     "would", "should", "shall", "has", "have", "had", "may", "might", "must", "need", "why", "if",
     "or", "whether", "and", "but", "also", "just", "still", "it", "that", "this", "i", "we", "you",
     "they", "he", "she", "so", "yet", "certainly", "definitely", "probably", "maybe", "surely"}
)  # fmt: skip


#: States a report denies ("not ready", "not found"): the trouble, not a thing set aside.
_NOT_A_THING_STATE = frozenset(
    {"ready", "found", "available", "running", "healthy", "responding", "reachable", "enough",
     "working", "sure", "really", "yet", "even", "only", "much", "supported",
     "visible", "set", "there", "possible", "able", "good", "fast", "free", "alive", "loaded"}
)  # fmt: skip


def _contrasted(text: str) -> list[tuple[int, int, str]]:
    """The spans and words of what a contrast sets aside: "generation" of "retrieval not
    generation". Not a denied state ("pods not ready", "jobs not starting"): that is the trouble."""
    found = []
    for match in _CONTRAST.finditer(text):
        before, after, other = match.groups()
        word = other or after
        if other is None and (
            before.lower() in _NOT_DENIES_A_VERB
            or word.lower() in STOPWORDS
            or word.lower().endswith(("ing", "ed", "able", "ly"))
            or word.lower() in _NOT_A_THING_STATE
        ):
            continue
        found.append((match.start(3) if other else match.start(2), match.end(), word))
    return found


def ruled_out_terms(text: str) -> frozenset[str]:
    """The terms of what the text says was checked and is fine, or sets aside ("retrieval, not
    generation"), less any it also says elsewhere: in "NCCL hangs on 16 nodes, a single node is
    fine" the nodes are still the problem."""
    spans = _contrasted(text)
    for match in _FOUND_FINE.finditer(text):
        start = match.start()
        things = [
            w for w in " ".join(g for g in match.groups() if g).split() if w.lower() not in _NOT_A_THING
        ]
        if len(things) == 1 and things[0].lower() in _BARE_HEADS:
            # "generation time is flat": a time, a span or a path is known by the word before it.
            modifier = re.search(r"([\w/-]+)\s+$", text[:start])
            if modifier and modifier.group(1).lower() not in STOPWORDS:
                things.insert(0, modifier.group(1))
                start = modifier.start(1)
        spans.append((start, match.end(), " ".join(things)))
    if not spans:
        return frozenset()
    inside: set[str] = set()
    rest = text
    # Cut from the end, so each span's offsets still hold in what is left.
    for start, end, words in sorted(spans, reverse=True):
        inside.update(terms(words))
        rest = f"{rest[:start]} {rest[end:]}"
    return frozenset(inside - set(terms(rest)))


#: Head nouns that name no thing found fine by themselves: the word before says which.
_BARE_HEADS = frozenset(
    {"time", "times", "span", "spans", "latency", "side", "part", "path", "step", "phase"}
)


#: A run of a few words set off by a comma or "!" at the very start: "cool, which ...", "ok
#: thanks! and ...". Read as an interjection when every word of it is chatter.
_OPENING_RUN = re.compile(r"^\s*((?:[a-z']+\s+){0,3}[a-z']+)\s*(?:[,!]+|[.:;]|\s[-–—])\s*", re.IGNORECASE)


def _without_interjection(text: str) -> str:
    """``text`` less an opening interjection: "cool, which colo is cheapest?" says nothing of
    cooling, nor "nice! so what about L4?" of anything nice."""
    match = _OPENING_RUN.match(text)
    if match is None or match.end() >= len(text):
        return text
    if not all(w.replace("'", "") in chatter_words() for w in match.group(1).lower().split()):
        return text
    return text[match.end() :]


#: A sentence opening that announces a change of subject: "unrelated, but ...", "different topic:
#: ...", "separate question -", "totally off-topic but ...". Only as an aside set off by a comma,
#: colon, dash or "but": "unrelated errors show up in the log" says no such thing.
_TOPIC_CHANGE = re.compile(
    r"(?:^|(?<=[.!?])\s+)(?:(?:also|ok|okay|oh|btw|and|anyway|now)[,]?\s+)*"
    r"(?:(?:totally|completely|slightly|somewhat|kinda|a\s+bit)\s+)?"
    r"(?:unrelated|off[- ]topic|(?:a\s+)?(?:different|separate|new|other|another|unrelated|random|side)"
    r"\s+(?:topic|question|thing|subject|note|matter)"
    r"|chang(?:e|ing)\s+(?:the\s+)?(?:topic|subject)|on\s+(?:a|an)\s+(?:different|other|unrelated)\s+note)"
    r"(?:\s*[,:;\-–—]+\s*(?:but\b)?|\s+but\b)",
    re.IGNORECASE,
)

#: A word for the trouble a report describes, after a word pointing back at it: "this problem",
#: "that error", "the same issue", "such behaviour".
_POINTING = re.compile(
    r"\b(?:this|that|these|those|the\s+same|such\s+an?|such)\s+"
    r"(?:problems?|issues?|errors?|bugs?|behaviou?rs?|situations?|symptoms?)\b",
    re.IGNORECASE,
)


#: A setting written as code: a command-line flag ("--workers=10", "--num-gpus 4") or an
#: identifier with an underscore, perhaps assigned ("num_workers=4", "max_num_seqs").
_CODE_SETTING = re.compile(r"(?<![\w-])(?:--[A-Za-z][\w-]*|[A-Za-z][A-Za-z0-9]*_[\w.]+)(?:=\S*)?")


def pointing_terms(text: str) -> frozenset[str]:
    """The terms of words that only point back at the trouble the text describes ("what's this
    problem called?"), less any it also says elsewhere: such a word names nothing new, while the
    graph's "scheduling problem" would match it as much as the trouble itself."""
    return _said_only_in(_POINTING, text)


def _said_only_in(pattern: re.Pattern[str], text: str) -> frozenset[str]:
    """The terms the text says inside the pattern's matches and nowhere else."""
    inside = {t for m in pattern.finditer(text) for t in terms(m.group(0))}
    return frozenset(inside - set(terms(pattern.sub(" ", text)))) if inside else frozenset()


@lru_cache(maxsize=1)
def _template_heading() -> re.Pattern[str]:
    """One pattern for every heading of ``ontology/template_headings.txt``, longest first."""
    headings = sorted(template_headings(), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(h) for h in headings) + r")(?![\w'])", re.IGNORECASE)


def heading_terms(text: str) -> frozenset[str]:
    """The terms a report says only inside its template's headings ("Describe the bug", "Expected
    behavior"): boilerplate, not its trouble."""
    return _said_only_in(_template_heading(), text)


@lru_cache(maxsize=1)
def _environment_section() -> re.Pattern[str]:
    """A markdown heading of ``ontology/environment_headings.txt`` ("### Your current environment",
    "### Terraform Version") and what follows it up to the next heading or the end."""
    headings = "|".join(re.escape(h) for h in sorted(environment_headings(), key=len, reverse=True))
    return re.compile(
        r"(?:^|\s)#{1,6}\s*(?:[\w.-]+\s+)?(?:" + headings + r")\b.*?(?=\s#{1,6}\s|\Z)",
        re.IGNORECASE | re.DOTALL,
    )


def environment_terms(text: str) -> frozenset[str]:
    """The terms a report says only inside its environment section ("### Your current
    environment" and the versions pasted under it): what is installed, not its trouble."""
    return _said_only_in(_environment_section(), text)


def _unquoted(text: str) -> str:
    """The text less its quotations and pasted code when it says more than them: 'I ask the most
    basic question: "What is GraphRAG" and it says it doesn't know' reports an answer, it asks no
    definition; a pasted `openstack hypervisor list` asks for no listing. A question that is all
    quotation keeps it."""
    stripped = _PASTED_CODE.sub(" ", _QUOTED.sub(" ", text))
    return stripped if stripped.strip(" .?!:;,") else text


def _sentences(text: str) -> list[str]:
    return [s for s in SENTENCE_BREAK.split(text.strip()) if s.strip()]


#: Most terms of a question asking a setting's value; longer ones report their setup.
VALUE_QUESTION_TERMS = 20
#: A sentence asking for a setting's value: "what X values do I set", "what's the default X",
#: "what should X be set to", "recommended X", "which X / Y combo is optimal".
_ASKS_VALUE = re.compile(
    r"\b(?:values?|defaults?|recommended|set\s+(?:\w+\s+)?to|combos?|combinations?|optimal)\b", re.IGNORECASE
)
#: A setting's name as a program spells it: an identifier with an underscore ("NCCL_IB_HCA",
#: "num_speculative_tokens").
_IDENTIFIER = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")


def _unknown_settings(engine: Engine, sentences: list[str], term_count: int) -> tuple[str, ...]:
    """The settings the graph lacks whose value a sentence of a short question asks: "what's the
    default NCCL_IB_TIMEOUT?" asks a value of a name the graph does not hold, and what it knows of
    NCCL says nothing of it. Only identifiers (an underscore in them) in a sentence asking for a
    value; none for a long report, whose logs and configs name many settings around what it asks
    (applied to them, this declined 59 answerable reports)."""
    if term_count > VALUE_QUESTION_TERMS:
        return ()
    lacking: list[str] = []
    for sentence in sentences:
        if not _ASKS_VALUE.search(sentence):
            continue
        for name in _IDENTIFIER.findall(sentence):
            if name not in lacking and not _holds_name(engine, name):
                lacking.append(name)
    return tuple(lacking)


def _holds_name(engine: Engine, name: str) -> bool:
    """Whether the graph has an entity called exactly ``name`` (by any of its labels)."""
    try:
        ref = engine.resolve(name)
    except UnknownEntity:
        return False
    rec = engine.catalog.get(ref.iri)
    return rec is not None and any(
        normalize(label) == normalize(name) for label in engine.catalog.all_labels(rec)
    )


def _asking_sentence(sentences: list[str]) -> str:
    """The last sentence ending in a question mark (or the last, when it opens with an asking word
    and no sentence has one), when the text has other sentences beside it
    ("model doesn't fit on one node at TP=8. we have 2 nodes. which parameter spreads it across
    them?"); empty for a single sentence or a report that asks nothing in so many words."""
    asking = [s for s in sentences if s.rstrip().endswith("?")]
    if not asking and not intents.is_statement(sentences[-1] if sentences else ""):
        # Typed without its question mark: "... streams stall. is there an engine flag for this"
        asking = sentences[-1:]
    return asking[-1] if len(sentences) > 1 and asking else ""


def _sentence_starts(text: str) -> frozenset[int]:
    """The positions (in the normalized words) where a sentence after the first begins."""
    starts: set[int] = set()
    position = 0
    for part in SENTENCE_BREAK.split(text.strip()):
        if position:
            starts.add(position)
        position += len(normalize(part).split())
    return frozenset(starts)


def looks_like_a_name(word: str, starts_sentence: bool) -> bool:
    """Whether a word is written as a name rather than as an ordinary word: an identifier
    (``warp_drive_factor``), an acronym (``CXL``), CamelCase (``DeepSpeed``) or a capitalised word
    inside a sentence (``Hyperlane``)."""
    core = word.strip("./-+")
    if len(core) < 2:
        return False
    return (
        "_" in core
        or core.isupper()
        or bool(re.search(r"[a-z][A-Z]", core))
        or (not starts_sentence and core[0].isupper() and core[1:].islower())
    )


def _positions(mentions: tuple[Mention, ...]) -> set[int]:
    """The word positions (in the normalized question) that the mentions cover."""
    return {i for m in mentions for i in range(m.start, m.end)}


#: "who" opening a question (after a joining word), and the verb it asks with.
_ASKS_FOR_PERSON = re.compile(
    r"^\s*(?:(?:and|so|ok|okay|also|then|but)\b[\s,]*)*(?:who|whom|whose)\b"
    r"(?:\s+(?:is|are|was|were|does|do|did|will|would|can|could|should|[a-z]+ly))*"
    r"\s*(?P<verb>[a-z]*)",
    re.IGNORECASE,
)


#: A sentence asking when something happened: "when did it last erupt?", "when was NVLink
#: introduced?". The graph holds no dates or history; "when does X matter?" asks a condition.
_ASKS_FOR_DATE = re.compile(
    r"(?:^|[.?!;]\s+)(?:(?:and|so|ok|okay|also|but|like)\b[\s,]*)*when\s+(?:did|was|were)\b", re.IGNORECASE
)


#: Words that open an object: after "who does" they say "do" is the main verb.
_ARTICLES = frozenset({"the", "a", "an", "this", "that", "these", "those", "all", "any", "my", "our", "your"})


def _asks_for_a_person(engine: Engine, question: str) -> bool:
    """Whether a "who" question asks for a person, whom the graph never holds ("who invented the
    GPU?"), rather than for what plays a role in the stack ("who handles rate limiting?", "who is
    responsible for scheduling?": ``lexical.role_verbs``) or stands in one of the graph's
    relations to something ("who deploys it?": a word of a relation's name)."""
    match = _ASKS_FOR_PERSON.match(question)
    if match is None:
        return False
    verb = match.group("verb").lower()
    if verb in _ARTICLES and re.search(rf"\b(?:does|do)\s+{verb}\b", question, re.IGNORECASE):
        # "who does the MIG partitioning?": "does" is the verb, asking what does a task now
        # ("who did the first GPU?" asks about history, and a person).
        return False
    return verb not in role_verbs() and not set(terms(verb)) & relation_words(engine)


def _unknown(engine: Engine, text: str, mentions: tuple[Mention, ...], intent: str | None) -> list[str]:
    """What the question asks about that the graph lacks, in the order the question says it: the
    names it does not know and, for a definition, the words of its subject it never uses."""
    found = _unknown_names(engine, text, mentions, after_names=intent != intents.FIT)
    if intent == intents.DEFINE:
        said = {w.lower() for w in found}
        found += [w for w in _unknown_subject_words(engine, text, mentions) if w not in said]
    low = text.lower()
    return sorted(found, key=lambda w: low.find(w.lower()))


def _unknown_names(
    engine: Engine, text: str, mentions: tuple[Mention, ...], after_names: bool = True
) -> list[str]:
    """The words written as names that no mention covers and whose stems the graph never uses:
    what the question names that the graph does not know ("CXL" of "what is CXL memory pooling?").

    ``after_names=False`` (a question asking where something fits) leaves out the names written
    after a known one in the asking sentence: the thing to place is the first one named, and what
    follows says more about it ("where would spilling the KV cache out to CPU RAM belong?" places
    the KV cache; "where does CXL fit next to NVLink?" still asks about CXL)."""
    named = _positions(mentions)
    found: list[str] = []
    # Only the sentence that asks: "We tier the KV cache to CPU RAM and NVMe. Which layers does
    # that involve?" names RAM as context, not as what to define or place.
    asking = _LAST_SENTENCE.search(text)
    offset = asking.start() if asking else 0
    first_named = min(
        (m.start for m in mentions if m.start >= len(normalize(text[:offset]).split())), default=None
    )
    for match in _WRITTEN.finditer(text, offset):
        word = match.group(0)
        before = text[: match.start()].rstrip()
        if not looks_like_a_name(word, not before or before.endswith(_SENTENCE_END)):
            continue
        index = len(normalize(before).split())
        stems = terms(word)
        # An environment variable or constant ("NCCL_IB_TIMEOUT") is a name of its own, however
        # well the graph knows its parts: the seeds write none.
        constant = "_" in word and word.strip("./-+").isupper()
        if constant:
            # Known only if a name is all of it: "nccl" inside it names NCCL, not NCCL_IB_TIMEOUT.
            whole = normalize(word.strip("./-+"))
            if any(normalize(m.surface) == whole for m in mentions if m.start <= index < m.end):
                continue
        elif index in named or not stems or all(t in engine.lexical.idf for t in stems):
            continue
        if not after_names and first_named is not None and index > first_named:
            continue
        if normalize(before).split()[-1:] in (["no"], ["not"], ["without"]):
            continue  # "there's no L10": said to be absent, not asked about
        found.append(word.strip("./-+"))
    return found


#: A definition question's asking sentence, with the phrase it asks about as ``subject``: "what
#: is X", "what does X do", "define X", "explain X". The phrase ends where a clause begins ("what
#: is the best way to keep pods from piling up" asks about "the best way"), and a phrase that is a
#: clause itself ("describe how NCCL picks transports") is no name.
_ASKS_TO_DEFINE = re.compile(
    r"^\s*(?:what\s*(?:'s|s\b|is\b|are\b|was\b|were\b)|what\s+(?:does|do)\b|define\b|explain\b|describe\b"
    r"|tell\s+me\s+about\b)\s+(?!(?:how|why|when|where|which|what|whether|if)\b)"
    # "what's supposed to line them up?", "what's meant to happen?": asks what does a job.
    r"(?!(?:supposed|meant|going|able|about|likely|expected)\s+to\b)"
    # The phrase stays in its sentence: "What's the meaning of X. I am working on Y." asks about
    # X, whatever the sentences after it say.
    r"(?P<subject>(?:(?![.!?]\s).)+?)\s*(?:\b(?:do|does|mean|means|stand|used|to|that|which|who|whose|when"
    r"|where|while|if|so|because|since|for|after|before)\b.*|[.!?]\s.*)?[?.!]*\s*$",
    re.IGNORECASE,
)


#: A definition question asked as "what does X <verb>?".
_WHAT_DOES = re.compile(r"^\s*what\s+(?:does|do)\b", re.IGNORECASE)
#: The verb such a question asks with when it is one the subject phrase stops at ("do", "mean").
_ASKING_VERB = re.compile(r"\s*(?:do|does|mean|means|stand|stands|used)\b", re.IGNORECASE)

#: "for <what>" right after a definition question's subject: what the subject is for.
_PURPOSE = re.compile(r"\s*for\s+(?P<what>[^?.!]+)", re.IGNORECASE)


def _unknown_subject_words(engine: Engine, text: str, mentions: tuple[Mention, ...]) -> list[str]:
    """Ordinary words in the phrase a definition question asks about that no name covers and the
    graph never uses: "the kubernetes of cooking", "NCCL's flux capacitor mode", "a tensor
    sprocket" ask about something the graph does not hold, however well it knows the name beside
    it. Words that say what is asked of a subject (``lexical.relational_words``: "the most common
    threat in MCP") and numbers are not the subject."""
    asking = _LAST_SENTENCE.search(text)
    offset = asking.start() if asking else 0
    match = _ASKS_TO_DEFINE.match(text[offset:])
    if match is None:
        return []
    subject = normalize(match.group("subject")).split()
    ends_at_verb = _ASKING_VERB.match(text, offset + match.end("subject"))
    if _WHAT_DOES.match(text[offset:]) and not ends_at_verb and len(subject) > 1:
        # "what does volcano's gang scheduling guarantee?": the last word is the verb asked
        # with, not part of what the question asks about.
        subject = subject[:-1]
    if _REFERS_BACK.intersection(subject):
        return []  # "the most important habit with it": what is asked of the thing pointed at
    named = _positions(mentions)
    start = offset + match.start("subject")
    first = len(normalize(text[:start]).split())
    words = list(enumerate(subject, first))
    # What the subject is for belongs to it: "the best GPU for gaming" is no GPU of this graph.
    purpose = _PURPOSE.match(text, offset + match.end("subject"))
    if purpose:
        at = len(normalize(text[: purpose.start("what")]).split())
        said = normalize(purpose.group("what")).split()
        words += list(enumerate(itertools.takewhile(lambda w: w not in STOPWORDS, said[:PHRASE_WORDS]), at))
    found: list[str] = []
    for index, word in words:
        stems = terms(word)
        if (
            index in named
            or not stems
            or not word.isalpha()
            or word in relational_words()
            or any(t in engine.lexical.idf for t in stems)
            or _misspelt(engine, word)
        ):
            continue
        found.append(word)
    return found


def _graph_uses(engine: Engine, stems: list[str]) -> bool:
    """Whether the graph uses a word (by its stems) or a report-word synonym of it: "confirm" is
    no word of the graph, but "verify" is."""
    idf = engine.lexical.idf
    table = synonyms()
    return any(t in idf or any(s in idf for s in table.get(t, ())) for t in stems)


def foreign_word(engine: Engine, word: str) -> bool:
    """Whether a word of a phrase says a thing outside the graph: a plain word (no number or
    identifier) the graph never uses, that does not only say what is asked ("the best way") and
    is no slip of the keys for a word it does."""
    stems = terms(word)
    return (
        word.isalpha()
        and bool(stems)
        and word not in relational_words()
        and not _graph_uses(engine, stems)
        and not _misspelt(engine, word)
    )


def _misspelt(engine: Engine, word: str) -> bool:
    """Whether ``word`` is no English word but one edit from one ("purpse"): a slip of the keys,
    not the name of something the graph lacks. The word's one-edit variants (a few hundred) are
    looked up, not the vocabulary (tens of thousands) scanned."""
    common = engine.common_words
    return word not in common and any(variant in common for variant in _one_edit(word))


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _one_edit(word: str) -> set[str]:
    """Every string one deletion, swap of neighbours, replacement or insertion from ``word``."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = {a + b[1:] for a, b in splits if b}
    swaps = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaces = {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    inserts = {a + c + b for a, b in splits for c in _LETTERS}
    return deletes | swaps | replaces | inserts
