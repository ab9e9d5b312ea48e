"""What a practice is done with, and what fixes a problem: the graph's ``uses``, ``implements``
and ``mitigates`` edges said in words.

A practice says what to do ("distributed jobs need all-or-nothing scheduling"); the tool that does
it is two edges away (the practice uses gang scheduling, which Volcano implements). A problem's
likely cause says what went wrong; what fixes it points the other way (gang scheduling mitigates
partial placement). The 2am reader needs both named, with the facts recorded as evidence.
"""

from __future__ import annotations

from rdflib.namespace import SKOS

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.context import NAMED_HOW, Context
from stackgraph.graph.answering.text import first_sentences, join, without_leading_label
from stackgraph.graph.lexical import terms
from stackgraph.graph.model import Answer
from stackgraph.graph.store import SG

#: At most this many fixes are each said with what they are.
FIXES_EXPLAINED = 2
#: Share of a fix's definition's words the answer must already hold for it to go unsaid.
SAID_SHARE = 0.7


def with_implementers(ctx: Context, iri: str) -> str:
    """The entity's name, with what implements it: "gang scheduling (implemented by Volcano)"."""
    makers = ctx.facts(iri).incoming(SG.implements)
    ctx.evidence.entity(iri)
    for maker in makers:
        ctx.evidence.fact(maker, SG.implements, iri)
        ctx.evidence.entity(maker)
    by = f" (implemented by {join([ctx.catalog.display(m) for m in makers[:3]])})" if makers else ""
    return f"{ctx.catalog.display(iri)}{by}"


def means_of(ctx: Context, iri: str) -> str:
    """What a practice uses, and what implements that: "It uses gang scheduling (implemented by
    Volcano)."; empty when it uses nothing the graph names."""
    used = ctx.facts(iri).iris(SG.uses)[:2]
    for target in used:
        ctx.evidence.fact(iri, SG.uses, target)
    return f"It uses {join([with_implementers(ctx, u) for u in used])}." if used else ""


def used_by(ctx: Context, iri: str, said: str = "") -> str:
    """What uses the entity, from the other end of ``uses``: "SSE is used by AI Gateway." (the
    place a reader goes to look at it); empty when nothing the graph names uses it or the answer
    names every user already."""
    users = [
        u for u in ctx.facts(iri).incoming(SG.uses) if ctx.catalog.display(u).lower() not in said.lower()
    ]
    if not users:
        return ""
    for user in users[:3]:
        ctx.evidence.fact(user, SG.uses, iri)
        ctx.evidence.entity(user)
    return f"{ctx.catalog.display(iri)} is used by {join([ctx.catalog.display(u) for u in users[:3]])}."


def fixes_of(ctx: Context, problem: str, settings_only: bool = False) -> list[str]:
    """What mitigates a problem or cause (``settings_only``: the configuration settings among them)."""
    fixes = ctx.facts(problem).incoming(SG.mitigates)
    if settings_only:
        fixes = [f for f in fixes if ctx.catalog.is_a(f, SG.ConfigurationParameter)]
    return fixes


def fixes_for(ctx: Context, problem: str, said: str = "", settings_only: bool = False) -> str:
    """What mitigates a problem or cause: "What fixes Partial placement of a distributed job:
    gang scheduling (implemented by Volcano)."; empty when the graph names nothing. A fix's
    definition that ``said`` (the answer so far) already holds is not repeated: a practice is often
    defined by the very sentence that described its problem. ``settings_only``: only the fixes
    that are configuration settings (asked "is there a setting for that?")."""
    fixes = fixes_of(ctx, problem, settings_only)[:3]
    if not fixes:
        return ""
    for fix in fixes:
        ctx.evidence.fact(fix, SG.mitigates, problem)
    names = [with_implementers(ctx, f) for f in fixes]
    if len(fixes) <= FIXES_EXPLAINED or settings_only:
        # Few enough to say what each one is: a practice's name alone rarely says how, and a
        # setting's name alone does not say which way to turn it.
        given: set[str] = set()
        for n, fix in enumerate(fixes):
            rec = ctx.catalog.get(fix)
            if rec is not None and rec.definition:
                what = without_leading_label(rec.definition, rec.label)
                if what and not _said(what, said) and what not in given:
                    given.add(what)  # two fixes defined alike (HNSW, IVFPQ) are explained once
                    ctx.evidence.fact(fix, SKOS.definition, rec.definition)
                    names[n] += f" ({first_sentences(what, 160).rstrip('.')})"
    if settings_only:
        which = "The settings that fix" if len(fixes) > 1 else "The setting that fixes"
        return f"{which} {ctx.catalog.display(problem)}: {join(names, 'or')}."
    return f"What fixes {ctx.catalog.display(problem)}: {join(names, 'or')}."


def _said(text: str, said: str) -> bool:
    """Whether ``said`` already holds most of ``text``'s words (``SAID_SHARE``), however worded
    around them ("A common real bug: short token TTLs ..." after "Short token TTLs ...")."""
    words = set(terms(text))
    return bool(words) and len(words & set(terms(said))) >= SAID_SHARE * len(words)


#: At most this many other fixes are named beside the one an answer is about.
ALONGSIDE = 3


def fixes_alongside(ctx: Context, fix: str, said: str = "") -> str:
    """What a fix mitigates and what else does: "gpu_memory_utilization fixes KV cache / batch
    size exceeds VRAM budget, as do max_num_seqs and kv_cache_dtype."; empty when it fixes
    nothing the graph names. A report that names one knob of a problem is often best served by
    the knobs beside it."""
    problems = ctx.facts(fix).iris(SG.mitigates)
    if not problems or ctx.catalog.display(problems[0]).lower() in said.lower():
        return ""
    problem = problems[0]
    ctx.evidence.fact(fix, SG.mitigates, problem)
    others = [o for o in ctx.facts(problem).incoming(SG.mitigates) if o != fix][:ALONGSIDE]
    for other in others:
        ctx.evidence.fact(other, SG.mitigates, problem)
        ctx.evidence.entity(other)
    verb = "does" if len(others) == 1 else "do"
    also = f", as {verb} {join([ctx.catalog.display(o) for o in others])}" if others else ""
    return f"{ctx.catalog.display(fix)} fixes {ctx.catalog.display(problem)}{also}."


#: At most this many of a problem's likely causes have their fixes said.
CAUSES_FIXED = 2


def remedy(ctx: Context) -> Answer | None:
    """The answer to "what fixes it?", "any solution?", "what tool fixes that?" about a problem:
    what mitigates it, and what mitigates its likely causes; None when the question asks no fix,
    is not about a problem, or the graph names no fix. The checks of the problem are another
    question ("how do I confirm it?"), answered by the diagnose answerer."""
    parsed = ctx.parsed
    # "is there a vllm setting for that?" after a problem asks for the fixes that are settings;
    # a question naming its problem itself is matched to the settings' own statements instead.
    settings = parsed is not None and parsed.asks_for_setting and ctx.from_conversation
    if parsed is None or not (parsed.asks_for_remedy or settings) or not ctx.candidates:
        return None
    if ctx.candidates[0].iri not in ctx.engine.problems:
        return _setting_of(ctx, ctx.candidates[0].iri) if settings else None
    # The first problem the question names with a fix: "how to prevent the job running while pods
    # are still Pending? some start while others wait, due to insufficient resources" names the
    # cause it lives with before the symptom whose causes gang scheduling fixes.
    problems = [c.iri for c in ctx.candidates if c.iri in ctx.engine.problems]
    for iri in dict.fromkeys(problems):
        parts = fixes_of_problem(ctx, iri, settings_only=settings and not parsed.asks_for_remedy)
        if parts:
            return ctx.answer(" ".join(parts), intents.PRACTICE, 0.8)
    return None


#: At most this many settings are said for a technique a follow-up asks a setting of.
SETTINGS_SAID = 2


def _setting_of(ctx: Context, iri: str) -> Answer | None:
    """ "is there a knob for that?" after an answer about a technique (chunked prefill): the
    settings that apply to it (enable_chunked_prefill), each with what it does; None when no
    setting applies to it."""
    parts = []
    for setting in ctx.settings_of(iri)[:SETTINGS_SAID]:
        ctx.evidence.entity(setting)
        ctx.evidence.fact(setting, SG.appliesTo, iri)
        record = ctx.catalog.get(setting)
        if record is not None and record.definition:
            ctx.evidence.fact(setting, SKOS.definition, record.definition)
            parts.append(f"{ctx.catalog.display(setting)}: {first_sentences(record.definition, 300)}")
        else:
            parts.append(f"{ctx.catalog.display(setting)} applies to {ctx.catalog.display(iri)}.")
    return ctx.answer(" ".join(parts), intents.PRACTICE, 0.8) if parts else None


def pushed_too_far(ctx: Context) -> Answer | None:
    """What goes wrong when a setting is pushed too far ("what breaks if I crank max_num_seqs
    way up?"): the problem it keeps in check, read backwards, and the symptoms that problem is a
    likely cause of. max_num_seqs mitigates the KV cache and batch outgrowing the VRAM budget,
    which is a likely cause of CUDA OOM: raised too far, that is what breaks. None when the
    question asks no such thing or its subject mitigates nothing."""
    if ctx.parsed is None or not ctx.candidates or not intents.asks_what_breaks(ctx.question):
        return None
    # The setting named (or pointed at), not what the word "breaks" happened to match.
    named = [c.iri for c in ctx.candidates if c.how in NAMED_HOW]
    iri = next((c for c in named if ctx.facts(c).iris(SG.mitigates)), None)
    if iri is None:
        return None
    problems = ctx.facts(iri).iris(SG.mitigates)
    label = ctx.catalog.display(iri)
    ctx.evidence.entity(iri)
    parts = []
    for problem in problems[:2]:
        ctx.evidence.fact(iri, SG.mitigates, problem)
        ctx.evidence.entity(problem)
        symptoms = ctx.facts(problem).incoming(SG.likelyCause)[:2]
        for symptom in symptoms:
            ctx.evidence.fact(symptom, SG.likelyCause, problem)
            ctx.evidence.entity(symptom)
        leads = (
            f" (a likely cause of {join([ctx.catalog.display(s) for s in symptoms], 'and')})"
            if symptoms
            else ""
        )
        parts.append(f"{ctx.catalog.display(problem)}{leads}")
    text = f"{label} governs {join(parts, 'and')}: pushed too far, that is what to expect first."
    rec = ctx.catalog.get(iri)
    if rec and rec.definition:
        text += f" {label}: {first_sentences(rec.definition, 200)}"
    return ctx.answer(text, intents.DIAGNOSE, 0.7)


def fixes_of_problem(ctx: Context, iri: str, said: str = "", settings_only: bool = False) -> list[str]:
    """What mitigates a problem and what mitigates its likely causes, a sentence each; empty when
    the graph names no fix (``settings_only``: no fix that is a setting)."""
    parts: list[str] = []
    own = fixes_for(ctx, iri, said, settings_only)
    if own:
        parts.append(own)
    facts = ctx.facts(iri)
    # Each cause once, with the edge that names it (a triage branch suggests, a symptom's is likely).
    causes = facts.iris_by_edge(SG.likelyCause, SG.suggestsCause)
    fixed = 0
    for cause, predicate in causes.items():
        fix = fixes_for(ctx, cause, " ".join([said, *parts]), settings_only)
        if fix:
            ctx.evidence.fact(iri, predicate, cause)
            parts.append(fix)
            fixed += 1
            if fixed == CAUSES_FIXED:
                break
    return parts
