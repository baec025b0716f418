"""The planner's memory and time models against real training on this machine's CPUs.

Small Llama and GPT-2 models built from configs (no download) train under torchrun with gloo
ranks — plain DDP, FSDP SHARD_GRAD_OP and FSDP FULL_SHARD (torch's FSDP2), each with and
without activation checkpointing of every decoder layer — and each rank measures, over one
steady-state optimizer step, the peak of the bytes its tensors hold (torch's profiler, which
tracks every CPU allocation from before the model is built) and the median step time of a few more steps.
The planner (`seedance.optimize --evaluate-only`) is run on the same configuration with a CPU
"device" in the GPU catalog and predicts each rank's peak memory and its step time.

    PYTHONPATH=build/python .venv/bin/python bench/plan/cpu_validation.py [--ranks 2]

Prints one JSON document: per configuration the predicted and measured peak (the prediction's
tensor terms: model states, activations, logits, temporaries — not the fragmentation margin or
the CUDA context reserve), the error and the step times; then how many configurations are
within 10% and how many step-time pairs the planner orders as measured.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time

# The models: small enough for a 2-core machine, large enough that model states and
# activations are both tens of MB per rank.
MODELS = {
    "llama": dict(family="llama", layers=6, hidden_size=384, attention_heads=6, kv_heads=6,
                  ffn_size=1024, vocab_size=8192, sequence_length=256),
    "gpt": dict(family="gpt", layers=6, hidden_size=384, attention_heads=6, kv_heads=6,
                ffn_size=1536, vocab_size=8192, sequence_length=256),
}
STRATEGIES = {"ddp": 0, "fsdp-shard-grad-op": 2, "fsdp-full-shard": 3}  # -> ZeRO stage
MICRO_BATCH = 4

# The CPU as a catalog "device": its memory is this machine's, its peaks a nominal figure (the
# step-time check compares orderings only). No price, power or bandwidth here is a claim.
CPU_CATALOG = """\
gpus:
  - id: host-cpu
    name: this machine's CPUs, one device per rank
    vendor: host
    form_factor: cpu
    memory_gb: 24
    memory_type: DDR
    memory_bandwidth_gbytes_per_s: 20
    tdp_watts: 100
    price_per_hour_usd: 0.1
    price_date: 2026-12-02
    price_source: a placeholder for a CPU benchmark
    datasheet: none
    dense_tflops: {fp32: 0.05}
"""



def hf_model(name: str):
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
    m = MODELS[name]
    if name == "llama":
        return LlamaForCausalLM(LlamaConfig(
            vocab_size=m["vocab_size"], hidden_size=m["hidden_size"],
            intermediate_size=m["ffn_size"], num_hidden_layers=m["layers"],
            num_attention_heads=m["attention_heads"], num_key_value_heads=m["kv_heads"],
            max_position_embeddings=m["sequence_length"]))
    return GPT2LMHeadModel(GPT2Config(
        vocab_size=m["vocab_size"], n_embd=m["hidden_size"], n_layer=m["layers"],
        n_head=m["attention_heads"], n_inner=m["ffn_size"], n_positions=m["sequence_length"],
        bos_token_id=0, eos_token_id=0))


def worker(args: argparse.Namespace) -> None:
    """One rank: wrap, train, measure."""
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
        apply_activation_checkpointing, checkpoint_wrapper)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.nn.parallel import DistributedDataParallel
    from torch.profiler import ProfilerActivity, profile, record_function

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    seq = MODELS[args.model]["sequence_length"]
    vocab = MODELS[args.model]["vocab_size"]
    gen = torch.Generator().manual_seed(rank)
    # The profiler tracks every CPU allocation from before the model exists, so its running
    # "Total Allocated" is every tensor byte this rank holds; the peak is read over the second and
    # third steps, when the optimizer's states exist.
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        torch.manual_seed(0)
        model = hf_model(args.model)
        layers = model.model.layers if args.model == "llama" else model.transformer.h
        layer_type = type(layers[0])
        if args.recompute == "full":
            apply_activation_checkpointing(model, checkpoint_wrapper_fn=checkpoint_wrapper,
                                           check_fn=lambda m: isinstance(m, layer_type))
            layers = model.model.layers if args.model == "llama" else model.transformer.h
        if args.strategy == "ddp":
            # Gradients as views into DDP's buckets, as the planner assumes (without it, DDP
            # keeps a second copy of every gradient).
            model = DistributedDataParallel(model, gradient_as_bucket_view=True)
        else:
            mesh = init_device_mesh("cpu", (world,))
            reshard = args.strategy == "fsdp-full-shard"
            for layer in layers:
                fully_shard(layer, mesh=mesh, reshard_after_forward=reshard)
            fully_shard(model, mesh=mesh, reshard_after_forward=reshard)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step() -> None:
            ids = torch.randint(vocab, (MICRO_BATCH, seq), generator=gen)
            model(input_ids=ids, labels=ids).loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        for i in range(3):
            with record_function(f"validation_step_{i}"):
                step()
    trace = pathlib.Path(tempfile.mkdtemp()) / f"rank{rank}.json"
    prof.export_chrome_trace(str(trace))
    events = json.loads(trace.read_text())["traceEvents"]
    # Steps 2 and 3: the peak varies a little with the timing of the collectives.
    windows = [(e["ts"], e["ts"] + e["dur"]) for e in events
               if e.get("name") in ("validation_step_1", "validation_step_2")]
    peak = max(e["args"]["Total Allocated"] for e in events
               if e.get("name") == "[memory]" and any(a <= e["ts"] <= b for a, b in windows))
    times = []
    for _ in range(args.steps):
        dist.barrier()
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    result = {"rank": rank, "peak_bytes": peak, "step_s": statistics.median(times)}
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    dist.barrier()
    # Tearing gloo down can deadlock or abort a CPU rank (examples/fsdp_train.py says how); the
    # result is out: leave without the teardown.
    sys.stderr.flush()
    os._exit(0)


def job_yaml(model: str, zero: int, recompute: str, ranks: int) -> str:
    m = MODELS[model]
    # The attention kernel that runs: GPT-2 trains with attention dropout, and torch's CPU SDPA
    # with dropout runs its math kernel, which keeps the s x s probabilities ("eager" in the
    # planner's terms); Llama has no attention dropout and gets the fused kernel.
    attention = "eager" if m["family"] == "gpt" else "flash"
    # PyTorch's own DDP and FSDP2 over Hugging Face modules: the planner's fsdp framework (eager
    # kernels, fp32 parameters that are their own master copy).
    lines = ["name: cpu-validation", "framework: fsdp", "model:"]
    lines += [f"  {k}: {v}" for k, v in m.items()]
    lines += ["training:", f"  global_batch: {MICRO_BATCH * ranks}", f"  micro_batch: {MICRO_BATCH}",
              "  precision: fp32", "  optimizer: adamw", f"  attention: {attention}",
              "hardware:", "  gpu: host-cpu", f"  gpus_per_node: {ranks}", "  nodes: 1",
              "  interconnect: {intra_node: pcie, inter_node: none}",
              "parallelism:", "  tensor: 1", "  pipeline: 1", f"  zero_stage: {zero}",
              f"  recompute: {recompute}"]
    return "\n".join(lines) + "\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(model: str, strategy: str, recompute: str, ranks: int, steps: int) -> list[dict]:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks),
           "--master-addr", "127.0.0.1", "--master-port", str(free_port()), __file__,
           "--worker", "--model", model, "--strategy", strategy, "--recompute", recompute,
           "--steps", str(steps)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        sys.exit(f"{model} {strategy} {recompute}: torchrun failed\n{r.stderr[-3000:]}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--steps", type=int, default=3, help="timed steps per configuration")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", choices=sorted(MODELS))
    p.add_argument("--strategy", choices=sorted(STRATEGIES))
    p.add_argument("--recompute", choices=["none", "full"])
    args = p.parse_args()
    if args.worker:
        worker(args)  # leaves the process itself
        return

    import seedance
    catalog = pathlib.Path(tempfile.mkdtemp()) / "cpu-catalog.yaml"
    catalog.write_text(CPU_CATALOG)
    rows = []
    for model, strategy, recompute in itertools.product(MODELS, STRATEGIES, ["none", "full"]):
        ranks = measure(model, strategy, recompute, args.ranks, args.steps)
        plan = seedance.optimize(yaml=job_yaml(model, STRATEGIES[strategy], recompute,
                                               args.ranks),
                                 evaluate_only=True, catalog=catalog)["before"]
        measured = max(r["peak_bytes"] for r in ranks)
        # Tensor bytes: the fragmentation margin, the CUDA context reserve and a framework's
        # measured overhead are not tensors.
        terms = plan["memory"]
        predicted = (terms["total_bytes"] - terms["fragmentation_bytes"] - terms["reserve_bytes"]
                     - terms.get("measured_overhead_bytes", 0))
        rows.append({
            "model": model, "strategy": strategy, "zero_stage": STRATEGIES[strategy],
            "recompute": recompute, "predicted_bytes": predicted, "measured_bytes": measured,
            "error_pct": round((predicted - measured) / measured * 100, 1),
            "predicted_terms": terms,
            "predicted_step_s": plan["step_time_s"],
            "measured_step_s": max(r["step_s"] for r in ranks)})
        print(f"{model:6} {strategy:19} {recompute:5} predicted {predicted / 1e6:8.1f} MB "
              f"measured {measured / 1e6:8.1f} MB ({rows[-1]['error_pct']:+.1f}%)",
              file=sys.stderr)
    within = [r for r in rows if abs(r["error_pct"]) <= 10]
    pairs = agree = 0
    for model in MODELS:
        mine = [r for r in rows if r["model"] == model]
        for a, b in itertools.combinations(mine, 2):
            pairs += 1
            agree += (a["predicted_step_s"] < b["predicted_step_s"]) == (
                a["measured_step_s"] < b["measured_step_s"])
    print(json.dumps({"ranks": args.ranks, "micro_batch": MICRO_BATCH, "models": MODELS,
                      "configurations": rows,
                      "memory_within_10pct": f"{len(within)} of {len(rows)}",
                      "step_time_pairs_ordered_as_measured": f"{agree} of {pairs}"}, indent=1))


if __name__ == "__main__":
    main()
