#!/usr/bin/env python3
"""Measure held-out training runs on one GPU, in the format of the reference runs.

Writes one JSON object per line (`kind: train`, `data: synthetic-on-gpu`) with the field names of
../shared/reference-runs/README.md, for configurations that are NOT in the reference set (other widths, depths,
sequence lengths, batch sizes, precisions, optimizers, checkpointing, accumulation, CUDA graphs, torchvision
models). The compute model is checked against these; nothing may be tuned on them.

GPT: LayerNorm -> fused QKV Linear (bias) -> SDPA causal -> out Linear -> residual; LayerNorm -> Linear d->4d ->
GELU -> Linear 4d->d -> residual; learned position embeddings; final LayerNorm; head tied to the input
embedding (untied where a configuration says so); cross-entropy in fp32. bf16/fp16 = autocast (fp16 with a
GradScaler), TF32 allowed for what stays fp32; tf32 = fp32 tensors with TF32 matmuls; fp32 = TF32 off.

step_ms = wall time of `iters` optimizer steps after warm-up, between two torch.cuda.synchronize(), divided by
iters; p10/p50/p90 from CUDA events around each step; peak_mem_gib = torch.cuda.max_memory_allocated() over the
timed steps (peak_reserved_gib: max_memory_reserved, what the caching allocator held from the device);
OutOfMemoryError anywhere gives `oom: true`.

usage: python3 tools/measure_holdout.py --out FILE.jsonl [--set 1..22] [--micro-launch] [--only SUBSTRING] [--list]
"""
import argparse
import datetime
import gc
import json
import os
import statistics
import sys
import threading
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

VOCAB = 50304
GIB = 1024 ** 3

# ---------------------------------------------------------------------------------------------- configurations

def gpt(size, layers, d, heads, seq, batch, precision="bf16", optimizer="adamw-fused", accum=1, ckpt=False,
        graphs=None, iters=12, tied=True, keep_logits=False):
    """keep_logits: the step holds the logits until it ends (the reference runs' loop, and the memory model's
    default); otherwise GPT.forward returns the loss alone and the logits die before backward."""
    c = dict(model="gpt", size=size, layers=layers, d_model=d, heads=heads, seq=seq, batch=batch,
             grad_accum=accum, precision=precision, optimizer=optimizer, activation_checkpointing=ckpt,
             iters=iters, tied_embeddings=tied, logits_kept=keep_logits)
    if graphs is not None:
        c["cuda_graphs"] = graphs
    name = size if size.startswith("gpt-") else "gpt-" + size
    tag = f"{name}-b{batch}" + (f"x{accum}" if accum > 1 else "") + f"-s{seq}-{precision}"
    tag += {"adamw-fused": "", "sgd-momentum": "-sgdm", "sgd": "-sgd", "adamw": "-adamw-foreach",
            "adam": "-adam-foreach"}[optimizer]
    tag += "-ckpt" if ckpt else ""
    tag += ("" if tied else "-untied") + ("-logits" if keep_logits else "")
    tag += {None: "", False: "-eager", True: "-graph"}[graphs]
    c["id"] = "holdout/" + tag
    return c


def vision(model, batch, iters=15, optimizer="sgd-momentum", precision="bf16", channels_last=True, benchmark=True,
           accum=1):
    tag = ("" if accum == 1 else f"x{accum}")
    tag += {"sgd-momentum": "", "adamw-fused": "-adamw", "adamw": "-adamw-foreach", "adam": "-adam-foreach",
            "sgd": "-sgd"}[optimizer]
    tag += ("" if channels_last else "-nchw") + ("" if benchmark else "-nobench")
    c = dict(id=f"holdout/{model}-b{batch}-{precision}{tag}", model=model, batch=batch, precision=precision,
             channels_last=channels_last, optimizer=optimizer, cudnn_benchmark=benchmark, iters=iters)
    if accum > 1:
        c["grad_accum"] = accum
    return c


CONFIGS = [
    gpt("d768-l6", 6, 768, 12, 1024, 16),
    gpt("d1280-l20", 20, 1280, 20, 1024, 8),
    gpt("d1280-l20", 20, 1280, 20, 1024, 2),
    gpt("d2560-l24", 24, 2560, 20, 1024, 4),
    gpt("gpt-350m", 24, 1024, 16, 512, 32),
    gpt("gpt-350m", 24, 1024, 16, 8192, 1),
    gpt("gpt-124m", 12, 768, 12, 8192, 2),
    gpt("gpt-1.3b", 24, 2048, 16, 8192, 1),
    gpt("gpt-124m", 12, 768, 12, 1024, 24, precision="fp16"),
    gpt("gpt-350m", 24, 1024, 16, 1024, 48),
    gpt("gpt-350m", 24, 1024, 16, 1024, 16, optimizer="sgd-momentum"),
    gpt("gpt-760m", 24, 1536, 16, 1024, 16, ckpt=True),
    gpt("gpt-124m", 12, 768, 12, 1024, 4, accum=8),
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 4, accum=2),
    gpt("gpt-124m", 12, 768, 12, 1024, 8, precision="tf32"),
    gpt("d512-l8", 8, 512, 8, 1024, 16, precision="fp32"),
    gpt("d384-l6", 6, 384, 6, 256, 8, optimizer="sgd-momentum", graphs=False, iters=30),
    gpt("d384-l6", 6, 384, 6, 256, 8, optimizer="sgd-momentum", graphs=True, iters=30),
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 8),   # near the limit: ~107 GB of weights, grads and AdamW states
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 16),  # expected not to fit
    vision("resnet34", 128),
    vision("resnet152", 64),
    vision("vit_b_32", 128),
    vision("convnext_tiny", 128),
    vision("densenet121", 128),
]

def held_out_set(n, configs):
    """The configurations of held-out set n, their ids under `holdoutN/`."""
    return [dict(c, id=c["id"].replace("holdout/", f"holdout{n}/")) for c in configs]


# A second held-out set (2026-12-02, later session): still none of these is in the reference set or in CONFIGS.
# Plain SGD, longer sequences, wider GPTs, ViT-L, and torchvision models the catalog does not carry (predicted
# as generic models from params and FLOPs).
CONFIGS2 = held_out_set(2, [
    gpt("gpt-124m", 12, 768, 12, 1024, 16, optimizer="sgd"),
    gpt("gpt-760m", 24, 1536, 16, 2048, 4),
    gpt("d1024-l12", 12, 1024, 16, 2048, 8, precision="fp16"),
    gpt("gpt-350m", 24, 1024, 16, 1024, 8, optimizer="sgd-momentum", ckpt=True),
    gpt("gpt-2.7b", 32, 2560, 32, 1024, 4),
    gpt("d640-l10", 10, 640, 10, 512, 32, optimizer="sgd"),
    gpt("gpt-124m", 12, 768, 12, 4096, 4, precision="tf32"),
    vision("vit_l_16", 32),
    vision("vit_b_16", 32),
    vision("vit_b_16", 96),
    vision("resnet101", 64),
    vision("resnet18", 64),
    vision("efficientnet_b0", 256),
    vision("mobilenet_v3_large", 128),
    vision("wide_resnet50_2", 64),
    vision("regnet_y_1_6gf", 128),
])

# A third held-out set (2026-12-03): torchvision models measured nowhere before (several that the catalog gained
# the same day, checked here before any comparison) and the unfused (foreach) Adam and AdamW, which no earlier
# run used.
CONFIGS3 = held_out_set(3, [
    vision("mobilenet_v3_small", 256),
    vision("mobilenet_v2", 256),
    vision("efficientnet_b2", 128),
    vision("efficientnet_b4", 64),
    vision("vgg16_bn", 64),
    vision("vgg11", 128),
    vision("shufflenet_v2_x1_0", 256),
    vision("squeezenet1_1", 256),
    vision("mnasnet1_0", 256),
    vision("alexnet", 256),
    vision("convnext_base", 64),
    vision("resnext101_64x4d", 64),
    vision("densenet201", 64),
    vision("regnet_x_3_2gf", 128),
    vision("swin_t", 64),
    vision("vit_h_14", 16),
    vision("resnet50", 128, optimizer="adamw-fused"),
    vision("resnet50", 128, optimizer="adamw"),
    vision("vit_b_16", 64, optimizer="adamw-fused"),
    gpt("gpt-124m", 12, 768, 12, 1024, 16, optimizer="adamw"),
    gpt("gpt-350m", 24, 1024, 16, 1024, 8, optimizer="adam"),
    gpt("gpt-760m", 24, 1536, 16, 1024, 8, optimizer="adamw"),
    gpt("d512-l8", 8, 512, 8, 512, 32, optimizer="adamw"),
])

# A fourth set (2026-12-03): the same step in PyTorch's default memory format (NCHW, channels_last off),
# without cudnn.benchmark, and in TF32 / fp32, for models whose channels-last bf16 step is already measured.
CONFIGS4 = held_out_set(4, [
    vision("resnet50", 128, channels_last=False),
    vision("resnet50", 32, channels_last=False),
    vision("resnet101", 64, channels_last=False),
    vision("resnet18", 256, channels_last=False),
    vision("efficientnet_b0", 128, channels_last=False),
    vision("mobilenet_v2", 128, channels_last=False),
    vision("convnext_tiny", 64, channels_last=False),
    vision("densenet121", 64, channels_last=False),
    vision("vgg16", 64, channels_last=False),
    vision("vit_b_16", 64, channels_last=False),
    vision("resnet50", 128, benchmark=False),
    vision("resnet50", 128, channels_last=False, benchmark=False),
    vision("efficientnet_b0", 128, precision="tf32"),
    vision("resnet18", 256, precision="tf32"),
    vision("vit_b_16", 64, precision="tf32"),
    vision("mobilenet_v3_large", 128, precision="fp32"),
])

# A fifth set (2026-12-03): launch-bound steps with the host's eager launch cost (`micro/launch`, as the reference
# runs record it) measured before and after them on the same host, to test whether that one figure tells how
# fast this host's CPU issues a training step relative to the reference host.
CONFIGS5 = held_out_set(5, [
    vision("resnet50", 32),
    vision("resnet18", 64),
    vision("vit_b_16", 32),
    vision("efficientnet_b0", 128),
    vision("mobilenet_v3_large", 128),
    vision("mobilenet_v3_small", 256),
    vision("densenet121", 64),
    vision("regnet_y_400mf", 128),
    vision("resnet101", 64),
    gpt("gpt-124m", 12, 768, 12, 256, 4, optimizer="sgd-momentum", graphs=False, iters=30),
    gpt("d384-l6", 6, 384, 6, 256, 8, optimizer="sgd-momentum", graphs=False, iters=30),
    gpt("gpt-350m", 24, 1024, 16, 128, 2, optimizer="sgd-momentum", graphs=False, iters=20),
])

# A sixth set (2026-12-03): first six configurations identical to reference records (`anchor` in the id), which
# measure this host against the reference host directly, then configurations measured nowhere before: smaller
# and larger batches of known models, torchvision models no run used, and small eager GPTs.
CONFIGS6 = held_out_set(6, [
    dict(vision("resnet50", 32), id="holdout/anchor-resnet50-b32-bf16"),
    dict(vision("vit_b_16", 64), id="holdout/anchor-vit_b_16-b64-bf16"),
    dict(vision("efficientnet_b0", 128), id="holdout/anchor-efficientnet_b0-b128-bf16"),
    dict(vision("mobilenet_v3_large", 256), id="holdout/anchor-mobilenet_v3_large-b256-bf16"),
    dict(gpt("tiny", 4, 256, 4, 128, 8, optimizer="sgd-momentum", graphs=False, iters=50),
         id="holdout/anchor-gpt-tiny-b8-s128-bf16-sgdm-eager"),
    dict(gpt("gpt-124m", 12, 768, 12, 256, 4, optimizer="sgd-momentum", graphs=False, iters=30),
         id="holdout/anchor-gpt-124m-b4-s256-bf16-sgdm-eager"),
    vision("resnet50", 16),
    vision("resnet152", 32),
    vision("vit_b_16", 16),
    vision("vit_l_16", 16),
    vision("efficientnet_b1", 64),
    vision("mobilenet_v2", 64),
    vision("densenet169", 32),
    vision("convnext_small", 32),
    vision("regnet_y_800mf", 64),
    vision("shufflenet_v2_x0_5", 128),
    vision("mobilenet_v3_small", 64),
    vision("resnext50_32x4d", 64),
    vision("wide_resnet101_2", 32),
    vision("mnasnet0_5", 256),
    vision("swin_s", 32),
    gpt("d256-l4", 4, 256, 4, 128, 16, optimizer="adamw-fused", graphs=False, iters=50),
    gpt("gpt-124m", 12, 768, 12, 512, 2, optimizer="adamw-fused", graphs=False, iters=30),
    gpt("gpt-350m", 24, 1024, 16, 512, 1, optimizer="sgd-momentum", graphs=False, iters=20),
    gpt("d512-l8", 8, 512, 8, 256, 8, optimizer="sgd", graphs=False, iters=30),
])

# A seventh set (2026-12-03, after the NCHW transform bands were fitted on single convolutions): whole NCHW
# training steps of networks never measured in NCHW, at batches where the GPU binds, with two channels-last
# twins measured on the same host for comparison.
CONFIGS7 = held_out_set(7, [
    vision("vgg11", 128, channels_last=False),
    vision("vgg13", 64, channels_last=False),
    vision("vgg19", 64, channels_last=False),
    vision("vgg16_bn", 64, channels_last=False),
    vision("vgg16", 32, channels_last=False),
    vision("resnet34", 256, channels_last=False),
    vision("resnet50", 256, channels_last=False),
    vision("wide_resnet50_2", 128, channels_last=False),
    vision("resnext50_32x4d", 128, channels_last=False),
    vision("alexnet", 512, channels_last=False),
    vision("shufflenet_v2_x1_0", 256, channels_last=False),
    vision("squeezenet1_1", 256, channels_last=False),
    vision("regnet_y_1_6gf", 128, channels_last=False),
    vision("densenet169", 64, channels_last=False),
    vision("mobilenet_v3_large", 256, channels_last=False),
    vision("efficientnet_b1", 128, channels_last=False),
    vision("mnasnet1_0", 256, channels_last=False),
    vision("vgg16", 64),
    vision("resnet50", 256),
])

# An eighth held-out set (2026-12-03, measured after the LayerNorm input casts of ConvNeXt and the bias gradients
# as per-channel sums were modelled, before any fit saw it): mostly GPU-bound steps of the networks those touch
# (ConvNeXt, ViT, Swin, GPT) at batch sizes and widths never measured, and GPU-bound CNNs for comparison.
CONFIGS8 = held_out_set(8, [
    vision("convnext_tiny", 256),
    vision("convnext_small", 128),
    vision("convnext_base", 128),
    vision("convnext_large", 64),
    vision("convnext_tiny", 128, optimizer="adamw-fused"),
    vision("vit_b_16", 192),
    vision("vit_l_16", 64),
    vision("vit_b_32", 384),
    vision("vit_l_32", 128),
    vision("swin_t", 128),
    vision("swin_b", 64),
    vision("swin_v2_t", 64),
    vision("resnet50", 384),
    vision("efficientnet_b3", 128),
    vision("regnet_y_8gf", 128),
    vision("densenet161", 64),
    vision("googlenet", 256),
    vision("mobilenet_v2", 512),
    gpt("gpt-124m", 12, 768, 12, 512, 32, optimizer="sgd-momentum"),
    gpt("gpt-350m", 24, 1024, 16, 1024, 24, precision="fp16"),
    gpt("d1536-l16", 16, 1536, 12, 1024, 8),
    gpt("gpt-1.3b", 24, 2048, 16, 2048, 6),
    gpt("d768-l12", 12, 768, 12, 2048, 12, precision="tf32"),
    gpt("gpt-760m", 24, 1536, 16, 1024, 12, optimizer="sgd"),
])

# A ninth held-out set (2026-12-03, before any model change it might inform): torchvision models no run has
# measured (EfficientNetV2, RegNetX, ResNeXt-101 32x8d, ShuffleNetV2 x2.0, SqueezeNet 1.0, SwinV2-S, VGG-19-BN,
# MNASNet 1.3, EfficientNet-B5, MaxViT-T, which the catalog carries only as a generic model), fp16 autocast with
# a GradScaler on vision models and with unfused optimizers, more optimizers on CNNs, and GPTs with 128-wide
# attention heads; batches where the GPU binds, so that the set tests the GPU side rather than this host's CPU.
CONFIGS9 = held_out_set(9, [
    vision("efficientnet_v2_s", 128),
    vision("efficientnet_v2_m", 64),
    vision("regnet_x_400mf", 256),
    vision("regnet_x_16gf", 64),
    vision("regnet_y_16gf", 64),
    vision("regnet_y_3_2gf", 128),
    vision("resnext101_32x8d", 64),
    vision("shufflenet_v2_x2_0", 256),
    vision("squeezenet1_0", 256),
    vision("swin_v2_s", 64),
    vision("vgg19_bn", 64),
    vision("mnasnet1_3", 256),
    vision("efficientnet_b5", 64),
    vision("maxvit_t", 64),
    vision("resnet50", 128, precision="fp16"),
    vision("vit_b_16", 64, precision="fp16", optimizer="adamw-fused"),
    vision("convnext_tiny", 128, precision="fp16"),
    vision("resnet50", 128, optimizer="adam"),
    vision("resnet50", 128, optimizer="sgd"),
    vision("efficientnet_b0", 256, optimizer="adamw-fused"),
    vision("mobilenet_v2", 256, optimizer="adamw"),
    gpt("gpt-124m", 12, 768, 12, 1024, 16, precision="fp16", optimizer="sgd-momentum"),
    gpt("gpt-350m", 24, 1024, 16, 1024, 8, precision="fp16", optimizer="adamw"),
    gpt("d1024-l24-h8", 24, 1024, 8, 1024, 16),
    gpt("d1536-l12-h12", 12, 1536, 12, 2048, 8),
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 16),
    gpt("gpt-760m", 24, 1536, 16, 2048, 4, ckpt=True),
    gpt("gpt-124m", 12, 768, 12, 512, 32, optimizer="sgd"),
])

# A tenth held-out set (2026-12-03, new session, before any model change it might inform): vision steps in the
# reference runs' fp32 precisions (TF32 allowed, and strict fp32) on models whose fp32 steps no run has measured,
# reference-like bf16 configurations at other batch sizes, and GPTs with CUDA graphs, fp32 and plain SGD.
CONFIGS10 = held_out_set(10, [
    vision("resnet101", 64, precision="tf32"),
    vision("resnet34", 256, precision="tf32"),
    vision("efficientnet_b1", 64, precision="tf32"),
    vision("mobilenet_v2", 128, precision="tf32"),
    vision("regnet_y_800mf", 128, precision="tf32"),
    vision("convnext_small", 64, precision="tf32"),
    vision("vit_b_32", 128, precision="tf32"),
    vision("swin_t", 64, precision="tf32"),
    vision("densenet169", 64, precision="tf32"),
    vision("mnasnet1_0", 128, precision="tf32"),
    vision("vgg16", 64, precision="tf32"),
    vision("resnet18", 128, precision="fp32"),
    vision("vit_b_32", 64, precision="fp32"),
    vision("efficientnet_b0", 64, precision="fp32"),
    vision("mobilenet_v3_small", 256, precision="fp32"),
    vision("resnet50", 192),
    vision("vit_b_16", 96, optimizer="adamw-fused"),
    vision("efficientnet_b0", 192),
    vision("mobilenet_v3_large", 192),
    vision("resnet152", 128, precision="tf32", optimizer="adamw-fused"),
    gpt("gpt-350m", 24, 1024, 16, 512, 8, graphs=False, iters=20),
    gpt("gpt-350m", 24, 1024, 16, 512, 8, graphs=True, iters=20),
    gpt("gpt-124m", 12, 768, 12, 2048, 8, precision="tf32", optimizer="sgd-momentum"),
    gpt("d1024-l12", 12, 1024, 16, 1024, 4, precision="fp32"),
    gpt("gpt-760m", 24, 1536, 16, 512, 16, optimizer="sgd"),
    gpt("gpt-1.3b", 24, 2048, 16, 2048, 4, ckpt=True),
])

# An eleventh set (2026-12-04), defined before it is measured: TF32 steps the TF32 depthwise law and convolution
# efficiency (fitted to single convolutions of other networks and batches) have not seen: new depthwise shapes
# (ConvNeXt-B, EfficientNet-B2/B3/V2-S, MNASNet 0.5, ShuffleNetV2), other batches of probed networks, grouped
# convolutions, and strict fp32 depthwise (which keeps the 16-bit law).
CONFIGS11 = held_out_set(11, [
    vision("convnext_tiny", 128, precision="tf32"),
    vision("convnext_base", 32, precision="tf32"),
    vision("convnext_small", 32, precision="tf32"),
    vision("efficientnet_b2", 64, precision="tf32"),
    vision("efficientnet_b3", 64, precision="tf32"),
    vision("efficientnet_v2_s", 64, precision="tf32"),
    vision("mobilenet_v3_small", 256, precision="tf32"),
    vision("mobilenet_v3_large", 256, precision="tf32"),
    vision("mnasnet0_5", 256, precision="tf32"),
    vision("shufflenet_v2_x1_0", 256, precision="tf32"),
    vision("regnet_y_1_6gf", 128, precision="tf32"),
    vision("resnext50_32x4d", 64, precision="tf32"),
    vision("resnet50", 64, precision="tf32"),
    vision("densenet121", 128, precision="tf32"),
    vision("swin_s", 32, precision="tf32"),
    vision("vit_b_16", 64, precision="tf32"),
    vision("convnext_tiny", 32, precision="fp32"),
    vision("mobilenet_v2", 128, precision="fp32"),
])

# A twelfth set (2026-12-04, later session), defined before it is measured, blind: the host's launch probe is
# recorded before and after (--micro-launch) to test the launch-probe host scaling of the CPU costs
# (docs/calibration.md, "Host CPU speed from the launch probe"): launch-bound steps of many networks and GPTs,
# and GPU-bound steps of new shapes, precisions and optimizers, one near the memory limit.
CONFIGS12 = held_out_set(12, [
    vision("resnet50", 32),
    vision("resnet18", 64),
    vision("efficientnet_b0", 64),
    vision("mobilenet_v3_large", 128),
    vision("vit_b_16", 32),
    vision("swin_t", 32),
    vision("densenet121", 64),
    vision("regnet_x_400mf", 128),
    vision("convnext_tiny", 32),
    gpt("gpt-124m", 12, 768, 12, 256, 4, optimizer="sgd-momentum", graphs=False, iters=30),
    gpt("tiny", 4, 256, 4, 128, 8, optimizer="sgd-momentum", graphs=False, iters=50),
    gpt("d512-l8", 8, 512, 8, 512, 2, graphs=False, iters=30),
    gpt("gpt-350m", 24, 1024, 16, 1024, 12),
    gpt("gpt-760m", 24, 1536, 16, 2048, 4),
    gpt("gpt-124m", 12, 768, 12, 2048, 8, precision="fp16"),
    gpt("d1024-l12", 12, 1024, 16, 1024, 16, optimizer="sgd"),
    gpt("gpt-2.7b", 32, 2560, 32, 1024, 24),
    vision("resnet50", 192),
    vision("resnet101", 96, precision="tf32"),
    vision("vit_b_16", 96),
    vision("efficientnet_b1", 96),
    vision("wide_resnet50_2", 64),
])

# A thirteenth set (2026-12-04, later session), defined before it is measured: activation checkpointing crossed
# with the three optimizers, to see whether held-out set 2's gpt-350m b8 checkpointed SGD-momentum step (-20.7%,
# the one GPU-bound GPT miss over 25%) repeats on another host, and what it depends on.
CONFIGS13 = held_out_set(13, [
    gpt("gpt-350m", 24, 1024, 16, 1024, 8, optimizer="sgd-momentum", ckpt=True),
    gpt("gpt-350m", 24, 1024, 16, 1024, 8, optimizer="sgd-momentum"),
    gpt("gpt-350m", 24, 1024, 16, 1024, 8, ckpt=True),
    gpt("gpt-350m", 24, 1024, 16, 1024, 8, optimizer="sgd", ckpt=True),
    gpt("gpt-350m", 24, 1024, 16, 1024, 16, optimizer="sgd-momentum", ckpt=True),
    gpt("gpt-124m", 12, 768, 12, 1024, 16, optimizer="sgd-momentum", ckpt=True),
    gpt("gpt-760m", 24, 1536, 16, 1024, 8, optimizer="sgd-momentum", ckpt=True),
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 4, optimizer="sgd-momentum", ckpt=True),
])

# A fourteenth set (2026-12-04, later session), defined before it is measured, blind: checkpointed GPT steps the
# checkpointing CPU cost (117 us per recomputed call, fitted to the paired file and sets 13 and 2) has not seen:
# other sizes, batches and sequence lengths, TF32, fp16, gradient accumulation; and two plain steps for reference.
CONFIGS14 = held_out_set(14, [
    gpt("gpt-124m", 12, 768, 12, 1024, 8, ckpt=True),
    gpt("gpt-124m", 12, 768, 12, 512, 4, optimizer="sgd-momentum", ckpt=True),
    gpt("d768-l6", 6, 768, 12, 1024, 4, ckpt=True),
    gpt("gpt-350m", 24, 1024, 16, 1024, 4, ckpt=True),
    gpt("gpt-350m", 24, 1024, 16, 2048, 4, ckpt=True),
    gpt("gpt-760m", 24, 1536, 16, 1024, 2, ckpt=True),
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 1, ckpt=True),
    gpt("gpt-2.7b", 32, 2560, 32, 1024, 2, ckpt=True),
    gpt("gpt-350m", 24, 1024, 16, 1024, 4, precision="tf32", ckpt=True),
    gpt("gpt-124m", 12, 768, 12, 1024, 8, precision="fp16", ckpt=True),
    gpt("gpt-350m", 24, 1024, 16, 1024, 4, accum=4, ckpt=True),
    gpt("gpt-350m", 24, 1024, 16, 1024, 4),
    gpt("gpt-760m", 24, 1536, 16, 1024, 2),
])

# A fifteenth set (2026-12-04, third session), defined before it is measured, blind: the out-of-memory boundary and
# switches no held-out set has used. The memory model calls a step out of memory when its peak x 1.05 (allocator
# fragmentation) exceeds 139.3 GiB, i.e. above a 132.7 GiB peak; no measured step so far sat between 128 and 150 GiB.
# These GPT steps keep their logits to the end of the step as the reference runs' loop does (the memory model's
# default); predicted peaks (GiB) and verdicts at the time of writing are in the comments. Untied embeddings, and
# gradient accumulation for vision models, have not been measured before.
CONFIGS15 = held_out_set(15, [
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 12, optimizer="sgd-momentum", keep_logits=True, iters=6),  # 127.3 fits
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 13, optimizer="sgd-momentum", keep_logits=True, iters=6),  # 132.8 OOM
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 14, optimizer="sgd-momentum", keep_logits=True, iters=6),  # 138.2 OOM
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 9, keep_logits=True, iters=6),                             # 135.8 OOM
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 10, keep_logits=True, iters=6),                            # 141.2 OOM
    gpt("gpt-6.7b", 32, 4096, 32, 2048, 4, keep_logits=True, iters=6),                             # 130.4 fits
    gpt("gpt-6.7b", 32, 4096, 32, 2048, 5, keep_logits=True, iters=6),                             # 141.3 OOM
    gpt("gpt-2.7b", 32, 2560, 32, 1024, 26, keep_logits=True, iters=8),                            # 129.6 fits
    gpt("gpt-2.7b", 32, 2560, 32, 1024, 27, keep_logits=True, iters=8),                            # 133.3 OOM
    gpt("gpt-2.7b", 32, 2560, 32, 1024, 28, keep_logits=True, iters=8),                            # 136.9 OOM
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 44, keep_logits=True, iters=8),                            # 125.6 fits
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 46, keep_logits=True, iters=8),                            # 130.5 fits
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 48, keep_logits=True, iters=8),                            # 135.5 OOM
    gpt("gpt-760m", 24, 1536, 16, 1024, 60, keep_logits=True, iters=8),                            # 130.9 fits
    gpt("gpt-760m", 24, 1536, 16, 1024, 64, keep_logits=True, iters=8),                            # 139.0 OOM
    gpt("gpt-2.7b", 32, 2560, 32, 1024, 24, tied=False, keep_logits=True, iters=8),                # 124.0 fits
    gpt("gpt-124m", 12, 768, 12, 1024, 16, tied=False, keep_logits=True),
    gpt("gpt-350m", 24, 1024, 16, 1024, 8, optimizer="sgd-momentum", tied=False),
    vision("vit_l_16", 704, iters=8),        # 124.2 fits
    vision("vit_l_16", 768, iters=8),        # 135.2 OOM
    vision("resnet50", 3072, iters=8),       # 125.5 fits
    vision("resnet50", 3328, iters=8),       # 135.9 OOM
    vision("vit_h_14", 320, iters=8),        # 125.6 fits
    vision("vit_h_14", 352, iters=8),        # 137.6 OOM
    vision("convnext_base", 1152, iters=8),  # 136.2 OOM
    vision("resnet50", 64, accum=4),
    vision("vit_b_16", 32, accum=4),
])

# A sixteenth set (2026-12-04, third session), defined after the out-of-memory rule was fitted to set 15 (a step fits
# when its peak + 0.7 x its largest tensor + 3.76 GiB <= 139.29 GiB) and before it is measured, blind: pairs of
# other models, sequence lengths, precisions and optimizers on either side of the predicted limit, about 4% apart.
# Predicted at the time of writing: the first of each pair fits, the second does not (peak GiB in the comments).
CONFIGS16 = held_out_set(16, [
    gpt("gpt-350m", 24, 1024, 16, 1024, 79, keep_logits=True, iters=4),                             # 124.8
    gpt("gpt-350m", 24, 1024, 16, 1024, 82, keep_logits=True, iters=4),                             # 129.4 OOM
    gpt("gpt-760m", 24, 1536, 16, 2048, 30, keep_logits=True, iters=4),                             # 126.7
    gpt("gpt-760m", 24, 1536, 16, 2048, 32, keep_logits=True, iters=4),                             # 134.5 OOM
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 30, precision="tf32", keep_logits=True, iters=4),           # 128.2
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 32, precision="tf32", keep_logits=True, iters=4),           # 135.8 OOM
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 18, optimizer="sgd", keep_logits=True, iters=4),            # 130.7
    gpt("gpt-6.7b", 32, 4096, 32, 1024, 19, optimizer="sgd", keep_logits=True, iters=4),            # 135.9 OOM
    gpt("gpt-124m", 12, 768, 12, 1024, 117, precision="fp16", keep_logits=True, iters=4),           # 117.8
    gpt("gpt-124m", 12, 768, 12, 1024, 122, precision="fp16", keep_logits=True, iters=4),           # 122.7 OOM
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 111, ckpt=True, keep_logits=True, iters=3),                 # 119.2
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 115, ckpt=True, keep_logits=True, iters=3),                 # 122.9 OOM
    vision("vit_b_16", 2026, iters=4),         # 130.4
    vision("vit_b_16", 2107, iters=4),         # 135.6 OOM
    vision("swin_b", 936, iters=4),            # 128.9
    vision("swin_b", 973, iters=4),            # 134.0 OOM
    vision("densenet201", 1403, iters=4),      # 132.3
    vision("densenet201", 1459, iters=4),      # 137.6 OOM
    vision("resnet152", 800, iters=4, precision="tf32"),   # 132.7
    vision("resnet152", 832, iters=4, precision="tf32"),   # 138.0 OOM
])

# A seventeenth set (2026-12-04, third session), defined after the out-of-memory rule was fitted to sets 15 and 16
# (peak + 0.86 x largest tensor + 2.46 GiB <= 139.29 GiB) and before it is measured, blind: ten more pairs of other
# models, sequence lengths, precisions and optimizers about 4% apart on either side of the predicted limit.
CONFIGS17 = held_out_set(17, [
    gpt("gpt-2.7b", 32, 2560, 32, 2048, 13, keep_logits=True, iters=4),                             # 125.6
    gpt("gpt-2.7b", 32, 2560, 32, 2048, 14, keep_logits=True, iters=4),                             # 132.6 OOM
    gpt("gpt-760m", 24, 1536, 16, 1024, 61, optimizer="sgd-momentum", keep_logits=True, iters=4),   # 125.8
    gpt("gpt-760m", 24, 1536, 16, 1024, 63, optimizer="sgd-momentum", keep_logits=True, iters=4),   # 129.7 OOM
    gpt("gpt-350m", 24, 1024, 16, 1024, 54, precision="tf32", keep_logits=True, iters=4),           # 126.9
    gpt("gpt-350m", 24, 1024, 16, 1024, 56, precision="tf32", keep_logits=True, iters=4),           # 131.4 OOM
    gpt("gpt-6.7b", 32, 4096, 32, 512, 18, keep_logits=True, iters=4),                              # 133.5
    gpt("gpt-6.7b", 32, 4096, 32, 512, 19, keep_logits=True, iters=4),                              # 136.1 OOM
    gpt("gpt-124m", 12, 768, 12, 1024, 112, tied=False, keep_logits=True, iters=4),                 # 113.3
    gpt("gpt-124m", 12, 768, 12, 1024, 117, tied=False, keep_logits=True, iters=4),                 # 118.3 OOM
    vision("vit_l_16", 421, iters=4, precision="tf32"),   # 134.5
    vision("vit_l_16", 438, iters=4, precision="tf32"),   # 139.8 OOM
    vision("efficientnet_b4", 1265, iters=4),             # 132.6
    vision("efficientnet_b4", 1316, iters=4),             # 137.9 OOM
    vision("swin_t", 1972, iters=4),                      # 127.8
    vision("swin_t", 2051, iters=4),                      # 132.9 OOM
    vision("regnet_y_16gf", 1333, iters=4),               # 125.9
    vision("regnet_y_16gf", 1386, iters=4),               # 130.8 OOM
    vision("mobilenet_v3_large", 6237, iters=4),          # 128.0
    vision("mobilenet_v3_large", 6487, iters=4),          # 133.2 OOM
])

# An eighteenth set (2026-12-06), defined after the wide-index classes were fitted to operators timed alone
# (tools/measure_large_tensor.py and its --sweep) and before it is measured, blind: four pairs of networks whose
# largest BatchNorm, max-pool or depthwise tensor sits under and over 2^31 - 1 elements, none of them a step the
# classes were checked on. Predicted step ms and peak GiB with fit-h200.json of commit 6cf4689:
CONFIGS18 = held_out_set(18, [
    vision("efficientnet_b0", 1700, iters=4),   # 289.7 ms, 69.8 GiB (under: its 96 x 112 x 112 maps hold 2.05e9)
    vision("efficientnet_b0", 1900, iters=4),   # 459.2 ms, 78.0 GiB (over: 2.29e9; stride-2 depthwise, BN)
    vision("mobilenet_v2", 1700, iters=4),      # 212.8 ms, 62.0 GiB
    vision("mobilenet_v2", 1900, iters=4),      # 373.3 ms, 69.3 GiB
    vision("resnet18", 2600, iters=4),          # 191.0 ms, 28.9 GiB (under: 64 x 112 x 112 stem maps, 2.09e9)
    vision("resnet18", 2800, iters=4),          # 251.6 ms, 31.2 GiB (over: 2.25e9; BN and max-pool)
    vision("regnet_y_8gf", 700, iters=4),       # 487.2 ms, 56.4 GiB (under: 224 x 112 x 112, 1.97e9)
    vision("regnet_y_8gf", 800, iters=4),       # 601.1 ms, 64.3 GiB (over: 2.25e9; BN)
])

# A nineteenth set (2026-12-06, later session), defined before it is measured, blind: the first test of the 80% step
# ranges (sim-constants' step_host_cpu_log_sd / step_gpu_log_sd, fitted on the reference runs and sets 1-11) on a
# host no fit has seen: twelve eager steps at small batches, where the host's CPU sets the step, and ten GPU-bound
# ones; no (model, batch, precision) of them was measured before. Predicted step ms [10th, 90th percentile] with
# fit-h200.json and sim-constants.json of commit 69ade2b:
CONFIGS19 = held_out_set(19, [
    vision("resnet34", 32),                 # 18.4 [13.7, 24.6] launch-bound
    vision("resnet101", 32),                # 48.4 [36.1, 64.9] launch-bound
    vision("mobilenet_v2", 32),             # 22.2 [16.5, 29.7] launch-bound
    vision("efficientnet_b0", 32),          # 34.5 [25.7, 46.2] launch-bound
    vision("densenet121", 32),              # 59.4 [44.3, 79.6] launch-bound
    vision("swin_t", 16),                   # 35.9 [26.8, 48.1] launch-bound
    vision("convnext_tiny", 16),            # 25.5 [19.0, 34.2] launch-bound
    vision("regnet_y_800mf", 32),           # 34.1 [25.5, 45.7] launch-bound
    vision("shufflenet_v2_x1_0", 64),       # 26.1 [19.4, 34.9] launch-bound
    vision("mnasnet1_0", 64),               # 22.3 [16.6, 29.8] launch-bound
    vision("vit_b_32", 32),                 # 26.0 [19.4, 34.9] launch-bound
    gpt("gpt-124m", 12, 768, 12, 256, 2, optimizer="sgd-momentum", graphs=False, iters=30),  # 22.2 [16.6, 29.8]
    vision("resnet50", 160),                # 36.4 [35.0, 38.2]
    vision("vit_b_16", 80),                 # 38.1 [36.6, 39.8]
    vision("convnext_tiny", 96),            # 36.0 [34.6, 37.8]
    vision("efficientnet_b2", 96),          # 48.3 [36.0, 64.7] launch-bound
    vision("swin_t", 96),                   # 46.3 [44.7, 49.4]
    vision("mobilenet_v3_large", 384),      # 40.7 [39.1, 42.5]
    vision("densenet121", 192),             # 61.9 [60.3, 79.6]
    vision("resnet101", 128, precision="tf32"),  # 68.9 [66.3, 71.8]
    gpt("gpt-350m", 24, 1024, 16, 1024, 6),      # 46.6 [45.2, 56.2]
    gpt("gpt-124m", 12, 768, 12, 1024, 12),      # 36.6 [35.2, 38.2]
])

# A twentieth set (2026-12-06, third session), defined before it is measured, blind: GPU-bound steps of networks and
# batch sizes no run has measured, half of them DenseNets, whose transition average-pools were moved to the measured
# pool rates this session (commit 8cfa8bd) after an H100 kernel profile of DenseNet-121 b192. Predicted step ms
# [10th, 90th percentile] on an H200 | on an H100 (`--gpu h100-sxm`), with fit-h200.json and sim-constants.json of
# that commit; every peak under 25 GiB:
CONFIGS20 = held_out_set(20, [
    vision("densenet121", 256),                      # 83.5 [80.4, 88.7]   | 91.0 [84.7, 99.4]
    vision("densenet169", 320),                      # 124.6 [120.0, 131.2] | 136.3 [126.6, 148.2]
    vision("densenet201", 256),                      # 131.7 [127.1, 144.7] | 144.2 [134.4, 159.0]
    vision("densenet161", 192),                      # 116.4 [112.1, 122.9] | 127.2 [118.2, 138.5]
    vision("densenet121", 192, precision="tf32"),    # 89.9 [86.5, 93.8]   | 106.8 [99.0, 115.4]
    vision("densenet169", 256, precision="fp16"),    # 87.1 [84.8, 120.2]  | 99.1 [93.3, 120.3]
    vision("resnet152", 256),                        # 117.9 [113.4, 123.2] | 130.6 [121.1, 141.3]
    vision("efficientnet_b3", 192),                  # 72.2 [69.6, 78.4]   | 84.1 [78.2, 91.8]
    vision("convnext_small", 192),                   # 106.0 [101.9, 110.3] | 112.2 [103.9, 121.1]
    vision("vit_l_16", 48),                          # 67.6 [65.2, 72.3]   | 77.3 [71.8, 84.2]
    vision("swin_s", 160),                           # 116.7 [112.3, 121.9] | 133.4 [123.7, 144.1]
    vision("regnet_y_3_2gf", 256),                   # 107.5 [103.3, 111.9] | 115.3 [106.8, 124.4]
])

# A twenty-first set (2026-12-06, third session), defined before it is measured, blind for BatchNorm's bandwidth
# share (class_bandwidth_share 0.634, fitted on BatchNorm probes alone): GPU-bound BatchNorm networks no run has
# measured, on an H100. Predicted step ms [10th, 90th percentile] with `--gpu h100-sxm`, fit-h200.json and
# sim-constants.json of the commit that adds this set; after "|" the SM rule's point (the share 0):
CONFIGS21 = held_out_set(21, [
    vision("resnet50", 320),                         # 79.4 [73.6, 85.7]   | 75.8
    vision("mobilenet_v3_large", 512),               # 65.2 [60.4, 70.3]   | 62.8
    vision("resnext50_32x4d", 192),                  # 64.5 [59.8, 69.6]   | 61.7
    vision("wide_resnet101_2", 128),                 # 79.0 [73.4, 85.8]   | 76.2
    vision("regnet_x_8gf", 192),                     # 95.3 [88.3, 102.9]  | 92.5
    vision("mnasnet1_3", 384),                       # 69.6 [64.5, 75.1]   | 66.7
    vision("densenet121", 320),                      # 116.1 [107.6, 125.5] | 110.9
    vision("resnet101", 192, precision="fp16"),      # 65.4 [61.1, 73.2]   | 63.4
    vision("resnet50", 192, precision="tf32"),       # 76.7 [71.1, 82.8]   | 76.1
    vision("vgg16_bn", 96),                          # 45.1 [41.8, 48.6]   | 43.7
    vision("efficientnet_b4", 160),                  # 96.5 [89.9, 106.2]  | 93.7
])

# A twenty-second set (2026-12-06, fourth session), defined and predicted before it is measured, blind: GPT shapes,
# precisions, optimizers, checkpointing and accumulation, and vision networks at batch sizes no run has measured.
# Predictions are in calibrate/probes/results/holdout22-predictions-2026-12-06.txt (made with the commit that adds
# this set, for an H200 and for an H100 `--gpu h100-sxm`); the set runs on whichever card the device machine lends.
CONFIGS22 = held_out_set(22, [
    gpt("gpt-760m", 24, 1536, 16, 2048, 6),
    gpt("gpt-350m", 24, 1024, 16, 2048, 8, precision="fp16", ckpt=True),
    gpt("gpt-124m", 12, 768, 12, 1024, 16, optimizer="adamw"),
    gpt("d1024-l12", 12, 1024, 8, 4096, 4),
    gpt("gpt-1.3b", 24, 2048, 16, 1024, 4, accum=4, ckpt=True),
    gpt("d1536-l16", 16, 1536, 12, 512, 24, precision="tf32"),
    vision("resnext101_32x8d", 128),
    vision("efficientnet_v2_s", 256),
    vision("swin_b", 96),
    vision("vit_b_16", 192, precision="fp16"),
    vision("convnext_base", 128, optimizer="adamw-fused"),
    vision("wide_resnet50_2", 256, precision="tf32"),
    vision("regnet_y_8gf", 192),
    vision("resnet50", 256, accum=2),
])

# ------------------------------------------------------------------------------------------------------ model

class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers, d, heads, seq, ckpt, tied=True):
        super().__init__()
        self.ckpt = ckpt
        self.wte = nn.Embedding(VOCAB, d)
        self.wpe = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB, bias=False)
        if tied:
            self.head.weight = self.wte.weight  # tied embeddings

    def forward(self, idx, targets, keep_logits=False):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.ckpt and self.training else blk(x)
        logits = self.head(self.lnf(x))
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))
        return (loss, logits) if keep_logits else loss


def n_params(model):
    return sum(p.numel() for p in model.parameters())  # parameters() yields the tied weight once

# ------------------------------------------------------------------------------------------------ measurement

class PowerSampler:
    """Mean NVML utilisation and board power, sampled every 50 ms while running."""

    def __init__(self):
        self.util, self.power, self._stop = [], [], threading.Event()
        try:
            import pynvml
            pynvml.nvmlInit()
            self._nvml = pynvml
            self._h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        except Exception:  # NVML missing: the fields are left out
            self._nvml = None

    def __enter__(self):
        if self._nvml:
            self._t = threading.Thread(target=self._run, daemon=True)
            self._t.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            try:
                self.util.append(self._nvml.nvmlDeviceGetUtilizationRates(self._h).gpu)
                self.power.append(self._nvml.nvmlDeviceGetPowerUsage(self._h) / 1000.0)
            except Exception:
                pass
            self._stop.wait(0.05)

    def __exit__(self, *exc):
        self._stop.set()
        if self._nvml:
            self._t.join()

    def fields(self):
        out = {}
        if self.util:
            out["gpu_util_pct"] = round(sum(self.util) / len(self.util), 1)
        if self.power:
            out["gpu_power_w"] = round(sum(self.power) / len(self.power), 1)
        return out


def set_precision_flags(precision):
    tf32 = precision != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def autocast(precision, graphs=False):
    if precision in ("bf16", "fp16"):
        dt = torch.bfloat16 if precision == "bf16" else torch.float16
        return torch.autocast("cuda", dtype=dt, cache_enabled=not graphs)
    return torch.autocast("cuda", enabled=False)


def make_optimizer(name, params):
    if name == "adamw-fused":
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    if name in ("adamw", "adam"):  # foreach, PyTorch's default on CUDA when fused is not asked for
        return (torch.optim.AdamW if name == "adamw" else torch.optim.Adam)(params, lr=1e-4, foreach=True)
    if name == "sgd-momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    return torch.optim.SGD(params, lr=1e-3)


def percentile(sorted_v, q):
    i = (len(sorted_v) - 1) * q
    lo, hi = int(i), min(int(i) + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (i - lo)


def time_steps(step, warmup, iters):
    """Runs warm-up steps, then `iters` timed steps; returns (step_ms, [per-step ms], sampler fields)."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    with PowerSampler() as ps:
        t0 = time.perf_counter()
        for a, b in ev:
            a.record()
            step()
            b.record()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
    per = sorted(a.elapsed_time(b) for a, b in ev)
    return (t1 - t0) * 1000.0 / iters, per, ps.fields()


def begin_host_measurement(tool, tag):
    """Start of a measurement of this host's CPU side: bf16 flags, the common fields and the host's launch probe
    (`micro/launch-before-TAG`); None (with a line on stderr) when there is no CUDA device."""
    if not torch.cuda.is_available():
        print(f"{tool}: no CUDA device", file=sys.stderr)
        return None
    set_precision_flags("bf16")
    common = common_fields()
    return common, dict(micro_launch(common), id=f"micro/launch-before-{tag}")


def end_host_measurement(path, records, common, tag):
    """Appends the launch probe after the runs (`micro/launch-after-TAG`) and writes the records as JSON lines."""
    records.append(dict(micro_launch(common), id=f"micro/launch-after-{tag}"))
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return 0


def time_interleaved(steps, records, common, rounds, issue_steps, piped_steps):
    """Times several step functions round-robin, so that each sees the same host state as the others: per round and
    step, the host's issue time alone (after a synchronize, until step() returns; median of `issue_steps`) and the
    pipelined step time (mean of `piped_steps`). Fills each record with step_ms / issue_ms (medians over rounds), the
    per-round values and `common`, prints a line each and returns the records."""
    issue = [[] for _ in steps]
    piped = [[] for _ in steps]
    for _ in range(rounds):
        for i, step in enumerate(steps):
            iss = []
            for _ in range(issue_steps):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                step()
                iss.append((time.perf_counter() - t0) * 1e3)
            torch.cuda.synchronize()
            issue[i].append(statistics.median(iss))
            t0 = time.perf_counter()
            for _ in range(piped_steps):
                step()
            torch.cuda.synchronize()
            piped[i].append((time.perf_counter() - t0) * 1e3 / piped_steps)
    for rec, iss, pip in zip(records, issue, piped):
        rec.update({"step_ms": round(statistics.median(pip), 3), "step_ms_rounds": [round(v, 3) for v in pip],
                    "issue_ms": round(statistics.median(iss), 3), "issue_ms_rounds": [round(v, 3) for v in iss],
                    "iters": (issue_steps + piped_steps) * rounds})
        rec.update(common)
        print(f"{rec['id']:<52} step {rec['step_ms']:8.3f} ms  issue {rec['issue_ms']:8.3f} ms", flush=True)
    return records


def micro_launch(common, n=20000, reps=5):
    """The reference runs' `launch` probe: tiny kernels (in-place add on one element) launched one by one from
    Python, and the same kernels replayed from a CUDA graph; microseconds per kernel, median of `reps`."""
    x = torch.zeros(1, device="cuda")
    eager, graph = [], []
    for _ in range(reps):
        for _ in range(1000):
            x.add_(1)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        torch.cuda.synchronize()
        eager.append((time.perf_counter() - t0) * 1e6 / n)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(1000):
            x.add_(1)
    for _ in range(reps):
        g.replay()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n // 1000):
            g.replay()
        torch.cuda.synchronize()
        graph.append((time.perf_counter() - t0) * 1e6 / n)
    rec = {"kind": "micro", "probe": "launch", "eager_us_per_kernel": round(sorted(eager)[reps // 2], 3),
           "graph_us_per_kernel": round(sorted(graph)[reps // 2], 3), "eager_us_all": [round(v, 3) for v in eager]}
    rec.update(common)
    return rec


def gpt_step_fn(c, model, opt):
    dev = "cuda"
    b, s, accum, prec = c["batch"], c["seq"], c["grad_accum"], c["precision"]
    x = torch.randint(0, VOCAB, (b, s), device=dev)
    y = torch.randint(0, VOCAB, (b, s), device=dev)
    scaler = torch.amp.GradScaler("cuda") if prec == "fp16" else None

    keep = c.get("logits_kept", False)

    def step():
        for _ in range(accum):
            with autocast(prec):
                if keep:  # the logits stay referenced until the step returns
                    loss, logits = model(x, y, True)
                    loss = loss / accum
                else:
                    loss = model(x, y) / accum
            (scaler.scale(loss) if scaler else loss).backward()
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)

    if not c.get("cuda_graphs"):
        return step
    # Whole-step capture (PyTorch's documented recipe): warm up on a side stream, capture once, replay.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            with autocast(prec, graphs=True):
                loss = model(x, y)
            loss.backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        with autocast(prec, graphs=True):
            static_loss = model(x, y)
        static_loss.backward()
        opt.step()
    return graph.replay


def run_gpt(c, rec):
    with torch.device("cuda"):
        model = GPT(c["layers"], c["d_model"], c["heads"], c["seq"], c["activation_checkpointing"],
                    c.get("tied_embeddings", True))
    model.train()
    rec["params"] = n_params(model)
    opt = make_optimizer(c["optimizer"], model.parameters())
    step = gpt_step_fn(c, model, opt)
    step_ms, per, extra = time_steps(step, 3, c["iters"])
    tokens = c["batch"] * c["grad_accum"] * c["seq"]
    rec.update(step_fields(step_ms, per, c["iters"]))
    rec.update(extra)
    rec["tokens_per_s"] = round(tokens / (step_ms / 1000.0))
    rec["samples_per_s"] = round(c["batch"] * c["grad_accum"] / (step_ms / 1000.0), 2)


def step_fields(step_ms, per, iters):
    return {"step_ms": round(step_ms, 3), "step_ms_p10": round(percentile(per, 0.1), 3),
            "step_ms_p50": round(percentile(per, 0.5), 3), "step_ms_p90": round(percentile(per, 0.9), 3),
            "peak_mem_gib": round(torch.cuda.max_memory_allocated() / GIB, 2),
            "peak_reserved_gib": round(torch.cuda.max_memory_reserved() / GIB, 2), "iters": iters}


def vision_flops(model_fn):
    from torch.utils.flop_counter import FlopCounterMode
    # nn.MultiheadAttention's fused inference path is not counted by flop_counter (ViTs lost their attention
    # FLOPs); off while counting, on again for the timed steps.
    torch.backends.mha.set_fastpath_enabled(False)
    m = model_fn().cuda().eval()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        m(x)
    torch.backends.mha.set_fastpath_enabled(True)
    return int(fc.get_total_flops()), n_params(m)


def vision_step(model, opt, x, y, precision, accum=1):
    """One optimizer step of a torchvision classifier on (x, y), `accum` micro-batches of it: autocast for bf16 /
    fp16 (fp16 with a GradScaler, PyTorch's AMP recipe), fp32 tensors otherwise (set_precision_flags decides
    TF32)."""
    scaler = torch.amp.GradScaler("cuda") if precision == "fp16" else None

    def step():
        for _ in range(accum):
            with autocast(precision):
                out = model(x)
                # GoogLeNet and Inception v3 return their auxiliary heads' logits too in training mode: train all
                # heads (torchvision's reference scripts weight the auxiliary losses; the work is the same).
                outs = [o for o in out if o is not None] if isinstance(out, tuple) else [out]
                loss = sum(F.cross_entropy(o.float(), y) for o in outs) / accum
            (scaler.scale(loss) if scaler else loss).backward()
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def run_vision(c, rec):
    import torchvision
    fn = getattr(torchvision.models, c["model"])
    rec["fwd_flops_per_sample"], rec["params"] = vision_flops(lambda: fn(weights=None))
    torch.backends.cudnn.benchmark = c["cudnn_benchmark"]
    fmt = torch.channels_last if c["channels_last"] else torch.contiguous_format
    model = fn(weights=None).cuda().to(memory_format=fmt).train()
    opt = make_optimizer(c["optimizer"], model.parameters())
    x = torch.randn(c["batch"], 3, 224, 224, device="cuda").to(memory_format=fmt)
    y = torch.randint(0, 1000, (c["batch"],), device="cuda")
    step = vision_step(model, opt, x, y, c["precision"], c.get("grad_accum", 1))
    step_ms, per, extra = time_steps(step, 3, c["iters"])
    rec.update(step_fields(step_ms, per, c["iters"]))
    rec.update(extra)
    rec["samples_per_s"] = round(c["batch"] * c.get("grad_accum", 1) / (step_ms / 1000.0), 1)
    rec["image_hw"] = [224, 224]

# ------------------------------------------------------------------------------------------------------- main

def common_fields():
    drv = None
    try:
        import pynvml
        pynvml.nvmlInit()
        drv = pynvml.nvmlSystemGetDriverVersion()
        drv = drv.decode() if isinstance(drv, bytes) else drv
    except Exception:
        pass
    ram = None
    try:
        with open("/proc/meminfo") as f:
            ram = round(int(f.readline().split()[1]) / 1024 ** 2)
    except Exception:
        pass
    cpu = None  # which host: lent hosts of one kind issue eager steps up to 2x apart (docs/calibration.md)
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), None)
    except Exception:
        pass
    return {"device": torch.cuda.get_device_name(),
            "host": {"cpu_cores": os.cpu_count(), "ram_gib": ram, "cpu_model": cpu},
            "software": {"torch": torch.__version__, "cuda": torch.version.cuda,
                         "cudnn": torch.backends.cudnn.version(), "driver": drv},
            "measured_on": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}


def describe(c):
    rec = {"id": c["id"], "kind": "train"}
    for k, v in c.items():
        if k not in ("id", "iters"):
            rec[k] = v
    if c["model"] == "gpt":
        # GPT.forward returns the loss alone, so the logits die before backward (logits_kept: false; the
        # reference runs' loop keeps them, which the memory model assumes unless told otherwise).
        rec.update(vocab=VOCAB, attention="sdpa-causal", tied_embeddings=c.get("tied_embeddings", True),
                   logits_kept=c.get("logits_kept", False))
    rec["data"] = "synthetic-on-gpu"
    return rec


def measure(c, common):
    rec = describe(c)
    set_precision_flags(c["precision"])
    torch.manual_seed(0)
    t0 = time.perf_counter()
    try:
        (run_gpt if c["model"] == "gpt" else run_vision)(c, rec)
    except torch.cuda.OutOfMemoryError:
        for k in [k for k in rec if k.startswith("step_ms") or k in ("peak_mem_gib", "iters", "params")]:
            rec.pop(k, None)
        rec["oom"] = True
        rec["error"] = "OutOfMemoryError"
    rec.update(common)
    gc.collect()
    torch.cuda.empty_cache()
    print(f"{c['id']:<48} {rec.get('step_ms', 'OOM' if rec.get('oom') else '-')!s:>10} ms  "
          f"peak {rec.get('peak_mem_gib', '-')} GiB  ({time.perf_counter() - t0:.1f} s)", flush=True)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="JSONL file to write")
    ap.add_argument("--only", default="", help="run only configurations whose id contains this")
    ap.add_argument("--list", action="store_true", help="print the configurations and exit")
    ap.add_argument("--set", type=int, default=1, choices=tuple(range(1, 23)),
                    help="which held-out set (CONFIGS, CONFIGS2, ... CONFIGS22)")
    ap.add_argument("--micro-launch", action="store_true",
                    help="also record the host's eager launch cost (micro/launch) before and after the runs")
    a = ap.parse_args()
    sets = {1: CONFIGS, 2: CONFIGS2, 3: CONFIGS3, 4: CONFIGS4, 5: CONFIGS5, 6: CONFIGS6, 7: CONFIGS7, 8: CONFIGS8,
            9: CONFIGS9, 10: CONFIGS10, 11: CONFIGS11, 12: CONFIGS12, 13: CONFIGS13, 14: CONFIGS14, 15: CONFIGS15,
            16: CONFIGS16, 17: CONFIGS17, 18: CONFIGS18, 19: CONFIGS19, 20: CONFIGS20, 21: CONFIGS21, 22: CONFIGS22}
    todo = [c for c in sets[a.set] if a.only in c["id"]]
    if a.list:
        for c in todo:
            print(json.dumps(describe(c)))
        return 0
    if not a.out:
        ap.error("--out is required")
    if not torch.cuda.is_available():
        print("measure_holdout: no CUDA device", file=sys.stderr)
        return 1
    if not a.micro_launch:
        return write_records(todo, measure, a.out)
    common = common_fields()
    before = dict(micro_launch(common), id=f"micro/launch-before-set{a.set}")
    rc = write_records(todo, measure, a.out)
    after = dict(micro_launch(common), id=f"micro/launch-after-set{a.set}")
    with open(a.out, "a") as f:
        for r in (before, after):
            print(f"{r['id']}: eager {r['eager_us_per_kernel']} us, graph {r['graph_us_per_kernel']} us", flush=True)
            f.write(json.dumps(r) + "\n")
    return rc


def write_records(todo, measure_fn, out):
    """Measures each configuration with measure_fn(c, common) into JSON lines; returns 1 if any failed."""
    common = common_fields()
    failed = 0
    with open(out, "w") as f:
        for c in todo:
            try:
                rec = measure_fn(c, common)
            except Exception as e:  # a broken configuration must not cost the others
                failed += 1
                print(f"{c['id']}: FAILED {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                gc.collect()
                torch.cuda.empty_cache()
                continue
            f.write(json.dumps(rec) + "\n")
            f.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
