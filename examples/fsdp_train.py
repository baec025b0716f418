"""Train a config-built Llama with the FSDP plan `seedancectl optimize --emit fsdp` writes.

    seedancectl optimize job.yaml --emit fsdp plan.json
    torchrun --nproc-per-node 8 examples/fsdp_train.py plan.json --steps 100

The plan sets the sharding strategy (FSDP's names: FULL_SHARD, SHARD_GRAD_OP, NO_SHARD), the
mixed-precision dtypes, activation checkpointing (none or full: every decoder layer), the
micro-batch and the gradient accumulation steps. The model is built from a Llama config (no
download) at the size the flags give, on random tokens: the script shows how to apply a plan,
not how to load a corpus. It runs on GPUs (NCCL) or, for a try-out, on CPUs (gloo):

    torchrun --nproc-per-node 2 examples/fsdp_train.py plan.json --tiny --steps 2

Each rank prints one JSON line at the end: its losses, the parameters it holds and the plan it
applied.
"""

import argparse
import contextlib
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    apply_activation_checkpointing,
    checkpoint_wrapper,
)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, ShardingStrategy, fully_shard
from torch.nn.parallel import DistributedDataParallel
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("plan", help="the JSON plan of `seedancectl optimize --emit fsdp`")
    p.add_argument("--steps", type=int, default=10, help="optimizer steps")
    p.add_argument("--tiny", action="store_true",
                   help="a 2-layer, 64-wide model on 32-token sequences (a CPU try-out)")
    p.add_argument("--seq-len", type=int, help="sequence length (default: the plan's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--report-update", action="store_true",
                   help="also report the sum of every parameter's change (a check that "
                        "sharded and unsharded runs update alike)")
    return p.parse_args()


def model_config(tiny: bool) -> LlamaConfig:
    if tiny:
        return LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=176,
                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4)
    return LlamaConfig()  # Llama-2-7B's shape


def main() -> int:
    args = parse_args()
    with open(args.plan, encoding="utf-8") as f:
        plan = json.load(f)
    if plan.get("format") != "seedance-fsdp-plan/1":
        sys.exit(f"{args.plan}: not a plan of `seedancectl optimize --emit fsdp`")
    strategy = ShardingStrategy[plan["sharding_strategy"]]  # FSDP's own names
    if strategy not in (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP,
                        ShardingStrategy.NO_SHARD):
        sys.exit(f"{args.plan}: sharding_strategy {strategy.name} is not one this script runs")

    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    if world != plan["world_size"] and rank == 0:
        print(f"note: the plan is for {plan['world_size']} ranks, this run has {world}; the "
              "micro-batch and accumulation stay, so the global batch is "
              f"{plan['micro_batch'] * plan['gradient_accumulation_steps'] * world}",
              file=sys.stderr)

    torch.manual_seed(args.seed)  # every rank builds the same initial weights
    config = model_config(args.tiny)
    model = LlamaForCausalLM(config).to(device)
    parameters = sum(p.numel() for p in model.parameters())
    initial_sum = sum(p.detach().double().sum().item() for p in model.parameters())
    if plan["activation_checkpointing"] == "full":
        apply_activation_checkpointing(model, checkpoint_wrapper_fn=checkpoint_wrapper,
                                       check_fn=lambda m: isinstance(m, LlamaDecoderLayer))

    mixed = plan["mixed_precision"]
    if strategy == ShardingStrategy.NO_SHARD:
        # The gradients are the reducer's buckets, as the plan's memory counts them (no second
        # gradient-sized copy; zeroed in place below), and DDP has no reduce precision: it
        # all-reduces the fp32 gradients autocast leaves (the plan's reduce_dtype says float32).
        model = DistributedDataParallel(model, gradient_as_bucket_view=True)
        autocast = getattr(torch, mixed["param_dtype"]) if mixed else None
    else:
        policy = MixedPrecisionPolicy()
        if mixed:
            policy = MixedPrecisionPolicy(param_dtype=getattr(torch, mixed["param_dtype"]),
                                          reduce_dtype=getattr(torch, mixed["reduce_dtype"]))
        mesh = init_device_mesh(device.type, (world,))
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh, reshard_after_forward=plan["reshard_after_forward"],
                        mp_policy=policy)
        fully_shard(model, mesh=mesh, reshard_after_forward=plan["reshard_after_forward"],
                    mp_policy=policy)
        autocast = None
    local_params = sum(p.to_local().numel() if hasattr(p, "to_local") else p.numel()
                       for p in model.parameters())

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    micro, accumulation = plan["micro_batch"], plan["gradient_accumulation_steps"]
    seq_len = args.seq_len or (32 if args.tiny else plan["sequence_length"])
    tokens = torch.Generator().manual_seed(args.seed + 1)
    losses = []
    for _ in range(args.steps):
        step_loss = torch.zeros((), device=device)
        for k in range(accumulation):
            # Each step draws the global batch; a rank takes its own rows of every micro-batch.
            batch = torch.randint(config.vocab_size, (micro * world, seq_len), generator=tokens)
            ids = batch[rank * micro:(rank + 1) * micro].to(device)
            last = k == accumulation - 1
            # FSDP reduce-scatters every micro-batch's gradients into the shards (its default), as
            # the plan's memory and step time count them: turning that off until the last
            # micro-batch (set_requires_gradient_sync(False)) would hold the whole model's
            # unsharded gradients through the accumulation, which the plan does not count. DDP's
            # gradients are whole anyway: it all-reduces once, after the last micro-batch.
            skip_sync = isinstance(model, DistributedDataParallel) and not last
            with model.no_sync() if skip_sync else contextlib.nullcontext():
                with torch.autocast(device.type, dtype=autocast, enabled=autocast is not None):
                    loss = model(input_ids=ids, labels=ids).loss / accumulation
                loss.backward()
            step_loss += loss.detach().float()
        optimizer.step()
        # DDP's gradients stay views of its buckets only when zeroed in place: set to None, each
        # step's first micro-batch would make fresh gradients beside the buckets (a second
        # gradient-sized copy through the accumulation) and the synchronising one copy them in.
        optimizer.zero_grad(set_to_none=not isinstance(model, DistributedDataParallel))
        dist.all_reduce(step_loss)
        losses.append(step_loss.item() / world)

    if args.report_update:  # full tensors: FSDP's parameters are sharded DTensors
        final_sum = sum((p.full_tensor() if hasattr(p, "full_tensor") else p).detach().double()
                        .sum().item() for p in model.parameters())
    result = {"rank": rank, "world_size": world, "losses": losses,
              "local_parameters": local_params, "parameters": parameters,
              "sharding_strategy": strategy.name,
              "activation_checkpointing": plan["activation_checkpointing"],
              "micro_batch": micro, "gradient_accumulation_steps": accumulation}
    if args.report_update:
        result["update_sum"] = final_sum - initial_sum
    sys.stdout.write(json.dumps(result) + "\n")  # one write: ranks share the stream
    sys.stdout.flush()
    dist.barrier()  # no rank leaves while another still talks
    if cuda:
        dist.destroy_process_group()
        return 0
    # On CPU ranks, tearing gloo down (destroy_process_group, or the DDP reducer freed with this
    # frame) joins gloo's worker thread while it waits for the GIL to free a finished work item's
    # tensors: now and then a rank never exits, or aborts in std::terminate (about 1 run in 20 on
    # a 2-core machine, torch 2.13). Everything is written: leave without the teardown.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
