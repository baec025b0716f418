"""The model the control benchmarks train on the CPU: a Llama built from a transformers config
(byte vocabulary, no download), AdamW, and a loader of seeded random tokens."""

import torch
import transformers


def make(hidden: int, layers: int, context: int, batch: int, steps: int,
         with_ids: bool = False):
    """(model, optimizer, loader): ``steps + 1`` batches of ``batch`` sequences; with_ids adds
    each sample's index as a second tensor."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=256, hidden_size=hidden, intermediate_size=hidden * 8 // 3,
        num_hidden_layers=layers, num_attention_heads=8, num_key_value_heads=4,
        max_position_embeddings=context)
    model = transformers.LlamaForCausalLM(config).float()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 256, (batch * (steps + 1), context), generator=g)
    data = torch.utils.data.TensorDataset(ids, torch.arange(len(ids))) if with_ids else ids
    return model, opt, torch.utils.data.DataLoader(data, batch_size=batch)
