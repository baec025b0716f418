"""The second bad-input campaign (issue 40), re-runnable: random variants of each class the CLI
reaches, each run and judged against what the class promises (docs/design/hardening.md, "The
second campaign"). Classes 2, 3 and 9 (the extender) are driven by the `extender_verbs` fuzz
target and the extender's unit tests instead; 7 and 8 (loadtest's streams, the tokenizer) and 10
(the Python API) have their own tests. Class 4 plays hostile clients against `probe --listen` and
`kv serve` (the extender's server is the same one, net::HttpServer; its own tests play them too);
class 5 plays hostile servers against `loadtest` and `diagnose --metrics`.

The suite runs a seeded sample (RUNS per class, default 4). By hand, with counts per class:

    .venv/bin/python tests/cli/test_campaign_2.py --runs 100 [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
JOB = (REPO / "examples" / "default-job.yaml").read_text()
RUNS = int(os.environ.get("CAMPAIGN_RUNS", "4"))


def run(binary, args, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, timeout=timeout)


def fails_cleanly(r: subprocess.CompletedProcess, codes=(1,)) -> bool:
    err = r.stderr.decode("utf-8", "strict")  # raises on invalid UTF-8: a failure
    return (r.returncode in codes and err.startswith("error:") and err.count("\n") == 1
            and len(err) < 4096 and not any(c < " " for c in err[:-1]))


# Each class: a function (binary, rng, folder) -> (ok, what) for one random variant.

def class_1_output_paths(binary, rng, d):
    """A writer aimed at a random non-regular destination leaves it as it was (or writes
    through a device or a read FIFO)."""
    lifetimes = d / "l.csv"
    lifetimes.write_text("id,lower,upper,size\na,0,2,1000\n")
    writers = [["optimize", REPO / "examples" / "default-job.yaml", "--emit", "fsdp"],
               ["optimize", REPO / "examples" / "default-job.yaml", "--report"],
               ["mem", "plan", "--input", lifetimes, "--offsets-out"]]
    args = rng.choice(writers)
    kind = rng.choice(["fifo", "socket", "link-to-fifo", "link-to-file", "link-chain", "null"])
    dest = d / f"dest-{rng.randrange(1 << 30)}"
    keep = None
    if kind == "fifo" or kind == "link-to-fifo":
        fifo = d / f"fifo-{rng.randrange(1 << 30)}"
        os.mkfifo(fifo)
        if kind == "fifo":
            dest = fifo
        else:
            dest.symlink_to(fifo)
    elif kind == "socket":
        keep = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        keep.bind(str(dest))
    elif kind in ("link-to-file", "link-chain"):
        target = d / f"target-{rng.randrange(1 << 30)}"
        target.write_text("old")
        if kind == "link-chain":
            middle = d / f"middle-{rng.randrange(1 << 30)}"
            middle.symlink_to(target.name)
            dest.symlink_to(middle.name)
        else:
            dest.symlink_to(target)
    else:
        dest.symlink_to("/dev/null")
    before = stat.S_IFMT(os.lstat(dest).st_mode)
    r = run(binary, [*args, dest], timeout=60)
    if keep is not None:
        keep.close()
    after = stat.S_IFMT(os.lstat(dest).st_mode)
    written = kind in ("link-to-file", "link-chain", "null")
    ok = before == after and (r.returncode == 0 if written else fails_cleanly(r))
    if kind in ("link-to-file", "link-chain"):
        ok = ok and os.path.realpath(dest) != str(dest) and pathlib.Path(dest).read_text() != "old"
    return ok, f"{args[0]} at a {kind}: exit {r.returncode}"


FSYNC = "etcd_disk_wal_fsync_duration_seconds_bucket"


def class_6_histograms(binary, rng, d):
    """A malformed histogram is an error with its file and line, never a verdict."""
    bounds = ["0.001", "0.002", "0.008", "0.064", "0.256", "+Inf"]
    counts = sorted(rng.randrange(0, 1000) for _ in bounds)
    lines = [f'{FSYNC}{{le="{b}"}} {c}' for b, c in zip(bounds, counts)]
    how = rng.choice(["duplicate", "nan", "negative", "fall", "no-inf", "no-le", "inf-count"])
    i = rng.randrange(len(lines) - 1)
    if how == "duplicate":
        lines.insert(i + 1, lines[i])
    elif how == "nan":
        lines[i] = f'{FSYNC}{{le="{bounds[i]}"}} NaN'
    elif how == "negative":
        lines[i] = f'{FSYNC}{{le="{bounds[i]}"}} -{rng.randrange(1, 99)}'
    elif how == "inf-count":
        lines[i] = f'{FSYNC}{{le="{bounds[i]}"}} +Inf'
    elif how == "fall":
        lines[i] = f'{FSYNC}{{le="{bounds[i]}"}} {counts[-1] + 1 + rng.randrange(100)}'
    elif how == "no-inf":
        lines.pop()
    else:
        lines[i] = f'{FSYNC}{{bucket="{bounds[i]}"}} {counts[i]}'
    f = d / f"m-{rng.randrange(1 << 30)}.txt"
    f.write_text("\n".join(lines) + "\n")
    r = run(binary, ["diagnose", "--metrics", f])
    ok = fails_cleanly(r) and f"({f}:" in r.stderr.decode() and r.stdout == b""
    return ok, f"{how}: exit {r.returncode} {r.stderr[:120]!r}"


def class_11_tiny_costs(binary, rng, d):
    """Inputs that divide past a double are an error, never inf, null or NaN with exit 0."""
    tiny = rng.choice(["1e-310", "4.9e-324", "2.2e-308", "1e-320", "5e-324"])
    field = rng.choice(["utilization", "tokens_per_s_per_gpu"])
    extra = f"{field}: {tiny}\n" + ("tokens_per_request: 10\n" if field != "utilization" else "")
    f = d / f"t-{rng.randrange(1 << 30)}.yaml"
    f.write_text("gpu: H100-SXM\ngpus: 8\n" + extra)
    r = run(binary, ["cost", "tco", "--input", f, "-o", "json"])
    out = r.stdout.decode()
    ok = (fails_cleanly(r, (1, 2)) and out == "") or (
        r.returncode == 0 and not any(w in out for w in ("inf", "null", "NaN")))
    return ok, f"{field}={tiny}: exit {r.returncode}"


def class_12_second_document(binary, rng, d):
    """A second YAML document anywhere after the first is an error at its line."""
    lines = JOB.splitlines()
    cut = rng.randrange(len(lines) // 2, len(lines) + 1)
    marker = rng.choice(["---", "--- ", "...\nname: x", "---\n", "--- {a: 1}"])
    # Only cut between top-level keys, so that the first document stays whole.
    while cut < len(lines) and lines[cut].startswith((" ", "#")):
        cut += 1
    text = "\n".join(lines[:cut]) + "\n" + marker + "\n" + "\n".join(lines[cut:]) + "\n"
    f = d / f"j-{rng.randrange(1 << 30)}.yaml"
    f.write_text(text)
    r = run(binary, ["optimize", f])
    ok = fails_cleanly(r) and b"second YAML document" in r.stderr or (
        fails_cleanly(r) and b"missing required" in r.stderr)  # cut before a required section
    return ok, f"{marker!r} at line {cut + 1}: {r.stderr[:100]!r}"


def class_13_14_echo(binary, rng, d):
    """An error quoting a huge or control-laden value is one bounded, printable UTF-8 line."""
    junk = rng.choice([b"\x1b[2J", b"\x00", b"\xff\xfe", b"\xe6\x97", b"\x07\x08", b"\xc2\x85",
                       b"\r", b""])
    value = b"k" * rng.choice([10, 5000, 2_000_000]) + junk
    key = rng.choice([b"framework", b"name"])
    text = JOB.encode()
    if key == b"framework":
        text = text.replace(b"framework: fsdp", b"framework: \"" +
                            value.replace(b"\\", b"").replace(b"\"", b"") + b"\"")
    else:
        text = text.replace(b"framework: fsdp", b"framework: " + value[:3000].replace(b"\n", b""))
    f = d / f"e-{rng.randrange(1 << 30)}.yaml"
    f.write_bytes(text)
    r = run(binary, ["optimize", f])
    try:
        ok = fails_cleanly(r)
    except UnicodeDecodeError:
        ok = False
    return ok, f"{len(value)} bytes + {junk!r}: exit {r.returncode} {r.stderr[:80]!r}"


def class_15_duplicate_columns(binary, rng, d):
    """A CSV column named twice is an error at the header line."""
    cols = ["throughput", "memory", "power"]
    dup = rng.choice(cols)
    header = cols + [dup]
    rng.shuffle(header)
    rows = "".join(",".join(str(rng.randrange(100)) for _ in header) + "\n" for _ in range(5))
    f = d / f"p-{rng.randrange(1 << 30)}.csv"
    f.write_text(",".join(header) + "\n" + rows)
    r = run(binary, ["cost", "pareto", "--input", f, "--objectives",
                     "throughput:max,memory:min"])
    ok = fails_cleanly(r) and f"({f}:1)" in r.stderr.decode()
    return ok, f"{header}: exit {r.returncode}"


def class_19_listen(binary, rng, d):
    """A malformed --listen or --served-model-name is a usage error (exit 2) naming the flag."""
    bad = rng.choice(["nonsense", ":", "127.0.0.1:", "127.0.0.1:-1", "127.0.0.1:65536",
                      "127.0.0.1:8x", "[::1", "host:99999999999999999999", ""])
    which = rng.choice(["kv", "scheduler", "probe", "name"])
    if which == "kv":
        args, flag = ["kv", "serve", "--model", "m", "--tokenizer", "t", "--listen", bad], "--listen"
    elif which == "scheduler":
        args, flag = ["scheduler", "serve", "--listen", bad], "--listen"
    elif which == "probe":
        args, flag = ["probe", "--listen", bad], "--listen"
    else:
        name = rng.choice(["", "a\tb", "\x1b[31m", "x" * 300])
        args, flag = ["kv", "serve", "--model", "m", "--tokenizer", "t", "--served-model-name",
                      name], "--served-model-name"
    r = run(binary, args)
    ok = r.returncode == 2 and flag.encode() in r.stderr
    return ok, f"{args[-2:]!r}: exit {r.returncode}"


def _data_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("SEEDANCE_DATA_DIR", REPO.parent / "shared" / "data"))


def _start_server(binary, rng):
    """`probe --listen` or (when the tiny Llama is there) `kv serve` on a free port: (process,
    port, a path that answers GET with 200)."""
    tiny = _data_dir() / "tiny-llama"
    if rng.random() < 0.5 and (tiny / "aidreams260K.bin").exists():
        args = ["kv", "serve", "--model", tiny / "aidreams260K.bin", "--tokenizer",
                tiny / "tok512.bin", "--listen", "127.0.0.1:0"]
        pattern, path = r"http://127\.0\.0\.1:(\d+)/v1", "/v1/models"
    else:
        args = ["probe", "--listen", "127.0.0.1:0", "--sample-interval", "200ms"]
        pattern, path = r"\(port (\d+)\)", "/metrics"
    proc = subprocess.Popen([str(binary), *map(str, args)], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    m = re.search(pattern, line)
    if not m:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{args[0]} did not start: {line!r}")
    return proc, int(m.group(1)), path


def _exchange(port, data: bytes, timeout=10.0) -> bytes:
    """Sends `data` (from a thread, so a server that answers early is read) and reads until the
    server closes or `timeout`."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    def send():
        try:
            s.sendall(data)
        except OSError:
            pass
    t = threading.Thread(target=send)
    t.start()
    got = b""
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except OSError:
        pass
    s.close()
    t.join()
    return got


def _get_status(port, path) -> int:
    got = _exchange(port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    .encode())
    m = re.match(rb"HTTP/1\.1 (\d{3})", got)
    return int(m.group(1)) if m else 0


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def class_4_hostile_clients(binary, rng, d):
    """A hostile client gets the promised refusal, and the server still answers, within its
    memory, afterwards."""
    proc, port, path = _start_server(binary, rng)
    kind = rng.choice(["chunked body", "many headers", "huge head", "length and chunked",
                       "two lengths", "body over the limit", "pipelined", "idle crowd",
                       "slowloris"])
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\n"
    ok, what = False, kind
    try:
        rss_before = _rss_mib(proc.pid)
        if kind == "chunked body":
            got = _exchange(port, (head + "Transfer-Encoding: chunked\r\n\r\n").encode()
                            + b"100000\r\n" + b"a" * (rng.randrange(1, 8) << 20))
            ok = got.startswith(b"HTTP/1.1 501")
        elif kind == "many headers":
            n = rng.choice([65, 1000, 100_000])
            got = _exchange(port, (f"GET {path} HTTP/1.1\r\nHost: x\r\n" + "X-A: b\r\n" * n
                                   + "\r\n").encode())
            ok = got.startswith(b"HTTP/1.1 431")
        elif kind == "huge head":
            got = _exchange(port, (f"GET {path} HTTP/1.1\r\nHost: x\r\nX-A: " + "a" * 65536
                                   + "\r\n\r\n").encode())
            ok = got.startswith(b"HTTP/1.1 431")
        elif kind == "length and chunked":
            order = ["Content-Length: 5", "Transfer-Encoding: chunked"]
            rng.shuffle(order)
            got = _exchange(port, (head + "\r\n".join(order) + "\r\n\r\nhello").encode())
            ok = got.startswith(b"HTTP/1.1 400")
        elif kind == "two lengths":
            got = _exchange(port, (head + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n"
                                   "hello!").encode())
            ok = got.startswith(b"HTTP/1.1 400")
        elif kind == "body over the limit":
            got = _exchange(port, (head + f"Content-Length: {rng.choice([10**7, 10**12])}\r\n\r\n"
                                   ).encode() + b"x" * 4096)
            ok = got.startswith(b"HTTP/1.1 413")
        elif kind == "pipelined":
            n = rng.randrange(2, 300)
            one = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n"
            got = _exchange(port, (one * (n - 1) + one.replace("\r\n\r\n", "\r\nConnection: close"
                                                              "\r\n\r\n")).encode())
            ok = got.count(b"HTTP/1.1 200 ") == n == got.count(b"HTTP/1.1 ")
            what += f" x{n}: {got.count(b'HTTP/1.1 200 ')} answered"
        elif kind == "idle crowd":
            crowd = [socket.create_connection(("127.0.0.1", port)) for _ in
                     range(rng.choice([100, 400]))]
            ok = _get_status(port, path) == 200
            for c in crowd:
                c.close()
        else:  # slowloris: a byte every 50 ms; the request deadline (5 s for kv, 2 s for probe)
            s = socket.create_connection(("127.0.0.1", port))
            s.settimeout(0.05)
            t0, closed = time.monotonic(), False
            request = f"GET {path} HTTP/1.1\r\nHost: x\r\n".encode()
            while time.monotonic() - t0 < 12 and not closed:
                try:
                    s.send(request[int((time.monotonic() - t0) * 20) % len(request):][:1])
                    if s.recv(1024) == b"":
                        closed = True
                except socket.timeout:
                    pass
                except OSError:
                    closed = True
            s.close()
            ok = closed
            what += f": closed after {time.monotonic() - t0:.1f} s"
        alive = _get_status(port, path)
        grown = _rss_mib(proc.pid) - rss_before
        ok = ok and alive == 200 and grown < 64
        what += f"; then GET {alive}, RSS +{grown:.1f} MiB"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    return ok, what


def _hostile_http_server(behaviour: str):
    """A server that answers every connection with `behaviour`; (port, stop)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stopping = threading.Event()

    def answer(conn):
        conn.settimeout(0.5)
        try:
            conn.recv(65536)
            if behaviour == "endless fields":
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                while not stopping.is_set():
                    conn.sendall(b"X-A: " + b"a" * 100 + b"\r\n")
            elif behaviour == "one endless field":
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-A: ")
                while not stopping.is_set():
                    conn.sendall(b"a" * 4096)
            elif behaviour == "endless body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
                while not stopping.is_set():
                    conn.sendall(b"a 1\n" * 1024)
            elif behaviour == "endless chunks":
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                while not stopping.is_set():
                    conn.sendall(b"1000\r\n" + b"a" * 4096 + b"\r\n")
            elif behaviour == "endless chunk size":
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                while not stopping.is_set():
                    conn.sendall(b"1" * 4096)
            elif behaviour == "huge length":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999\r\n\r\n")
                while not stopping.is_set():
                    conn.sendall(b"a" * 4096)
            else:  # drip: a valid answer, one byte every 100 ms
                for b in b"HTTP/1.1 200 OK\r\nContent-Length: 200\r\n\r\n" + b"a" * 200:
                    if stopping.is_set():
                        break
                    conn.sendall(bytes([b]))
                    time.sleep(0.1)
        except OSError:
            pass
        finally:
            conn.close()

    def serve():
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=answer, args=(conn,), daemon=True).start()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], stopping


def class_5_hostile_servers(binary, rng, d):
    """A client of a hostile server fails cleanly, by its deadline, within bounded memory."""
    behaviour = rng.choice(["endless fields", "one endless field", "endless body",
                            "endless chunks", "endless chunk size", "huge length", "drip"])
    port, stopping = _hostile_http_server(behaviour)
    if rng.random() < 0.5:
        args = ["loadtest", "--url", f"http://127.0.0.1:{port}/", "--warmup-s", "0", "--level-s",
                "1", "--concurrency", "1", "--timeout-s", "2"]
        limit = 2 + 5
    else:
        args = ["diagnose", "--metrics", f"http://127.0.0.1:{port}/metrics"]
        limit = 10 + 5  # the scrape's deadline is 10 s
    t0 = time.monotonic()
    proc = subprocess.Popen([str(binary), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    killer = threading.Timer(limit + 30, proc.kill)
    killer.start()
    err = proc.stderr.read()
    # Reaped here rather than by Popen, for the kernel's account of the child's peak memory.
    _, status, usage = os.wait4(proc.pid, 0)
    killer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - t0
    stopping.set()
    peak_mib = usage.ru_maxrss / 1024
    r = subprocess.CompletedProcess(args, proc.returncode, b"", err)
    ok = fails_cleanly(r) and took < limit and peak_mib < 512
    return ok, (f"{behaviour} -> {args[0]}: exit {proc.returncode} in {took:.1f} s, peak "
                f"{peak_mib:.0f} MiB, {err[:120]!r}")


CLASSES = {
    "1 output paths": class_1_output_paths,
    "4 hostile clients": class_4_hostile_clients,
    "5 hostile servers": class_5_hostile_servers,
    "6 malformed histograms": class_6_histograms,
    "11 tiny cost inputs": class_11_tiny_costs,
    "12 second YAML document": class_12_second_document,
    "13/14 echoed input": class_13_14_echo,
    "15 duplicate CSV columns": class_15_duplicate_columns,
    "19 --listen and names": class_19_listen,
}


@pytest.mark.parametrize("name", list(CLASSES))
def test_campaign_sample(seedancectl, tmp_path, name):
    rng = random.Random(f"{name}-{RUNS}")
    failures = []
    for _ in range(RUNS):
        ok, what = CLASSES[name](seedancectl, rng, tmp_path)
        if not ok:
            failures.append(what)
    assert not failures, failures


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100, help="variants per class")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "seedancectl"))
    a = ap.parse_args()
    total = failed = 0
    for name, fn in CLASSES.items():
        rng = random.Random(f"{name}-{a.seed}")
        bad = []
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(a.runs):
                ok, what = fn(a.binary, rng, pathlib.Path(tmp))
                if not ok:
                    bad.append(what)
        total += a.runs
        failed += len(bad)
        print(f"{name:28s} {a.runs - len(bad):5d} of {a.runs} as promised"
              + (f"; first failure: {bad[0]}" if bad else ""))
    print(f"all classes: {total - failed} of {total} as promised")
    sys.exit(1 if failed else 0)
