"""Generate a platform team's inventory as Turtle: N Technology entities that conform to the shapes.

Each entity has a label, a definition, a source (a section of the inventory's own source document,
never a built-in seed), an ``sg:fitsIn`` layer and the matching ``sg:placement`` node: about 11
triples per entity. Used by scripts/bench_scale.py and the large-graph tests.

Usage: python scripts/scale_inventory.py N OUT.ttl
"""

from __future__ import annotations

import sys
from pathlib import Path

#: Layers the generated hardware fits in (codes of the nine-layer model), by kind of part.
_KINDS = (
    ("gpu", "GPU", "nine-L1", "accelerator in a compute node"),
    ("nic", "NIC", "nine-L2", "network interface of a compute node"),
    ("switch", "switch", "nine-L3", "fabric switch in a rack"),
    ("node", "node", "nine-L1", "compute node of the cluster"),
    ("volume", "volume", "nine-L4", "storage volume attached to the cluster"),
)

_HEADER = """@prefix sg: <https://w3id.org/stackgraph/ns#> .
@prefix kg: <https://w3id.org/stackgraph/id/> .
@prefix inv: <https://example.org/inventory/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix dct: <http://purl.org/dc/terms/> .

inv:doc a sg:Source ; rdfs:label "Cluster inventory export" ; sg:fileName "inventory.csv" .
inv:doc-parts a sg:SourceSection ; rdfs:label "Parts" ; dct:isPartOf inv:doc .
"""


def write_inventory(count: int, path: Path) -> Path:
    """Write ``count`` entities to ``path`` (Turtle) and return the path."""
    with path.open("w", encoding="utf-8") as out:
        out.write(_HEADER)
        for i in range(count):
            slug, kind, layer, what = _KINDS[i % len(_KINDS)]
            out.write(
                f'inv:{slug}-{i} a sg:Technology ; rdfs:label "{kind} {slug}-{i:06d}" ;\n'
                f'  skos:definition "A {what}, rack {i // 40}, slot {i % 40}." ;\n'
                f"  dct:source inv:doc-parts ; sg:fitsIn kg:{layer} ;\n"
                f'  sg:placement [ a sg:Placement ; sg:layer kg:{layer} ; sg:role "{what}" ;\n'
                f"    sg:basis sg:stated ; dct:source inv:doc-parts ] .\n"
            )
    return path


if __name__ == "__main__":
    write_inventory(int(sys.argv[1]), Path(sys.argv[2]))
