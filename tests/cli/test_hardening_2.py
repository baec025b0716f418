"""Regression tests for the second bad-input campaign (issue 40), one class per section, each with
its smallest case and the variants the class implies. The numbers in the names are the issue's."""

from __future__ import annotations

import os
import pathlib
import stat
import subprocess
import threading

import pytest

from conftest import DATA

REPO = pathlib.Path(__file__).resolve().parents[2]


def run(seedancectl, *args, timeout: int = 120) -> subprocess.CompletedProcess:
    out = subprocess.run([str(seedancectl), *map(str, args)], capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode >= 0, f"killed by signal {-out.returncode}: {args}"
    return out


# 1. Output paths are replaced ---------------------------------------------------------------------

def writers(tmp_path: pathlib.Path):
    """Every command line that writes a file with the atomic writer, as (name, args(dest))."""
    lifetimes = tmp_path / "lifetimes.csv"
    lifetimes.write_text("id,lower,upper,size\na,0,2,1000\nb,1,3,2000\n")
    tco = tmp_path / "tco.yaml"
    tco.write_text("gpu: H100-SXM\ngpus: 16\nutilization: 0.4\n")
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,V100\n")
    pods = tmp_path / "pods.csv"
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                    "creation_time,deletion_time,scheduled_time\n"
                    "p0,1000,1024,1,500,,LS,Running,0,100,0\n")
    job = REPO / "examples" / "default-job.yaml"
    simulate = ["simulate", "--nodes", nodes, "--pods", pods, "--policy", "bestfit", "--seeds",
                "1"]
    return [
        ("optimize --emit", lambda d: ["optimize", job, "--emit", "fsdp", d]),
        ("optimize --report", lambda d: ["optimize", job, "--report", d]),
        ("mem plan --offsets-out", lambda d: ["mem", "plan", "--input", lifetimes,
                                              "--offsets-out", d]),
        ("cost report --out", lambda d: ["cost", "report", "--tco", tco, "--out", d]),
        ("simulate --report", lambda d: [*simulate, "--report", d]),
        ("simulate --placements", lambda d: [*simulate, "--placements", d]),
        ("kv eval --decision-log", lambda d: [
            "kv", "eval", "--model", DATA / "tiny-llama" / "aidreams260K.bin", "--tokenizer",
            DATA / "tiny-llama" / "tok512.bin", "--bits", "adaptive", "--window", "0",
            "--long-context", "32", "--decision-log", d]),
    ]


WRITER_NAMES = ["optimize --emit", "optimize --report", "mem plan --offsets-out",
                "cost report --out", "simulate --report", "simulate --placements",
                "kv eval --decision-log"]


def test_1_the_table_names_every_writer(tmp_path):
    assert [name for name, _ in writers(tmp_path)] == WRITER_NAMES


def entry_type(path: pathlib.Path) -> int:
    return stat.S_IFMT(os.lstat(path).st_mode)


@pytest.mark.parametrize("writer", WRITER_NAMES)
def test_1_a_symlink_is_followed_and_stays_a_link(seedancectl, tmp_path, writer):
    args = dict(writers(tmp_path))[writer]
    target = tmp_path / "real" / "out.txt"
    target.parent.mkdir()
    target.write_text("old")
    target.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to("real/out.txt")
    r = run(seedancectl, *args(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == "real/out.txt"
    assert target.read_text() != "old"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # the replaced file keeps its mode
    assert not [p for p in tmp_path.rglob("*") if ".tmp." in p.name]


@pytest.mark.parametrize("writer", WRITER_NAMES)
def test_1_a_fifo_nobody_reads_is_refused_and_kept(seedancectl, tmp_path, writer):
    args = dict(writers(tmp_path))[writer]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for dest in (fifo, tmp_path / "to_fifo"):
        if dest.name == "to_fifo":
            dest.symlink_to(fifo)
        before = entry_type(dest)
        r = run(seedancectl, *args(dest), timeout=60)  # a hang would time out
        assert r.returncode == 1, (dest, r.stderr)
        assert "error:" in r.stderr and str(dest) in r.stderr and "FIFO" in r.stderr, r.stderr
        assert entry_type(dest) == before
    assert entry_type(fifo) == stat.S_IFIFO


@pytest.mark.parametrize("writer", WRITER_NAMES)
def test_1_a_fifo_with_a_reader_is_written_through(seedancectl, tmp_path, writer):
    args = dict(writers(tmp_path))[writer]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []

    def read():
        with open(fifo, "rb") as f:  # opens once the writer does; reads to its close
            received.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    # The reader's open() blocks until a writer opens the FIFO: retry the command until it does.
    for _ in range(100):
        r = run(seedancectl, *args(fifo))
        if r.returncode == 0:
            break
        assert "nobody is reading" in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    reader.join(timeout=30)
    assert received and len(received[0]) > 0
    assert entry_type(fifo) == stat.S_IFIFO


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
@pytest.mark.parametrize("writer", WRITER_NAMES)
def test_1_a_character_device_is_written_through_not_replaced(seedancectl, tmp_path, writer):
    args = dict(writers(tmp_path))[writer]
    null = tmp_path / "null"  # a second /dev/null (major 1, minor 3), so the real one is never at risk
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    r = run(seedancectl, *args(null))
    assert r.returncode == 0, r.stderr
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize("writer", WRITER_NAMES)
def test_1_a_socket_is_refused_and_kept(seedancectl, tmp_path, writer):
    import socket
    args = dict(writers(tmp_path))[writer]
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(path))
        r = run(seedancectl, *args(path))
        assert r.returncode in (1, 2), r.stderr
        assert "error" in r.stderr.lower() and str(path) in r.stderr, r.stderr
        assert entry_type(path) == stat.S_IFSOCK


# 6. diagnose says "clean" when the data are broken ------------------------------------------------

FSYNC = "etcd_disk_wal_fsync_duration_seconds_bucket"
SLOW_DISK = "".join(f'{FSYNC}{{le="{le}"}} {n}\n' for le, n in
                    (("0.001", 0), ("0.008", 0), ("0.064", 500), ("+Inf", 500)))


@pytest.mark.parametrize("broken,line,words", [
    (SLOW_DISK.replace(f'{FSYNC}{{le="0.001"}} 0\n', f'{FSYNC}{{le="0.001"}} 0\n' * 2), 2,
     "appears twice"),
    (SLOW_DISK.replace(f'{FSYNC}{{le="0.008"}} 0', f'{FSYNC}{{le="0.008"}} NaN'), 2, "finite"),
    (SLOW_DISK.replace(f'{FSYNC}{{le="0.008"}} 0', f'{FSYNC}{{le="0.008"}} 900'), 3, "fall"),
    (SLOW_DISK.replace(f'{FSYNC}{{le="+Inf"}} 500\n', ""), 1, "+Inf"),
])
def test_6_a_malformed_histogram_is_an_error_with_its_line(seedancectl, tmp_path, broken, line,
                                                           words):
    good = tmp_path / "good.txt"
    good.write_text(SLOW_DISK)
    assert "etcd-slow-disk" in run(seedancectl, "diagnose", "--metrics", good).stdout
    bad = tmp_path / "etcd.txt"
    bad.write_text(broken)
    r = run(seedancectl, "diagnose", "--metrics", bad)
    assert r.returncode == 1 and r.stdout == ""
    assert f"({bad}:{line})" in r.stderr and words in r.stderr, r.stderr


def test_6_no_observations_is_undetermined_not_clean(seedancectl, tmp_path):
    empty = tmp_path / "etcd.txt"
    empty.write_text(SLOW_DISK.replace(" 500", " 0"))
    r = run(seedancectl, "diagnose", "--metrics", empty, "-o", "json")
    assert r.returncode == 1, r.stderr
    import json
    report = json.loads(r.stdout)
    assert report["summary"].startswith("undetermined"), report["summary"]
    assert report["findings"] == {}
    assert any(m["undetermined"] for m in report["measurements"])


# 11. Tiny cost inputs ------------------------------------------------------------------------------

@pytest.mark.parametrize("extra", ["utilization: 1e-310\n", "utilization: 4.9e-324\n",
                                   "tokens_per_s_per_gpu: 1e-320\ntokens_per_request: 10\n"])
def test_11_a_cost_that_is_not_finite_is_an_error(seedancectl, tmp_path, extra):
    spec = tmp_path / "tco.yaml"
    spec.write_text("gpu: H100-SXM\ngpus: 8\n" + extra)
    r = run(seedancectl, "cost", "tco", "--input", spec, "-o", "json")
    assert r.returncode in (1, 2) and r.stdout == "", r.stdout
    assert "error:" in r.stderr and "inf" not in r.stdout


# 12. A second YAML document --------------------------------------------------------------------------

@pytest.mark.parametrize("second,offset", [("---\nname: other\n", 1), ("...\nname: other\n", 2),
                                           ("---\n", 1)])
def test_12_a_second_yaml_document_is_refused_with_its_line(seedancectl, tmp_path, second, offset):
    job = tmp_path / "job.yaml"
    text = (REPO / "examples" / "default-job.yaml").read_text()
    job.write_text(text + second)
    r = run(seedancectl, "optimize", job)
    assert r.returncode == 1, r.stderr
    assert f"({job}:{text.count(chr(10)) + offset})" in r.stderr and "second YAML document" in r.stderr
    tco = tmp_path / "tco.yaml"
    tco.write_text("gpu: H100-SXM\n" + second)
    assert "second YAML document" in run(seedancectl, "cost", "tco", "--input", tco).stderr


# 13, 14. Error lines: bounded, every byte visible ---------------------------------------------------

def test_13_14_error_lines_are_bounded_and_escape_control_bytes(seedancectl, tmp_path):
    text = (REPO / "examples" / "default-job.yaml").read_text()
    job = tmp_path / "job.yaml"
    job.write_bytes(text.replace("framework: fsdp", "framework: " + "k" * 2_000_000 +
                                 "\x1b[2J").encode())
    r = subprocess.run([str(seedancectl), "optimize", str(job)], capture_output=True)
    assert r.returncode == 1
    assert len(r.stderr) < 4096 and b"more bytes" in r.stderr
    ctl = tmp_path / "ctl.yaml"
    ctl.write_bytes(text.replace("framework: fsdp", "framework: \"a\\x1b[31m\\0b\\x85\"").encode())
    r = subprocess.run([str(seedancectl), "optimize", str(ctl)], capture_output=True)
    assert r.returncode == 1
    line = r.stderr.decode("utf-8")  # valid UTF-8 whatever the input held
    assert "\x1b" not in line and "\x00" not in line and "\\x1b[31m" in line, line


# 15. Two columns with one name ------------------------------------------------------------------------

def test_15_pareto_refuses_a_column_named_twice(seedancectl, tmp_path):
    points = tmp_path / "p.csv"
    points.write_text("throughput,memory,throughput\n1,2,3\n4,5,6\n")
    r = run(seedancectl, "cost", "pareto", "--input", points, "--objectives",
            "throughput:max,memory:min")
    assert r.returncode == 1 and f"({points}:1)" in r.stderr and "appears twice" in r.stderr


# 19. --listen and --served-model-name ---------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["kv", "serve", "--model", "m", "--tokenizer", "t", "--listen", "nonsense"],
    ["kv", "serve", "--model", "m", "--tokenizer", "t", "--listen", "127.0.0.1:70000"],
    ["kv", "serve", "--model", "m", "--tokenizer", "t", "--served-model-name", ""],
    ["kv", "serve", "--model", "m", "--tokenizer", "t", "--served-model-name", "a\tb"],
    ["scheduler", "serve", "--listen", "127.0.0.1:"],
    ["probe", "--listen", "host-without-port"],
])
def test_19_malformed_listen_and_names_are_usage_errors(seedancectl, args):
    r = run(seedancectl, *args)
    assert r.returncode == 2, (args, r.stderr)
    flag = args[-2]
    assert flag in r.stderr, r.stderr


# 7. loadtest --completions trusts the stream ----------------------------------------------------

class _Streams:
    """An OpenAI-shaped streaming endpoint: the first request (loadtest's own check) and every
    even one get a good stream; the others get `bad`, one malformed variant, then [DONE]."""

    GOOD = [b'{"choices":[{"text":"Once","index":0}]}',
            b'{"choices":[],"usage":{"completion_tokens":1}}']

    def __init__(self, bad: list[bytes]) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        count = [0]

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                count[0] += 1
                events = _Streams.GOOD if count[0] % 2 == 1 else bad
                body = b"".join(b"data: " + e + b"\n\n" for e in events) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _loadtest(seedancectl, url: str) -> subprocess.CompletedProcess:
    """Half a second of one client's completions against `url`."""
    return subprocess.run([str(seedancectl), "loadtest", "--completions", "--url", url, "--model",
                           "m", "--concurrency", "1", "--warmup-s", "0", "--level-s", "0.5",
                           "--max-recalibrations", "0", "-o", "json"],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("bad", [
    [b'{"choices":"x"}'],                                  # choices not an array
    [b'{"choices":[{"text":5}]}'],                         # text not a string
    [b'{"choices":["t"]}'],                                # a choice not an object
    [b'{"choices":[],"usage":{"completion_tokens":"7"}}'],  # a count not an integer
    [b'{"choices":[],"usage":[]}'],                         # usage not an object
    [b"not json"],
    [b'{"choices":[{"text":"a"}]}', b'{"choices":{}}'],     # broken after a good chunk
    [],                                                    # nothing but [DONE]
])
def test_7_a_malformed_stream_is_an_error_the_report_counts(seedancectl, bad):
    import json
    server = _Streams(bad)
    try:
        r = _loadtest(seedancectl, server.url)
    finally:
        server.stop()
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr
    level = json.loads(r.stdout)["levels"][0]
    assert level["malformed_streams"] > 0, level
    assert level["errors"] == level["malformed_streams"], level
    # Every other request was malformed: about half the requests are errors, never successes.
    assert abs(level["errors"] - level["steady_requests"] / 2) <= 1, level


def test_7_an_empty_completion_is_not_malformed(seedancectl):
    # Valid chunks without text (a greedy first token that is EOS; a usage chunk of 0 tokens).
    import json
    server = _Streams([b'{"choices":[{"text":"","finish_reason":"stop"}]}',
                       b'{"choices":[],"usage":{"completion_tokens":0}}'])
    try:
        r = _loadtest(seedancectl, server.url)
    finally:
        server.stop()
    assert r.returncode == 0, r.stderr
    level = json.loads(r.stdout)["levels"][0]
    assert level["errors"] == 0 and level["malformed_streams"] == 0, level


def test_1_dev_stdout_is_written_as_the_shell_opened_it(seedancectl, tmp_path):
    # `--emit fsdp /dev/stdout >> log`: appended to what log had, never renamed over it; through a
    # pipe: the reader gets it.
    log = tmp_path / "log"
    log.write_text("kept\n")
    job = REPO / "examples" / "default-job.yaml"
    with open(log, "a") as out:
        r = subprocess.run([str(seedancectl), "optimize", job, "--emit", "fsdp", "/dev/stdout",
                            "-o", "json"], stdout=out, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr
    text = log.read_text()
    assert text.startswith("kept\n") and text.count("\n") > 2, text[:200]
    piped = subprocess.run(f"{seedancectl} optimize {job} --emit fsdp /dev/stdout -o json | wc -c",
                           shell=True, capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and int(piped.stdout) > 100, piped.stderr
