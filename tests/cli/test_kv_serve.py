"""`seedancectl kv serve` (KV-5) driven by real clients: the `openai` Python client from PyPI for
completions and streams, plain sockets for malformed requests and 1,000 concurrent connections.
The server is started on 127.0.0.1 and stopped by its PID with SIGTERM (the drain)."""

from __future__ import annotations

import asyncio
import json
import pathlib
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
from prometheus_check import assert_promtool_accepts  # noqa: E402

openai = pytest.importorskip("openai")

@pytest.fixture(scope="module")
def tiny(data_dir) -> pathlib.Path:
    d = pathlib.Path(data_dir) / "tiny-llama"
    if not (d / "aidreams260K.bin").exists():
        pytest.skip("the tiny Llama model is not in the data directory")
    return d


class Server:
    def __init__(self, seedancectl, tiny: pathlib.Path, *flags: str) -> None:
        self.proc = subprocess.Popen(
            [str(seedancectl), "kv", "serve", "--model", str(tiny / "aidreams260K.bin"),
             "--tokenizer", str(tiny / "tok512.bin"), "--listen", "127.0.0.1:0", *flags],
            stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
        assert m, line
        self.port = int(m.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def client(self, **kw) -> "openai.OpenAI":
        return openai.OpenAI(base_url=self.url + "/v1", api_key="unused", **kw)

    def stop(self) -> tuple[int, str]:
        """SIGTERM by PID; the exit code and what the drain printed."""
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, err


@pytest.fixture
def serve(seedancectl, tiny):
    started: list[Server] = []

    def start(*flags: str) -> Server:
        s = Server(seedancectl, tiny, *flags)
        started.append(s)
        return s
    yield start
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


def post(url: str, body: bytes, timeout: float = 30) -> tuple[int, dict]:
    req = urllib.request.Request(url + "/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def eval_text(seedancectl, tiny, prompt: str, tokens: int) -> str:
    r = subprocess.run([str(seedancectl), "kv", "eval", "--model", str(tiny / "aidreams260K.bin"),
                        "--tokenizer", str(tiny / "tok512.bin"), "--prompt", prompt,
                        "--tokens", str(tokens), "-o", "json"],
                       capture_output=True, text=True, timeout=120, check=True)
    return json.loads(r.stdout)["text"]


def test_openai_client_gets_kv_evals_greedy_text_streamed_and_not(serve, seedancectl, tiny):
    s = serve()
    client = s.client()
    assert [m.id for m in client.models.list().data] == ["aidreams260K"]
    prompt, tokens = "Echoes of vectors", 60
    expected = eval_text(seedancectl, tiny, prompt, tokens)
    # kv eval generates `tokens` positions: BOS, the prompt, then the rest greedily.
    prompt_tokens = client.completions.create(model="aidreams260K", prompt=prompt, max_tokens=1,
                                              temperature=0).usage.prompt_tokens
    n = tokens - prompt_tokens
    whole = client.completions.create(model="aidreams260K", prompt=prompt, max_tokens=n,
                                      temperature=0, echo=True)
    assert whole.choices[0].text == expected
    assert whole.choices[0].finish_reason == "length"
    assert whole.usage.completion_tokens == n
    chunks = list(client.completions.create(model="aidreams260K", prompt=prompt, max_tokens=n,
                                            temperature=0, echo=True, stream=True,
                                            stream_options={"include_usage": True}))
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == expected
    # Streamed, not one lump. The server writes what was generated since its last write, so a
    # reader on a loaded machine gets fewer, larger chunks (3 in one CI run, where the test
    # asked for more than 5): the echo and the generated text arrive as separate events at least.
    assert len([c for c in chunks if c.choices and c.choices[0].text]) >= 2
    assert chunks[-1].usage.completion_tokens == n
    # A stop string ends the completion before it (stop strings apply to the completion only).
    completion = client.completions.create(model="aidreams260K", prompt=prompt, max_tokens=n,
                                           temperature=0).choices[0].text
    assert expected.endswith(completion)
    cut = completion[len(completion) // 2:len(completion) // 2 + 3]
    stopped = client.completions.create(model="aidreams260K", prompt=prompt, max_tokens=n,
                                        temperature=0, stop=[cut])
    assert stopped.choices[0].finish_reason == "stop"
    assert stopped.choices[0].text == completion[:completion.index(cut)]
    # Its /metrics, after real traffic, is exposition text promtool accepts, lint included.
    assert_promtool_accepts(urllib.request.urlopen(s.url + "/metrics", timeout=10).read().decode())
    code, err = s.stop()
    assert code == 0, err


def test_bad_requests_get_400_with_a_reason_and_the_server_lives(serve):
    s = serve("--max-body-bytes", "4096")
    cases = [
        (b"{nope", 400, "not valid JSON"),
        (b'{"model":"aidreams260K","prompt":"x","max_tokens":"ten"}', 400,
         "'max_tokens' must be an integer, got a string"),
        (b'{"model":"aidreams260K","prompt":"x","temperature":[1]}', 400, "'temperature'"),
        (b'{"model":"aidreams260K","prompt":"x","bogus":1}', 400, "unrecognized request argument"),
        (b'{"model":"aidreams260K","prompt":"x","max_tokens":200}', 400, "context is 128"),
        (b'{"model":"gpt-4","prompt":"x"}', 404, "not served here"),
        (b'{"model":"aidreams260K","prompt":"' + b"w" * 5000 + b'"}', 413, "larger"),
    ]
    for body, status, words in cases:
        code, answer = post(s.url, body)
        assert code == status, (body[:60], answer)
        assert words in answer["error"]["message"], answer
    with pytest.raises(openai.BadRequestError):
        s.client(max_retries=0).completions.create(model="aidreams260K", prompt="x",
                                                   max_tokens=500)
    with urllib.request.urlopen(s.url + "/healthz", timeout=10) as r:
        assert r.status == 200
    # The server counts a response after writing it: poll briefly for the last one.
    deadline = time.monotonic() + 10
    while gauge(s.url, 'seedance_kv_http_responses_total{code="400"}') < 6:
        assert time.monotonic() < deadline
    assert gauge(s.url, 'seedance_kv_http_responses_total{code="400"}') == 6
    assert s.stop()[0] == 0


def test_an_over_budget_load_gets_429(serve):
    # Room for one 121-token FP32 sequence (242 KiB of 245.76) and no queue: the rest are refused;
    # a 128-token request (256 KiB) never fits.
    s = serve("--kv-budget-mib", "0.24", "--max-queue", "0")
    results: list[int] = []

    def one() -> None:
        results.append(post(s.url, b'{"model":"aidreams260K","prompt":"",'
                                   b'"max_tokens":120}')[0])
    threads = [threading.Thread(target=one) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 200 in results and 429 in results, results
    # Larger than the whole budget: never servable, so a 400 the client does not retry (a 429
    # with Retry-After would have it retry forever).
    with pytest.raises(openai.BadRequestError) as refused:
        s.client(max_retries=0).completions.create(model="aidreams260K", prompt="",
                                                   max_tokens=127)
    assert refused.value.code == "kv_budget_exceeded"
    assert s.stop()[0] == 0


def gauge(url: str, name: str) -> float:
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return float(re.search(rf"^{re.escape(name)} (\S+)$", text, re.M).group(1))


def test_sigterm_drains_every_stream_in_flight(serve):
    s = serve("--max-batch", "1", "--http-threads", "96")
    client = s.client(max_retries=0)
    streams: dict[int, str] = {}

    def stream(i: int) -> None:
        out = []
        try:
            for c in client.completions.create(model="aidreams260K", prompt="", max_tokens=120,
                                               temperature=1, seed=i, stream=True):
                out.append(c.choices[0].finish_reason or "")
            streams[i] = out[-1]
        except Exception as e:  # noqa: BLE001 - recorded and asserted on below
            streams[i] = repr(e)
    threads = [threading.Thread(target=stream, args=(i,)) for i in range(80)]
    for t in threads:
        t.start()
    # SIGTERM while requests wait behind the one running.
    deadline = time.monotonic() + 30
    while gauge(s.url, "seedance_kv_requests_waiting") < 3:
        assert time.monotonic() < deadline, "the requests never queued up"
    code, err = s.stop()
    for t in threads:
        t.join()
    assert code == 0, err
    drained = json.loads(err.split("drained: ", 1)[1])
    assert drained["cancelled"] == 0 and not drained["timed_out"], drained
    assert drained["finished"] >= 3, drained
    assert drained["finished"] == drained["in_flight"], drained  # all that ran or waited at SIGTERM
    # Every stream that reached the server before SIGTERM ended normally; later ones were refused
    # (503) or found the port closed.
    finished = [v for v in streams.values() if v in ("length", "stop")]  # stop: sampled EOS
    assert len(finished) >= drained["finished"], streams
    assert all(v in ("length", "stop") or "503" in v or "Connection" in v
               for v in streams.values()), streams


def test_a_drain_past_its_timeout_cancels_with_an_error_event(serve):
    s = serve("--max-batch", "1", "--drain-timeout-s", "0")
    body = json.dumps({"model": "aidreams260K", "prompt": "", "max_tokens": 120,
                       "stream": True}).encode()
    got: list[bytes] = []

    def stream() -> None:
        req = urllib.request.Request(s.url + "/v1/completions", data=body)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                got.append(r.read())
        except Exception as e:  # noqa: BLE001
            got.append(repr(e).encode())
    threads = [threading.Thread(target=stream) for _ in range(40)]
    for t in threads:
        t.start()
    # SIGTERM while requests wait behind the one running (a fixed sleep raced both ways on a
    # loaded machine: the requests had not arrived, or had all finished, and nothing was cut).
    deadline = time.monotonic() + 30
    while gauge(s.url, "seedance_kv_requests_waiting") < 3:
        assert time.monotonic() < deadline, "the requests never queued up"
    code, err = s.stop()
    for t in threads:
        t.join()
    assert code == 0, err
    drained = json.loads(err.split("drained: ", 1)[1])
    assert drained["timed_out"] and drained["cancelled"] >= 1, drained
    assert any(b"drain timeout" in g and b"[DONE]" not in g for g in got)


def test_a_thousand_concurrent_connections(serve):
    s = serve("--max-batch", "16")
    body = b'{"model":"aidreams260K","prompt":"hi","max_tokens":4}'
    request = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n"
               + body)

    async def one() -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", s.port)
        writer.write(request)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), 120)
        writer.close()
        return int(data.split(b" ", 2)[1]) if data else 0

    async def all_of_them() -> list:
        # Open every connection before any is answered, then collect the answers.
        return await asyncio.gather(*(one() for _ in range(1000)), return_exceptions=True)
    codes = asyncio.run(all_of_them())
    assert sum(c == 200 for c in codes) >= 900, [c for c in codes if c != 200][:10]
    assert all(c in (200, 429) for c in codes), [c for c in codes if c not in (200, 429)][:10]
    with urllib.request.urlopen(s.url + "/healthz", timeout=10) as r:
        assert r.status == 200
    code, err = s.stop()
    assert code == 0, err
