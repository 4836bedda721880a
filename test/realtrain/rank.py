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
moe (token-dependent all_to_all_single among experts, DP for dense weights).
"""
import json
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import conns

torch.set_num_threads(1)


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
        dist.barrier()
        self._record("world", "Other", list(range(world)), before)

    def group(self, name, cls, ranks):
        before = set(self._new())
        g = dist.new_group(ranks)
        dist.barrier()
        self._record(name, cls, ranks, before)
        return g if dist.get_rank() in ranks else None

    def _record(self, name, cls, ranks, before):
        opened = [list(c) for c in self._new() if c not in before]
        self.records.append({"name": name, "class": cls, "ranks": ranks, "conns": opened})


# ---- (a) DDP: bucketed gradient all-reduce -------------------------------------------


def ddp(groups, rank, world):
    from torch.nn.parallel import DistributedDataParallel

    dp = groups.group("dp", "DP", list(range(world)))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 384), torch.nn.ReLU(),
                                torch.nn.Linear(384, 384), torch.nn.ReLU(),
                                torch.nn.Linear(384, 10))
    # 0.25 MB buckets: the ~1 MB of gradients go out as several all-reduces
    model = DistributedDataParallel(model, process_group=dp, bucket_cap_mb=0.25)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(100 + rank)
    layout = {"p": 1, "t": 1, "d": world, "ep": 1, "groups": {"DP": [list(range(world))]}}

    def step():
        x = torch.randn(128, 256, generator=gen)
        y = torch.randint(0, 10, (128,), generator=gen)
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    return step, layout


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
        dist.all_reduce(g, group=ctx.group)
        return g, None


class ReduceFromTP(torch.autograd.Function):
    """The partial outputs all-reduced over TP forward; identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.contiguous()
        dist.all_reduce(x, group=group)
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
        x = CopyToTP.apply(h, self.group)
        x = F.gelu(x @ self.w1) @ self.w2
        return h + ReduceFromTP.apply(x, self.group)


def ptd(groups, rank, world, p=2, t=2, d=2):
    assert world == p * t * d
    vocab, hidden, ffn, tokens, micro, layers = 256, 64, 256, 64, 4, 2
    # Megatron's order: TP fastest, then DP, then PP
    coord = {r: (r // (t * d), (r // t) % d, r % t) for r in range(world)}  # (pp, dp, tp)
    stage, _, tp_idx = coord[rank]
    tp_groups = [[r for r in range(world) if coord[r][:2] == (s, j)]
                 for s in range(p) for j in range(d)]
    dp_groups = [[r for r in range(world) if (coord[r][0], coord[r][2]) == (s, k)]
                 for s in range(p) for k in range(t)]
    pp_groups = [[r for r in range(world) if coord[r][1:] == (j, k)]
                 for j in range(d) for k in range(t)]
    emb_groups = [[g[0], g[-1]] for g in pp_groups]
    mine = {}
    for name, cls, lists in (("tp", "TP", tp_groups), ("dp", "DP", dp_groups),
                             ("pp", "PP", pp_groups), ("emb", "EmbTableSyn", emb_groups)):
        for i, ranks in enumerate(lists):
            g = groups.group("%s%d" % (name, i), cls, ranks)
            if g is not None:
                mine[name] = (g, ranks)
    tp, dpg, (ppg, pp_ranks) = mine["tp"][0], mine["dp"][0], mine["pp"]
    embg = mine.get("emb", (None,))[0]  # first and last stage only
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
    layout = {"p": p, "t": t, "d": d, "ep": 1,
              "groups": {"TP": tp_groups, "DP": dp_groups, "PP": pp_groups,
                         "EmbTableSyn": emb_groups}}

    def forward(i, store, sends, batch):
        if first:
            h = blocks_forward(emb[batch[i][0]])
        else:
            h_in = torch.empty(tokens, hidden)
            dist.recv(h_in, prev_rank, group=ppg)
            h_in.requires_grad_()
            h = blocks_forward(h_in)
            store[i] = [h_in]
        if last:
            loss = F.cross_entropy(h @ emb.t(), batch[i][1]) / micro
            store.setdefault(i, []).append(loss)
        else:
            sends.append(dist.isend(h.detach().contiguous(), next_rank, group=ppg))
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
            dist.recv(g, next_rank, group=ppg)
            saved[-1].backward(g)
        if not first:
            sends.append(dist.isend(saved[0].grad.contiguous(), prev_rank, group=ppg))

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
        dist.all_reduce(flat, group=dpg)
        flat /= d
        off = 0
        for g in grads:
            g.copy_(flat[off:off + g.numel()].view_as(g))
            off += g.numel()
        if first or last:
            if emb.grad is None:
                emb.grad = torch.zeros_like(emb)
            dist.all_reduce(emb.grad, group=dpg)
            emb.grad /= d
            dist.all_reduce(emb.grad, group=embg)  # the tied embedding, first + last stage
        opt.step()

    return step, layout


# ---- (c) MoE: token-dependent all_to_all_single ----------------------------------------


class AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, send_splits, recv_splits, group):
        ctx.splits, ctx.group = (send_splits, recv_splits), group
        out = x.new_empty(sum(recv_splits), x.shape[1])
        dist.all_to_all_single(out, x.contiguous(), recv_splits, send_splits, group=group)
        return out

    @staticmethod
    def backward(ctx, g):
        send_splits, recv_splits = ctx.splits
        out = g.new_empty(sum(send_splits), g.shape[1])
        dist.all_to_all_single(out, g.contiguous(), send_splits, recv_splits, group=ctx.group)
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
    layout = {"p": 1, "t": 1, "d": world, "ep": world,
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
        dist.all_to_all_single(recv, send, group=ep)  # the split sizes first
        send_splits, recv_splits = send.tolist(), recv.tolist()
        routed = AllToAll.apply(h[order], send_splits, recv_splits, ep)
        back = AllToAll.apply(expert(routed), recv_splits, send_splits, ep)
        out = torch.empty_like(back).index_copy(0, order, back)
        loss = (h + gate.unsqueeze(1) * out).pow(2).mean()
        loss.backward()
        flat = torch.cat([q.grad.reshape(-1) for q in shared])
        dist.all_reduce(flat, group=dp)
        off = 0
        for q in shared:
            q.grad.copy_(flat[off:off + q.numel()].view_as(q) / world)
            off += q.numel()
        opt.step()

    return step, layout


SCENARIOS = {"ddp": ddp, "ptd": ptd, "moe": moe}


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
    dist.barrier()
    starts = []
    for it in range(warmup + iterations):
        starts.append(time.time_ns())
        step()
    end = time.time_ns()
    dist.barrier()
    with open(out, "w") as f:
        json.dump({"rank": rank, "address": peers[rank], "warmup": warmup,
                   "iteration_starts_ns": starts, "end_ns": end, "layout": layout,
                   "groups": groups.records}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
