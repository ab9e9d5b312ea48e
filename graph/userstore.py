"""The built-in graph plus ``--data`` files, as one Oxigraph store: built, checked, cached by content.

First start with a set of files: the built-in Turtle and each file are bulk-loaded (graph/userdata.py),
the shapes are checked with SPARQL (graph/shapecheck.py), and user facts citing the built-in seeds
are refused. Large inputs (``DISK_STORE_MIN_BYTES`` of user files or more) are built in an
on-disk store under ``<cache>/stores/<content hash>`` (written in the background on the first
start, which answers from memory); later starts open it read-only in a few milliseconds instead
of parsing a million triples again (4-5 s). Measured at 100k entities (1.1M triples, 2 cores):
first start 27 s with a peak RSS of 0.9 GB (the store is copied to disk in chunks while the
first answer is computed; see ``PERSIST_CHUNK``), later starts 2.4-2.9 s. Small inputs stay in memory,
where parsing them is faster than opening a store, and only the "it conforms" verdict is cached.

Nothing half-built is ever used: a store is built in a temporary directory, marked complete, and
renamed into place; a store without the marker, or one that does not open, is removed and rebuilt
with a one-line message.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox
import rdflib
from oxrdflib import OxigraphStore
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

from stackgraph.graph import userdata
from stackgraph.graph.cachefiles import cache_root, fsync_directory, log, write_bytes
from stackgraph.graph.store import PREFIXES, DataFileError, LoadedGraph, builtin_files

#: User files at least this large (bytes, all together) get a cached on-disk store.
DISK_STORE_MIN_BYTES = int(os.environ.get("STACKGRAPH_DISK_STORE_MIN_BYTES", 4_000_000))
#: Bump when what a cached store holds changes.
STORE_FORMAT = "store-1"
_COMPLETE = "stackgraph-complete"
#: Above this many bytes of user data, loading and checking say what they are doing on stderr.
PROGRESS_MIN_BYTES = 4_000_000


def content_hash(data_paths: list[Path]) -> str:
    """Hash of the built-in Turtle and every data file (names and bytes): keys every cache."""
    digest = hashlib.sha256()
    for path in [*builtin_files(), *data_paths]:
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()[:16]


def as_graph(store: ox.Store) -> rdflib.Graph:
    """rdflib's API over ``store``'s default graph (oxrdflib), with the project's prefixes bound."""
    graph = rdflib.Graph(store=OxigraphStore(store=store), identifier=DATASET_DEFAULT_GRAPH_ID)
    for prefix, iri in PREFIXES.items():
        graph.bind(prefix, iri, override=True)
    return graph


def _fill(store: ox.Store, paths: list[Path], check: bool, progress: bool) -> None:
    """Load the built-in graph and ``paths`` into ``store``; with ``check``, refuse what breaks the
    shapes or cites a built-in seed (DataFileError naming the file)."""
    checker = _load(store, paths, progress)
    if check:
        checker()


def _load(store: ox.Store, paths: list[Path], progress: bool) -> Callable[[], None]:
    """Load the built-in graph and ``paths`` into ``store``; return the check of what was loaded
    (raises DataFileError naming the file), to run now or on another thread."""
    for path in builtin_files():
        store.bulk_load(path=str(path), format=ox.RdfFormat.TURTLE)
    sections = userdata.seed_sections(store)
    builtin_subjects = userdata.subjects(store)
    for path in paths:
        userdata.load_file(store, path, progress=progress)

    def check() -> None:
        _check_citations(store, paths, sections, builtin_subjects)
        _check_shapes(store, paths, progress)

    return check


def _check_citations(
    store: ox.Store, paths: list[Path], sections: list[ox.NamedNode], builtin_subjects: set
) -> None:
    foreign = userdata.foreign_citations(store, sections, builtin_subjects)
    if foreign:
        from oxrdflib._converter import from_ox

        from stackgraph.graph.validate import describe_node

        foreign.sort(key=lambda pair: (not isinstance(pair[0], ox.NamedNode), str(pair[0])))
        subject, section = foreign[0]
        graph = as_graph(store)
        culprit = userdata.file_mentioning(paths, subject)
        more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise DataFileError(
            culprit,
            f"{describe_node(from_ox(subject), graph)} cites {describe_node(from_ox(section), graph)}, a "
            f"section of a built-in seed document: your facts must cite your own sources (an sg:Source "
            f"and its sg:SourceSection){more}",
        )


def _check_shapes(store: ox.Store, paths: list[Path], progress: bool) -> None:
    from stackgraph.graph.shapecheck import load_checks, run_checks
    from stackgraph.graph.validate import violations_from_findings

    graph = as_graph(store)
    started = time.perf_counter()
    findings = run_checks(
        graph, load_checks(), progress=progress_reporter("checking the shapes") if progress else None
    )
    if progress:
        print(f"stackgraph: shapes checked in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if not findings:
        return
    first = violations_from_findings(findings[:1], graph)[0]
    node = findings[0].focus
    culprit = (
        userdata.file_mentioning(paths, ox.NamedNode(str(node)))
        if isinstance(node, rdflib.URIRef)
        else paths[0]
    )
    more = (
        f" (and {len(findings) - 1} more; run `stackgraph validate {culprit}`)" if len(findings) > 1 else ""
    )
    raise DataFileError(culprit, f"does not conform to the shapes: {first.focus}: {first.message}{more}")


def progress_reporter(what: str):
    """Progress as 'what: 30/75' on stderr: overwritten in place on a terminal, every quarter otherwise."""
    tty = sys.stderr.isatty()

    def report(done: int, total: int) -> None:
        if tty:
            end = "\n" if done == total else ""
            print(f"\rstackgraph: {what}: {done}/{total}", end=end, file=sys.stderr, flush=True)
        elif done == total or done % max(1, total // 4) == 0:
            print(f"stackgraph: {what}: {done}/{total}", file=sys.stderr, flush=True)

    return report


def _open_cached(directory: Path) -> ox.Store | None:
    if not (directory / _COMPLETE).is_file():
        if directory.exists():
            log(f"cached store {directory.name} is incomplete; rebuilding it")
            shutil.rmtree(directory, ignore_errors=True)
        return None
    try:
        return ox.Store.read_only(str(directory))
    except OSError as error:
        log(f"cached store {directory.name} unusable ({' '.join(str(error).split())[:120]}); rebuilding it")
        shutil.rmtree(directory, ignore_errors=True)
        return None


#: Quads per bulk write when the store is persisted (0: all in one). One bulk load of all 1.1M
#: quads peaked at 570-820 MB more than the store itself (Oxigraph's loader sorts a million quads
#: at a time); in chunks of this size it adds almost none.
PERSIST_CHUNK = int(os.environ.get("STACKGRAPH_PERSIST_CHUNK", 200_000))
#: Labelled blank nodes: some entity is one, so the caches written from this process name it by
#: its label in the memory store, and the copy must keep that label (see :func:`_persist`).
_LABELLED_BLANK = "ASK { ?node <http://www.w3.org/2000/01/rdf-schema#label> ?label FILTER(isBLANK(?node)) }"


def _persist(store: ox.Store, directory: Path) -> None:
    """Write ``store`` (loaded in memory and checked) as the on-disk store for later starts.

    Runs in a background thread while this process answers from memory, and almost all of it
    without the GIL: Oxigraph writes the triples without a blank node as N-Triples, bulk-loaded
    in chunks of ``PERSIST_CHUNK``; those with one are bulk-loaded together in one piece, because
    each load names the blank nodes it reads afresh (a node split across two loads would become
    two). The copy is then the same graph, its blank nodes named differently from the memory
    store's, which no cache can see: caches name entities, and entities are IRIs. When some
    entity is a blank node, the blank-node quads travel as terms instead (``bulk_extend``: names
    kept, but it holds the GIL, about 5 s for 600k quads).

    Written into a scratch directory, marked complete and renamed into place; the interpreter
    waits for the thread before exiting; a failure costs only the cache.
    """
    directory.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    _copying.add(scratch)
    plain, blank = _dumps_of(scratch)
    try:
        disk = ox.Store(str(scratch))
        # Every user graph was merged into the default graph (userdata.load_file): triples say all.
        store.query(_PLAIN).serialize(output=str(plain), format=ox.RdfFormat.N_TRIPLES)
        _load_in_chunks(disk, plain)
        plain.unlink()
        store.query(_BLANK).serialize(output=str(blank), format=ox.RdfFormat.N_TRIPLES)
        if not store.query(_LABELLED_BLANK):
            disk.bulk_load(path=str(blank), format=ox.RdfFormat.N_TRIPLES)
        else:  # names kept: ox.parse reads labels as written, and they were the store's own
            quads = ox.parse(path=str(blank), format=ox.RdfFormat.N_TRIPLES)
            while chunk := list(itertools.islice(quads, PERSIST_CHUNK or None)):
                disk.bulk_extend(chunk)
        disk.flush()
        del disk  # closes RocksDB: the directory must not move while it is open
        write_bytes(scratch / _COMPLETE, STORE_FORMAT.encode())
        try:
            os.rename(scratch, directory)
            fsync_directory(directory.parent)
        except OSError:  # another process published the same content first: theirs is as good
            pass
    except (OSError, ValueError, SyntaxError) as error:
        log(f"could not cache the store ({' '.join(str(error).split())[:120]})")
    finally:
        _copying.discard(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
        plain.unlink(missing_ok=True)
        blank.unlink(missing_ok=True)


def _dumps_of(scratch: Path) -> tuple[Path, Path]:
    """The N-Triples files beside a copy's scratch directory: (plain triples, blank-node ones)."""
    return scratch.with_name(scratch.name + ".plain.nt"), scratch.with_name(scratch.name + ".blank.nt")


#: The triples without a blank node, and those with one (both serialized by Oxigraph, no GIL).
_PLAIN = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(!isBLANK(?s) && !isBLANK(?o)) }"
_BLANK = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(isBLANK(?s) || isBLANK(?o)) }"
#: Bytes per line of N-Triples, about: turns ``PERSIST_CHUNK`` (quads) into a read size.
_LINE_BYTES = 120


def _load_in_chunks(disk: ox.Store, path: Path) -> None:
    """Bulk-load the N-Triples file ``path`` into ``disk`` in pieces of about ``PERSIST_CHUNK``
    lines, cut at line ends (a few Python calls per piece: the parsing is Oxigraph's)."""
    size = PERSIST_CHUNK * _LINE_BYTES if PERSIST_CHUNK > 0 else -1
    rest = b""
    with path.open("rb") as source:
        while block := source.read(size):
            block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            if cut:
                disk.bulk_load(input=block[:cut], format=ox.RdfFormat.N_TRIPLES)
    if rest.strip():
        disk.bulk_load(input=rest, format=ox.RdfFormat.N_TRIPLES)


#: Scratch directories of on-disk copies being written (see :func:`finish_copies`).
_copying: set[Path] = set()
_COPY_THREAD = "stackgraph-persist"
#: Seconds the copy may still take after the answer before the wait is announced.
COPY_QUIET_SECONDS = 1.0


def finish_copies() -> None:
    """Wait for the on-disk copy a first start writes after answering, saying so on stderr.

    The copy takes about as long again as the first answer at 100k entities; without a word the
    command seemed to hang after answering. Ctrl-C skips it: the half-written copy is removed
    (it was never marked complete, so no later start would trust it) and the next start writes
    it again.
    """
    pending = [t for t in threading.enumerate() if t.name == _COPY_THREAD and t.is_alive()]
    try:
        for thread in pending:
            thread.join(COPY_QUIET_SECONDS)  # a small store's copy ends unannounced
        if any(thread.is_alive() for thread in pending):
            log("saving the store on disk so that later starts are fast (Ctrl-C skips this)")
        for thread in pending:
            thread.join()
    except KeyboardInterrupt:
        for scratch in list(_copying):
            shutil.rmtree(scratch, ignore_errors=True)
            for dump in _dumps_of(scratch):
                dump.unlink(missing_ok=True)
        log("skipped saving the store; the next start saves it")
        sys.stderr.flush()
        os._exit(130)  # the copy's thread is inside Oxigraph and cannot be stopped; nothing else runs


class _Checking:
    """The checks of a first start on their own thread, and the on-disk copy on another.

    The checks are SPARQL evaluated without the GIL, so the caller builds its catalog meanwhile
    and calls :meth:`wait` before answering. The copy starts once the checks have passed (data
    that fails them is never copied), at a lower CPU priority (Linux), so that it takes what the
    first answer does not need.
    """

    def __init__(self, check: Callable[[], None], store: ox.Store, directory: Path) -> None:
        self._check = check
        self._done = threading.Event()
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name="stackgraph-check").start()
        threading.Thread(target=self._persist, args=(store, directory), name=_COPY_THREAD).start()

    def _run(self) -> None:
        try:
            self._check()
        except BaseException as error:  # raised again by wait(), in the thread that answers
            self._error = error
        finally:
            self._done.set()

    def _persist(self, store: ox.Store, directory: Path) -> None:
        with contextlib.suppress(OSError, AttributeError):  # a nicer thread: best effort
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        # After the checks, not beside them: on two cores the checks and the catalog build have
        # one each, and a copy running alongside slowed both (at 100k entities: first answer
        # 18.9 s -> 14.9 s, exit 35.5 s -> 29.2 s once the copy waited).
        if self.passed():
            _persist(store, directory)

    def passed(self) -> bool:
        """Whether the checks passed (waits for them)."""
        self._done.wait()
        return self._error is None

    def wait(self) -> None:
        """Return once the checks have passed; raise what they raised (DataFileError) if not."""
        self._done.wait()
        if self._error is not None:
            raise self._error


def open_with_data(
    data_paths: list[Path], check_data: bool = True, background_checks: bool = False
) -> LoadedGraph:
    """The built-in graph plus ``data_paths``. Raises DataFileError (one line) for a bad file.

    With ``background_checks``, a first start with large files returns before the shapes are
    checked: the caller must call the result's ``wait_checked()`` before using any answer (the
    engine does, once its catalog is built), which raises the DataFileError a check found.
    """
    for path in data_paths:
        if not path.is_file():
            raise DataFileError(path, "no such file")
        userdata.rdf_format(path)
    digest = content_hash(data_paths)
    size = sum(p.stat().st_size for p in data_paths)
    progress = size >= PROGRESS_MIN_BYTES
    names = [str(p) for p in data_paths]
    if check_data and size >= DISK_STORE_MIN_BYTES:
        directory = cache_root() / "stores" / f"{digest}-{STORE_FORMAT}"
        store = _open_cached(directory)
        if store is not None:
            return LoadedGraph(graph=as_graph(store), content_hash=digest, data_files=names)
        # First start: load and check in memory (2-3x faster than on RocksDB), answer from memory,
        # and write the on-disk store for later starts once the checks have passed.
        store = ox.Store()
        checking = _Checking(_load(store, data_paths, progress), store, directory)
        if not background_checks:
            checking.wait()
        return LoadedGraph(
            graph=as_graph(store), content_hash=digest, data_files=names, wait_checked=checking.wait
        )
    store = ox.Store()
    marker = cache_root() / "validated" / digest
    check = check_data and not marker.is_file()
    _fill(store, data_paths, check=check, progress=progress)
    if check:
        with contextlib.suppress(OSError):  # an unwritable cache only costs checking again next time
            write_bytes(marker, b"conforms\n")
    return LoadedGraph(graph=as_graph(store), content_hash=digest, data_files=names)


__all__ = ["DISK_STORE_MIN_BYTES", "as_graph", "content_hash", "open_with_data"]
