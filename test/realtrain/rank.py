#!/usr/bin/python3
"""One rank of a realtrain scenario: real PyTorch training over gloo (TCP, CPU).

Runs inside the rank's own network namespace (GLOO_SOCKET_IFNAME names its
interface). Besides training it records the truth the framework knows:

  - the start of every iteration (CLOCK_REALTIME ns, the capture's clock);
  - for each process group, the TCP connections it opened: gloo connects the
    group's full mesh while the group is created, so the connections that
    appear between just before new_group() and the world barrier after it
    belong to that group and carry its class.

  rank.py SCENARIO RANK WORLD MASTER_ADDR PORT ITERATIONS WARMUP OUT.json

SCENARIO: ddp (bucketed gradient all-reduce), ptd (p,t,d = 2,2,2 with 1F1B),
moe (token-dependent all_to_all_single among experts, DP for dense weights),
gradacc (DDP accumulating 4 micro-batches under no_sync), pp4 (1F1B, p,d =
4,2, 8 micro-batches), tp4 (Megatron TP over 4 hosts, d = 2), zero3 (every
layer's parameters sharded: all-gather before it forward and backward, a
reduce-scatter of its gradients after its backward), ps (4 workers push
gradient shards to 2 servers and pull the parameters back).

  - every collective and point-to-point call (ops.py: operation, group,
    start and end, bytes), the operation truth of each connection's frames.
"""
import json
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import conns
import ops

torch.set_num_threads(1)
OPS = ops.TorchOps(dist)


class Groups:
    """Creates process groups and records the connections each one opened."""

    def __init__(self, peers):
        self.peers = set(peers)
        self.records = []

    def _new(self):
        return sorted(c for c in conns.established() if c[2] in self.peers)

    def world(self, master, port, rank, world):
        before = set(self._new())
        dist.init_process_group("gloo", init_method="tcp://%s:%d" % (master, port),
                                rank=rank, world_size=world)
        OPS.barrier()
        self._record("world", "Other", list(range(world)), before)

    def group(self, name, cls, ranks):
        before = set(self._new())
        g = dist.new_group(ranks)
        OPS.barrier()
        self._record(name, cls, ranks, before)
        if dist.get_rank() not in ranks:
            return None
        OPS.name(g, name)
        return g

    def _record(self, name, cls, ranks, before):
        opened = [list(c) for c in self._new() if c not in before]
        self.records.append({"name": name, "class": cls, "ranks": ranks, "conns": opened})


# ---- (a) DDP: bucketed gradient all-reduce -------------------------------------------


def ddp(groups, rank, world, accumulate=1):
    """accumulate > 1: gradient accumulation, the first micro-batches under no_sync()."""
    from torch.nn.parallel import DistributedDataParallel

    dp = groups.group("dp", "DP", list(range(world)))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 384), torch.nn.ReLU(),
                                torch.nn.Linear(384, 384), torch.nn.ReLU(),
                                torch.nn.Linear(384, 10))
    # bucket_cap_mb 0.25, yet the calls logged (ops.py) show one all-reduce of
    # all 1,001,512 B per iteration: torch 1.13 fills a first bucket of 1 MiB
    # (dist._DEFAULT_FIRST_BUCKET_BYTES) and never rebuilt the buckets here.
    # The constructor checks the parameters' shapes and broadcasts rank 0's
    # values over dp: logged as one Broadcast (its bytes are the parameters)
    size = sum(ops.nbytes(q) for q in model.parameters())
    call = OPS.begin("Broadcast", dp, size)
    model = DistributedDataParallel(model, process_group=dp, bucket_cap_mb=0.25)
    call.end()
    model.register_comm_hook(None, OPS.ddp_hook(dp, world))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(100 + rank)
    layout = {"p": 1, "t": 1, "d": world, "ep": 1, "sharded": False,
              "groups": {"DP": [list(range(world))]}}
    if accumulate > 1:
        layout["accumulate"] = accumulate

    def micro_step():
        x = torch.randn(128 // accumulate, 256, generator=gen)
        y = torch.randint(0, 10, (128 // accumulate,), generator=gen)
        (F.cross_entropy(model(x), y) / accumulate).backward()

    def step():
        opt.zero_grad()
        with model.no_sync():
            for _ in range(accumulate - 1):
                micro_step()
        micro_step()  # its backward all-reduces the accumulated gradients
        opt.step()

    return step, layout


def gradacc(groups, rank, world):
    return ddp(groups, rank, world, accumulate=4)


# ---- (b) hybrid parallel p,t,d = 2,2,2 ---------------------------------------------


class CopyToTP(torch.autograd.Function):
    """Identity forward; the input gradient all-reduced over TP backward."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, g):
        g = g.contiguous()
        OPS.all_reduce(g, group=ctx.group)
        return g, None


class ReduceFromTP(torch.autograd.Function):
    """The partial outputs all-reduced over TP forward; identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.contiguous()
        OPS.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, g):
        return g, None


class TPBlock(torch.nn.Module):
    """An MLP block split Megatron-style: column-parallel, then row-parallel."""

    def __init__(self, hidden, ffn, t, group):
        super().__init__()
        self.group = group
        self.w1 = torch.nn.Parameter(torch.randn(hidden, ffn // t) * hidden**-0.5)
        self.w2 = torch.nn.Parameter(torch.randn(ffn // t, hidden) * ffn**-0.5)

    def forward(self, h):
        if self.group is None:  # t = 1: no tensor parallelism
            return h + F.gelu(h @ self.w1) @ self.w2
        x = CopyToTP.apply(h, self.group)
        x = F.gelu(x @ self.w1) @ self.w2
        return h + ReduceFromTP.apply(x, self.group)


def ptd(groups, rank, world, p=2, t=2, d=2, micro=4):
    """Megatron-style p,t,d; a dimension of 1 has no groups (and no traffic)."""
    assert world == p * t * d
    vocab, hidden, ffn, tokens, layers = 256, 64, 256, 64, 2
    # Megatron's order: TP fastest, then DP, then PP
    coord = {r: (r // (t * d), (r // t) % d, r % t) for r in range(world)}  # (pp, dp, tp)
    stage, _, tp_idx = coord[rank]
    tp_groups = [[r for r in range(world) if coord[r][:2] == (s, j)]
                 for s in range(p) for j in range(d)]
    dp_groups = [[r for r in range(world) if (coord[r][0], coord[r][2]) == (s, k)]
                 for s in range(p) for k in range(t)]
    pp_groups = [[r for r in range(world) if coord[r][1:] == (j, k)]
                 for j in range(d) for k in range(t)]
    emb_groups = [[g[0], g[-1]] for g in pp_groups] if p > 1 else []
    mine = {}
    kinds = (("tp", "TP", tp_groups if t > 1 else []), ("dp", "DP", dp_groups),
             ("pp", "PP", pp_groups if p > 1 else []), ("emb", "EmbTableSyn", emb_groups))
    for name, cls, lists in kinds:
        for i, ranks in enumerate(lists):
            g = groups.group("%s%d" % (name, i), cls, ranks)
            if g is not None:
                mine[name] = (g, ranks)
    tp, dpg = mine.get("tp", (None,))[0], mine["dp"][0]
    ppg, pp_ranks = mine.get("pp", (None, [rank]))
    embg = mine.get("emb", (None,))[0]  # first and last stage only, p > 1
    prev_rank = pp_ranks[stage - 1] if stage > 0 else None
    next_rank = pp_ranks[stage + 1] if stage < p - 1 else None
    first, last = stage == 0, stage == p - 1

    torch.manual_seed(0)
    emb = torch.nn.Parameter(torch.randn(vocab, hidden) * 0.02)  # tied: first and last stage
    torch.manual_seed(1000 * stage + tp_idx)
    blocks = torch.nn.ModuleList(TPBlock(hidden, ffn, t, tp) for _ in range(layers))
    params = list(blocks.parameters()) + ([emb] if first or last else [])
    opt = torch.optim.SGD(params, lr=0.01)
    gen = torch.Generator().manual_seed(7)  # the same data along a pipeline
    layout = {"p": p, "t": t, "d": d, "ep": 1, "sharded": False, "micro_batches": micro,
              "groups": {cls: lists for _, cls, lists in kinds if lists}}

    def forward(i, store, sends, batch):
        if first:
            h = blocks_forward(emb[batch[i][0]])
        else:
            h_in = torch.empty(tokens, hidden)
            OPS.recv(h_in, prev_rank, group=ppg)
            h_in.requires_grad_()
            h = blocks_forward(h_in)
            store[i] = [h_in]
        if last:
            loss = F.cross_entropy(h @ emb.t(), batch[i][1]) / micro
            store.setdefault(i, []).append(loss)
        else:
            sends.append(OPS.isend(h.detach().contiguous(), next_rank, group=ppg))
            store.setdefault(i, []).append(h)

    def blocks_forward(h):
        for b in blocks:
            h = b(h)
        return h

    def backward(i, store, sends):
        saved = store.pop(i)
        if last:
            saved[-1].backward()
        else:
            g = torch.empty(tokens, hidden)
            OPS.recv(g, next_rank, group=ppg)
            saved[-1].backward(g)
        if not first:
            sends.append(OPS.isend(saved[0].grad.contiguous(), prev_rank, group=ppg))

    def step():
        batch = [(torch.randint(0, vocab, (tokens,), generator=gen),
                  torch.randint(0, vocab, (tokens,), generator=gen)) for _ in range(micro)]
        opt.zero_grad()
        store, sends = {}, []
        warm = min(p - stage - 1, micro)  # 1F1B: warm-up forwards, steady 1F1B, cool-down
        for i in range(warm):
            forward(i, store, sends, batch)
        for i in range(micro - warm):
            forward(i + warm, store, sends, batch)
            backward(i, store, sends)
        for i in range(micro - warm, micro):
            backward(i, store, sends)
        for w in sends:
            w.wait()
        # DP: the stage's gradients, one flat all-reduce at the iteration's end
        grads = [q.grad for q in blocks.parameters()]
        flat = torch.cat([g.reshape(-1) for g in grads])
        OPS.all_reduce(flat, group=dpg)
        flat /= d
        off = 0
        for g in grads:
            g.copy_(flat[off:off + g.numel()].view_as(g))
            off += g.numel()
        if first or last:
            if emb.grad is None:
                emb.grad = torch.zeros_like(emb)
            OPS.all_reduce(emb.grad, group=dpg)
            emb.grad /= d
            if embg is not None:  # the tied embedding, first + last stage
                OPS.all_reduce(emb.grad, group=embg)
        opt.step()

    return step, layout


# ---- (c) MoE: token-dependent all_to_all_single ----------------------------------------


class AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, send_splits, recv_splits, group):
        ctx.splits, ctx.group = (send_splits, recv_splits), group
        out = x.new_empty(sum(recv_splits), x.shape[1])
        OPS.all_to_all_single(out, x.contiguous(), recv_splits, send_splits, group=group)
        return out

    @staticmethod
    def backward(ctx, g):
        send_splits, recv_splits = ctx.splits
        out = g.new_empty(sum(send_splits), g.shape[1])
        OPS.all_to_all_single(out, g.contiguous(), send_splits, recv_splits, group=ctx.group)
        return out, None, None, None


def moe(groups, rank, world):
    hidden, ffn, tokens = 64, 256, 512
    everyone = list(range(world))
    ep = groups.group("ep", "EP", everyone)
    dp = groups.group("dp", "DP", everyone)
    torch.manual_seed(0)
    dense = torch.nn.Linear(hidden, hidden)
    router = torch.nn.Linear(hidden, world)
    torch.manual_seed(10 + rank)  # this rank's expert
    expert = torch.nn.Sequential(torch.nn.Linear(hidden, ffn), torch.nn.GELU(),
                                 torch.nn.Linear(ffn, hidden))
    shared = list(dense.parameters()) + list(router.parameters())
    opt = torch.optim.SGD(shared + list(expert.parameters()), lr=0.05)
    gen = torch.Generator().manual_seed(200 + rank)
    layout = {"p": 1, "t": 1, "d": world, "ep": world, "sharded": False,
              "groups": {"EP": [everyone], "DP": [everyone]}}

    def step():
        x = torch.randn(tokens, hidden, generator=gen) * (1 + torch.rand(1, hidden, generator=gen))
        opt.zero_grad()
        h = dense(x)
        probs = router(h).softmax(-1)
        gate, choice = probs.max(-1)
        order = choice.argsort()
        send = torch.bincount(choice, minlength=world)
        recv = torch.empty_like(send)
        OPS.all_to_all_single(recv, send, group=ep)  # the split sizes first
        send_splits, recv_splits = send.tolist(), recv.tolist()
        routed = AllToAll.apply(h[order], send_splits, recv_splits, ep)
        back = AllToAll.apply(expert(routed), recv_splits, send_splits, ep)
        out = torch.empty_like(back).index_copy(0, order, back)
        loss = (h + gate.unsqueeze(1) * out).pow(2).mean()
        loss.backward()
        flat = torch.cat([q.grad.reshape(-1) for q in shared])
        OPS.all_reduce(flat, group=dp)
        off = 0
        for q in shared:
            q.grad.copy_(flat[off:off + q.numel()].view_as(q) / world)
            off += q.numel()
        opt.step()

    return step, layout


def pp4(groups, rank, world):
    return ptd(groups, rank, world, p=4, t=1, d=2, micro=8)


def tp4(groups, rank, world):
    return ptd(groups, rank, world, p=1, t=4, d=2)


# ---- (d) ZeRO-3 / FSDP-style sharding ------------------------------------------------


class ShardedLinear:
    """A linear layer whose weight and bias live as one flat vector sharded over dp.

    Each rank keeps 1/world of it (padded to a multiple of world); the whole
    layer exists only while it is gathered, in its forward and again in its
    backward."""

    def __init__(self, fan_in, fan_out, rank, world, group, seed):
        self.fan_in, self.fan_out, self.world, self.group = fan_in, fan_out, world, group
        self.numel = fan_out * fan_in + fan_out
        self.shard_len = -(-self.numel // world)
        torch.manual_seed(seed)  # the same full layer on every rank
        full = torch.zeros(self.shard_len * world)
        full[:fan_out * fan_in] = torch.randn(fan_out * fan_in) * fan_in**-0.5
        self.shard = torch.nn.Parameter(full[rank * self.shard_len:(rank + 1) * self.shard_len]
                                        .clone())

    def gather(self):
        parts = [torch.empty(self.shard_len) for _ in range(self.world)]
        OPS.all_gather(parts, self.shard.detach(), group=self.group)
        flat = torch.cat(parts)
        w = flat[:self.fan_out * self.fan_in].view(self.fan_out, self.fan_in)
        return w, flat[self.fan_out * self.fan_in:self.numel]

    def reduce_scatter(self, flat):
        """gloo in torch 1.13 has no reduce_scatter: all_to_all_single sends chunk j
        to rank j (the ReduceScatter's traffic), and the received chunks are summed
        here; logged as ReduceScatter."""
        flat = torch.cat([flat, flat.new_zeros(self.shard_len * self.world - flat.numel())])
        out = torch.empty_like(flat)
        OPS.all_to_all_single(out, flat, group=self.group, op="ReduceScatter")
        return out.view(self.world, self.shard_len).sum(0) / self.world


class ShardedLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, shard, layer):
        w, b = layer.gather()
        ctx.save_for_backward(x)
        ctx.layer = layer
        return x @ w.t() + b

    @staticmethod
    def backward(ctx, g):
        (x,), layer = ctx.saved_tensors, ctx.layer
        w, _ = layer.gather()  # gathered again: nothing of it was kept after forward
        grad = torch.cat([(g.t() @ x).reshape(-1), g.sum(0)])
        return g @ w, layer.reduce_scatter(grad), None


def zero3(groups, rank, world):
    dp = groups.group("dp", "DP", list(range(world)))
    sizes = (256, 512, 384, 256, 10)  # layers of different sizes
    layers = [ShardedLinear(a, b, rank, world, dp, seed=i)
              for i, (a, b) in enumerate(zip(sizes, sizes[1:]))]
    opt = torch.optim.SGD([q.shard for q in layers], lr=0.01)
    gen = torch.Generator().manual_seed(300 + rank)
    layout = {"p": 1, "t": 1, "d": world, "ep": 1, "sharded": True,
              "groups": {"DP": [list(range(world))]}}

    def step():
        x = torch.randn(128, sizes[0], generator=gen)
        y = torch.randint(0, sizes[-1], (128,), generator=gen)
        opt.zero_grad()
        h = x
        for i, q in enumerate(layers):
            h = ShardedLinearFn.apply(h, q.shard, q)
            if i < len(layers) - 1:
                h = F.relu(h)
        F.cross_entropy(h, y).backward()
        opt.step()

    return step, layout


# ---- (e) a parameter server: 4 workers, 2 servers -------------------------------------

PS_SERVERS = 2


def ps(groups, rank, world):
    """Ranks 0..world-3 are workers, the last two servers; server s holds shard s of
    the flat parameters. A worker pushes each shard's gradient to its server and
    pulls the shard's new values back; a server waits for every worker's push,
    averages, steps and sends the parameters to every worker."""
    workers = list(range(world - PS_SERVERS))
    servers = list(range(world - PS_SERVERS, world))
    g = groups.group("ps", "DP", list(range(world)))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 384), torch.nn.ReLU(),
                                torch.nn.Linear(384, 384), torch.nn.ReLU(),
                                torch.nn.Linear(384, 10))
    params = list(model.parameters())
    flat = torch.cat([q.detach().reshape(-1) for q in params])
    bounds = [len(flat) * s // PS_SERVERS for s in range(PS_SERVERS + 1)]
    gen = torch.Generator().manual_seed(400 + rank)
    layout = {"p": 1, "t": 1, "d": len(workers), "ep": 1, "sharded": False,
              "groups": {"DP": [list(range(world))]}, "workers": workers, "servers": servers}

    def worker_step():
        x = torch.randn(128, 256, generator=gen)
        y = torch.randint(0, 10, (128,), generator=gen)
        model.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grad = torch.cat([q.grad.reshape(-1) for q in params])
        fresh = torch.empty_like(grad)
        pending = []
        for s, server in enumerate(servers):
            part = grad[bounds[s]:bounds[s + 1]].contiguous()
            pending.append(OPS.isend(part, server, group=g, op="PushPull"))
            pending.append(OPS.irecv(fresh[bounds[s]:bounds[s + 1]], server, group=g,
                                     op="PushPull"))
        for w in pending:
            w.wait()
        off = 0
        with torch.no_grad():
            for q in params:
                q.copy_(fresh[off:off + q.numel()].view_as(q))
                off += q.numel()

    s = rank - len(workers)
    shard = flat[bounds[s]:bounds[s + 1]].clone() if rank in servers else None

    def server_step():
        bufs = [torch.empty_like(shard) for _ in workers]
        pulls = [OPS.irecv(b, w, group=g, op="PushPull") for b, w in zip(bufs, workers)]
        for p in pulls:
            p.wait()
        shard.sub_(0.01 * torch.stack(bufs).mean(0))
        pushes = [OPS.isend(shard, w, group=g, op="PushPull") for w in workers]
        for p in pushes:
            p.wait()

    return (server_step if rank in servers else worker_step), layout


SCENARIOS = {"ddp": ddp, "ptd": ptd, "moe": moe, "gradacc": gradacc, "pp4": pp4,
             "tp4": tp4, "zero3": zero3, "ps": ps}


def main():
    scenario, rank, world, master, port, iterations, warmup, out = sys.argv[1:9]
    rank, world, port = int(rank), int(world), int(port)
    iterations, warmup = int(iterations), int(warmup)
    base = master.rsplit(".", 1)[0]
    first = int(master.rsplit(".", 1)[1])
    peers = ["%s.%d" % (base, first + r) for r in range(world)]
    groups = Groups(peers)
    groups.world(master, port, rank, world)
    step, layout = SCENARIOS[scenario](groups, rank, world)
    OPS.barrier()
    starts = []
    for it in range(warmup + iterations):
        starts.append(time.time_ns())
        step()
    end = time.time_ns()
    OPS.barrier()
    with open(out, "w") as f:
        json.dump({"rank": rank, "address": peers[rank], "warmup": warmup,
                   "iteration_starts_ns": starts, "end_ns": end, "layout": layout,
                   "groups": groups.records, "ops": OPS.dump()}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
