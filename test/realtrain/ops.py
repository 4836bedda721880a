"""The operation truth: every collective and point-to-point call a rank makes.

Each call is logged as [operation, group, start_ns, end_ns, bytes] with
CLOCK_REALTIME times (the capture's clock, one kernel for every namespace).
An asynchronous call (isend, irecv, a DDP bucket's all-reduce) ends when its
wait() returns or its future completes; until then its end is None and
make_scenario.py treats it as still in flight at the rank's end.

Operations (issue 29): AllReduce, AllGather, ReduceScatter, AllToAll,
Broadcast, Reduce, SendRecv, PushPull; Barrier for the world group's
barriers (their connections are Other). bytes: the tensor this rank hands
to the call (its input, or the buffer it receives into for a recv).
"""
import time

OPERATIONS = ("AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast", "Reduce",
              "SendRecv", "PushPull")


def nbytes(t):
    return t.numel() * t.element_size()


class Call:
    """One logged call; end() stamps its end once."""

    __slots__ = ("entry",)

    def __init__(self, log, op, group, size):
        self.entry = [op, group, time.time_ns(), None, int(size)]
        log.append(self.entry)

    def end(self):
        if self.entry[3] is None:
            self.entry[3] = time.time_ns()


class Pending:
    """An asynchronous torch Work whose wait() ends the call."""

    def __init__(self, work, call):
        self.work, self.call = work, call

    def wait(self):
        r = self.work.wait()
        self.call.end()
        return r


class OpLog:
    """The calls of one rank, with the names of its process groups."""

    def __init__(self):
        self.calls = []
        self.names = {}

    def name(self, group, name):
        self.names[id(group)] = name

    def group_name(self, group):
        """A group's name: given as a string (mpi4py), named by name(), or the world."""
        if isinstance(group, str):
            return group
        return self.names.get(id(group), "world") if group is not None else "world"

    def begin(self, op, group, size):
        return Call(self.calls, op, self.group_name(group), size)

    def run(self, op, group, size, fn):
        c = self.begin(op, group, size)
        r = fn()
        c.end()
        return r

    def start(self, op, group, size, fn):
        """An asynchronous call: fn() returns a Work, waited through the returned Pending."""
        c = self.begin(op, group, size)
        return Pending(fn(), c)

    def dump(self):
        return self.calls


# ---- torch.distributed, logged -------------------------------------------------------


class TorchOps(OpLog):
    def __init__(self, dist):
        super().__init__()
        self.dist = dist

    def all_reduce(self, t, group=None):
        return self.run("AllReduce", group, nbytes(t),
                        lambda: self.dist.all_reduce(t, group=group))

    def all_gather(self, out, t, group=None):
        return self.run("AllGather", group, nbytes(t),
                        lambda: self.dist.all_gather(out, t, group=group))

    def all_to_all_single(self, out, t, out_splits=None, in_splits=None, group=None,
                          op="AllToAll"):
        return self.run(op, group, nbytes(t),
                        lambda: self.dist.all_to_all_single(out, t, out_splits, in_splits,
                                                            group=group))

    def broadcast(self, t, src, group=None):
        return self.run("Broadcast", group, nbytes(t),
                        lambda: self.dist.broadcast(t, src, group=group))

    def send(self, t, dst, group=None, op="SendRecv"):
        return self.run(op, group, nbytes(t), lambda: self.dist.send(t, dst, group=group))

    def recv(self, t, src, group=None, op="SendRecv"):
        return self.run(op, group, nbytes(t), lambda: self.dist.recv(t, src, group=group))

    def isend(self, t, dst, group=None, op="SendRecv"):
        return self.start(op, group, nbytes(t), lambda: self.dist.isend(t, dst, group=group))

    def irecv(self, t, src, group=None, op="SendRecv"):
        return self.start(op, group, nbytes(t), lambda: self.dist.irecv(t, src, group=group))

    def barrier(self, group=None):
        return self.run("Barrier", group, 0, lambda: self.dist.barrier(group=group))

    def ddp_hook(self, group, world):
        """A DDP comm hook: the default's bucket all-reduce (averaged), logged."""
        dist = self.dist

        def hook(_state, bucket):
            t = bucket.buffer()
            t.div_(world)
            c = self.begin("AllReduce", group, nbytes(t))
            fut = dist.all_reduce(t, group=group, async_op=True).get_future()

            def done(f):
                c.end()
                return f.value()[0]

            return fut.then(done)

        return hook
