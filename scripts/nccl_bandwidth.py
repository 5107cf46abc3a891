#!/usr/bin/env python3
"""The exchange's reference bandwidths on a machine of several GPUs, through PyTorch: NCCL's
all-to-all (torch.distributed all_to_all_single, one process a GPU) and the driver's peer copy
(a tensor copied from GPU 0 to GPU 1), each the median of many event-timed runs after warm-up.

Usage (on the GPU machine): python3 scripts/nccl_bandwidth.py [LOG2_BYTES_PER_GPU ...]
Prints one line per size: bytes each GPU holds, the all-to-all's bytes crossing between GPUs
per second (the sum over ranks of what each sends to the others, as benches/gpu_sharded.rs
counts its exchange), and the peer copy's bytes per second. NVLink multicast stays off.
"""
import os
import statistics
import sys
import time

os.environ["NCCL_NVLS_ENABLE"] = "0"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

WARMUP = 3
REPS = 15
PORT = "29517"


def time_ms(fn, device):
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(REPS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(device)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def all_to_all(rank, world, sizes, results):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = PORT
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    for log2 in sizes:
        n = (1 << log2) // 4
        send = torch.randint(0, 2**31 - 1, (n,), dtype=torch.int32, device=rank)
        recv = torch.empty_like(send)
        dist.barrier()
        ms = time_ms(lambda: dist.all_to_all_single(recv, send), rank)
        crossing = (1 << log2) * (world - 1) // world * world
        if rank == 0:
            results[log2] = crossing / (ms / 1e3) / 1e9
    dist.destroy_process_group()


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [29, 31]
    world = torch.cuda.device_count()
    if world < 2:
        print("needs two GPUs")
        return
    manager = mp.Manager()
    results = manager.dict()
    mp.spawn(all_to_all, args=(world, sizes, results), nprocs=world, join=True)
    for log2 in sizes:
        n = (1 << log2) // 4
        src = torch.randint(0, 2**31 - 1, (n,), dtype=torch.int32, device=0)
        dst = torch.empty(n, dtype=torch.int32, device=1)
        # The copy runs on both devices: timed on the host clock, both synchronized.
        times = []
        for rep in range(WARMUP + REPS):
            torch.cuda.synchronize(0)
            torch.cuda.synchronize(1)
            start = time.perf_counter()
            dst.copy_(src)
            torch.cuda.synchronize(0)
            torch.cuda.synchronize(1)
            if rep >= WARMUP:
                times.append(time.perf_counter() - start)
        peer = (1 << log2) / statistics.median(times) / 1e9
        print(f"{world} GPUs, 2^{log2} bytes a GPU: NCCL all-to-all {results[log2]:.1f} GB/s crossing; "
              f"peer copy GPU 0 -> 1 {peer:.1f} GB/s")


if __name__ == "__main__":
    main()
