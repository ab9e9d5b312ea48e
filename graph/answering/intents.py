"""What kind of question this is, from its wording.

The patterns are data: each intent has cue patterns, tried in order; the first intent whose cue
matches wins, and the entities linked in the question can still change the choice (a "what is"
question about a symptom is answered as a symptom). Patterns describe the shape of a question
("how do I check ...", "which layer owns ..."), never a particular entity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Intent names, as they appear in the ``intent`` field of an answer.
FIT, OWNER, DIAGNOSE, DEFINE, WHY, LIST, COMPARE, CROSSWALK, PATH, TRIAGE, STRESS, ASSUME, PRACTICE = (
    "where_fits",
    "owner_of_symptom",
    "diagnose",
    "define",
    "why",
    "list_members",
    "compare",
    "crosswalk",
    "related",
    "triage",
    "workload_stress",
    "layer_detail",
    "practice",
)

_I = re.IGNORECASE

#: What may open a question before its asking words: chatter ("ok so", "hey,", "quick q:"), a
#: request for brevity ("tl;dr", "ELI5") or for a reminder ("remind me"). "tl;dr what's InfiniBand"
#: asks what InfiniBand is as plainly as "what's InfiniBand".
_OPENING = (
    r"^\s*(?:(?:ok(?:ay)?|so|and|also|but|then|hey|hi|hello|quick\s+q(?:uestion)?|q|tl;?\s?dr|eli5"
    r"|sorry|um+|uh+|btw|remind\s+me|real\s+quick)\b[\s,:;.!-]*)*"
)

#: Words asking what a layer assumes of the one below ("assume", "take for granted"): a cue of
#: ASSUME, and what ``asks_for_assumption`` looks for.
_ASSUMING = (
    # Not the asker's own supposition: "let's assume I followed the docs", "we are assuming UCX
    # picks the NIC", "I assumed the network was ok", ", assuming the rest stays the same".
    r"(?<!\bi )(?<!\bwe )(?<!they )(?<!let's )(?<!let us )(?<!i'm )(?<!we're )(?<!they're )"
    r"(?<!\bi am )(?<!we are )(?<!they are )(?<!, )\bassum(?:e|es|ed|ing|ption|ptions)\b"
    r"|\btakes? (?:\w+ )?for granted\b"
)


#: "list" as what is asked: the verb ("list the vector DBs", "which workloads does the stack matrix
#: list?"), or "the list" / "a list of" the graph holds. A noun before it names some other list a
#: report quotes ("openstack compute service list", "the core list allocated by cpu manager").
_LIST_ASKED = (
    r"(?:(?:^|[.?!;:,]\s*|\b(?:to|you|i|we|please|pls|and|then|can|could)\s+)list\b"
    r"|(?<!next on )\b(?:the|a|that|this|your|whole|full|static|layer)\s+list\b"
    r"|\blist\s+(?:of|the|all|every|everything|them|me|out)\b"
    r"|\b(?:does|do|did)\s+(?:\w+\s+){1,4}list\b)"
)


#: "is there a way to get GPU usage per pod?": a measurement asked for is read by a check.
_WAY_TO_READ = (
    r"\b(?:way|how)\s+to\s+(?:get|see|view|track|watch|collect|export|show)\s+(?:\w+\s+){0,3}?"
    r"(?:usage|utili[sz]ation|metrics?|stats|statistics|telemetry|temperatures?)\b"
)

#: Asking for a check: how to see, measure or verify something ("how do I check NVLink links?",
#: "which command shows it?", "is there a way to get GPU usage per pod?").
#: "what's a quick check on the IB side?", "which checks should we run first?": a check asked for
#: by name.
_A_CHECK_ASKED = (
    r"\b(?:what|which)(?:'?s)?\s+(?:(?:is|are)\s+)?(?:a|an|the|some)?\s*(?:quick|fast|simple|first|good)?"
    r"\s*checks?\b"
)
_CHECK = re.compile(
    r"\bhow (do|can|should|would) (i|we|you|one)\s+(check|test|diagnose|debug|verify|tell|see|find out|find|isolate|inspect|measure|monitor|confirm|detect|troubleshoot|investigate|know|figure out|spot|look|review|list|view|read|audit|validate|query)\b|\b(what|which)\b.{0,24}\b(command|commands|tool|tools|metric|metrics)\b(?!\s+(are there|exist|does the (stack|graph)))|\bhow to\s+(check|test|diagnose|debug|verify|tell|isolate|inspect|measure|monitor|troubleshoot)\b|\bwhere (do|should) i look\b|\bwhat (should|do) i (run|look at|check)\b|\bcommand (to|for)\b"
    # "first thing to check?" after a report: where to look for its problem.
    r"|\b(?:first|next)\s+(?:thing\s+|place\s+|step\s+)?to\s+(?:check|look\s+at|inspect|verify)\b"
    # "is there a top-like dashboard to watch per-GPU memory?" asks for a tool that reads it.
    r"|\b(tool|tools|utility|utilities|way|dashboard|dashboards)\s+(to|for)\s+(check|test|testing|diagnose|debug|verify|measure|monitor|monitoring|inspect|see|find|watch|view|track|observe)\b"
    r"|" + _WAY_TO_READ + r"|" + _A_CHECK_ASKED,
    _I,
)

#: (intent, pattern) in priority order.
CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        PATH,
        re.compile(
            # "how do I check which GPUs are linked over NVLink?" asks for a check, not a relation.
            r"\b(how|in what way)\s+(is|are|does|do)\b(?!\s+(?:i|we|you|one)\b).+\b(related|connected|linked)\b"
            r"|\b(relationship|relation|connection|path)\s+(between|from)\b",
            _I,
        ),
    ),
    (
        TRIAGE,
        re.compile(
            r"\btriage\b|\bwalk me through\b|\b(?:what|which)\s+branches\b|\bdecision tree\b|\bstep by step\b"
            # "what should we check first?", "where do i even start?": the first question of the tree.
            r"|\bwhere\s+(?:do|should|would|can)\s+(?:i|we)\s+(?:even\s+)?(?:start|begin|look first)\b"
            r"|\b(?:what|which)\s+(?:should|do|would|can)\s+(?:i|we)\s+(?:check|look\s+at|test|verify|rule\s+out)\s+first\b"
            # "what's the order to check things when ...": the tree of the symptom named. ("In what
            # order do I check ..." is answered by the diagnostic order the graph states, a list.)
            r"|\border\s+(?:to|in\s+which\s+to|for)\s+(?:check|look|investigate|debug|troubleshoot|diagnose)",
            _I,
        ),
    ),
    (
        COMPARE,
        re.compile(
            # "vs" before a number sets two measurements side by side ("90 GB/s vs 190"), not two things.
            # "compare" asks when it opens a request or follows "how" ("how does NCCL compare to
            # RCCL?"), or takes its objects ("compare NCCL and RCCL"); "training is slow compare to
            # one node" reports a measurement.
            r"\bhow\b[^.?!]{0,60}\bcompares?\b|(?:^|[.?!:]\s*|\b(?:please|can you|could you|let's|lets)\s+)compare\b"
            r"|\bcompare\s+(?!to\b|with\b)\w+"
            # Nor does a "vs" inside parentheses, an aside on what a question asks ("which NCCL
            # transport is used (IB vs socket)?").
            # Nor a "vs" naming which of two a problem is ("confirm it's a driver vs cuda version
            # thing"): the check asked for tells them apart.
            r"|\bcomparison\b|\b(difference(s)?|diff|different)\s+between\b|\b(versus|vs)\b(?!\.?\s*[~≈]?\s*\d)(?![^()]*\))"
            r"(?!\.?\s+[\w.-]+(?:\s+[\w.-]+){0,2}\s+(?:thing|issue|problem)\b)"
            # Nor one setting two states side by side ("what's running in prod vs what's in git").
            r"(?!\.?\s+(?:what|how|where|when|who)\b)"
            # "we're benchmarking SGLang against vLLM": two things measured side by side.
            r"|\b(?:benchmark(?:s|ed|ing)?|weigh(?:s|ed|ing)?|pitt(?:ed|ing))\s+[\w.-]+\s+against\s+\w"
            r"|\bdiffer(s)?\s+from\b|\bhow\s+(?:is|are|does|do)\b[^.?!]{1,60}\bdifferent\s+(?:from|than|to)\b"
            r"|\bor\b.+\bwhich\s+(is|one)\b"
            # "Is pipeline parallel more efficient than tensor parallel?": a question that opens by
            # asking whether one is better; "training is slower than one node" reports.
            r"|(?:^|[.?!]\s+)(?:is|are|would|will|does|do)\s+[^.?!]{1,60}?\b"
            r"(?:(?:more|less)\s+\w+|better|faster|cheaper|worse|slower)\s+than\b",
            _I,
        ),
    ),
    (
        CROSSWALK,
        re.compile(
            r"\b(correspond|corresponds|map to|maps to|mapping|mapped|crosswalk|equivalent layer|match(es)?|relates? to|line up with|lines up with)\b.*\b(model|map|layer|layers)\b|\bmap\b.+\bonto\b|\b(other|eight-layer|nine-layer|operational)\s+(model|map)\b.*\b(correspond|same|equivalent)\b",
            _I,
        ),
    ),
    (
        STRESS,
        re.compile(
            r"\bstress(es|ed)?\b|\bload(s)? on\b|\bhow much does\b.+\bmatter\b|\bwhich layers matter\b|\bmost demanding\b",
            _I,
        ),
    ),
    (DIAGNOSE, _CHECK),
    (
        WHY,
        re.compile(
            r"^\s*why\b|\bwhat is the reason\b|\bwhat's the reason\b|\breason(ing)? (for|behind)\b|\bwhy (is|are|does|do|not)\b",
            _I,
        ),
    ),
    # "who is responsible for CUDA OOM?" asks which layer owns it; "what is L5 responsible
    # for?" asks what L5 assumes (below).
    (
        OWNER,
        re.compile(r"\bwho(?:'s|\s+is|\s+are)?\s+(?:\w+ly\s+)?(?:responsible|accountable|in charge)\b", _I),
    ),
    (
        ASSUME,
        re.compile(
            _ASSUMING
            + r"|\bpresum(e|es|ption)\b|\bresponsib(le|ility|ilities)\b|\bhow does\b.+\b(layer|it)\b.+\bfail\b|\bfailure mode|\bhow (it|they) fail"
            # "what goes wrong at L5 of the ops map?": how a layer fails.
            r"|\bwhat\s+(?:\w+ly\s+|often\s+)?(?:goes|go|went)\s+wrong\b(?=.*\b(?:l[1-9]|layer|cp)\b)",
            _I,
        ),
    ),
    (
        OWNER,
        re.compile(
            r"\bwhich layer owns\b|\bwhat layer owns\b|\bwho (?:\w+ly )?owns?\b|\bowns? (it|this)\b|\blikely cause\b|\bwhat (?:\w+ly )?(?:causes|could cause|might cause|would cause)\b"
            # "what's usually behind that pattern?" asks for a cause; "what's behind the gateway?"
            # for what comes after it in the request flow.
            r"|\bwhat(?:'s|s|\s+is|\s+are)\s+(?:\w+ly|often|likely)\s+behind\b"
            # "what are the usual suspects then?": the likely causes, not a listing.
            r"|\b(?:usual|likely|common|main|top|obvious)\s+(?:suspects?|culprits?)\b"
            r"|\bcaused by\b|\broot cause\b|\bwhy (am i|are we|is my|is the|do i|does my)\b.+\b(getting|seeing|slow|fail|failing|dying|crash|stall|error)",
            _I,
        ),
    ),
    (
        LIST,
        re.compile(
            r"\b(what|which)\s+(\w+\s+){0,3}(are|is)\s+(in|on|part of|inside|at)\b|"
            + _LIST_ASKED
            + r"|\bwhat else\b|\bwhich\b.+\b(does|do)\s+the\s+(stack|graph|model|glossary)\s+(mention|name|list|include)\b|\bwhat (\w+\s+){0,2}(are there|exist)\b|\bexamples of\b|\bmembers of\b|\bwhat (lives|runs|sits|belongs) (in|at|on)\b|\b(which|what)\b.+\b(are|is)\s+(mentioned|named|listed|covered|included|described)\b|\b(which|what) (kinds|types|sorts) of\b|\bname (the|all|some)\b|^\s*(what|which) are the\b|\bwhat\s+(?:are|were)\s+(?:those|these|its|their)\s+(?:\w+\s+){1,2}(?:called|named)\b|\bwhat (\w+\s+){1,2}(does|do)\s+.+\s+(have|offer|include|support)\b",
            _I,
        ),
    ),
    (
        FIT,
        re.compile(
            r"\bwhere(\s+(does|do|is|are|would|should|will)|'s)\b.*\b(fit|sit|go|belong|live|land|placed?|run|map)s?\b|\b(which|what)\s+layers?\b|\b(which|what)\s+of\s+the\s+(?:[\w-]+\s+){0,3}?layers?\b|\bwhere in the stack\b|\bwhere\b.+\bin the (stack|layers|model)\b|\bwhat part of the stack\b",
            _I,
        ),
    ),
    # "should" asks in a sentence that asks ("should we ...?", "what limits should a loop have");
    # a report's "Expected: it should not time out." says what went wrong, and asks no practice.
    (
        PRACTICE,
        re.compile(
            r"\bpractice\b|\bbest way\b|\bshould\b(?=[^.!?]*(?:\?|$))|\bmust\b|\benforce\b|\bshould (i|we)\b|^\s*should\b|\bought to\b|\bis it (ok|okay|safe|wise|a good idea|worth|practical|possible)\b|\bworth (it|doing)\b|\bcan (i|we)\b|\bhow should\b|\brecommend(ed|ation)?\b|\bwhat is an?\b.+\b(standby|principle|pattern)\b",
            _I,
        ),
    ),
    (
        DEFINE,
        re.compile(
            # "what do people use for X?" asks for a thing people use, not for what people are.
            _OPENING + r"(what|who)(\s+(exactly|actually|really|even|precisely))?\s*(is|are|'s|does|do)\b"
            r"(?!\s+(?:people|folks|most|everyone|you|we|i)\b(?!\s+mean\b))"
            # "what's doing the killing?" asks what acts on something, not what "doing" is; a
            # gerund that names a thing ("what is chunking in RAG?") has no object after it.
            r"(?!\s+(?:\w+ly\s+)?\w+ing\s+(?:the|a|an|this|that|these|those|it|them|my|our|your|all)\b)"
            r"|\bwhat does\b.+\b(do|mean|stand for)\b|\bwhat\s+(\S+\s+){1,4}(stands?|stood)\s+for\b"
            # "what is it used for", "the definition of", "can you define": not a report's "the
            # fixed memory used for model weights", "the service definition" or "and will define
            # these in config.yaml".
            r"|(?:^|[.?!:;]\s*|\b(?:you|please|pls|plz|to|would|could|can|someone|somebody|anyone)\s+)define\b|\b(?:the|a|give|its)\s+definition\b|\bdefinition\s+of\b|\bmeaning of\b"
            r"|\bwhat\b[^.?!]{0,60}\bused for\b|\bused for what\b|\btell me about\b"
            # "what did we give up for it?", "any downsides?": what a thing costs, which its
            # definition says ("trades memory for precision").
            r"|\bwhat\s+(?:do|did|would|will|does)\s+(?:we|i|you|one|it)\s+(?:give\s+up|sacrifice|lose|trade\s+away)\b"
            r"|^\s*(?:(?:so|and|ok|but)[\s,]+)?any\s+(?:downsides?|drawbacks?|catch(?:es)?|cons)\b"
            # "what's it actually for?": what the thing pointed at is for, wherever it is asked.
            r"|\bwhat(?:'s|s|\s+is|\s+are)\s+(?:it|they|this|that)\s+(?:\w+ly\s+)?for\s*(?:[?.!]|$)"
            # "explain"/"describe" asks for a description when it opens a sentence or is asked of
            # someone ("can you explain"); "kubectl describe pod" in a pasted log asks nothing.
            # "Describe the bug" heads an issue template: the report that follows asks no definition.
            r"|(?:"
            + _OPENING
            + r"|[.?!:]\s+|\b(?:you|someone|anyone|somebody|please|pls|me|to)\s+)(?:explain|describe)\b"
            # Nor do its other headings ("Please describe.", "Describe the solution you'd like",
            # "Describe alternatives you've considered").
            r"(?!\s*[.:]|\s+(?:(?:the|your|this|any)\s+)?(?:bug|issue|problem|error|feature|behaviou?r|change"
            r"|solution|alternatives?|expected|steps|environment|context))",
            _I,
        ),
    ),
    # Any other "how do I ..." asks how to do something: the commands and tools for it.
    (DIAGNOSE, re.compile(r"\bhow (do|can|would|should|could) (i|we|you|one)\b|\bhow to\b", _I)),
)

#: Words that signal a problem report even without a cue ("pods stuck in Pending").
SYMPTOM_WORDS = re.compile(
    r"\b(error|errors|fail(s|ed|ing|ure)?|slow(er|ness|s)?|stall(s|ed|ing)?|hang(s|ing)?|crash(es|ed|ing)?|dies|dying|died|stuck|pending|timeout|timed out|drop(s|ped)?|degrad(ed|es|ing)|worse|oom|out of memory|underutili[sz]ed|won't start|will not start|not start|spik(e|es|ing)|increas(ed|ing)|(?:doubl|tripl|quadrupl)(?:ed|es|ing)|(?:jump|climb|balloon|skyrocket)(?:ed|ing)|(?:went|shot|gone) up|(?:went|gone|jumped|rose|grew|climbed) from|too many|runs? out of|never (stops|ends|finishes|terminates|returns|completes)|keeps? \w+ing|missing|lost|wrong|bad|cut off|cuts off|disconnect(s|ed)?|refus(es|ed)|reject(s|ed)|unreachable|flak(y|ing)|leak(s|ing)?|ran out of|running out of|exhaust(ed|s)?|429|5\d\d|401|mid-stream|getting|seeing|low|high|starved|starving|idle|restart(s|ing)?|killed|evicted|throttl(ed|ing)|bottleneck(ed)?|broken|unhealthy|down)\b",
    _I,
)


@dataclass(frozen=True)
class IntentGuess:
    intent: str | None
    #: How clearly the wording says so (1.0 for a direct cue, 0.5 for a symptom-like wording).
    strength: float


def without_cues(question: str, intent: str | None) -> str:
    """The question less the words that cue ``intent`` ("list", "which ... does the stack
    mention"): what remains is what it asks about."""
    for cue_intent, pattern in CUES:
        if cue_intent == intent:
            question = pattern.sub(" ", question)
    return question


#: Slips of the keys in the words a question asks with ("where dose NVLink fit?", "waht is"):
#: read as the word meant, so the intent is the one meant. Only asking words, where the slip
#: cannot be a word of the subject ("dose" after "where" is "does").
_ASKING_SLIPS = {
    "dose": "does",
    "deos": "does",
    "waht": "what",
    "whta": "what",
    "wich": "which",
    "hwo": "how",
}
_SLIP = re.compile(r"\b(" + "|".join(_ASKING_SLIPS) + r")\b", _I)


def _unslipped(question: str) -> str:
    return _SLIP.sub(lambda m: _ASKING_SLIPS[m.group(1).lower()], question)


#: An issue title's leading tags: "[Question]: Why does retrieval take so long?", "[Bug][vLLM] ...".
_TITLE_TAGS = re.compile(r"^\s*(?:\[[^\]\n]{1,30}\]\s*:?\s*)+")


def detect(question: str) -> IntentGuess:
    question = _unslipped(_TITLE_TAGS.sub("", question))
    for intent, pattern in CUES:
        if pattern.search(question):
            return IntentGuess(intent, 1.0)
    if SYMPTOM_WORDS.search(question):
        return IntentGuess(OWNER, 0.5)
    return IntentGuess(None, 0.0)


def looks_like_symptom(question: str) -> bool:
    return bool(SYMPTOM_WORDS.search(question))


#: A reading that changed: "TTFT went from 0.5s to 6s", "p95 shot up", "step time doubled".
_CHANGED = re.compile(
    r"\b(?:went|gone|jumped|rose|grew|climbed|dropped|fell|shot|spiked)\s+(?:from|up|down)\b"
    r"|\b(?:doubl|tripl|quadrupl)ed\b",
    _I,
)


def reports_change(question: str) -> bool:
    """ "TTFT went from 0.5s to 6s" reports what a measurement did; "GPU util is 95%, what
    should we measure?" states a value and asks."""
    return bool(_CHANGED.search(question))


#: "the problem" as what a "where" asks about ("where's the problem?", "where is the issue
#: likely?"): the problem reported, not a placement.
_THE_PROBLEM = r"(?:'s|\s+is|\s+(?:do|does|would)\s+\w+\s+think)?\s+(?:the|my|our|this)\s+(?:problem|issue|bottleneck|fault|bug|culprit)\b"

_ASKS_FOR_LAYER = re.compile(
    r"\b(which|what)\b[\w\s-]{0,30}\blayers?\b|\bwho (?:\w+ly )?owns?\b"
    # "where" asks when it opens a sentence or a question ("where does X fit?", "so where do ...");
    # inside a report it is a relative word ("an infinite loop where it calls the same tools").
    # "where's the problem?" after a report asks what is wrong, not where what it names sits.
    r"|(?:^|[.?!:;]\s+|\b(?:and|so|but|then)\s+)where\b(?!" + _THE_PROBLEM + r")"
    r"|\bwhere\s+(?:do|does|did|is|are|should|would|can|could|will|to)\b(?!" + _THE_PROBLEM + r")",
    _I,
)


def asks_for_layer(question: str) -> bool:
    """ "Which layer owns Milvus?" asks for a placement, "Milvus is slow" reports a problem."""
    return bool(_ASKS_FOR_LAYER.search(question))


#: "and batch inference?", "what about AMD?": the shape of the question before, asked of something
#: else. "and who drives that?" asks its own question with its own asking word.
_ELLIPTICAL = re.compile(
    r"^\s*(?:and\s+)?(?:what about|how about|same for)\b"
    r"|^\s*(?:and|also)\b(?!\s+(?:who|what|which|why|where|when|how)\b)",
    _I,
)


def is_elliptical(question: str) -> bool:
    """ "and batch inference?": a follow-up that reuses the previous question's shape."""
    return bool(_ELLIPTICAL.search(question))


_ADVICE = re.compile(r"\bshould\b|\bmust\b|\bbest\b|\bfirst\b|\brecommend|\badvice\b|\bworth\b", _I)


#: Those words and "presume": what a layer assumes of the one below is asked.
_ASSUMPTION = re.compile(_ASSUMING + r"|\bpresum", _I)


def asks_for_assumption(question: str) -> bool:
    return bool(_ASSUMPTION.search(question))


def asks_for_advice(question: str) -> bool:
    return bool(_ADVICE.search(question))


#: Words asking for a remedy rather than an explanation: "are there any solutions?", "how can we
#: improve this?", "how do I avoid it?".
_REMEDY = re.compile(
    # "all-reduce" and "reduce-scatter" name collectives, not a wish to reduce something.
    r"\b(solutions?|solve|fix|fixes|workarounds?|improve|speed (it |this |that )?up|(?<!-)reduce(?!-)|avoid|prevent"
    r"|mitigate|optimi[sz]e|resolve|handle|deal with|get around|get rid of|smooth(?:e?s)?(?: \w+)? out)\b",
    _I,
)


#: The narrow part of ``_CHECK``: the verbs of looking at something and the command that does.
_ASKS_CHECK = re.compile(
    r"\bhow (?:do|can|should|would) (?:i|we|you|one)\s+(?:check|verify|confirm|prove|see|inspect|measure|monitor|view)\b"
    # "what do i use to confirm?", "what would you run to actually prove that?"
    r"|\bwhat (?:do|can|should|would|could) (?:i|we|you|one) (?:use|run) to (?:\w+ )?(?:check|verify|confirm|prove|see|test|measure)\b"
    r"|\bhow to\s+(?:check|verify|confirm|inspect|measure|monitor)\b|\b(?:what|which)\b.{0,24}\bcommands?\b"
    r"|\bcommand (?:to|for)\b|" + _WAY_TO_READ + r"|" + _A_CHECK_ASKED,
    _I,
)


def asks_for_check(question: str) -> bool:
    """Whether the question asks how to see or verify something in so many words ("how do I
    check it?", "which command shows it?"): not "how do I know ..." or "how do I troubleshoot
    ...", which ask what to do, nor "which tools ..." of other tools than checks."""
    return bool(_ASKS_CHECK.search(question))


#: "what should I check?", "what else do we look at?": checks asked for, of nothing named.
_ASKS_WHAT_TO_CHECK = re.compile(
    r"\b(?:what|which)\s+(?:else\s+)?(?:should|do|can|could|would|must)\s+(?:i|we|you)\s+"
    r"(?:check|look\s+at|inspect|verify|run|test)\b",
    _I,
)


def asks_what_to_check(question: str) -> bool:
    """Whether the question asks how to check something, or what to check ("what should I
    check?"), in so many words."""
    return asks_for_check(question) or bool(_ASKS_WHAT_TO_CHECK.search(question))


def asks_for_remedy(question: str) -> bool:
    return bool(_REMEDY.search(question))


#: "what breaks if I crank it way up?", "what happens if max_num_seqs is too high?": the harm of
#: pushing a setting too far.
_PUSHED_TOO_FAR = re.compile(
    r"\b(?:what|which)\b.{0,40}\b(?:breaks?|goes wrong|go wrong|fails?|happens?|would happen|blows up|suffers?)\b"
    r".{0,60}\b(?:too (?:high|much|large|big|many)|crank(?:ed|s|ing)?|raise[sd]?|raising|increase[sd]?|increasing"
    r"|bump(?:ed|s)?|max(?:ed)? (?:it )?out|way up)\b"
    r"|\b(?:too (?:high|much|large|big|many)|crank(?:ed|s|ing)?|raise[sd]?|raising|increase[sd]?|bump(?:ed)?|way up)\b"
    r".{0,60}\b(?:what|which)\b.{0,30}\b(?:breaks?|goes wrong|go wrong|fails?|happens?|blows up|suffers?)\b",
    _I,
)


def asks_what_breaks(question: str) -> bool:
    """Whether it asks what goes wrong when a setting is pushed too far."""
    return bool(_PUSHED_TOO_FAR.search(question))


#: "what's next on the list?", "ok, now what?", "what should I check next?", "so what's left?": the
#: next question of the triage under way, after what the conversation has checked.
_NEXT = re.compile(
    r"\bwhat(?:'?s|\s+is)?\s+next\b|\bnext\s+on\s+the\s+list\b|\bnow\s+what\b"
    r"|\bwhat(?:'?s|\s+is)?\s+(?:else\s+)?left\b|\bwhat\s+(?:else\s+)?remains\b"
    r"|\b(?:check|look(?:\s+at)?|try|test|dig\s+into)\s+next\b",
    _I,
)


def asks_what_next(question: str) -> bool:
    return bool(_NEXT.search(question))


#: What a check found, reported ("the trace says it's queueing", "logs show ...", "turns out the
#: port is at 100G"): a statement that carries the report on, not a question of its own.
_FINDING = re.compile(
    r"\b(?:says?|said|shows?|showed|shown|showing|reports?|reported|turns?\s+out|turned\s+out"
    r"|came\s+back|comes\s+back|points?\s+(?:at|to)|traced|profiled|measured|checked|ran|tested)\b",
    _I,
)


def says_it_found(text: str, name: str) -> bool:
    """Whether the text says what ``name`` (a check) found, right after naming it: "ibstat says
    Active", "compute service list shows every row enabled", "nccl-tests came back at 90 GB/s"."""
    return bool(re.search(re.escape(name) + r"[\s,:)`'\"]+(?:\w+\s+){0,2}?" + _FINDING.pattern, text, _I))


#: Words saying a named thing is not in use: after it ("GPU Direct RDMA Disabled for HCA 0",
#: "gdrdma isn't being used") or before it ("can't use gdrdma between two nodes", "how to enable
#: GDR for NIC?").
_UNUSED_AFTER = (
    r"[\s,:)`'\"]+(?:\w+\s+){0,2}?(?:disabled|unavailable|missing|not\s+(?:being\s+)?(?:used|enabled|"
    r"working|available|supported|loaded|detected)|(?:isn'?t|is\s+not|aren'?t|are\s+not|wasn'?t)"
    r"\s+(?:being\s+)?(?:used|enabled|working|available|supported|loaded|detected))\b"
)
_UNUSED_BEFORE = (
    r"\b(?:(?:can'?t|cannot|can\s+not|couldn'?t|unable\s+to|fails?\s+to|failed\s+to|not\s+able\s+to)\s*"
    r"(?:use|enable|turn\s+on|get|load)"
    # "how to enable GDR?" asks to turn on what is off; "how can I use a CUDA version ..." does not.
    r"|how\s+(?:do\s+(?:i|we|you)\s+|to\s+|can\s+(?:i|we)\s+)?(?:enable|turn\s+on))\s+(?:\w+\s+){0,1}?"
)


#: A word without which neither ``says_not_in_use`` nor ``asks_what_it_needs`` can hold: read
#: once per question, before either is tried for each name it says.
_NEEDS_OR_UNUSED_CUE = re.compile(
    r"\b(?:disabled|unavailable|missing|not|isn'?t|aren'?t|wasn'?t|can'?t|cannot|couldn'?t|unable|fails?|failed"
    r"|enable|turn|need|needs|needed|require|requires|required|prerequisites?|requirements?|depends?|rely|relies)\b",
    _I,
)


def may_say_not_in_use_or_needs(text: str) -> bool:
    """Whether the text says a word that saying a thing is out of use, or asking what it needs,
    takes."""
    return bool(_NEEDS_OR_UNUSED_CUE.search(text))


def _spelled(name: str) -> str:
    """A pattern for a name as the question wrote it, its words apart by spaces, "_" or "-"
    ("gpu direct rdma" meets "GPU_Direct-RDMA")."""
    return r"[\s_-]+".join(re.escape(w) for w in name.split())


def says_not_in_use(text: str, name: str) -> bool:
    """Whether the text says ``name`` (a technology it names) is not in use or cannot be turned
    on: what it relies on is then the first thing to look at."""
    spelled = _spelled(name)
    return bool(
        re.search(spelled + _UNUSED_AFTER, text, _I) or re.search(_UNUSED_BEFORE + spelled + r"\b", text, _I)
    )


#: Words asking what a named thing needs: "what equipment do I need to use RoCE?", "what does
#: GPUDirect RDMA require?", "prerequisites for NVMe-oF".
_NEEDS_BEFORE = (
    r"\b(?:need|needs|needed|require|requires|required|prerequisites?|requirements?)\b"
    r"(?:\s+(?:to|for|in\s+order\s+to))?(?:\s+(?:use|run|enable|set\s+up|get|have|deploy))?"
    r"(?:\s+(?:to|for))?(?:\s+(?:use|run|enable|set\s+up|deploy))?\s+(?:a\s+|an\s+|the\s+)?"
)
_NEEDS_AFTER = r"\s+(?:need|needs|require|requires|depend\s+on|depends\s+on|rely\s+on|relies\s+on)\b"


def asks_what_it_needs(text: str, name: str) -> bool:
    """Whether a question asks what ``name`` (a technology it names) needs to work."""
    if not re.search(r"\b(?:what|which)\b", text, _I):
        return False
    spelled = _spelled(name)
    return bool(
        re.search(_NEEDS_BEFORE + spelled + r"\b", text, _I)
        or re.search(r"\b(?:does|do|would|will)\s+(?:a\s+|an\s+|the\s+)?" + spelled + _NEEDS_AFTER, text, _I)
    )


#: "so that rules them out, right?", "that means the fabric is fine?": whether what was just found
#: settles it, asked of the finding.
_ASKS_IF_SETTLED = re.compile(
    r"^\s*(?:(?:so|and|ok(?:ay)?|but)[\s,]+)*(?:that|this|it)\s+(?:rules?|means?|settles?|clears?|proves?)\b",
    _I,
)


#: "is that bad?", "could that actually slow down the whole job?": a yes-or-no on what was just
#: found, asked of it by a pronoun; "is it the model?" puts a cause forward instead.
_ASKS_OF_IT = re.compile(
    r"^\s*(?:(?:so|and|ok(?:ay)?|but|hmm+|wait)[\s,]+)*"
    r"(?:is|are|was|could|would|can|might|does|do|will)\s+(?:that|this|it)\b(?!\s+the\b)",
    _I,
)


def asks_if_settled(text: str) -> bool:
    """Whether the turn asks if what was just found settles the question ("so that rules them
    out, right?") or what to make of it ("is that bad?", "could that slow down the whole job?")."""
    return bool(_ASKS_IF_SETTLED.search(text) or _ASKS_OF_IT.search(text))


def reports_a_finding(text: str) -> bool:
    """Whether the text reports what a check found and asks nothing: no question mark, no asking
    cue, and a word of reporting ("trace says it's requests queueing at the endpoint, not gen")."""
    return "?" not in text and detect(text).intent is None and bool(_FINDING.search(text))


#: A sentence that asks only "why" ("why tho?", "but why?", "why is that?"): of the last answer.
_BARE_WHY = re.compile(
    r"^\s*(?:(?:but|so|ok|okay|and|hmm)[,\s]+)?why(?:\s+(?:tho|though|so|not|is\s+that|would\s+that\s+be))?\s*[?.!]+",
    _I,
)


def asks_bare_why(question: str) -> bool:
    """Whether the question opens with a sentence asking only why: it asks why of what was just
    said, whatever the sentences after it add ("why tho? i thought containers were self contained")."""
    return bool(_BARE_WHY.search(question))


#: How a turn that asks something begins, "?" or not: "how do i check that", "ok so which layer".
_ASKS = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|but|then|hmm+|well|also|right)\W+)*"
    r"(?:(?:what|where|how|who)(?:'?s)?|which|whose|when|why|is|are|was|were|do|does|did|can|could|should|would"
    r"|will|shall|any|anything|tell|explain|describe|define|show|list|give|compare)\b",
    _I,
)


def is_statement(text: str) -> bool:
    """Whether a turn asks nothing: no question mark and no asking word first. A statement after
    a statement is more of the same report ("TTFT is 4 s, streaming is fine" then "GPU
    utilization looks low the whole time"), read together whatever each names."""
    return "?" not in text and not _ASKS.match(text)


#: "which engine flag?", "what setting decides ...", "which knob?": a configuration setting asked for.
#: The nouns that ask for a configuration setting, each also said in the plural.
SETTING_WORDS = ("flag", "setting", "knob", "parameter", "param", "option", "config", "configuration")
#: Those nouns as written, singular and plural.
SETTING_FORMS = frozenset(f"{word}{ending}" for word in SETTING_WORDS for ending in ("", "s"))
_SETTING = re.compile(
    r"\b(?:" + "|".join(SETTING_WORDS) + r")s?\b"
    # "which timeout should I bump?", "what limit do we raise?": a thing to turn up or down is a
    # setting, whatever it is called.
    r"|\b(?:which|what)\s+\w+\s+(?:should|do|can|could|would|must)\s+(?:i|we|you)\s+(?:bump|raise|increase"
    r"|lower|decrease|reduce|tune|set|change|adjust|tweak|turn\s+(?:up|down))\b",
    _I,
)


def asks_for_setting(question: str) -> bool:
    return bool(_SETTING.search(question))


#: "Which layer handles evaluation and tracing?": a layer asked for by what it does.
_LAYER_BY_ROLE = re.compile(
    r"\b(which|what)\b[\w\s-]{0,30}\blayers?\b.{0,40}\b(handles?|deals? with|covers?|is responsible for|are responsible for|takes? care of|manages?)\b",
    _I,
)


def asks_layer_by_role(question: str) -> bool:
    return bool(_LAYER_BY_ROLE.search(question))
