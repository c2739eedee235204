"""Reliability of the directory source, with figures printed (run with -s to see them).

- >= 500 generated malformed or hostile tool files -> 0 crashes, 0 good tools lost;
- a file saved in chunks while watched -> 0 half-written versions published;
- searches and calls in threads during 1,000 reloads -> 0 torn reads.

Out of scope (the loader runs tool files in-process, like any Python import): files that
deliberately end the process (``os._exit``) or rewrite interpreter state (``sys.modules``
surgery, monkeypatching the package), and files whose import never returns.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_until  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry, RegistryChanged
from nexus_jupyter.sources.directory import DirectorySource

GOOD = "from nexus_jupyter import tool\n\n@tool\ndef {name}(x: int = 0) -> int:\n    'Good tool {name}.'\n    return {value} + x\n"
HEADER = "from nexus_jupyter import tool\n"

HOSTILE_BODIES = [
    "raise ValueError('nope')",
    "raise SystemExit({n})",
    "raise KeyboardInterrupt",
    "raise GeneratorExit",
    "raise MemoryError",
    "import not_a_module_{n}",
    "from nexus_jupyter import does_not_exist_{n}",
    "def f():\n    f()\nf()",
    "class E(BaseException):\n    pass\nraise E('custom')",
    "1 / 0",
    "@tool(permission='root')\ndef bad_perm_{n}() -> int:\n    return 1",
    "@tool(name='bad name {n}!')\ndef bad_name() -> int:\n    return 1",
    "@tool(timeout=-1)\ndef bad_timeout_{n}() -> int:\n    return 1",
    "@tool\ndef star_{n}(*args) -> int:\n    return 1",
    "@tool\ndef kw_{n}(**kwargs) -> int:\n    return 1",
    "lam_{n} = tool(lambda a: a)",
    "@tool(name='dup_{n}')\ndef a() -> int:\n    return 1\n@tool(name='dup_{n}')\ndef b() -> int:\n    return 2",
    "class Evil:\n    def __getattr__(self, name):\n        raise RuntimeError(name)\nevil_{n} = Evil()",
    "class Liar:\n    __nexus_tool__ = 'not meta'\n    def __call__(self):\n        return 1\nliar_{n} = Liar()",
    "x = " + "(" * 300 + "1" + ")" * 300,
    "def (:",
    "if True:\npass",
    "\tdef x():\n  return 1",
    "@tool\nclass NotAFunction_{n}:\n    pass",
    "import sys\nsys.exit()",
    "raise StopIteration",
    "assert False, 'assert {n}'",
    "exec('def (')",
    "@tool\ndef ok_{n}(a: int) -> int:\n    return a\nraise RuntimeError('after a good def')",
]


def hostile_files(count: int, seed: int = 4) -> Iterator[tuple[str, bytes]]:
    """``count`` (file name, content) pairs: templated failures, random bytes, NUL bytes,
    invalid UTF-8, random truncations of good files, and a huge file."""
    rng = random.Random(seed)
    good = GOOD.format(name="trunc", value=1).encode()
    for n in range(count):
        kind = n % 6
        if kind in (0, 1, 2):
            body = rng.choice(HOSTILE_BODIES).format(n=n)
            yield f"hostile_{n}.py", (HEADER + body + "\n").encode()
        elif kind == 3:
            yield f"bytes_{n}.py", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
        elif kind == 4:
            cut = rng.randrange(1, len(good))
            yield f"trunc_{n}.py", good[:cut].replace(b"trunc", f"trunc_{n}".encode())
        elif n % 60 == 5:
            yield f"huge_{n}.py", b"# " + b"x" * 2_100_000 + b"\n"
        else:
            yield f"nul_{n}.py", HEADER.encode() + b"\x00\xff\xfe" + bytes([rng.randrange(256)])


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(search="keyword")
    yield registry
    registry.close()


@pytest.mark.slow
def test_hostile_files_never_crash_the_watcher_nor_lose_good_tools(
    reg: Registry, tmp_path: Path
) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    good = {f"good_{i}": i * 10 for i in range(5)}
    for name, value in good.items():
        (folder / f"{name}.py").write_text(GOOD.format(name=name, value=value))
    source = reg.watch(folder)
    assert source.wait_ready(10)
    files = list(hostile_files(520))
    for name, content in files:
        (folder / name).write_bytes(content)
    # break the good files too: their last good versions must stay live
    for name in list(good)[:3]:
        (folder / f"{name}.py").write_text(HEADER + "raise RuntimeError('broken save')\n")
    wait_until(
        reg,
        lambda: (
            len(source.status["files"]) == len(files) + len(good)
            and all(source.status["files"][f"{n}.py"]["status"] == "error" for n in list(good)[:3])
        ),
    )
    status = source.status["files"]
    lost = [n for n, v in good.items() if reg.call_sync(n, {"x": 1}).structured != v + 1]
    errors = sum(1 for f in status.values() if f["status"] == "error")
    loaded = sorted(n for f in status.values() if f["status"] == "ok" for n in f["tools"])
    # the watcher is still alive: a fresh save is picked up
    (folder / "good_0.py").write_text(GOOD.format(name="good_0", value=1000))
    wait_until(reg, lambda: reg.call_sync("good_0", {}).structured == 1000)
    print(
        f"\nhostile files: {len(files)} written, {errors} with an error status, "
        f"{len(loaded) - len(good)} extra tools loaded; crashes: 0; good tools lost: {len(lost)}"
    )
    assert lost == [] and errors >= len(files) * 0.8
    assert all(f["message"] for f in status.values() if f["status"] == "error")


@pytest.mark.slow
def test_a_file_saved_in_chunks_never_publishes_a_half_version(
    reg: Registry, tmp_path: Path
) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    path = folder / "chunky.py"
    doc = "\n".join(
        f"    Line {i} of a long description that makes the file several KB." for i in range(80)
    )
    template = 'from nexus_jupyter import tool\n\n@tool\ndef chunky() -> int:\n    """Chunky.\n\n{doc}\n    """\n    return {v}\n'
    versions = {v: template.format(doc=doc, v=v) for v in range(21)}
    path.write_text(versions[0])
    source = reg.watch(folder)
    assert source.wait_ready(10)
    complete = set(versions.values())
    published: list[str] = []
    half: list[str] = []
    rejected = [0]  # partial contents the source read and refused (status error, tools kept)

    def record(change: RegistryChanged) -> None:
        if source.name in change.sources and source.errors:
            rejected[0] += 1
        if "chunky" in change.updated or "chunky" in change.added:
            text = reg.get("chunky").source_code or ""
            published.append(text)
            if text not in complete:
                half.append(text)

    reg.subscribe(record)
    chunk = 512
    for v in range(1, 21):
        data = versions[v].encode()
        with open(path, "wb") as handle:  # truncate, then write chunk by chunk
            for start in range(0, len(data), chunk):
                handle.write(data[start : start + chunk])
                handle.flush()
                time.sleep(0.001)  # paces the writer like a slow editor (not a wait on the watcher)
        wait_until(reg, lambda: reg.call_sync("chunky", {}).structured == v, timeout=10)
    print(
        f"\nchunked saves: 20 saves of {len(versions[20])} bytes in {chunk}-byte chunks; "
        f"{len(published)} versions published, half-written: {len(half)}, "
        f"partial reads rejected: {rejected[0]}"
    )
    assert half == [] and reg.call_sync("chunky", {}).structured == 20


@pytest.mark.slow
def test_readers_never_see_a_torn_set_during_1000_reloads(reg: Registry, tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    path = folder / "gen.py"

    def text(gen: int) -> str:
        names = ["alpha", "beta"] + (["gamma"] if gen % 2 else [])
        return HEADER + "".join(
            f"\n@tool\ndef {n}(x: int = 0) -> int:\n    'Generation tool {n}.'\n    return {gen}\n"
            for n in names
        )

    path.write_text(text(0))
    # Reloads are driven synchronously (no watcher) so the 1,000 of them stay quick.
    source = reg.add_source(DirectorySource(folder), start=False)
    stop = threading.Event()
    torn: list[str] = []
    reads = [0]

    def snapshot_reader() -> None:
        while not stop.is_set():
            entries = reg.snapshot.entries
            gens = {n: entries[n].tool() for n in ("alpha", "beta", "gamma") if n in entries}
            if len(set(gens.values())) != 1 or ("gamma" in gens) != bool(gens["alpha"] % 2):
                torn.append(f"snapshot {gens}")
            reads[0] += 1
            stop.wait(0.0002)  # let the writer have the GIL now and then

    def call_reader() -> None:
        last = -1
        while not stop.is_set():
            try:
                value = reg.call_sync("alpha", {}).structured
                hits = reg.search("generation tool", limit=5)
            except Exception as exc:  # any failure is a torn read
                torn.append(f"call {type(exc).__name__}: {exc}")
                continue
            if value < last or not {"alpha", "beta"} <= {h.name for h in hits}:
                torn.append(f"call went back {last} -> {value} or search lost tools")
            last = value
            reads[0] += 1
            stop.wait(0.0002)

    threads = [
        threading.Thread(target=t)
        for t in (snapshot_reader, snapshot_reader, call_reader, call_reader)
    ]
    for thread in threads:
        thread.start()
    started = time.perf_counter()
    try:
        for gen in range(1, 1001):
            path.write_text(text(gen))
            assert source.reload_file(path, registry=reg)["status"] == "ok"
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    elapsed = time.perf_counter() - started
    print(
        f"\n1000 reloads in {elapsed:.1f} s with 4 reader threads: {reads[0]} reads, "
        f"torn reads: {len(torn)}"
    )
    assert torn == [] and reg.call_sync("alpha", {}).structured == 1000
