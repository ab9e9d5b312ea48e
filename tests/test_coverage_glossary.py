"""Coverage of the glossary seed (004): every term, vLLM parameter, troubleshooting row and request-flow hop.

The question engine answers only from the graph, so each name a reader may use for a glossary thing
must resolve (label or altLabel, case-insensitive) to exactly one entity of the right class, placed in
the right layers, defined in the glossary's words, and related as the glossary says. The lists below
are written from the seed text, not from the Turtle, so a dropped altLabel, placement or relation fails.
"""

from __future__ import annotations

import pytest
import rdflib
from rdflib import Literal, URIRef
from rdflib.namespace import SKOS

from stackgraph.graph.store import KG, PREFIXES, SG, load_graph

PREFIX_DECL = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())

TECH, TOOL, METRIC, PRACTICE, PARAM = (
    SG.Technology,
    SG.Tool,
    SG.Metric,
    SG.Practice,
    SG.ConfigurationParameter,
)
SYMPTOM, CAUSE, COMMAND, FLOWSTEP = SG.Symptom, SG.Cause, SG.Command, SG.FlowStep

# (name as the glossary spells it, class, nine-layer codes, eight-layer codes).
# Codes are the layers the entity must at least be placed in (stated or inferred).
TERMS: list[tuple[str, URIRef, set[str], set[str]]] = [
    # 1. Hardware, Drivers & GPU Foundation
    # Host kernel drivers run outside Kubernetes, L6-L9 (seed 000): not in L4 with the CUDA runtime.
    ("NVIDIA Drivers", TECH, {"L9"}, {"L2"}),
    ("CUDA Toolkit", TECH, {"L4"}, {"L2"}),
    ("cuDNN", TECH, {"L4"}, set()),
    ("PyTorch", TECH, {"L2"}, set()),
    ("TensorFlow", TECH, {"L2"}, set()),
    ("ROCm", TECH, {"L4"}, {"L2"}),
    ("nvidia-smi", TOOL, {"L9"}, {"L2"}),
    ("nvtop", TOOL, {"L9"}, {"L2"}),
    ("NVIDIA DCGM Exporter", TOOL, {"L9"}, {"L2"}),
    ("DCGM Exporter", TOOL, {"L9"}, {"L2"}),
    ("NVIDIA MIG (Multi-Instance GPU)", TECH, {"L9"}, {"L2"}),
    ("Multi-Instance GPU", TECH, {"L9"}, {"L2"}),
    ("A100", TECH, {"L9"}, {"L2"}),
    ("H100", TECH, {"L9"}, {"L2"}),
    ("NVLink", TECH, {"L8"}, {"L2"}),
    ("Thermal limits & PCIe bottleneck profiling", PRACTICE, {"L8", "L9"}, {"L1", "L2"}),
    # 2. Containerization & Orchestration
    ("NVIDIA GPU Operator", TECH, {"CP"}, {"L5"}),
    ("nvidia-container-toolkit", TECH, {"CP"}, {"L5"}),
    ("Volcano", TECH, {"CP"}, {"L5"}),
    ("Kubeshare", TECH, {"CP"}, {"L5"}),
    ("Ray Core", TECH, {"L2"}, set()),
    ("Ray", TECH, {"L2"}, set()),
    ("Ray Cluster", TECH, {"L2"}, set()),
    ("KubeRay", TECH, {"CP"}, {"L5"}),
    ("ArgoCD", TECH, {"CP"}, {"L5"}),
    ("GitOps", PRACTICE, {"CP"}, {"L5"}),
    # 3. Data Center Networking & Fabric
    ("Leaf-Spine architecture", TECH, {"L7"}, {"L2"}),
    ("BGP", TECH, {"L7"}, {"L2"}),
    ("iBGP", TECH, {"L7"}, {"L2"}),
    ("ECMP", TECH, {"L7"}, {"L2"}),
    ("Equal Cost Multi-Path", TECH, {"L7"}, {"L2"}),
    ("EVPN-VXLAN", TECH, {"L7"}, {"L2"}),
    ("RoCE", TECH, {"L7"}, {"L2"}),
    ("RDMA over Converged Ethernet", TECH, {"L7"}, {"L2"}),
    ("InfiniBand", TECH, {"L7"}, {"L2"}),
    ("NCCL", TECH, {"L5"}, {"L2"}),
    ("NVIDIA Collective Communications Library", TECH, {"L5"}, {"L2"}),
    ("PFC", TECH, {"L7"}, {"L2"}),
    ("Priority Flow Control", TECH, {"L7"}, {"L2"}),
    ("ECN", TECH, {"L7"}, {"L2"}),
    ("Explicit Congestion Notification", TECH, {"L7"}, {"L2"}),
    ("NVMe-oF", TECH, {"S", "L7"}, {"L1"}),
    ("NVMe over Fabrics", TECH, {"S", "L7"}, {"L1"}),
    ("iSCSI", TECH, {"S"}, {"L1"}),
    ("GPUDirect Storage", TECH, {"S"}, {"L1"}),
    ("GDS", TECH, {"S"}, {"L1"}),
    # 4. Storage & Data Architecture
    ("High-speed NVMe storage", TECH, {"S"}, {"L1"}),
    ("Distributed filesystems", TECH, {"S"}, {"L1"}),
    ("WEKA", TECH, {"S"}, {"L1"}),
    ("JuiceFS", TECH, {"S"}, {"L1"}),
    ("Lustre", TECH, {"S"}, {"L1"}),
    ("IBM Spectrum Scale", TECH, {"S"}, {"L1"}),
    ("GPFS", TECH, {"S"}, {"L1"}),
    ("Vector Databases", TECH, {"S"}, {"L7"}),
    ("Milvus", TECH, {"S"}, {"L7"}),
    ("Qdrant", TECH, {"S"}, {"L7"}),
    ("Chroma", TECH, {"S"}, {"L7"}),
    ("HNSW", PARAM, {"S"}, set()),
    ("IVFPQ", PARAM, {"S"}, set()),
    ("Elasticsearch", TECH, {"S"}, {"L7"}),
    ("OpenSearch", TECH, {"S"}, {"L7"}),
    ("Apache Lucene", TECH, {"S"}, {"L7"}),
    ("Apache Spark", TECH, {"L1"}, {"L7"}),
    # 5. Model Serving & Inference
    ("vLLM", TECH, {"L2"}, {"L7"}),
    ("Triton Inference Server", TECH, {"L2"}, {"L7"}),
    ("Hugging Face TGI", TECH, {"L2"}, {"L7"}),
    ("TGI", TECH, {"L2"}, {"L7"}),
    ("Text Generation Inference", TECH, {"L2"}, {"L7"}),
    ("continuous batching", TECH, {"L2"}, {"L7"}),
    ("PagedAttention", TECH, {"L2"}, {"L7"}),
    ("KV cache", TECH, {"L2", "L9"}, {"L7"}),
    ("Quantization", TECH, {"L4", "L9"}, {"L7"}),
    ("AWQ", TECH, {"L4", "L9"}, {"L7"}),
    ("GPTQ", TECH, {"L4", "L9"}, {"L7"}),
    ("GGUF", TECH, {"L4", "L9"}, {"L7"}),
    ("Token-level metrics", METRIC, {"L2"}, {"L6"}),
    ("TTFT", METRIC, {"L2"}, {"L6"}),
    ("Time To First Token", METRIC, {"L2"}, {"L6"}),
    ("tokens/sec", METRIC, {"L2"}, {"L6"}),
    # 6. AI Pipelines & Lifecycle
    ("RAG", TECH, {"L1"}, {"L7"}),
    ("Retrieval-Augmented Generation", TECH, {"L1"}, {"L7"}),
    ("Apache Airflow", TECH, {"L1"}, {"L7"}),
    ("CDC", TECH, set(), {"L7"}),
    ("Change Data Capture", TECH, set(), {"L7"}),
    ("Fine-tuning", TECH, {"L1"}, {"L7"}),
    ("LoRA", TECH, {"L2"}, {"L7"}),
    ("QLoRA", TECH, {"L2"}, {"L7"}),
    ("Private Hugging Face Registries", TECH, {"L1", "S"}, {"L7"}),
    # 7. API Gateway, Access & Security Boundary
    ("AI Gateway", TECH, {"L2", "CP"}, {"L8"}),
    ("Apache APISIX", TECH, {"L2", "CP"}, {"L8"}),
    ("APISIX", TECH, {"L2", "CP"}, {"L8"}),
    ("Envoy", TECH, {"L2", "CP"}, {"L8"}),
    ("PortKey", TECH, {"L2", "CP"}, {"L8"}),
    ("SSE", TECH, {"L2"}, {"L8"}),
    ("Server-Sent Events", TECH, {"L2"}, {"L8"}),
    ("AuthN/AuthZ", TECH, {"L2"}, {"L3", "L8"}),
    ("Keycloak", TECH, set(), {"L3"}),
    ("Active Directory", TECH, set(), {"L3"}),
    ("OIDC", TECH, set(), set()),
    ("RBAC", TECH, {"L2", "S"}, {"L8"}),
    ("Service Mesh", TECH, {"CP"}, {"L5"}),
    ("Istio", TECH, {"CP"}, {"L5"}),
    ("Linkerd", TECH, {"CP"}, {"L5"}),
    ("Rate limiting", TECH, {"L2", "CP"}, {"L8"}),
    ("TPM", METRIC, set(), set()),
    ("Tokens Per Minute", METRIC, set(), set()),
    ("RPM", METRIC, set(), set()),
    ("Requests Per Minute", METRIC, set(), set()),
    ("JWT expiration tuning", PRACTICE, {"L2"}, {"L8"}),
    # 8. Monitoring & Observability
    ("Prometheus", TOOL, {"CP"}, set()),
    ("Grafana", TOOL, {"CP"}, set()),
    ("Key GPU metrics", METRIC, {"L9"}, {"L2"}),
    ("VRAM allocation", METRIC, {"L9"}, set()),
    ("Tensor Core usage", METRIC, {"L9"}, set()),
    ("thermal state", METRIC, {"L9"}, set()),
    ("GPU utilization", METRIC, {"L9"}, set()),
    ("Key LLM metrics", METRIC, {"L2"}, {"L6"}),
    ("input/output token volume", METRIC, set(), {"L6"}),
    ("OpenTelemetry for LLMs", TOOL, {"L1"}, {"L6"}),
    ("Langfuse", TOOL, {"L1"}, {"L6"}),
    ("Arize Phoenix", TOOL, {"L1"}, {"L6"}),
    ("NCCL tests", TOOL, {"L5", "L7"}, {"L2"}),
    ("nccl-tests", TOOL, {"L5", "L7"}, {"L2"}),
    # 9. Security & AISecOps
    ("Supply chain security", PRACTICE, set(), set()),
    ("safetensors", TECH, set(), {"L7"}),
    ("Pickle", TECH, set(), {"L7"}),
    ("Model registry lockdown", PRACTICE, {"L1"}, set()),
    ("Prompt injection mitigation", PRACTICE, {"L1"}, {"L8"}),
    ("NeMo Guardrails", TECH, {"L1"}, {"L8"}),
    ("Llama Guard", TECH, {"L1"}, {"L8"}),
    ("Infrastructure sandboxing", PRACTICE, {"CP"}, {"L5"}),
    ("Exfiltration prevention", PRACTICE, {"L1"}, set()),
    # 10. High Availability & Multi-Datacenter
    ("Active-Passive (Warm Standby)", PRACTICE, set(), set()),
    ("Warm Standby", PRACTICE, set(), set()),
    ("Global AI Gateway", TECH, {"L2", "CP"}, {"L8"}),
    ("State replication design principle", PRACTICE, set(), set()),
    ("Datacenter migration phases", PRACTICE, set(), set()),
    ("Kafka", TECH, {"L1"}, {"L7"}),
    # 11. Automation (Ansible for AI Infra)
    ("Ansible", TECH, set(), {"L4"}),
    ("Ansible for driver/CUDA install", PRACTICE, set(), {"L4"}),
    ("Ansible for Ray/vLLM deployment", PRACTICE, set(), {"L4"}),
    ("NVIDIA Fabric Manager", TECH, {"L8"}, {"L2"}),
]

#: The class each term must resolve in (a workload or a section may share a name, e.g. "RAG").
CLASS_OF: dict[str, URIRef] = {name: cls for name, cls, _, _ in TERMS}

# The glossary's Description, or the part of it about that entity: one of the entity's
# skos:definitions must contain it (another helper may add a second definition).
DEFINITIONS: dict[str, str] = {
    "NVIDIA Drivers": "Kernel-level driver binding the OS to the physical GPU.",
    "CUDA Toolkit": "NVIDIA's compute API",
    "cuDNN": "deep-learning-optimized primitives library",
    "ROCm": "AMD's equivalent compute stack to CUDA, for AMD GPU hardware.",
    "nvidia-smi": "live GPU state — utilization, VRAM usage, temperature, running processes.",
    "NVIDIA DCGM Exporter": "the production-grade successor to manually polling nvidia-smi.",
    "NVIDIA MIG (Multi-Instance GPU)": "Hardware-level partitioning of a single physical GPU (A100/H100)",
    "NVLink": "High-bandwidth GPU-to-GPU interconnect within a server",
    "Thermal limits & PCIe bottleneck profiling": "Sustained load can throttle GPUs before they hit a hard failure",
    "NVIDIA GPU Operator": "the standard way GPUs become schedulable K8s resources.",
    "nvidia-container-toolkit": "The runtime component that actually exposes a host GPU inside a container.",
    "Volcano": "Volcano's key feature is gang scheduling",
    "Kubeshare": "purpose-built for deep learning",
    "Ray Core": "Distributed compute framework for scaling Python/ML workloads across a cluster",
    "KubeRay": "runs Ray natively on Kubernetes",
    "ArgoCD": "config drift is caught by diffing against the repo rather than manual kubectl apply.",
    "Leaf-Spine architecture": "Spine switches ↔ Leaf switches ↔ GPU servers",
    "BGP": "directing traffic between racks",
    "ECMP": "evenly across all available spine links simultaneously.",
    "EVPN-VXLAN": "Overlay network technology (paired with iBGP) that virtualizes Layer 2 connectivity across racks/pods.",
    "RoCE": "Kernel-bypass fabric",
    "InfiniBand": "Kernel-bypass fabric",
    "NCCL": "collective operations (all-reduce, etc.) over RoCE/InfiniBand.",
    "PFC": "switch telemetry tracks PFC pause frames to spot chokepoints.",
    "ECN": "preventing packet drops during massive multi-GB model transfers",
    "NVMe-oF": "supports up to 65,535 I/O queues vs iSCSI's 256",
    "GPUDirect Storage": "Lets GPUs read/write storage directly, bypassing the CPU — pairs with NVMe-oF for model-loading throughput.",
    "High-speed NVMe storage": "Baseline requirement for model weight loading",
    "Distributed filesystems": "all solving the same problem of feeding many GPUs from shared storage in parallel.",
    "WEKA": "natively integrates with GDS",
    "JuiceFS": "Open-source alternative",
    "Lustre": "HPC-heritage parallel filesystem",
    "Vector Databases": "Store embeddings for RAG retrieval.",
    "HNSW": "trades off query speed vs recall accuracy vs memory footprint",
    "IVFPQ": "trades off query speed vs recall accuracy vs memory footprint",
    "Elasticsearch": "hybrid (keyword + semantic) retrieval.",
    "Apache Spark": "Batch processing framework, used here for bulk/offline embedding generation at scale.",
    "vLLM": "continuous batching (don't wait for a full batch — add/remove requests mid-flight)",
    "PagedAttention": "Manage the KV cache like OS virtual memory, avoiding fragmentation.",
    "Quantization": "Shrinks 16-bit floating-point weights to 8-bit or 4-bit",
    "Token-level metrics": "more meaningful than raw GPU utilization alone.",
    "RAG": "chunk source data → embed → store in a vector DB",
    "Apache Airflow": "Orchestrates the RAG ingestion pipeline as a DAG",
    "LoRA": "adapt a base model without retraining all its weights.",
    "Private Hugging Face Registries": "Self-hosted model registry so weights don't depend on (or leak to) the public Hub",
    "AI Gateway": "Layer-7 proxy sitting in front of inference engines",
    "SSE": "the client keeps one connection open and receives incremental chunks.",
    "AuthN/AuthZ": "Identity and authentication layer for who's allowed to call the gateway at all.",
    "RBAC": "which has its own RBAC audit log",
    "Service Mesh": "distinct from the north-south AI Gateway at the edge.",
    "Rate limiting": "token-based limits matter more than request-based ones",
    "JWT expiration tuning": "causing spurious 401s mid-stream.",
    "Prometheus": "scraping GPU telemetry (via DCGM Exporter) and application metrics",
    "Key GPU metrics": "forecasting future hardware purchasing needs.",
    "Key LLM metrics": "TTFT, tokens/sec, input/output token volume.",
    "OpenTelemetry for LLMs": "isolates exactly which hop (retrieval, embedding, generation) is causing latency.",
    "NCCL tests": "distinguishing a software bug from a genuinely faulty network link",
    "Supply chain security": "Pickle can execute arbitrary code on load",
    "Model registry lockdown": "before they reach any GPU node.",
    "Prompt injection mitigation": "NeMo Guardrails and Llama Guard act as an input/output firewall",
    "Infrastructure sandboxing": "Isolating untrusted code execution",
    "Exfiltration prevention": "The combined effect of guardrails + RBAC + registry lockdown",
    "Active-Passive (Warm Standby)": "not running a full duplicate hot cluster.",
    "Global AI Gateway": "redirect traffic from Active to Standby during failover.",
    "State replication design principle": "don't attempt to replicate live in-VRAM GPU state",
    "Datacenter migration phases": "Blue-green token cutover at the Global AI Gateway.",
    "Ansible for driver/CUDA install": "install NVIDIA drivers, CUDA toolkit, and NVIDIA Fabric Manager",
    "Ansible for Ray/vLLM deployment": "applied to the inference software stack",
}

OBSERVABILITY = [
    "nvidia-smi",
    "nvtop",
    "NVIDIA DCGM Exporter",
    "Prometheus",
    "Grafana",
    "Key GPU metrics",
    "Key LLM metrics",
    "TTFT",
    "tokens/sec",
    "OpenTelemetry for LLMs",
    "Langfuse",
    "Arize Phoenix",
    "NCCL tests",
]
SECURITY = [
    "Supply chain security",
    "Model registry lockdown",
    "Prompt injection mitigation",
    "Infrastructure sandboxing",
    "Exfiltration prevention",
    "NeMo Guardrails",
    "Llama Guard",
    "RBAC",
    "AuthN/AuthZ",
    "JWT expiration tuning",
    "Private Hugging Face Registries",
    "safetensors",
    "Pickle",
]
RELIABILITY = [
    "Active-Passive (Warm Standby)",
    "Global AI Gateway",
    "State replication design principle",
    "Datacenter migration phases",
]

# (parameter as printed, Purpose verbatim, concepts it applies to)
VLLM_PARAMETERS: list[tuple[str, str, set[str]]] = [
    (
        "tensor_parallel_size",
        "Splits a single model's layers across N GPUs (intra-node parallelism).",
        {"tensor-parallelism"},
    ),
    (
        "pipeline_parallel_size",
        "Splits model layers across pipeline stages (often across nodes).",
        {"pipeline-parallelism"},
    ),
    (
        "gpu_memory_utilization",
        "Fraction of GPU VRAM vLLM is allowed to claim for KV cache + weights.",
        {"kv-cache"},
    ),
    ("max_model_len", "Maximum context length (tokens) the engine will serve.", set()),
    ("block_size", "KV-cache page size for PagedAttention.", {"paged-attention", "kv-cache"}),
    ("max_num_seqs", "Maximum concurrent sequences (requests) batched together.", set()),
    (
        "enable_chunked_prefill",
        "Splits long prompt prefill into chunks so it can interleave with ongoing decode steps, reducing latency spikes.",
        set(),
    ),
    ("max_num_batched_tokens", "Caps total tokens processed per batching step across all sequences.", set()),
    ("kv_cache_dtype", "Data type for the KV cache (e.g. fp8) — trades memory for precision.", {"kv-cache"}),
    (
        'quantization: "awq"',
        "Selects the quantization method for the loaded weights.",
        {"awq", "quantization"},
    ),
    (
        "disable_log_requests",
        "Turns off per-request logging — a production throughput/log-volume tradeoff.",
        set(),
    ),
    (
        "trust_remote_code",
        "Allows executing custom model code from the Hugging Face repo — a supply-chain security consideration (see Section 9).",
        {"practice-supply-chain-security"},
    ),
]
# Other spellings of the parameters people type.
PARAMETER_SPELLINGS = {
    "tensor parallel size": "tensor_parallel_size",
    "--tensor-parallel-size": "tensor_parallel_size",
    "--gpu-memory-utilization": "gpu_memory_utilization",
    "gpu memory utilization": "gpu_memory_utilization",
    "--max-model-len": "max_model_len",
    "--enable-chunked-prefill": "enable_chunked_prefill",
    "--kv-cache-dtype": "kv_cache_dtype",
    "--trust-remote-code": "trust_remote_code",
    "quantization parameter": 'quantization: "awq"',
}

# (symptom as printed, what people type, likely-cause words, where-to-look labels, nine owners, ops owners,
#  Where to Look cell verbatim)
SYMPTOMS: list[tuple[str, list[str], list[str], list[str], set[str], set[str], str]] = [
    (
        "HTTP 504 / connection drops mid-sentence",
        ["504", "gateway timeout", "HTTP 504", "connection drops mid-sentence"],
        ["proxy timeout", "shorter than generation time"],
        ["proxy_read_timeout", "AI Gateway (APISIX) logs"],
        {"L2", "CP"},
        {"L8"},
        "proxy_read_timeout, AI Gateway (APISIX) logs",
    ),
    (
        "HTTP 429 (Too Many Requests)",
        ["429", "too many requests", "rate limited"],
        ["rate limit", "TPM/RPM", "exceeded"],
        ["apisix_http_status"],
        {"L2", "CP"},
        {"L8"},
        "apisix_http_status metrics",
    ),
    (
        "HTTP 401 mid-stream (RAG)",
        ["401", "unauthorized mid-stream", "HTTP 401 mid-stream"],
        ["JWT expired", "long generation"],
        ["JWT TTL config"],
        {"L2", "CP"},
        {"L8"},
        "JWT TTL config vs actual generation time",
    ),
    (
        "Missing RAG response text",
        ["rag returns nothing", "empty rag answer"],
        ["Vector DB", "RBAC", "blocking"],
        ["Milvus RBAC audit log"],
        {"S", "L1"},
        {"L7"},
        "Milvus RBAC audit log",
    ),
    (
        "CUDA Out of Memory (OOM)",
        [
            "OOM",
            "CUDA OOM",
            "CUDA out of memory",
            "out of memory",
            "torch.cuda.OutOfMemoryError",
            "GPU out of memory",
        ],
        ["KV cache", "batch size", "VRAM budget"],
        ["gpu_memory_utilization", "vLLM engine VRAM metrics"],
        {"L2", "L9"},
        {"L7", "L2"},
        "gpu_memory_utilization, vLLM engine VRAM metrics",
    ),
    (
        "Container dies on startup",
        ["container crashes at start", "container fails to start", "container crashes on startup"],
        ["Driver/CUDA", "version mismatch"],
        ["nvidia-smi", "host driver logs"],
        {"L4"},
        {"L5"},
        "nvidia-smi, host driver logs",
    ),
    (
        "Slow first-token delivery",
        ["slow TTFT", "first token takes long", "high TTFT"],
        ["Vector DB index lookup", "context chunking latency"],
        ["Langfuse", "Arize Phoenix"],
        {"S", "L1"},
        {"L7"},
        "Langfuse / Arize Phoenix trace",
    ),
    (
        "Multi-node cluster stalls",
        ["NCCL hang", "NCCL timeout", "training hangs", "all-reduce hangs"],
        ["RoCE", "PFC", "dropped packets"],
        ["nccl-tests", "switch telemetry"],
        {"L7", "L5"},
        {"L2"},
        "nccl-tests, switch telemetry",
    ),
    (
        "Node genuinely slow but not erroring",
        ["node slow no errors", "mysteriously slow node"],
        ["PCIe bottleneck", "thermal throttling"],
        ["nvidia-smi", "nvtop", "thermal metrics"],
        {"L8", "L9"},
        {"L2"},
        "nvidia-smi, nvtop, thermal metrics",
    ),
    (
        "Storage-bound slowness",
        ["slow model loading", "storage bottleneck"],
        ["Disk I/O", "model loading"],
        ["iostat -x", "fio", "gdscheck"],
        {"S"},
        {"L1"},
        "iostat -x, fio, gdscheck",
    ),
]

# The request flow, hop by hop: (label, components it involves)
REQUEST_FLOW: list[tuple[str, set[str]]] = [
    (
        "Global AI Gateway (APISIX/Envoy)",
        {"global-ai-gateway", "apisix", "envoy", "authn-authz", "rate-limiting", "sse"},
    ),
    ("Active Layer (Rack A) / Warm Standby (Rack B)", {"practice-active-passive", "nvme-storage"}),
    (
        "Inference Engine (vLLM/Triton/TGI)",
        {"vllm", "triton-inference-server", "hugging-face-tgi", "paged-attention", "continuous-batching"},
    ),
    ("RAG Retrieval", {"rag", "vector-databases", "milvus", "qdrant", "apache-airflow"}),
    ("GPU Compute", {"mig", "nvlink", "gpu-operator"}),
    ("Storage Fabric", {"nvme-of", "gpudirect-storage", "roce", "infiniband", "nccl"}),
    (
        "Observability (Prometheus/Grafana/DCGM, Langfuse/Phoenix)",
        {"prometheus", "grafana", "dcgm-exporter", "langfuse", "arize-phoenix"},
    ),
    ("Guardrails (NeMo/Llama Guard)", {"nemo-guardrails", "llama-guard"}),
]

MIGRATION_PHASES = ["Heavy-weight pre-staging", "CDC-based vector delta sync", "Blue-green token cutover"]

# Relations the glossary states (subject, predicate, object), by IRI local name.
RELATIONS: list[tuple[str, URIRef, str]] = [
    ("rocm", SG.equivalentOf, "cuda"),
    ("gpudirect-storage", SG.pairsWith, "nvme-of"),
    ("nccl", SG.diagnosedBy, "nccl-tests"),
    ("dcgm-exporter", SG.feeds, "prometheus"),
    ("dcgm-exporter", SG.successorOf, "nvidia-smi"),
    ("prometheus", SG.feeds, "grafana"),
    ("gpu-operator", SG.deploys, "nvidia-driver"),
    ("gpu-operator", SG.deploys, "nvidia-container-toolkit"),
    ("nvidia-driver", SG.mustMatch, "cuda"),
    ("volcano", SG.implements, "gang-scheduling"),
    ("kuberay", SG.runsOn, "kubernetes"),
    ("argocd", SG.implements, "practice-gitops"),
    ("evpn-vxlan", SG.pairsWith, "ibgp"),
    ("ibgp", SKOS.broader, "bgp"),
    ("roce", SG.alternativeTo, "infiniband"),
    ("nccl", SG.uses, "roce"),
    ("nccl", SG.uses, "infiniband"),
    ("pfc", SG.pairsWith, "ecn"),
    ("pfc", SG.diagnosedBy, "switch-telemetry"),
    ("nvme-of", SG.alternativeTo, "iscsi"),
    ("nvme-of", SG.uses, "roce"),
    ("weka", SG.pairsWith, "gpudirect-storage"),
    ("juicefs", SG.alternativeTo, "weka"),
    ("weka", SKOS.broader, "distributed-filesystems"),
    ("lustre", SKOS.broader, "distributed-filesystems"),
    ("ibm-spectrum-scale", SKOS.broader, "distributed-filesystems"),
    ("milvus", SKOS.broader, "vector-databases"),
    ("qdrant", SKOS.broader, "vector-databases"),
    ("chroma", SKOS.broader, "vector-databases"),
    ("hnsw", SG.parameterOf, "vector-databases"),
    ("ivfpq", SG.parameterOf, "vector-databases"),
    ("elasticsearch", SG.pairsWith, "vector-databases"),
    ("vllm", SG.implements, "continuous-batching"),
    ("vllm", SG.implements, "paged-attention"),
    ("triton-inference-server", SG.implements, "continuous-batching"),
    ("triton-inference-server", SG.implements, "paged-attention"),
    ("hugging-face-tgi", SG.implements, "continuous-batching"),
    ("hugging-face-tgi", SG.implements, "paged-attention"),
    ("paged-attention", SG.appliesTo, "kv-cache"),
    ("awq", SKOS.broader, "quantization"),
    ("gptq", SKOS.broader, "quantization"),
    ("gguf", SKOS.broader, "quantization"),
    ("ttft", SKOS.broader, "token-level-metrics"),
    ("tokens-per-sec", SKOS.broader, "token-level-metrics"),
    ("rag", SG.uses, "vector-databases"),
    ("apache-airflow", SG.feeds, "vector-databases"),
    ("apache-airflow", SG.implements, "cdc"),
    ("kafka", SG.implements, "cdc"),
    ("lora", SKOS.broader, "peft"),
    ("qlora", SKOS.broader, "peft"),
    ("peft", SKOS.broader, "fine-tuning"),
    ("lora", SKOS.related, "wl-peft-lora"),
    ("ai-gateway", SKOS.broader, "inference-gateways"),
    ("private-hf-registry", SKOS.broader, "model-registry"),
    ("apache-airflow", SKOS.broader, "ml-pipelines"),
    ("mig", SKOS.related, "mig-manager"),
    ("private-hf-registry", SG.alternativeTo, "hugging-face-hub"),
    ("private-hf-registry", SG.pairsWith, "practice-supply-chain-security"),
    ("apisix", SKOS.broader, "ai-gateway"),
    ("envoy", SKOS.broader, "ai-gateway"),
    ("portkey", SKOS.broader, "ai-gateway"),
    ("global-ai-gateway", SKOS.broader, "ai-gateway"),
    ("ai-gateway", SG.implements, "rate-limiting"),
    ("ai-gateway", SG.uses, "sse"),
    ("keycloak", SG.uses, "oidc"),
    ("active-directory", SG.uses, "oidc"),
    ("rbac", SG.appliesTo, "milvus"),
    ("istio", SKOS.broader, "service-mesh"),
    ("linkerd", SKOS.broader, "service-mesh"),
    ("tpm", SKOS.broader, "rate-limiting"),
    ("rpm", SKOS.broader, "rate-limiting"),
    ("practice-jwt-expiration-tuning", SG.mitigates, "sym-http-401-mid-stream"),
    ("nvme-storage", SG.mitigates, "cause-slow-startup"),
    ("hnsw", SG.mitigates, "cause-index-size"),
    ("ivfpq", SG.mitigates, "cause-index-size"),
    ("param-enable-chunked-prefill", SG.mitigates, "cause-batching"),
    ("langfuse", SKOS.broader, "opentelemetry-for-llms"),
    ("arize-phoenix", SKOS.broader, "opentelemetry-for-llms"),
    ("vram-allocation", SKOS.broader, "key-gpu-metrics"),
    ("tensor-core-usage", SKOS.broader, "key-gpu-metrics"),
    ("thermal-state", SKOS.broader, "key-gpu-metrics"),
    ("gpu-utilization", SKOS.broader, "key-gpu-metrics"),
    ("safetensors", SG.alternativeTo, "pickle"),
    ("practice-prompt-injection-mitigation", SG.uses, "nemo-guardrails"),
    ("practice-prompt-injection-mitigation", SG.uses, "llama-guard"),
    ("nemo-guardrails", SKOS.broader, "guardrails"),
    ("practice-exfiltration-prevention", SG.uses, "guardrails"),
    ("practice-exfiltration-prevention", SG.uses, "rbac"),
    ("practice-exfiltration-prevention", SG.uses, "practice-model-registry-lockdown"),
    ("practice-model-registry-lockdown", SG.appliesTo, "private-hf-registry"),
    ("practice-ansible-driver-cuda-install", SG.uses, "ansible"),
    ("ansible", SG.deploys, "nvidia-fabric-manager"),
    ("ansible", SG.deploys, "vllm"),
    ("cause-driver-cuda-version-mismatch", SKOS.related, "cause-version-mismatch-across-boundary"),
    ("cause-driver-cuda-version-mismatch", SKOS.related, "nvidia-driver"),
    ("cause-driver-cuda-version-mismatch", SKOS.related, "cuda"),
    ("gpudirect-storage", SG.diagnosedBy, "gdscheck"),
]


# ------------------------------------------------------------------------------------------------ helpers


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    return load_graph().graph


def _rows(graph: rdflib.Graph, query: str) -> list:
    return list(graph.query(PREFIX_DECL + query))


def resolve(graph: rdflib.Graph, name: str, cls: URIRef, hidden: bool = False) -> set[str]:
    """Entities of class ``cls`` (or a subclass) whose label or altLabel (or hiddenLabel) is ``name``."""
    preds = "rdfs:label|skos:altLabel" + ("|skos:hiddenLabel" if hidden else "")
    query = f"""
    SELECT DISTINCT ?e WHERE {{
      ?e {preds} ?l ; a ?t . ?t rdfs:subClassOf* <{cls}> .
      FILTER(LCASE(STR(?l)) = LCASE({Literal(name).n3()}))
    }}"""
    return {str(r.e) for r in _rows(graph, query)}


def resolve_one(graph: rdflib.Graph, name: str, cls: URIRef, hidden: bool = False) -> str:
    found = resolve(graph, name, cls, hidden)
    assert len(found) == 1, (
        f"{name!r} should resolve to exactly one {cls.split('#')[-1]}, got {sorted(found)}"
    )
    return found.pop()


def layer_iri(code: str, model: str) -> str:
    return str(KG[f"{model}-{code}"])


def placements(graph: rdflib.Graph, iri: str) -> tuple[set[str], set[str]]:
    """(layers from sg:fitsIn, layers from sg:placement nodes) of an entity."""
    fits = {str(r.l) for r in _rows(graph, f"SELECT ?l WHERE {{ <{iri}> sg:fitsIn ?l }}")}
    placed = {str(r.l) for r in _rows(graph, f"SELECT ?l WHERE {{ <{iri}> sg:placement/sg:layer ?l }}")}
    return fits, placed


def values(graph: rdflib.Graph, iri: str, predicate: str) -> set[str]:
    return {str(r.v) for r in _rows(graph, f"SELECT ?v WHERE {{ <{iri}> {predicate} ?v }}")}


# ------------------------------------------------------------------------------------------------ terms


@pytest.mark.parametrize(("name", "cls", "nine", "ops"), TERMS, ids=[t[0] for t in TERMS])
def test_glossary_term_resolves_and_is_placed(graph, name, cls, nine, ops) -> None:
    iri = resolve_one(graph, name, cls)
    fits, placed = placements(graph, iri)
    for code in nine:
        layer = layer_iri(code, "nine")
        assert layer in fits, f"{name} should fit nine-layer {code}"
        assert layer in placed, f"{name} fits nine-layer {code} without a sg:Placement"
    for code in ops:
        layer = layer_iri(code, "ops")
        assert layer in fits, f"{name} should fit eight-layer {code}"
        assert layer in placed, f"{name} fits eight-layer {code} without a sg:Placement"


@pytest.mark.parametrize("name", sorted(DEFINITIONS), ids=sorted(DEFINITIONS))
def test_glossary_definition_quotes_the_glossary(graph, name) -> None:
    iri = resolve_one(graph, name, CLASS_OF[name])
    definitions = values(graph, iri, "skos:definition")
    assert any(DEFINITIONS[name] in d for d in definitions), (
        f"{name}: no definition quotes {DEFINITIONS[name]!r}"
    )


@pytest.mark.parametrize(
    ("names", "concern"),
    [(OBSERVABILITY, "observability"), (SECURITY, "security"), (RELIABILITY, "reliability")],
    ids=["observability", "security", "reliability"],
)
def test_cross_cutting_concerns(graph, names, concern) -> None:
    missing = [
        n
        for n in names
        if str(KG[concern]) not in values(graph, resolve_one(graph, n, CLASS_OF[n]), "sg:concern")
    ]
    assert not missing, f"not marked with the {concern} concern: {missing}"


def test_every_term_cites_a_glossary_section_and_has_one_label(graph) -> None:
    for name, cls, _, _ in TERMS:
        iri = resolve_one(graph, name, cls)
        sources = values(graph, iri, "dct:source")
        assert any(s.startswith(str(KG["doc-004"])) for s in sources), f"{name} cites no glossary section"
        labels = values(graph, iri, "rdfs:label")
        assert len(labels) == 1, f"{name} has {len(labels)} rdfs:labels: {sorted(labels)}"


def test_glossary_placements_are_qualified_and_inferred(graph) -> None:
    """Every placement citing the glossary has its sg:fitsIn shortcut and says it is inferred."""
    rows = _rows(
        graph,
        """
        SELECT ?e ?l ?basis WHERE {
          ?e sg:placement ?p . ?p sg:layer ?l ; dct:source ?src .
          ?src dct:isPartOf kg:doc-004 .
          OPTIONAL { ?p sg:basis ?basis }
        }""",
    )
    assert len(rows) > 150
    for row in rows:
        assert (row.e, SG.fitsIn, row.l) in graph, f"{row.e} placed in {row.l} without sg:fitsIn"
        assert row.basis == SG.inferred, f"{row.e} placement in {row.l} is not sg:inferred"


def test_layer7_gateway_is_not_network_fabric(graph) -> None:
    """'Layer-7 proxy' is OSI layer 7: no gateway may land in nine-layer L7 Network Fabric."""
    for name in ("AI Gateway", "Apache APISIX", "Envoy", "PortKey", "Global AI Gateway"):
        iri = resolve_one(graph, name, TECH)
        fits, _ = placements(graph, iri)
        assert layer_iri("L7", "nine") not in fits, f"{name} placed in L7 Network Fabric"
    notes = values(graph, str(KG["ai-gateway"]), "sg:note")
    assert any("OSI layer 7" in n for n in notes)


# ------------------------------------------------------------------------------------------------ relations


@pytest.mark.parametrize(
    ("s", "p", "o"), RELATIONS, ids=[f"{s}-{str(p).rsplit('#', 1)[-1]}-{o}" for s, p, o in RELATIONS]
)
def test_glossary_relation(graph, s, p, o) -> None:
    assert (KG[s], p, KG[o]) in graph


def test_named_things_are_split_and_related(graph) -> None:
    """Combined rows became one entity per named thing, each reachable by name."""
    cuda = resolve_one(graph, "CUDA Toolkit", TECH)
    assert resolve_one(graph, "cuDNN", TECH) != cuda
    rocm = resolve_one(graph, "ROCm", TECH)
    assert (URIRef(rocm), SG.equivalentOf, URIRef(cuda)) in graph
    gds = resolve_one(graph, "GDS", TECH)
    assert (URIRef(gds), SG.pairsWith, URIRef(resolve_one(graph, "NVMe-oF", TECH))) in graph
    nccl = resolve_one(graph, "NCCL", TECH)
    assert (URIRef(nccl), SG.diagnosedBy, URIRef(resolve_one(graph, "nccl-tests", TOOL))) in graph
    assert resolve_one(graph, "Triton Inference Server", TECH) != resolve_one(graph, "Triton kernels", TECH)


# ------------------------------------------------------------------------------------------------ vLLM parameters


@pytest.mark.parametrize(("name", "purpose", "applies"), VLLM_PARAMETERS, ids=[p[0] for p in VLLM_PARAMETERS])
def test_vllm_parameter(graph, name, purpose, applies) -> None:
    iri = resolve_one(graph, name, PARAM)
    assert values(graph, iri, "rdfs:label") == {name}
    assert purpose in values(graph, iri, "skos:definition")
    assert str(KG.vllm) in values(graph, iri, "sg:parameterOf")
    assert {str(KG[a]) for a in applies} <= values(graph, iri, "sg:appliesTo")
    assert str(KG["doc-004-vllm-parameters"]) in values(graph, iri, "dct:source")
    fits, placed = placements(graph, iri)
    assert layer_iri("L2", "nine") in fits & placed


@pytest.mark.parametrize(("spelling", "name"), sorted(PARAMETER_SPELLINGS.items()))
def test_vllm_parameter_spellings(graph, spelling, name) -> None:
    assert resolve_one(graph, spelling, PARAM) == resolve_one(graph, name, PARAM)


def test_parallelism_parameters_set_the_parallelism_layer(graph) -> None:
    for name in ("tensor_parallel_size", "pipeline_parallel_size"):
        fits, placed = placements(graph, resolve_one(graph, name, PARAM))
        assert layer_iri("L3", "nine") in fits & placed


def test_trust_remote_code_is_a_security_concern(graph) -> None:
    assert str(KG.security) in values(graph, resolve_one(graph, "trust_remote_code", PARAM), "sg:concern")


# ------------------------------------------------------------------------------------------------ troubleshooting


@pytest.mark.parametrize(
    ("label", "said", "cause_words", "look", "nine", "ops", "cell"), SYMPTOMS, ids=[s[0] for s in SYMPTOMS]
)
def test_troubleshooting_row(graph, label, said, cause_words, look, nine, ops, cell) -> None:
    symptom = resolve_one(graph, label, SYMPTOM)
    for phrase in said:
        assert resolve_one(graph, phrase, SYMPTOM, hidden=True) == symptom, phrase
    causes = values(graph, symptom, "sg:likelyCause")
    assert len(causes) == 1
    cause = causes.pop()
    assert (URIRef(cause), rdflib.RDF.type, SG.Cause) in graph
    cause_label = values(graph, cause, "rdfs:label").pop().lower()
    for word in cause_words:
        assert word.lower() in cause_label, f"{label}: cause {cause_label!r} lacks {word!r}"
    targets = values(graph, symptom, "sg:whereToLook")
    for name in look:
        assert resolve_one(graph, name, SG.Entity) in targets, f"{label}: should look at {name}"
    owners = values(graph, symptom, "sg:ownedBy")
    assert {layer_iri(c, "nine") for c in nine} <= owners
    assert {layer_iri(c, "ops") for c in ops} <= owners
    assert values(graph, cause, "sg:ownedBy") >= {layer_iri(c, "nine") for c in nine}
    assert any(cell in c for c in values(graph, symptom, "rdfs:comment")), (
        f"{label}: Where to Look cell not kept"
    )
    assert str(KG["doc-004-s12"]) in values(graph, symptom, "dct:source")


def test_where_to_look_targets_are_typed(graph) -> None:
    expected = {
        "proxy-read-timeout": PARAM,
        "apisix-http-status": METRIC,
        "milvus-rbac-audit-log": TOOL,
        "jwt-ttl-config": PARAM,
        "switch-telemetry": TOOL,
        "thermal-metrics": METRIC,
        "vllm-vram-metrics": METRIC,
        "host-driver-logs": TOOL,
        "cmd-iostat-x": COMMAND,
        "fio": TOOL,
        "gdscheck": TOOL,
    }
    for local, cls in expected.items():
        assert (KG[local], rdflib.RDF.type, cls) in graph, local
    assert (KG["cmd-iostat-x"], SG.commandText, Literal("iostat -x")) in graph


def test_layers_are_diagnosed_by_the_tables_tools(graph) -> None:
    expected = {
        "L9": {"nvidia-smi", "nvtop", "dcgm-exporter"},
        "L7": {"nccl-tests", "switch-telemetry"},
        "L5": {"nccl-tests"},
        "L4": {"host-driver-logs"},
        "S": {"cmd-iostat-x", "fio", "gdscheck"},
        "L1": {"langfuse", "arize-phoenix"},
    }
    for code, tools in expected.items():
        found = values(graph, layer_iri(code, "nine"), "sg:diagnosedBy")
        assert {str(KG[t]) for t in tools} <= found, code


# ------------------------------------------------------------------------------------------------ flows


def _ordered_chain(graph: rdflib.Graph, parent: str) -> list[tuple[str, str, int]]:
    rows = _rows(
        graph,
        f"""
        SELECT ?s ?label ?pos WHERE {{
          ?s a sg:FlowStep ; dct:isPartOf <{parent}> ; rdfs:label ?label ; sg:position ?pos .
        }} ORDER BY ?pos""",
    )
    return [(str(r.s), str(r.label), int(r.pos)) for r in rows]


def test_request_flow_hops_in_order(graph) -> None:
    chain = _ordered_chain(graph, str(KG["request-flow"]))
    assert [label for _, label, _ in chain] == [label for label, _ in REQUEST_FLOW]
    assert [pos for _, _, pos in chain] == list(range(1, len(REQUEST_FLOW) + 1))
    for (step, _, _), (nxt, _, _) in zip(chain, chain[1:], strict=False):
        assert values(graph, step, "sg:next") == {nxt}
    assert not values(graph, chain[-1][0], "sg:next")
    for (step, label, _), (_, involves) in zip(chain, REQUEST_FLOW, strict=True):
        assert {str(KG[i]) for i in involves} <= values(graph, step, "sg:involves"), label
        assert values(graph, step, "rdfs:comment"), label
        assert str(KG["doc-004-request-flow"]) in values(graph, step, "dct:source")


def test_migration_phases_in_order(graph) -> None:
    parent = resolve_one(graph, "Datacenter migration phases", PRACTICE)
    chain = _ordered_chain(graph, parent)
    assert [label for _, label, _ in chain] == MIGRATION_PHASES
    assert values(graph, chain[0][0], "sg:next") == {chain[1][0]}
    assert values(graph, chain[1][0], "sg:next") == {chain[2][0]}
    assert str(KG["global-ai-gateway"]) in values(graph, chain[2][0], "sg:involves")
