"""The CUDA kernels of a torch.profiler profile: (name, GPU ms) per kernel launch, for the probe and profile tools."""
import torch


def cuda_kernels(prof):
    """Yields (kernel name, GPU milliseconds) for every CUDA kernel event of a finished torch.profiler profile."""
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        dur = ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
        if dur > 0:
            yield ev.name, dur / 1000
