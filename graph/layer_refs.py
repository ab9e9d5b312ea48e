"""Layer references as people and agents write them: "L5", "layer 5", "eight L5", "ops-L5",
"L5 (eight-layer)", "the operational map's L2", "L2 of the operational map", "nine L8", "CP layer".

Layer codes are only unique within a model (L5 is Communication Libraries in the nine-layer model
and Kubernetes & Containers in the eight-layer operational map), so a reference carries the model
it names next to the code, when it names one. One parser serves free-text questions (linking) and
names passed to tools (``Linker.resolve``), so "eight L5" means the same thing on every surface.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Model keys, as used by ``Linker.resolve(name, model=...)`` and the MCP ``model`` arguments.
NINE = "nine"
EIGHT = "eight"

# Words that name a model. Longest alternatives first so "operational map" wins over "operational".
_EIGHT_WORDS = (
    r"eight[- ]?layer(?:\s+(?:operational\s+)?(?:map|model))?",
    r"8[- ]?layer(?:\s+(?:map|model))?",
    r"operational\s+(?:map|model|layers?)",
    r"operations\s+map",
    r"ops\s+(?:map|layers?)",
    r"operational",
    r"ops",
    r"eight",
)
_NINE_WORDS = (
    r"nine[- ]?layer(?:\s+(?:co-?design\s+)?(?:map|model))?",
    r"9[- ]?layer(?:\s+(?:map|model))?",
    r"co-?design(?:\s+model)?",
    r"nine",
)
_MODEL = (
    rf"(?P<{{name}}>(?P<{{name}}_eight>{'|'.join(_EIGHT_WORDS)})|(?P<{{name}}_nine>{'|'.join(_NINE_WORDS)}))"
)
_CODE = r"(?P<code>l\s?[1-9]|layer\s*[1-9]|cp|s)"

# "eight L5", "ops-L5", "the operational map's L2", "nine-layer model L8", "eight-layer's L5".
_BEFORE = re.compile(
    rf"\b{_MODEL.format(name='pre')}(?:'s|’s)?[\s-]*{_CODE}\b",
    re.IGNORECASE,
)
# "L5 eight", "L5 (eight-layer)", "L2 of the operational map", "layer 5 in the nine-layer model".
_AFTER = re.compile(
    rf"\b{_CODE}\s*(?:\(\s*|,\s*|[-\s]+(?:of|in|from)\s+(?:the\s+)?|\s+)"
    rf"{_MODEL.format(name='post')}\b\)?",
    re.IGNORECASE,
)
_BARE = re.compile(r"\b(?P<code>l\s?[1-9]|layer\s*[1-9])\b|\b(?P<letter>cp|s)\s+layer\b", re.IGNORECASE)


@dataclass(frozen=True)
class LayerRef:
    """One layer reference found in a text."""

    code: str
    """Normalized code: "L1".."L9", "S" or "CP"."""
    model: str | None
    """``NINE`` or ``EIGHT`` when the reference names its model, else None."""
    start: int
    end: int
    """Character span of the whole reference (model words included) in the text."""


def _code(raw: str) -> str:
    raw = re.sub(r"\s+", "", raw.lower())
    if raw.startswith("layer"):
        return "L" + raw[len("layer") :]
    return raw.upper()


def _model(match: re.Match[str], name: str) -> str | None:
    if match.group(f"{name}_eight"):
        return EIGHT
    if match.group(f"{name}_nine"):
        return NINE
    return None


def _valid(code: str, model: str | None) -> bool:
    """S and CP exist only in the nine-layer model; the eight-layer map stops at L8."""
    if code in ("S", "CP"):
        return model in (None, NINE)
    return not (model == EIGHT and code == "L9")


def find_layer_refs(text: str) -> list[LayerRef]:
    """Every layer reference in ``text``, in text order, without overlaps.

    A reference that names its model ("ops L5") beats a bare code at the same place; a bare "S"
    or "CP" counts only when followed by "layer" (both are ordinary words otherwise).
    """
    found: list[LayerRef] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for pattern, name in ((_BEFORE, "pre"), (_AFTER, "post")):
        for match in pattern.finditer(text):
            code = _code(match.group("code"))
            model = _model(match, name)
            if code in ("S", "CP") and name == "post":
                continue  # "s eight" / "cp nine" are not references
            if _valid(code, model) and free(match.start(), match.end()):
                found.append(LayerRef(code, model, match.start(), match.end()))
                taken.append((match.start(), match.end()))
    for match in _BARE.finditer(text):
        code = _code(match.group("code") or match.group("letter"))
        if free(match.start(), match.end()):
            found.append(LayerRef(code, None, match.start(), match.end()))
            taken.append((match.start(), match.end()))
    return sorted(found, key=lambda ref: ref.start)


#: Any wording that names a layer model, longest first.
_MODEL_NAMES = re.compile(r"\b(?:" + "|".join(_EIGHT_WORDS + _NINE_WORDS) + r")\b", re.IGNORECASE)


def model_naming_words(text: str) -> list[str]:
    """The words of ``text`` that name a layer model ("8-layer ops map", "nine-layer model")."""
    return [word for found in _MODEL_NAMES.finditer(text) for word in found.group(0).split()]


def model_named(text: str) -> str | None:
    """The model a text names anywhere ("in the operational map, ..."), or None.

    Used for the question as a whole; a reference's own model word takes precedence over it.
    """
    eight = re.search(rf"\b(?:{'|'.join(_EIGHT_WORDS[:-3])})\b", text, re.IGNORECASE)
    nine = re.search(rf"\b(?:{'|'.join(_NINE_WORDS[:-1])})\b", text, re.IGNORECASE)
    if eight and not nine:
        return EIGHT
    if nine and not eight:
        return NINE
    if eight and nine:
        return EIGHT if eight.start() < nine.start() else NINE
    return None


def whole_layer_ref(name: str) -> tuple[LayerRef, str] | None:
    """When ``name`` is a layer reference, possibly followed by the layer's label ("L8 Node
    Interconnect", "eight L5 Kubernetes & Containers"), the reference and the rest of the name."""
    name = name.strip()
    refs = find_layer_refs(name)
    if not refs or refs[0].start != 0:
        return None
    ref = refs[0]
    rest = name[ref.end :].strip(" -:—–()")
    return ref, rest


#: "the top layer", "the bottom-most layer", "the very bottom of the 8-layer map": an end of a
#: model's stack.
_END = re.compile(
    r"\b(?:the\s+)?(?:very\s+)?(?P<end>top|topmost|top-most|uppermost|highest|bottom|bottommost|bottom-most|lowest)"
    r"(?:\s+layer\b|\s+of\s+(?:the\s+)?(?=(?:stack|map|model|nine|eight|9|8|ops|operational|co-?design)\b))",
    re.IGNORECASE,
)
_TOP_WORDS = frozenset({"top", "topmost", "top-most", "uppermost", "highest"})
#: "the layer below L5", "the one right above ops L4", "the layer under it": a neighbour of a layer.
_NEIGHBOUR = re.compile(
    r"\b(?:the\s+)?(?:layer|one)\s+(?:(?:that\s+)?(?:sits|is|lies|comes|runs)\s+)?"
    r"(?:(?:right|directly|just|immediately)\s+)?"
    r"(?P<dir>above|over|on\s+top\s+of|below|under|underneath|beneath)\s+",
    re.IGNORECASE,
)
_UP_WORDS = ("above", "over", "on")
#: What "the layer below it" points back at.
_POINTER = re.compile(r"(?:it|that(?:\s+one|\s+layer)?|this(?:\s+one|\s+layer)?)\b", re.IGNORECASE)


@dataclass(frozen=True)
class RelativeRef:
    """A layer named by where it sits in its model's stack: an end ("the top layer") or the
    neighbour of another layer ("the layer below L5", "the one above it")."""

    #: "top" or "bottom" for an end; "up" or "down" for the neighbour above or below ``base``.
    direction: str
    #: The layer the neighbour is of; None for an end, or for a neighbour of "it" (``points_back``).
    base: LayerRef | None
    points_back: bool
    start: int
    end: int


def find_relative_refs(text: str) -> list[RelativeRef]:
    """Every layer named by its place in a stack, in text order."""
    found: list[RelativeRef] = []
    for match in _END.finditer(text):
        direction = "top" if match.group("end").lower() in _TOP_WORDS else "bottom"
        found.append(RelativeRef(direction, None, False, match.start(), match.end()))
    for match in _NEIGHBOUR.finditer(text):
        direction = "up" if match.group("dir").lower().startswith(_UP_WORDS) else "down"
        rest = text[match.end() :]
        refs = find_layer_refs(rest)
        if refs and refs[0].start == 0:
            base = refs[0]
            shifted = LayerRef(base.code, base.model, match.end() + base.start, match.end() + base.end)
            found.append(RelativeRef(direction, shifted, False, match.start(), shifted.end))
            continue
        pointer = _POINTER.match(rest)
        if pointer:
            found.append(RelativeRef(direction, None, True, match.start(), match.end() + pointer.end()))
    return sorted(found, key=lambda ref: ref.start)
