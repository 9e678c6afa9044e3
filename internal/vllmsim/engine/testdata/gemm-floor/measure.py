"""Measure the weight GEMMs of one engine step on the GPU this runs on.

For every model preset of the simulator (package engine's modelPresets,
with each model's MLP width from its config.json) and every step kind of
TestRoofline (decode of 1 to 256 sequences, prefill chunks of 16 to 8192
tokens), this times what vLLM cannot skip in such a step: the layers'
projections (QKV, output, gate-up, down) on the step's tokens and the LM
head on the rows that sample, in bf16 through torch.nn.functional.linear
(cuBLAS, the weights laid out [out, in] as vLLM keeps them), captured in a
CUDA graph so that no launch gap is counted. Attention, norms, rotary
embedding, the activation, the sampler and the scheduler are left out, so
the figure is a floor under a real step: TestMeasuredFloor holds the
simulated step of the h100 and h200 presets above it.

Weights are random normal, like trained ones (a GEMM on zeros runs
faster, its tensor cores drawing less power); every
layer has its own, except the 70B model's 80, which cycle through 40
allocated ones (1.7 GB each, far above the 60 MB L2): no weight is read
from L2.

Run: python3 measure.py > h200.json (about a minute on an H200).
"""

import json
import statistics
import sys

import torch
import torch.nn.functional as F

# name, layers, hidden, q heads, kv heads, head dim, MLP width, vocab
MODELS = [
    ("Qwen/Qwen2.5-0.5B-Instruct", 24, 896, 14, 2, 64, 4864, 151936),
    ("Qwen/Qwen3-0.6B", 28, 1024, 16, 8, 128, 3072, 151936),
    ("Qwen/Qwen3-8B", 36, 4096, 32, 8, 128, 12288, 151936),
    ("meta-llama/Llama-3.1-8B-Instruct", 32, 4096, 32, 8, 128, 14336, 128256),
    ("Qwen/Qwen3-14B", 40, 5120, 40, 8, 128, 17408, 151936),
    ("meta-llama/Llama-3.1-70B-Instruct", 80, 8192, 64, 8, 128, 28672, 128256),
]

# (kind, sequences, tokens per sequence): TestRoofline's step kinds.
KINDS = [("decode", b, 1) for b in (1, 4, 16, 64, 256)] + [
    ("prefill", 1, n) for n in (16, 256, 2048, 8192)
]

MAX_ALLOCATED_LAYERS = 40  # only the 70B model has more layers than this
DTYPE = torch.bfloat16


def weights(layers, hidden, qh, kvh, hd, inter, vocab):
    """Random [out, in] weights for min(layers, 40) layers and the LM head."""
    def w(out, inp):
        return torch.randn(out, inp, device="cuda", dtype=DTYPE) * 0.02

    q, kv = qh * hd, kvh * hd
    per = [
        dict(qkv=w(q + 2 * kv, hidden), o=w(hidden, q), gu=w(2 * inter, hidden), d=w(hidden, inter))
        for _ in range(min(layers, MAX_ALLOCATED_LAYERS))
    ]
    return per, w(vocab, hidden)


def step_fn(layers, per, lm_head):
    def step(x, attn, act, rows):
        # x: the layers' input; attn and act stand for the attention's
        # output and the activated MLP (contiguous, as vLLM's are), so
        # that only the GEMMs run.
        for i in range(layers):
            w = per[i % len(per)]
            F.linear(x, w["qkv"])
            F.linear(attn, w["o"])
            F.linear(x, w["gu"])
            F.linear(act, w["d"])
        return F.linear(x[:rows], lm_head)

    return step


def time_graph(step, args):
    """Median milliseconds of one replay of the step captured in a CUDA graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            step(*args)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step(*args)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    first = torch.cuda.Event(enable_timing=True)
    last = torch.cuda.Event(enable_timing=True)
    first.record()
    g.replay()
    last.record()
    last.synchronize()
    est = first.elapsed_time(last)
    reps = max(5, min(50, int(1000 / max(est, 1e-3))))
    times = []
    for _ in range(reps):
        first.record()
        g.replay()
        last.record()
        last.synchronize()
        times.append(first.elapsed_time(last))
    del g
    return statistics.median(times), reps


def main():
    props = torch.cuda.get_device_properties(0)
    out = dict(
        gpu=props.name,
        multiprocessors=props.multi_processor_count,
        memory_gib=round(props.total_memory / 2**30, 1),
        torch=torch.__version__,
        cuda=torch.version.cuda,
        cublas=torch.backends.cuda.preferred_blas_library().name if hasattr(torch.backends.cuda, "preferred_blas_library") else "",
        what="median ms of the weight GEMMs of one step (CUDA graph), bf16",
        steps=[],
    )
    for name, layers, hidden, qh, kvh, hd, inter, vocab in MODELS:
        per, lm_head = weights(layers, hidden, qh, kvh, hd, inter, vocab)
        step = step_fn(layers, per, lm_head)
        for kind, seqs, n in KINDS:
            tokens = seqs * n
            rows = seqs  # one sampling row per sequence
            x = torch.randn(tokens, hidden, device="cuda", dtype=DTYPE)
            attn = torch.randn(tokens, qh * hd, device="cuda", dtype=DTYPE)
            act = torch.randn(tokens, inter, device="cuda", dtype=DTYPE)
            ms, reps = time_graph(step, (x, attn, act, rows))
            out["steps"].append(dict(model=name, kind=kind, sequences=seqs, tokens=tokens, ms=round(ms, 4), reps=reps))
            print(f"{name} {kind} {seqs}x{n}: {ms:.4f} ms ({reps} reps)", file=sys.stderr, flush=True)
        del per, lm_head, step, x, attn, act
        torch.cuda.empty_cache()
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
