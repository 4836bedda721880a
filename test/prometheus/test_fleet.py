#!/usr/bin/env python3
"""The fleet view on a real Prometheus server (issue 23).

    test_fleet.py COMMTAP PROFILE.json RULES.yml DASHBOARD.json

Synthesizes one job (4 hosts, iterations of 0.59 s), splits its capture
into two host agents' views (hosts 198.18.0.1-2 and the others) and keeps
the whole as a mirror's view. A second job, DDP ResNet-50 (the profile
next to PROFILE: 4 hosts in one ring, which a straggler needs), is
synthesized with a straggler (host 198.18.0.2, 40 ms late each iteration)
and a slow link (198.18.0.3-4, 4 times slower from iteration 8: a link slow
from the first iteration pages only when it meters its bytes) injected, seen by a
fourth probe. Each is replayed in real time (`commtap analyze --pace 1
--interval 1 --listen 127.0.0.1:0`). Debian's prometheus, on a loopback
port with its own data directory, scrapes the four every second with the
shipped rules loaded (their times scaled to the test: `for:` 3 s, rate
windows 8 s and 20 s). Through /api/v1/query it checks:

- every probe names the job alike (ct_job: the profile's name; the hosts
  its hash would be derived from are the same in every probe's report) and
  its period agrees with the whole capture's report;
- the per-class bytes over probes, each host pair counted once, equal the
  whole capture's (the plain sum counts the shared pairs twice), and the
  bytes per iteration are bytes/s times the median period and, where the
  replay kept up with real time (capture seconds per second over 0.8, from
  the probes' last packet times), match the report's within 30 % (a
  slower replay, under a sanitizer, lowers the rate, not the period);
- the second job's straggler and slow link are the fleet's only ones
  (host, link, delay within 10 % of the injected), and CommtapStraggler
  and CommtapSlowLink fire for them alone;
- a probe killed (the injected condition) fires CommtapProbeDown;
- every PromQL expression of the Grafana dashboard, its variables and
  $__rate_interval substituted, parses and returns data for each job; the
  panels of straggler and slow-link findings return data for the second
  job and none for the clean first one (it has none to show).

The server and the probes are stopped and the data removed however the
test ends. SKIP (77) only where the prometheus binary is missing.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

PROMETHEUS = "/usr/bin/prometheus"
HOSTS_A = "198.18.0.1,198.18.0.2"
# the job with anomalies injected: its profile (next to PROFILE), and what
# was injected (host indices 1, 2-3: 198.18.0.2, 198.18.0.3-4)
FAULTY_PROFILE = "ddp-resnet50-32gpu.json"
STRAGGLER, STRAGGLER_DELAY = "198.18.0.2", 0.04
SLOW_LINK = {"198.18.0.3>198.18.0.4", "198.18.0.4>198.18.0.3"}
# dashboard expressions over straggler and slow-link findings: a clean job
# has none of those series
FINDINGS = re.compile(r"commtap:job_(straggler|slow_link)_")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prom:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path, **params):
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)

    def query(self, expr, at=None):
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        try:
            doc = self.get("/api/v1/query", **params)
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{expr}: {e.code} {e.read().decode(errors='replace')}")
        assert doc["status"] == "success", f"{expr}: {doc}"
        return doc["data"]["result"]

    def values(self, expr, at=None):
        """{frozenset(labels): value} of an instant vector."""
        return {frozenset((k, v) for k, v in r["metric"].items() if k != "__name__"):
                float(r["value"][1]) for r in self.query(expr, at)}


def wait_for(what, test, timeout, step=0.5):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = test()
        if got:
            return got
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def run_with_prometheus(prefix, body):
    """body(t, procs) in a temporary directory (t(name): a path in it); every
    process body appends to procs is stopped and the directory removed
    however it ends. SKIP (77) without the prometheus binary."""
    if not os.access(PROMETHEUS, os.X_OK):
        print(f"SKIP: no {PROMETHEUS} (Debian package prometheus)")
        return 77
    # meson's timeout sends SIGTERM: unwind so that everything is stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    procs = []
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        try:
            return body(lambda name: os.path.join(tmp, name), procs)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def start_prometheus(t, procs, static_configs):
    """Debian's prometheus on a free loopback port, its data in t("tsdb"),
    scraping static_configs (scrape job "commtap") every second with
    t("rules.yml") evaluated every second; returns a Prom once it is ready."""
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s",
                   "scrape_timeout": "1s"},
        "rule_files": [t("rules.yml")],
        "scrape_configs": [{"job_name": "commtap", "static_configs": static_configs}],
    }
    with open(t("prometheus.yml"), "w") as f:
        json.dump(config, f)  # JSON is YAML
    server = subprocess.Popen([PROMETHEUS, "--config.file", t("prometheus.yml"),
                               "--storage.tsdb.path", t("tsdb"),
                               "--web.listen-address", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=open(t("prometheus.log"), "w"))
    procs.append(server)
    prom = Prom(port)

    def ready():
        try:
            with urllib.request.urlopen(prom.base + "/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return server.poll() is not None and sys.exit(
                "prometheus exited: " + open(t("prometheus.log")).read()[-2000:])
    wait_for("prometheus to be ready", ready, 30)
    return prom


def main():
    commtap, profile, rules, dashboard = sys.argv[1:5]
    return run_with_prometheus("commtap-fleet-", lambda t, procs: run(
        commtap, profile, rules, dashboard, t, procs))


def run(commtap, profile, rules, dashboard, t, procs):
    subprocess.run([commtap, "synth", profile, "-o", t("job.pcap"), "--iterations", "30",
                    "--scale", "1e-4", "--time-scale", "0.01", "--jitter", "0.02",
                    "--snaplen", "128", "--noise"], check=True, capture_output=True)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "html",
                                                 "split_by_hosts.py"),
                    t("job.pcap"), HOSTS_A, t("host-a.pcap"), t("host-b.pcap")],
                   check=True, capture_output=True)
    os.link(t("job.pcap"), t("mirror.pcap"))
    subprocess.run([commtap, "analyze", "--profile", profile, "--json", t("whole.json"),
                    t("job.pcap")], check=True, capture_output=True)
    whole = json.load(open(t("whole.json")))
    # the faulty job: 30 iterations of 0.41 s (13 s of replay, 1 MB)
    faulty_profile = os.path.join(os.path.dirname(profile), FAULTY_PROFILE)
    subprocess.run([commtap, "synth", faulty_profile, "-o", t("faulty.pcap"), "--iterations",
                    "30", "--scale", "1e-3", "--time-scale", "10", "--snaplen", "128",
                    "--straggler", f"1:{STRAGGLER_DELAY}", "--slow-link", "2-3:4:8"],
                   check=True, capture_output=True)
    faulty_job = json.load(open(faulty_profile))["name"]
    # every probe is given the profile: it names the job
    want_job = whole["classification"]["profile"]
    want_period = whole["job"]["iteration_period_s"]
    want_class = {}
    for f in whole["flows"]:
        want_class[f["class"]] = want_class.get(f["class"], 0) + f["bytes"]

    # The rules as shipped, their times scaled to a test of a minute: `for:`
    # 3 s, rate windows of 1m and 5m (4 and 20 scrapes at 15 s) 8 s and 20 s
    # (at 1 s scrapes; a 1m window over a 20 s replay would divide its
    # increase by 60 s).
    with open(rules) as src, open(t("rules.yml"), "w") as dst:
        text = re.sub(r"(\bfor: )\d+[smh]", r"\g<1>3s", src.read())
        dst.write(text.replace("[1m]", "[8s]").replace("[5m]", "[20s]"))
    views = {"host-a": profile, "host-b": profile, "mirror": profile, "faulty": faulty_profile}
    ports = {view: free_port() for view in views}
    prom = start_prometheus(t, procs, [{"targets": [f"127.0.0.1:{p}" for p in ports.values()]}])

    targets = {}
    for view, vport in ports.items():
        os.mkdir(t(view))
        p = subprocess.Popen([commtap, "analyze", "--pace", "1", "--interval", "1",
                              "--report-dir", t(view), "--listen", f"127.0.0.1:{vport}",
                              "--profile", views[view], "--json", t(view + ".json"),
                              t(view + ".pcap")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs.append(p)
        line = p.stderr.readline()
        assert f"port {vport}" in line, f"{view}: analyze did not listen: {line}"
        targets[view] = (p, f"127.0.0.1:{vport}")
    started = time.time()
    wait_for("four targets up", lambda: prom.values('sum(up{job="commtap"})').get(
        frozenset(), 0) == len(ports), 20)
    # the first job's probes (the faulty job's replay is shorter)
    job_probes = 'instance=~"127.0.0.1:(%s)"' % "|".join(
        str(ports[v]) for v in views if views[v] == profile)
    job = f'ct_job="{want_job}"'

    # mid-replay: the rules' rates, while every probe is still reading
    mid = started + 14
    wait_for("the replay's middle", lambda: time.time() > mid + 2, 30)
    per_iter = prom.values(f"commtap:job_class_bytes_per_iteration{{{job}}}", at=mid)
    per_iter_parts = prom.values(f"commtap:job_class_bytes:rate1m{{{job}}} * on (ct_job) "
                                 "group_left () commtap:job_period_seconds:median", at=mid)
    # capture seconds per wall second then: under 1 where the machine (or a
    # sanitizer) cannot keep up, lowering the rate but not the period
    speed = prom.values(f"avg(deriv(commtap_last_packet_timestamp_seconds{{{job_probes}}}[8s]))",
                        at=mid).get(frozenset(), 0.0)
    wait_for("every probe's final report",
             lambda: prom.values("count(commtap_capture_complete == 1)").get(frozenset()) ==
             len(ports), 120)
    time.sleep(3)  # a scrape and a rule evaluation of the final reports
    failures = []
    fail = failures.append
    if os.environ.get("FLEET_DEBUG"):
        for e in ('commtap:job_class_bytes:rate1m{class="PP"}', 'commtap:job_period_seconds:median',
                  'commtap_host_pair_bytes_total{class="PP",src="198.18.0.1",dst="198.18.0.2"}'):
            r = prom.get("/api/v1/query_range", query=e, start=started, end=time.time(), step=1)
            for x in r["data"]["result"]:
                print(e, x["metric"].get("instance"), [(round(float(t) - started), v) for t, v in x["values"]])

    probes = prom.values("commtap:job_period_seconds:probes")
    if probes != {frozenset({("ct_job", want_job)}): 3.0, frozenset({("ct_job", faulty_job)}): 1.0}:
        fail(f"jobs seen by {probes}, want {want_job} seen by 3 probes, {faulty_job} by 1")
    median = prom.values("commtap:job_period_seconds:median").get(
        frozenset({("ct_job", want_job)}))
    if median is None or abs(median / want_period - 1) > 0.02:
        fail(f"period median {median}, want {want_period} (whole capture) within 2 %")
    spread = prom.values("commtap:job_period_seconds:spread").get(
        frozenset({("ct_job", want_job)}))
    if spread is None or spread > 0.05:
        fail(f"probes' periods spread {spread}, want under 0.05")

    dedup = {dict(k)["class"]: v for k, v in
             prom.values(f"sum by (class) (commtap:job_class_bytes:dedup{{{job}}})").items()}
    plain = {dict(k)["class"]: v for k, v in
             prom.values(f"sum by (class) (commtap_host_pair_bytes_total{{{job}}})").items()}
    if dedup != {c: float(b) for c, b in want_class.items()}:
        fail(f"bytes by class over probes {dedup}, want the whole capture's {want_class}")
    if not plain.get("PP", 0) > want_class.get("PP", 0):
        fail(f"the plain sum of PP over probes {plain.get('PP')} should count shared pairs "
             f"twice (whole capture: {want_class.get('PP')})")
    notes = []
    if per_iter != per_iter_parts or not per_iter:
        fail(f"bytes per iteration {per_iter} are not bytes/s times the median period "
             f"{per_iter_parts}")
    # against the capture only where the replay kept up with real time: a
    # slower one (a sanitizer, a busy machine) lowers the rate, not the period
    if speed < 0.8:
        notes.append(f"replay at {speed:.2f} of real time: bytes per iteration not "
                     "compared with the capture's")
    for cls in ("PP", "EmbTableSyn"):
        got = per_iter.get(frozenset({("ct_job", want_job), ("class", cls)}))
        want = want_class[cls] / whole["job"]["iterations"]
        if speed >= 0.8 and (got is None or abs(got / want - 1) > 0.3):
            fail(f"{cls} bytes per iteration {got} at the replay's middle (replay speed "
                 f"{speed:.2f}), want {want:.0f} (whole capture over its iterations) within "
                 "30 %")

    # the injected anomalies, across probes: the faulty job's straggler and
    # slow link, and nothing of the kind in the clean job
    late = prom.values("commtap:job_straggler_delay_seconds:max")
    key = frozenset({("ct_job", faulty_job), ("where", STRAGGLER)})
    if set(late) != {key} or abs(late[key] / STRAGGLER_DELAY - 1) > 0.1:
        fail(f"stragglers {late}, want {STRAGGLER} of {faulty_job} alone, {STRAGGLER_DELAY} s "
             "late within 10 %")
    slow = prom.values("commtap:job_slow_link_rate_ratio:min")
    if not slow or any(dict(k) not in ({"ct_job": faulty_job, "where": w} for w in SLOW_LINK) or
                       v >= 0.6 for k, v in slow.items()):
        fail(f"slow links {slow}, want {sorted(SLOW_LINK)} of {faulty_job} alone, under 0.6")
    kinds = {(dict(k)["ct_job"], dict(k)["kind"]): v for k, v in
             prom.values('commtap:job_anomalies:max{kind=~"straggler|slow_link"}').items()}
    want_kinds = {(want_job, "straggler"): 0, (want_job, "slow_link"): 0,
                  (faulty_job, "straggler"): 1, (faulty_job, "slow_link"): len(slow)}
    if kinds != want_kinds:
        fail(f"findings by job and kind {kinds}, want {want_kinds}")
    for alert, where in (("CommtapStraggler", {STRAGGLER}), ("CommtapSlowLink", SLOW_LINK)):
        q = f'ALERTS{{alertname="{alert}",alertstate="firing"}}'
        try:
            got = wait_for(f"{alert} to fire", lambda: prom.query(q), 30)
            bad = [a["metric"] for a in got
                   if a["metric"].get("ct_job") != faulty_job or a["metric"].get("where") not in where]
            if bad:
                fail(f"{alert} fires for {bad}, want {faulty_job} at {sorted(where)} alone")
        except AssertionError as e:
            fail(str(e))

    # The dashboard's expressions, as Grafana would send them, return data
    # for each job; those over straggler and slow-link findings return
    # data for the faulty job and none for the clean one (none to show).
    dash = json.load(open(dashboard))
    exprs = 0
    for ct_job in (want_job, faulty_job):
        subst = {"$ct_job": ct_job, "$instance": ".*", "$__rate_interval": "1m"}
        for panel in dash["panels"]:
            for target in panel.get("targets", []):
                expr = target["expr"]
                for var, value in subst.items():
                    expr = expr.replace(var, value)
                if "$" in expr:
                    fail(f"panel {panel['title']!r}: unknown variable left in {expr}")
                    continue
                exprs += 1
                want_data = ct_job == faulty_job or not FINDINGS.search(expr)
                try:
                    if bool(prom.query(expr)) != want_data:
                        fail(f"panel {panel['title']!r}: {expr} returns "
                             f"{'no data' if want_data else 'data for a clean job'}")
                except AssertionError as e:
                    fail(f"panel {panel['title']!r}: {e}")
    for var in dash["templating"]["list"]:
        q = var.get("query", {}).get("query", "") if var["type"] == "query" else ""
        m = re.fullmatch(r"label_values\((\w+), (\w+)\)", q)
        if var["type"] == "query" and not (m and prom.query(f"count by ({m[2]}) ({m[1]})")):
            fail(f"variable {var['name']}: {q} gives no values")

    # the injected condition: host-b's probe dies
    firing = 'ALERTS{alertname="CommtapProbeDown",alertstate="firing"}'
    if prom.query(firing):
        fail("CommtapProbeDown fires before any probe stopped")
    proc_b, addr_b = targets["host-b"]
    proc_b.kill()
    proc_b.wait()
    try:
        alerts = wait_for("CommtapProbeDown to fire", lambda: prom.query(firing), 30)
        down = sorted(a["metric"]["instance"] for a in alerts)
        if down != [addr_b]:
            fail(f"CommtapProbeDown fires for {down}, want [{addr_b}]")
    except AssertionError as e:
        fail(str(e))

    # without the profile, ct_job hashes the job's hosts: the same at every probe
    hosts = {view: json.load(open(t(view + ".json")))["jobs"][0]["hosts"] for view in targets
             if views[view] == profile}
    if len({tuple(h) for h in hosts.values()}) != 1:
        fail(f"the probes see the job's hosts differently: {hosts}")

    print(f"job {want_job}: period {median} s (whole capture {want_period:.4f} s), spread "
          f"{spread}; replay speed {speed:.2f}; bytes by class over 3 probes {dedup} (plain sum {plain}); per iteration "
          f"{ {dict(k)['class']: round(v) for k, v in per_iter.items()} }; job {faulty_job}: "
          f"stragglers { {dict(k)['where']: v for k, v in late.items()} }, slow links "
          f"{ {dict(k)['where']: round(v, 3) for k, v in slow.items()} }; {exprs} dashboard "
          f"expressions; {time.time() - started:.0f} s")
    for n in notes:
        print("note:", n)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
