"""Shared by the probe and profile tools: the CUDA kernels of a torch.profiler profile, and wall-clock timing."""
import torch


def cuda_ms(fn, iters, warmup=3):
    """Mean milliseconds of fn() over `iters` back-to-back calls after `warmup`, by CUDA events around the loop."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def cuda_kernels(prof):
    """Yields (kernel name, GPU milliseconds) for every CUDA kernel event of a finished torch.profiler profile."""
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        dur = ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
        if dur > 0:
            yield ev.name, dur / 1000


def busy_ms(prof):
    """GPU milliseconds during which at least one kernel of a finished torch.profiler profile ran: the union of
    the kernels' intervals, so kernels that cuDNN runs concurrently count once and the gaps between them not."""
    spans = []
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        dur = ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
        if dur > 0:
            spans.append((ev.time_range.start, ev.time_range.start + dur))
    spans.sort()
    busy, end = 0.0, float("-inf")
    for s, e in spans:
        if s > end:
            busy += e - s
            end = e
        elif e > end:
            busy += e - end
            end = e
    return busy / 1000


def first_kernel_name(fn, width=120):
    """The name of the first CUDA kernel one call of fn() runs (torch.profiler), cut to `width` characters."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [k for k, _ in cuda_kernels(prof)]
    return names[0][:width] if names else ""


def profiled_ms(fn, iters=5):
    """(GPU ms, kernels) per call of fn(), summed over the kernels it runs (torch.profiler, `iters` calls)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    ms = kernels = 0.0
    for _, k_ms in cuda_kernels(prof):
        ms += k_ms / iters
        kernels += 1 / iters
    return round(ms, 5), round(kernels, 2)


def forward_backward_ms(module, x, iters=5):
    """Kernel time of module(x) and of its backward (gradients of x and of every parameter, for a random output
    gradient), each (GPU ms, kernels) per call, after three warm-up calls of both."""
    y = module(x)
    g = torch.randn_like(y)
    inputs = (x, *module.parameters())

    def fwd():
        return module(x)

    def bwd():
        torch.autograd.grad(y, inputs, g, retain_graph=True)

    for _ in range(3):
        fwd()
        bwd()
    torch.cuda.synchronize()
    return profiled_ms(fwd, iters), profiled_ms(bwd, iters)
