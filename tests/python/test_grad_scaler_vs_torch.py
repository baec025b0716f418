"""seedance.torch.GradScaler step by step against torch.amp.GradScaler("cpu").

Two copies of one model train side by side on the same batches, one under each scaler, for 200
steps with a scripted pattern of inf/NaN gradients. After every step the scales, the growth
trackers, the skipped steps, the gradients the optimizer saw and the parameters must be equal,
bit for bit. torch is the reference: nothing here restates its rule.
"""

from __future__ import annotations

import copy
import random
import warnings

import pytest
import torch

import seedance.torch as st

STEPS = 200

OPTIMIZERS = {
    "sgd": lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9),
    "adam": lambda params: torch.optim.Adam(params, lr=1e-3),
    "adamw": lambda params: torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01),
}

# (init_scale, growth_factor, backoff_factor, growth_interval): torch's defaults but a short
# interval; factors that are not powers of two (the scale's float32 rounding shows); a start near
# float32's top (torch refuses to grow past it).
CONFIGS = {
    "defaults-short-interval": (2.0**16, 2.0, 0.5, 5),
    "odd-factors": (3.0, 1.7, 0.3, 3),
    "near-float-max": (2.0**125, 2.0, 0.5, 2),
}


def poison_pattern(seed: int) -> list[str]:
    """Per step: "" (clean), "inf", "-inf" or "nan"; single overflows and runs of them."""
    rng = random.Random(seed)
    out = []
    while len(out) < STEPS:
        if rng.random() < 0.25:
            out.extend([rng.choice(["inf", "-inf", "nan"])] * rng.choice([1, 1, 2, 3]))
        else:
            out.extend([""] * rng.randint(1, 9))
    return out[:STEPS]


def make_model(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def torch_scaler(config: tuple[float, float, float, int]) -> torch.amp.GradScaler:
    init, growth, backoff, interval = config
    return torch.amp.GradScaler("cpu", init_scale=init, growth_factor=growth,
                                backoff_factor=backoff, growth_interval=interval)


def seedance_scaler(config: tuple[float, float, float, int]) -> st.GradScaler:
    init, growth, backoff, interval = config
    return st.GradScaler("cpu", init_scale=init, growth_factor=growth, backoff_factor=backoff,
                         growth_interval=interval)


def one_step(model, opt, scaler, x, y, poison: str, clip: bool) -> list[torch.Tensor]:
    """A training step; returns the gradients as the optimizer sees them."""
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    if poison:
        model[0].weight.grad[1, 2] = float(poison)
    if clip:
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    scaler.step(opt)
    grads = [p.grad.detach().clone() for p in model.parameters()]
    scaler.update()
    return grads


def growth_tracker(scaler) -> int:
    return int(scaler.state_dict()["_growth_tracker"])


class Pair:
    """One model under torch's scaler and a copy under Seedance's, fed the same batches."""

    def __init__(self, opt_name: str, config, seed: int) -> None:
        self.ref_model = make_model(seed)
        self.our_model = copy.deepcopy(self.ref_model)
        self.ref_opt = OPTIMIZERS[opt_name](self.ref_model.parameters())
        self.our_opt = OPTIMIZERS[opt_name](self.our_model.parameters())
        self.ref = torch_scaler(config)
        self.ours = seedance_scaler(config)
        self.data = torch.Generator().manual_seed(seed + 1)

    def step(self, i: int, poison: str, clip: bool) -> None:
        x = torch.randn(8, 6, generator=self.data)
        y = torch.randn(8, 3, generator=self.data)
        before = [p.detach().clone() for p in self.ref_model.parameters()]
        ref_grads = one_step(self.ref_model, self.ref_opt, self.ref, x, y, poison, clip)
        our_grads = one_step(self.our_model, self.our_opt, self.ours, x, y, poison, clip)
        where = f"step {i} (poison {poison or 'none'}, clip {clip})"
        assert self.ours.get_scale() == self.ref.get_scale(), where
        assert growth_tracker(self.ours) == growth_tracker(self.ref), where
        for a, b in zip(our_grads, ref_grads):
            assert torch.equal(a.isnan(), b.isnan()), where
            assert torch.equal(a.nan_to_num(), b.nan_to_num()), where
        for a, b in zip(self.our_model.parameters(), self.ref_model.parameters()):
            assert torch.equal(a, b), where
        stepped = any(not torch.equal(a, b) for a, b in zip(before, self.ref_model.parameters()))
        assert stepped == (not poison), where
        assert self.ours.last_step_skipped == bool(poison), where


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("config_name", sorted(CONFIGS))
def test_same_scale_skips_and_parameters_as_torch(opt_name: str, config_name: str) -> None:
    seed = sorted(OPTIMIZERS).index(opt_name) * 10 + sorted(CONFIGS).index(config_name)
    pattern = poison_pattern(seed)
    assert 10 < sum(bool(p) for p in pattern) < 60
    pair = Pair(opt_name, CONFIGS[config_name], seed)
    for i, poison in enumerate(pattern):
        pair.step(i, poison, clip=(i % 4 == 1))
    state = pair.ours.seedance_state()["state"]
    assert state["steps"] == STEPS
    assert state["skipped_steps"] == sum(bool(p) for p in pattern)


def test_scale_stays_below_float32_overflow_as_torchs() -> None:
    pair = Pair("sgd", (2.0**126, 2.0, 0.5, 1), 3)
    for i in range(4):
        pair.step(i, "", clip=False)
    assert pair.ref.get_scale() == 2.0**127 == pair.ours.get_scale()


@pytest.mark.parametrize("direction", ["torch-to-seedance", "seedance-to-torch"])
def test_state_dict_moves_between_the_two_mid_run(direction: str) -> None:
    """Train 100 steps, move the scaler state to a fresh scaler of the other kind (and the
    optimizer state along), then train both 100 more: still equal at every step."""
    config = CONFIGS["odd-factors"]
    pattern = poison_pattern(7)
    pair = Pair("adam", config, 7)
    for i in range(100):
        pair.step(i, pattern[i], clip=False)
    if direction == "torch-to-seedance":
        fresh = st.GradScaler("cpu")
        fresh.load_state_dict(pair.ref.state_dict())
        pair.ours = fresh
    else:
        fresh = torch.amp.GradScaler("cpu")
        fresh.load_state_dict(pair.ours.state_dict())
        pair.ref = fresh
    assert pair.ours.get_scale() == pair.ref.get_scale()
    for i in range(100, STEPS):
        pair.step(i, pattern[i], clip=(i % 3 == 0))


def test_accessors_match_torchs() -> None:
    ref, ours = torch_scaler(CONFIGS["odd-factors"]), seedance_scaler(CONFIGS["odd-factors"])
    for name in ("growth_factor", "backoff_factor", "growth_interval"):
        assert getattr(ours, f"get_{name}")() == getattr(ref, f"get_{name}")()
    ours.set_growth_factor(4.0)
    ref.set_growth_factor(4.0)
    ours.set_backoff_factor(0.25)
    ref.set_backoff_factor(0.25)
    ours.set_growth_interval(1)
    ref.set_growth_interval(1)
    pair = Pair("sgd", CONFIGS["odd-factors"], 11)
    pair.ref, pair.ours = ref, ours
    for i, poison in enumerate(["", "", "nan", "", "inf", "inf", ""]):
        pair.step(i, poison, clip=False)
    assert ours.state_dict()["growth_factor"] == ref.state_dict()["growth_factor"] == 4.0


def test_hysteresis_is_where_the_two_differ() -> None:
    """DeepSpeed's hysteresis (torch has none): with hysteresis=2, the first overflow after a
    growth skips the step but keeps the scale, where torch backs off at once; the second
    overflow backs off in both, so the scales then differ by exactly one backoff."""
    ref = torch_scaler((1024.0, 2.0, 0.5, 100))
    ours = st.GradScaler("cpu", init_scale=1024.0, growth_interval=100, hysteresis=2)
    model = make_model(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    scales = []
    for poison in ["", "inf", "", "inf", ""]:
        for scaler in (ref, ours):
            one_step(model, opt, scaler, torch.ones(2, 6), torch.zeros(2, 3), poison, False)
        scales.append((ref.get_scale(), ours.get_scale()))
    assert scales == [(1024.0, 1024.0), (512.0, 1024.0), (512.0, 1024.0), (256.0, 512.0),
                      (256.0, 512.0)]


def test_grad_norm_mode_is_not_torchs_rule() -> None:
    """The gradient-norm mode ignores growth_interval: 10 clean steps with interval 2 grow
    torch's scale five times and leave Seedance's grad-norm scale unchanged (it evaluates
    every eval_interval=50 clean steps)."""
    ref = torch_scaler((4096.0, 2.0, 0.5, 2))
    ours = st.GradScaler("cpu", init_scale=4096.0, mode="grad-norm")
    model = make_model(0)
    opt_a = torch.optim.SGD(model.parameters(), lr=0.0)
    for _ in range(10):
        for scaler in (ref, ours):
            one_step(model, opt_a, scaler, torch.ones(2, 6), torch.zeros(2, 3), "", False)
    assert ref.get_scale() == 4096.0 * 2**5
    assert ours.get_scale() == 4096.0


def test_device_argument_as_torch_amp() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert st.GradScaler("cpu").get_scale() == 2.0**16
        assert st.GradScaler(device="cuda", init_scale=8.0).get_scale() == 8.0
        assert st.GradScaler(128.0).get_scale() == 128.0  # torch.cuda.amp's positional init_scale
