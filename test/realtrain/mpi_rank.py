#!/usr/bin/python3
"""One rank of the realtrain mpi scenario: Horovod-style data parallelism over
Open MPI's TCP transport (mpi4py), started by mpirun in its own namespace.

  mpi_rank.py ADDRESSES ITERATIONS WARMUP OUTDIR

ADDRESSES: the ranks' addresses, comma-separated, in rank order. Per
iteration: forward and backward of the same MLP as rank.py's ddp, one
Allreduce of all gradients (Horovod's fusion buffer holds them all), and an
Allgather of each rank's per-sample losses and features (Horovod's
allgather of metrics; 32 KiB a rank). Writes OUTDIR/RANK.json like
rank.py: iteration starts, every call (ops.py), and the connections: Open
MPI opens its BTL connections lazily, so each rank records, after its last
iteration, the TCP connections its own process holds to other ranks (the
BTL's: group "mpi", DP) and those the rest of its namespace holds to other
ranks (the launcher's daemons among themselves: group "launcher", Other).
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from mpi4py import MPI

import conns
import ops

torch.set_num_threads(1)
FEATURES = 64  # floats per sample gathered: 128 samples x 64 x 4 B = 32 KiB a rank


def connections(peers, me):
    """(this process's connections to other ranks, its namespace's others among ranks)."""
    own, others = conns.established_split()

    def among(cs):
        return sorted(list(c) for c in cs if c[0] == me and c[2] in peers and c[2] != me)
    return among(own), among(others)


def main():
    addrs, iterations, warmup, outdir = sys.argv[1].split(","), int(sys.argv[2]), \
        int(sys.argv[3]), sys.argv[4]
    comm = MPI.COMM_WORLD
    rank, world = comm.Get_rank(), comm.Get_size()
    assert world == len(addrs)
    log = ops.OpLog()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 384), torch.nn.ReLU(),
                                torch.nn.Linear(384, 384), torch.nn.ReLU(),
                                torch.nn.Linear(384, 10))
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.01)
    gen = torch.Generator().manual_seed(500 + rank)
    grads = np.empty(sum(q.numel() for q in params), dtype=np.float32)
    gathered = np.empty((world, 128 * FEATURES), dtype=np.float32)
    # rank 0's parameters to everyone, as hvd.broadcast_parameters does
    flat = np.concatenate([q.detach().numpy().reshape(-1) for q in params])
    log.run("Broadcast", "mpi", flat.nbytes, lambda: comm.Bcast(flat, root=0))
    comm.Barrier()

    def step():
        x = torch.randn(128, 256, generator=gen)
        y = torch.randint(0, 10, (128,), generator=gen)
        opt.zero_grad()
        h = model[:4](x)
        F.cross_entropy(model[4](h), y).backward()
        off = 0
        for q in params:
            grads[off:off + q.numel()] = q.grad.numpy().reshape(-1)
            off += q.numel()
        log.run("AllReduce", "mpi", grads.nbytes,
                lambda: comm.Allreduce(MPI.IN_PLACE, grads, op=MPI.SUM))
        mine = h[:, :FEATURES].detach().numpy().astype(np.float32).reshape(-1)
        log.run("AllGather", "mpi", mine.nbytes, lambda: comm.Allgather(mine, gathered))
        off = 0
        for q in params:
            q.grad.copy_(torch.from_numpy(grads[off:off + q.numel()]).view_as(q) / world)
            off += q.numel()
        opt.step()

    starts = []
    for _ in range(warmup + iterations):
        starts.append(time.time_ns())
        step()
    end = time.time_ns()
    own, others = connections(set(addrs), addrs[rank])
    comm.Barrier()
    layout = {"p": 1, "t": 1, "d": world, "ep": 1, "sharded": False,
              "groups": {"DP": [list(range(world))]}}
    with open(os.path.join(outdir, "%d.json" % rank), "w") as f:
        json.dump({"rank": rank, "address": addrs[rank], "warmup": warmup,
                   "iteration_starts_ns": starts, "end_ns": end, "layout": layout,
                   "groups": [{"name": "mpi", "class": "DP", "ranks": list(range(world)),
                               "conns": own},
                              {"name": "launcher", "class": "Other", "ranks": list(range(world)),
                               "conns": others}],
                   "ops": log.dump()}, f)


if __name__ == "__main__":
    main()
