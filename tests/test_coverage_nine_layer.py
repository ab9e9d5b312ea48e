"""Coverage of seeds 000 (the nine-layer model) and 001 (layer table, stack matrix) in the graph.

The question engine answers only from the graph, so every thing those seeds name must resolve, by its
label or an altLabel, to exactly one entity placed where the seed puts it. The expectations below are
written from the seed text, independently of the Turtle, so a missing altLabel, a second entity with
the same name or a wrong placement fails here rather than as a wrong answer later.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib

from stackgraph.graph.store import KG, PREFIXES, SG, load_graph

DATA = Path(__file__).resolve().parents[1] / "ontology" / "data"
OWN_FILES = [DATA / "nine_layer_model.ttl", DATA / "workloads.ttl"]
COLUMNS = ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "S", "CP"]
SYMBOLS = {"low": "·", "moderate": "■", "high": "■■", "critical": "■■■"}

# (name as a user would type it, nine-layer codes the seeds place it in)
LAYER_EXAMPLES: list[tuple[str, set[str]]] = [
    # L1 Application: Training, inference, RAG, agents (MCP), HPC
    ("Training", {"L1"}),
    ("Inference", {"L1"}),
    ("RAG", {"L1"}),
    ("Retrieval-Augmented Generation", {"L1"}),
    ("agents", {"L1"}),
    ("MCP", {"L1"}),
    ("Model Context Protocol", {"L1"}),
    ("HPC", {"L1"}),
    # L2 Frameworks & Serving Engines
    ("PyTorch", {"L2"}),
    ("JAX", {"L2"}),
    ("Megatron", {"L2"}),
    ("Megatron-LM", {"L2"}),
    ("vLLM", {"L2"}),
    ("SGLang", {"L2"}),
    ("llm-d", {"L2", "CP"}),
    # L3 Parallelism Strategy: DP/FSDP, TP, PP, CP, EP
    ("DP", {"L3"}),
    ("Data parallelism", {"L3"}),
    ("FSDP", {"L3"}),
    ("Fully Sharded Data Parallel", {"L3"}),
    ("TP", {"L3"}),
    ("Tensor parallelism", {"L3"}),
    ("PP", {"L3"}),
    ("Pipeline parallelism", {"L3"}),
    ("CP", {"L3"}),
    ("Context parallelism", {"L3"}),
    ("EP", {"L3"}),
    ("Expert parallelism", {"L3"}),
    # L4 Compute Runtime & Kernels: CUDA/ROCm, cuDNN/cuBLAS, XLA, Triton kernels
    ("CUDA", {"L4"}),
    ("CUDA runtime", {"L4"}),
    ("ROCm", {"L4"}),
    ("cuDNN", {"L4"}),
    ("cuBLAS", {"L4"}),
    ("XLA", {"L4"}),
    ("Triton kernels", {"L4"}),
    # L5 Communication Libraries: NCCL/RCCL, MPI, NIXL
    ("NCCL", {"L5"}),
    ("RCCL", {"L5"}),
    ("MPI", {"L5"}),
    ("NIXL", {"L5"}),
    # L6 Transport: RDMA verbs, libfabric, GPUDirect RDMA
    ("RDMA verbs", {"L6"}),
    ("libfabric", {"L6"}),
    ("GPUDirect RDMA", {"L6"}),
    ("libibverbs", {"L6"}),
    # L7 Network Fabric: InfiniBand, RoCE v2, Ultra Ethernet, EFA, Slingshot
    ("InfiniBand", {"L7"}),
    ("IB", {"L7"}),
    ("RoCE v2", {"L7"}),
    ("RoCE", {"L7"}),
    ("RoCEv2", {"L7"}),
    ("RDMA over Converged Ethernet", {"L7"}),
    ("Ultra Ethernet", {"L7"}),
    ("EFA", {"L7"}),
    ("Elastic Fabric Adapter", {"L7"}),
    ("Slingshot", {"L7"}),
    # L8 Node Interconnect: NVLink, NVSwitch, UALink, PCIe, NUMA
    ("NVLink", {"L8"}),
    ("NVSwitch", {"L8"}),
    ("UALink", {"L8"}),
    ("Ultra Accelerator Link", {"L8"}),
    ("PCIe", {"L8"}),
    ("NUMA", {"L8"}),
    # L9 Accelerator & Memory: NVIDIA H/B-series, AMD MI-series, TPU, HBM
    ("NVIDIA H/B-series", {"L9"}),
    ("AMD MI-series", {"L9"}),
    ("TPU", {"L9"}),
    ("HBM", {"L9"}),
    ("High Bandwidth Memory", {"L9"}),
    # S Storage Data Path: Parallel FS, NVMe cache, GPUDirect Storage
    ("Parallel FS", {"S"}),
    ("parallel file system", {"S"}),
    ("NVMe cache", {"S"}),
    ("GPUDirect Storage", {"S"}),
]

CONTROL_PLANE: list[tuple[str, set[str]]] = [
    (name, {"CP"})
    for name in [
        # 000's control-plane list (GPU/Network Operators split in two)
        "Kubernetes",
        "Slurm",
        "Kueue",
        "Volcano",
        "GPU Operator",
        "Network Operator",
        "DRA",
        "Dynamic Resource Allocation",
        "CNI",
        "CSI",
        # data path vs control plane, where each layer runs, topology
        "Scheduler",
        "Kubelet",
        "Device plugin",
        "device plugins",
        "Calico",
        "Multus",
        "CSI driver",
        "kube-proxy",
        "GPU Feature Discovery",
        "GFD",
        "Node Feature Discovery",
        "NFD",
        "Topology Manager",
        "Kubelet Topology Manager",
        "MIG manager",
    ]
]

WHERE_OTHER_TECHNOLOGIES_FIT: list[tuple[str, set[str]]] = [
    ("Agents and MCP", {"L1"}),
    ("MCP servers", {"L1"}),
    ("Inference gateways", {"L2", "CP"}),
    ("Model routing", {"L2", "CP"}),
    ("Prefix-aware load balancing", {"L2", "CP"}),
    ("KV-cache offload", {"L2", "L9", "S"}),
    ("KV-cache offload and tiering", {"L2", "L9", "S"}),
    ("KV-cache tiering", {"L2", "L9", "S"}),
    ("Quantization", {"L4", "L9"}),
    ("FP8", {"L4", "L9"}),
    ("FP4", {"L4", "L9"}),
    ("INT4", {"L4", "L9"}),
    ("Non-NVIDIA accelerators", {"L4", "L5", "L9"}),
    ("AMD ROCm", {"L4"}),
    ("Vector databases", {"S"}),
    ("MLOps", {"L1", "S"}),
    ("Experiment tracking", {"L1", "S"}),
    ("Model registry", {"L1", "S"}),
    ("pipelines", {"L1", "S"}),
    ("Virtualization", {"CP", "L6", "L7", "L8", "L9"}),
    ("KubeVirt", {"CP", "L6", "L7", "L8", "L9"}),
    ("vGPU", {"CP", "L6", "L7", "L8", "L9"}),
    ("GPU passthrough", {"CP", "L6", "L7", "L8", "L9"}),
    ("Evaluation, guardrails, confidential computing", {"L1"}),
    ("Evaluation", {"L1"}),
    ("Guardrails", {"L1"}),
    ("Confidential computing", {"L1"}),
]

# Named in 'Data path vs control plane', 'Where each layer runs', 'Delivered by Kubernetes', topology.
HOST_AND_DATA_PATH: list[tuple[str, set[str]]] = [
    ("GPU", {"L9"}),
    ("RDMA NIC", {"L6", "L7"}),
    ("Host kernel modules", {"L6", "L7", "L8", "L9"}),
    ("host kernel drivers", {"L6", "L7", "L8", "L9"}),
    ("Switches", {"L7"}),
    ("Firmware", {"L6", "L7", "L8", "L9", "S"}),
    ("Storage systems", {"S"}),
    ("GPU driver", {"L9"}),
    ("MOFED/DOCA", {"L6"}),
    ("MOFED", {"L6"}),
    ("DOCA", {"L6"}),
    ("nvidia-peermem", {"L6"}),
    ("NVIDIA MIG", {"L9"}),
    ("multi-node NVLink compute domains", {"L8"}),
]

ALL_PLACED = LAYER_EXAMPLES + CONTROL_PLANE + WHERE_OTHER_TECHNOLOGIES_FIT + HOST_AND_DATA_PATH

# Named but carrying no placement of their own.
UNPLACED = ["NVIDIA Container Toolkit", "container toolkit"]

SECURITY_CONCERN = [
    "Evaluation, guardrails, confidential computing",
    "Evaluation",
    "Guardrails",
    "Confidential computing",
]

DESIGN_CHOICES: list[tuple[str, set[str], str]] = [
    ("Parallelism is a design layer", {"L3"}, "It is implemented by the framework"),
    ("Orchestration is a control plane, not a layer", {"CP"}, "NCCL never calls Kubernetes."),
    ("Kernels and runtime are a layer", {"L4"}, "CUDA, math libraries, compilers and attention kernels"),
    ("Storage is a parallel data path", {"S"}, "Data loading and checkpointing decide whether GPUs wait."),
    ("The data path branches", {"L8", "L7"}, "Only traffic between nodes goes PCIe → NIC → fabric."),
    ("Some concerns cut across everything", set(COLUMNS), "often set the real limit at scale"),
]

# (label as printed, row as printed in 001's stack matrix)
WORKLOADS: list[tuple[str, str]] = [
    ("Pre-training", "■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■"),
    ("Full fine-tuning", "■■■■■■■■■■■■■■■■■■■■■■■■■■"),
    ("PEFT / LoRA", "■■■■■■■■■··■■■■■■"),
    ("RL post-training", "■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■"),
    ("Online inference", "■■■■■■■■■■■■·■■■■■■■■■■■"),
    ("Disaggregated inference", "■■■■■■■■■■■■■■■■■■■■■■■■■■■■■"),
    ("RAG", "■■■■■·■····■■■■■■"),
    ("Agentic AI (MCP)", "■■■■■■■■■···■■■■■■■■"),
    ("Batch inference", "■■■■■■···■■■■■■■"),
    ("Notebooks / dev", "■■·■····■■■■■"),
]

# (code, label exactly as the seed names it, K8S-ROLE column of `kubectl get layers`)
LAYERS: list[tuple[str, str, str]] = [
    ("L1", "Application", "in-container"),
    ("L2", "Frameworks & Serving Engines", "in-container"),
    ("L3", "Parallelism Strategy", "in-container"),
    ("L4", "Compute Runtime & Kernels", "in-container"),
    ("L5", "Communication Libraries", "in-container"),
    ("L6", "Transport", "host"),
    ("L7", "Network Fabric", "host"),
    ("L8", "Node Interconnect", "host"),
    ("L9", "Accelerator & Memory", "host"),
    ("S", "Storage Data Path", "host"),
    ("CP", "Control Plane", "kubernetes"),
]


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    return load_graph().graph


def _rows(graph: rdflib.Graph, query: str) -> list[tuple]:
    prologue = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())
    return [tuple(row) for row in graph.query(prologue + query)]


def _ask(graph: rdflib.Graph, query: str) -> bool:
    prologue = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())
    return bool(graph.query(prologue + query).askAnswer)


def lookup(graph: rdflib.Graph, name: str, *, workload: bool = False) -> list[rdflib.URIRef]:
    """Entities (not layers, sources or sections) whose label or altLabel is `name`, case-insensitively.

    Workloads and technologies share names ("RAG"), so each lookup asks for one kind.
    """
    kind = "FILTER EXISTS { ?e a sg:Workload }" if workload else "FILTER NOT EXISTS { ?e a sg:Workload }"
    query = f"""
        SELECT DISTINCT ?e WHERE {{
          ?e rdfs:label|skos:altLabel ?l .
          FILTER(STRSTARTS(STR(?e), STR(kg:)))
          FILTER(LCASE(STR(?l)) = LCASE({rdflib.Literal(name).n3()}))
          FILTER NOT EXISTS {{ ?e a sg:Layer }}
          FILTER NOT EXISTS {{ ?e a sg:SourceSection }}
          FILTER NOT EXISTS {{ ?e a sg:Source }}
          {kind}
        }}"""
    return [row[0] for row in _rows(graph, query)]


def the_one(graph: rdflib.Graph, name: str, *, workload: bool = False) -> rdflib.URIRef:
    found = lookup(graph, name, workload=workload)
    assert len(found) == 1, f"{name!r} resolves to {len(found)} entities: {found}"
    return found[0]


def fits_codes(graph: rdflib.Graph, entity: rdflib.URIRef) -> set[str]:
    rows = _rows(
        graph,
        f"SELECT ?code WHERE {{ <{entity}> sg:fitsIn ?l . ?l sg:inModel kg:nine-layer-model ; sg:code ?code }}",
    )
    return {str(r[0]) for r in rows}


def seed_placement_codes(graph: rdflib.Graph, entity: rdflib.URIRef) -> set[str]:
    """Nine-layer codes of the entity's placements that cite a section of seed 000 or 001."""
    rows = _rows(
        graph,
        f"""SELECT ?code WHERE {{
              <{entity}> sg:placement ?p . ?p sg:layer ?l ; dct:source ?s .
              ?s dct:isPartOf ?doc . FILTER(?doc IN (kg:doc-000, kg:doc-001))
              ?l sg:inModel kg:nine-layer-model ; sg:code ?code }}""",
    )
    return {str(r[0]) for r in rows}


@pytest.mark.parametrize(("name", "codes"), ALL_PLACED, ids=[n for n, _ in ALL_PLACED])
def test_named_thing_resolves_and_is_placed(graph: rdflib.Graph, name: str, codes: set[str]) -> None:
    entity = the_one(graph, name)
    assert codes <= fits_codes(graph, entity), f"{name}: fitsIn {fits_codes(graph, entity)}, expected {codes}"
    assert seed_placement_codes(graph, entity) == codes, name


@pytest.mark.parametrize("name", UNPLACED)
def test_unplaced_named_thing_resolves(graph: rdflib.Graph, name: str) -> None:
    the_one(graph, name)


def test_context_parallelism_is_not_the_control_plane(graph: rdflib.Graph) -> None:
    assert the_one(graph, "CP") == KG["context-parallelism"]
    assert _ask(graph, 'ASK { kg:nine-CP sg:code "CP" ; rdfs:label "Control Plane" }')


@pytest.mark.parametrize("name", SECURITY_CONCERN)
def test_security_concern(graph: rdflib.Graph, name: str) -> None:
    entity = the_one(graph, name)
    assert (entity, rdflib.URIRef("https://w3id.org/stackgraph/ns#concern"), KG["security"]) in graph


def test_where_fits_members_point_at_their_row(graph: rdflib.Graph) -> None:
    members = {
        "Inference gateways": ["Model routing", "Prefix-aware load balancing", "llm-d"],
        "KV-cache offload and tiering": ["KV-cache tiering"],
        "Quantization": ["FP8", "FP4", "INT4"],
        "Non-NVIDIA accelerators": ["ROCm", "RCCL", "TPU", "XLA"],
        "MLOps": ["Experiment tracking", "Model registry", "pipelines"],
        "Virtualization": ["KubeVirt", "vGPU", "GPU passthrough"],
        "Agents and MCP": ["MCP servers", "agents", "MCP"],
        "Evaluation, guardrails, confidential computing": [
            "Evaluation",
            "Guardrails",
            "Confidential computing",
        ],
    }
    broader = rdflib.URIRef("http://www.w3.org/2004/02/skos/core#broader")
    related = rdflib.URIRef("http://www.w3.org/2004/02/skos/core#related")
    # skos:broader only where the member is a kind of the row (Milvus of vector databases); a member
    # that is not (XLA is no kind of "Non-NVIDIA accelerators", tiering no kind of offload) is related.
    for row, names in members.items():
        row_entity = the_one(graph, row)
        for name in names:
            member = the_one(graph, name)
            assert (member, broader, row_entity) in graph or (member, related, row_entity) in graph, (
                name,
                row,
            )


def test_layers_match_the_layer_table(graph: rdflib.Graph) -> None:
    rows = _rows(
        graph,
        """SELECT ?code ?label ?runs ?plane ?def WHERE {
             ?l sg:inModel kg:nine-layer-model ; sg:code ?code ; rdfs:label ?label ; sg:runsIn ?runs ;
                sg:runsInDetail ?detail ; skos:definition ?def ; dct:source ?src .
             OPTIONAL { ?l sg:inPlane ?plane } }""",
    )
    by_code: dict[str, set[tuple[str, str]]] = {}
    planes: dict[str, set[str]] = {}
    for code, label, runs, plane, _ in rows:
        by_code.setdefault(str(code), set()).add((str(label), str(runs)))
        if plane is not None:
            planes.setdefault(str(code), set()).add(str(plane).rsplit("/", 1)[-1])
    assert set(by_code) == set(COLUMNS)
    for code, label, runs in LAYERS:
        assert by_code[code] == {(label, runs)}, code
    expected_planes = {c: {"plane-workload"} for c in ("L1", "L2", "L3")}
    expected_planes |= {c: {"plane-software-runtime"} for c in ("L4", "L5")}
    expected_planes |= {c: {"plane-data-path"} for c in ("L6", "L7", "L8", "L9")}
    assert planes == expected_planes


def test_control_plane_spans_every_layer(graph: rdflib.Graph) -> None:
    rows = _rows(graph, "SELECT ?code WHERE { kg:nine-CP sg:spans ?l . ?l sg:code ?code }")
    assert {str(r[0]) for r in rows} == set(COLUMNS) - {"CP"}
    assert {str(r[0]) for r in _rows(graph, "SELECT ?c WHERE { kg:nine-CP a ?c }")} >= {
        "https://w3id.org/stackgraph/ns#ControlPlane"
    }
    assert _rows(graph, "SELECT ?x WHERE { kg:nine-S a sg:StorageDataPath }")


def test_cross_cutting_concerns(graph: rdflib.Graph) -> None:
    for name in ["Observability", "Security", "Reliability", "Power and cooling"]:
        entity = the_one(graph, name)
        assert (
            entity,
            rdflib.RDF.type,
            rdflib.URIRef("https://w3id.org/stackgraph/ns#CrossCuttingConcern"),
        ) in graph
    assert len(_rows(graph, "SELECT ?c WHERE { ?c a sg:CrossCuttingConcern }")) == 4


@pytest.mark.parametrize(("name", "codes", "why"), DESIGN_CHOICES, ids=[d[0] for d in DESIGN_CHOICES])
def test_design_choice(graph: rdflib.Graph, name: str, codes: set[str], why: str) -> None:
    entity = the_one(graph, name)
    rows = _rows(graph, f"SELECT ?r WHERE {{ <{entity}> a sg:DesignChoice ; sg:reason ?r }}")
    assert len(rows) == 1 and why in str(rows[0][0])
    applies = _rows(graph, f"SELECT ?code WHERE {{ <{entity}> sg:appliesTo ?l . ?l sg:code ?code }}")
    assert codes <= {str(r[0]) for r in applies}


def test_design_choices_are_asked_for_by_question(graph: rdflib.Graph) -> None:
    assert the_one(graph, "why is parallelism a layer") == the_one(graph, "Parallelism is a design layer")
    assert the_one(graph, "kernels layer") == the_one(graph, "Kernels and runtime are a layer")
    assert the_one(graph, "data path branches") == the_one(graph, "The data path branches")


@pytest.mark.parametrize(("name", "row"), WORKLOADS, ids=[w[0] for w in WORKLOADS])
def test_workload_stress_row(graph: rdflib.Graph, name: str, row: str) -> None:
    entity = the_one(graph, name, workload=True)
    printed = _rows(graph, f"SELECT ?r WHERE {{ <{entity}> sg:matrixRow ?r }}")
    assert [str(r[0]) for r in printed] == [row]
    rows = _rows(
        graph,
        f"""SELECT ?s ?code ?level ?basis WHERE {{
              <{entity}> sg:stress ?s . ?s a sg:Stress ; sg:layer ?l ; sg:level ?lv ; sg:basis ?b ;
                dct:source kg:doc-001-stack-matrix .
              ?l sg:inModel kg:nine-layer-model ; sg:code ?code . ?lv rdfs:label ?level . ?b rdfs:label ?basis }}""",
    )
    assert len({r[0] for r in rows}) == 11, f"{name}: {len(rows)} stress nodes"
    level = {str(code): str(lv) for _, code, lv, _ in rows}
    assert sorted(level) == sorted(COLUMNS)
    assert "".join(SYMBOLS[level[c]] for c in COLUMNS) == row
    assert {str(b) for *_, b in rows} <= {"reconstructed", "stated"}
    stresses = _rows(graph, f"SELECT ?code WHERE {{ <{entity}> sg:stresses ?l . ?l sg:code ?code }}")
    assert {str(r[0]) for r in stresses} == {c for c in COLUMNS if level[c] in ("high", "critical")}
    assert _rows(graph, f"SELECT ?c WHERE {{ <{entity}> sg:matrixReading ?c }}"), "reasoning for the split"


def test_ten_workloads(graph: rdflib.Graph) -> None:
    assert len(_rows(graph, "SELECT ?w WHERE { ?w a sg:Workload }")) == 10
    assert the_one(graph, "RAG", workload=True) != the_one(graph, "RAG")


def test_data_path_vs_control_plane(graph: rdflib.Graph) -> None:
    attaches = rdflib.URIRef("https://w3id.org/stackgraph/ns#attaches")
    assert (the_one(graph, "Device plugin"), attaches, the_one(graph, "GPU")) in graph
    assert (the_one(graph, "DRA"), attaches, the_one(graph, "GPU")) in graph
    assert (the_one(graph, "CNI"), attaches, the_one(graph, "RDMA NIC")) in graph
    assert (the_one(graph, "CSI driver"), attaches, the_one(graph, "Storage systems")) in graph
    steps = _rows(
        graph,
        "SELECT ?s ?n WHERE { ?s a sg:FlowStep ; dct:isPartOf kg:plane-data-path . OPTIONAL { ?s sg:next ?n } }",
    )
    assert len({r[0] for r in steps}) == 4
    nvlink_step = _rows(graph, "SELECT ?s WHERE { ?s a sg:FlowStep ; sg:involves kg:nvlink, kg:gpu }")
    assert nvlink_step
    assert (
        KG["datapath-pcie-to-nic"],
        rdflib.URIRef("https://w3id.org/stackgraph/ns#next"),
        KG["datapath-nic-to-fabric"],
    ) in graph
    practice = the_one(graph, "data path bypasses Kubernetes")
    text = " ".join(str(r[0]) for r in _rows(graph, f"SELECT ?d WHERE {{ <{practice}> skos:definition ?d }}"))
    assert "decides where the data path is built, not how the bytes move" in text


def test_delivered_by_kubernetes(graph: rdflib.Graph) -> None:
    deploys = rdflib.URIRef("https://w3id.org/stackgraph/ns#deploys")
    gpu_operator = the_one(graph, "GPU Operator")
    for name in ["GPU driver", "NVIDIA Container Toolkit", "nvidia-peermem", "MIG manager"]:
        assert (gpu_operator, deploys, the_one(graph, name)) in graph, name
    assert (the_one(graph, "Network Operator"), deploys, the_one(graph, "MOFED/DOCA")) in graph
    assert (the_one(graph, "MIG manager"), deploys, the_one(graph, "NVIDIA MIG")) in graph
    practice = the_one(graph, "Delivered by Kubernetes, executed by the host")
    text = " ".join(str(r[0]) for r in _rows(graph, f"SELECT ?d WHERE {{ <{practice}> skos:definition ?d }}"))
    assert "not in a pod's process space" in text


def test_version_alignment(graph: rdflib.Graph) -> None:
    must = rdflib.URIRef("https://w3id.org/stackgraph/ns#mustMatch")
    assert (the_one(graph, "CUDA"), must, the_one(graph, "GPU driver")) in graph
    for name in ["RDMA verbs", "libfabric"]:
        assert (the_one(graph, name), must, the_one(graph, "Host kernel modules")) in graph, name
    cause = the_one(graph, "Version mismatch across the container/host boundary")
    owners = _rows(graph, f"SELECT ?code WHERE {{ <{cause}> a sg:Cause ; sg:ownedBy ?l . ?l sg:code ?code }}")
    assert {str(r[0]) for r in owners} == {"L4", "L6"}
    text = " ".join(str(r[0]) for r in _rows(graph, f"SELECT ?d WHERE {{ <{cause}> skos:definition ?d }}"))
    assert "classic failure point" in text


def test_topology_mechanisms(graph: rdflib.Graph) -> None:
    for name, codes in [
        ("GPU Feature Discovery", {"L8", "L9"}),
        ("Node Feature Discovery", {"L8", "L9"}),
        ("Topology Manager", {"L8", "L9"}),
        ("DRA", {"L8", "L9"}),
        ("MIG manager", {"L9"}),
    ]:
        entity = the_one(graph, name)
        rows = _rows(graph, f"SELECT ?code WHERE {{ <{entity}> sg:appliesTo ?l . ?l sg:code ?code }}")
        assert codes <= {str(r[0]) for r in rows}, name
    practice = the_one(graph, "keeping tensor-parallel groups inside one NVLink domain")
    assert (practice, rdflib.RDF.type, rdflib.URIRef("https://w3id.org/stackgraph/ns#Practice")) in graph


def test_co_design_principle(graph: rdflib.Graph) -> None:
    practice = the_one(graph, "Co-design, not component tuning")
    assert practice == the_one(graph, "co-design")
    text = " ".join(str(r[0]) for r in _rows(graph, f"SELECT ?d WHERE {{ <{practice}> skos:definition ?d }}"))
    assert "designed and validated together" in text


def _own_subjects() -> set[rdflib.URIRef]:
    own = rdflib.Graph()
    for path in OWN_FILES:
        own.parse(path, format="turtle")
    qualified = {*own.subjects(rdflib.RDF.type, SG.Placement), *own.subjects(rdflib.RDF.type, SG.Stress)}
    # Placements and stresses are named qualified nodes, not entities: no label of their own.
    return {
        s
        for s in own.subjects()
        if isinstance(s, rdflib.URIRef) and str(s).startswith(str(KG)) and s not in qualified
    }


def test_every_fits_in_has_a_placement_and_back(graph: rdflib.Graph) -> None:
    subjects = _own_subjects()
    rows = _rows(
        graph,
        """SELECT ?e ?l WHERE { ?e sg:fitsIn ?l FILTER NOT EXISTS { ?e sg:placement ?p . ?p sg:layer ?l } }""",
    )
    assert [r for r in rows if r[0] in subjects] == []
    rows = _rows(
        graph,
        """SELECT ?e ?l WHERE { ?e sg:placement ?p . ?p sg:layer ?l FILTER NOT EXISTS { ?e sg:fitsIn ?l } }""",
    )
    assert [r for r in rows if r[0] in subjects] == []
    bare = _rows(
        graph,
        """SELECT ?e ?p WHERE { ?e sg:placement ?p .
             FILTER (NOT EXISTS { ?p a sg:Placement } || NOT EXISTS { ?p dct:source ?s }
                     || NOT EXISTS { ?p sg:basis ?b } || NOT EXISTS { ?p sg:role ?r }) }""",
    )
    assert [r for r in bare if r[0] in subjects] == []


def test_every_entity_has_a_label_type_and_source(graph: rdflib.Graph) -> None:
    for subject in _own_subjects():
        assert list(graph.objects(subject, rdflib.URIRef("http://purl.org/dc/terms/source"))), subject
        assert len(list(graph.objects(subject, rdflib.RDFS.label))) == 1, subject
        assert list(graph.objects(subject, rdflib.RDF.type)), subject
