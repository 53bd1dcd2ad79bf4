"""make test-serve: examples/serve/classifier_app.py on a real three-node Ray cluster
on this machine (tests/serve/local_cluster.py), under load, through failures.

1. Compiles examples/layers.py with fixed weights and computes every request's
   answer in this process (one stagegraph Session): the reference.
2. Starts a head and two worker nodes, deploys 4 replicas with batching, and sends
   --requests requests (1-4 rows each, JSON and .npy bodies alternating) from
   --clients concurrent clients. A quarter in, one replica's process is killed; half
   way, a worker node holding replicas (SIGKILL to all its processes). Clients retry
   failed requests (counted); every answer must equal the reference bit for bit and
   none may be lost.
3. Measures throughput and p50/p99 latency for 1 and 2 replicas, batching on and off
   (--bench-requests each; 0 skips), and writes them into --results.
Every node is stopped at the end, whatever happened.
"""
import argparse
import http.client
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "examples", "serve"), os.path.join(ROOT, "examples"), os.path.dirname(__file__)]

import stagegraph as sg  # noqa: E402
from local_cluster import LocalCluster  # noqa: E402

APP = "classifier"
DEPLOYMENT = "Classifier"
MAX_ATTEMPTS = 60
# GCS notices a dead node after ~3 missed 1 s health checks (defaults: 5 of 3 s).
FAST_FAILURE_DETECTION = {"RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
                          "RAY_health_check_failure_threshold": "3"}


def build_graph(work, graph_compile):
    import layers
    weights = os.path.join(work, "layers.safetensors")
    sg.write_safetensors(weights, layers.make_weights())
    out = os.path.join(work, "classifier.sgraph")
    subprocess.run([graph_compile, os.path.join(ROOT, "examples", "layers.py"), "--weights", weights, "-o", out],
                   check=True)
    return out


def make_requests(n, width, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((int(rng.integers(1, 5)), width)).astype(np.float32) for _ in range(n)]


def encode(i, x):
    """Even requests as .npy bodies, odd ones as JSON."""
    if i % 2:
        return json.dumps({"x": x.tolist()}).encode(), "application/json"
    buf = io.BytesIO()
    np.save(buf, x)
    return buf.getvalue(), "application/x-npy"


def decode(body, content_type):
    if content_type == "application/json":
        return np.asarray(json.loads(body)["y"], np.float32)
    return np.load(io.BytesIO(body))


class Load:
    """Clients sending requests[0:n] once each, a bounded loop; failed attempts
    (connection errors, 5xx) are retried and counted."""

    def __init__(self, port, requests, expected, clients):
        self.port, self.requests, self.expected, self.clients = port, requests, expected, clients
        self.next = 0
        self.done = 0
        self.lock = threading.Lock()
        self.retries = {}
        self.lost = []
        self.wrong = []
        self.latency = np.zeros(len(requests))

    def _take(self):
        with self.lock:
            i, self.next = self.next, self.next + 1
            return i if i < len(self.requests) else None

    def _send(self, conn, i):
        body, content_type = encode(i, self.requests[i])
        for attempt in range(MAX_ATTEMPTS):
            try:
                if conn[0] is None:
                    conn[0] = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                conn[0].request("POST", "/", body, {"Content-Type": content_type})
                response = conn[0].getresponse()
                data = response.read()
                if response.status == 200:
                    return data
                why = f"HTTP {response.status}"
            except (OSError, http.client.HTTPException) as e:
                why = type(e).__name__
                conn[0].close()
                conn[0] = None
            with self.lock:
                self.retries[why] = self.retries.get(why, 0) + 1
            time.sleep(min(0.02 * 2 ** attempt, 1.0))
        return None

    def _client(self):
        conn = [None]
        while (i := self._take()) is not None:
            t0 = time.perf_counter()
            data = self._send(conn, i)
            self.latency[i] = time.perf_counter() - t0
            y = decode(data, encode(i, self.requests[i])[1]) if data is not None and self.expected else None
            with self.lock:
                self.done += 1
                if data is None:
                    self.lost.append(i)
                elif self.expected and (y.dtype != np.float32 or y.shape != self.expected[i].shape or
                                        not np.array_equal(y.view(np.uint32), self.expected[i].view(np.uint32))):
                    self.wrong.append(i)
        if conn[0] is not None:
            conn[0].close()

    def run(self, during=()):
        """Runs the clients; `during` holds (fraction done, action) pairs, each action
        called once the clients have finished that fraction of the requests."""
        threads = [threading.Thread(target=self._client, daemon=True) for _ in range(self.clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        pending = sorted(during, key=lambda d: d[0])
        while any(t.is_alive() for t in threads):
            while pending and self.done >= pending[0][0] * len(self.requests):
                pending.pop(0)[1]()
            time.sleep(0.01)
        self.seconds = time.perf_counter() - t0
        return self

    def summary(self):
        ms = np.sort(self.latency) * 1e3
        return {"requests": len(self.requests), "seconds": self.seconds, "rps": len(self.requests) / self.seconds,
                "p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99)),
                "retries": sum(self.retries.values()), "retry_kinds": dict(self.retries),
                "lost": len(self.lost), "wrong": len(self.wrong)}


def deploy(graph, replicas, max_batch_size, wait_s=0.002, threads=1):
    from ray import serve
    from classifier_app import Classifier
    app = Classifier.options(num_replicas=replicas, user_config={
        "max_batch_size": max_batch_size, "batch_wait_timeout_s": wait_s}).bind(graph, threads=threads)
    serve.run(app, name=APP, route_prefix="/")


def deploy_echo():
    from ray import serve
    from starlette.responses import Response

    @serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 1}, max_ongoing_requests=64)
    class Echo:
        """No model: answers with the request's body. Its rate is the ceiling that HTTP,
        the proxy and Ray's calls leave on this machine."""

        async def __call__(self, request):
            return Response(await request.body(), media_type=request.headers.get("content-type"))

    serve.run(Echo.bind(), name=APP, route_prefix="/")


def replicas():
    """[(pid, node id)] of the deployment's live replica actors, from the GCS's actor
    table (ray.util.state would need the dashboard running: one more process per node)."""
    from ray._private.state import actors
    return [(a["Pid"], a["Address"]["NodeID"]) for a in actors().values()
            if a["ActorClassName"] == f"ServeReplica:{APP}:{DEPLOYMENT}" and a["State"] == "ALIVE"]


def wait_running(count, timeout_s=180):
    from ray import serve
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = serve.status().applications.get(APP)
        if status is not None and status.status == "RUNNING" and len(replicas()) == count:
            return
        time.sleep(0.5)
    raise TimeoutError(f"the deployment did not get back to {count} running replicas")


def failure_run(cluster, port, graph, requests, expected, clients):
    deploy(graph, replicas=4, max_batch_size=16)
    wait_running(4)
    workers = {cluster.node_id(i): i for i in (1, 2)}
    events = []

    def kill_replica():
        # One on a node that stays up, so the two failures are separate.
        placed = replicas()
        doomed = max(workers, key=lambda n: sum(node == n for _, node in placed))
        pid = next(pid for pid, node in placed if node != doomed)
        os.kill(pid, 9)
        events.append(f"killed replica process {pid}")

    def kill_node():
        placed = replicas()
        doomed = max(workers, key=lambda n: sum(node == n for _, node in placed))
        cluster.kill_node(workers[doomed])
        events.append(f"killed worker node {workers[doomed]} with {sum(n == doomed for _, n in placed)} replicas")

    load = Load(port, requests, expected, clients).run(during=[(0.25, kill_replica), (0.5, kill_node)])
    t0 = time.monotonic()
    wait_running(4)
    waited = time.monotonic() - t0
    events.append(f"4 replicas running again {waited:.1f} s after the load ended" if waited > 0.5
                  else "4 replicas running again before the load ended")
    return load, events


def bench(port, graph, requests, expected, clients):
    from ray import serve
    rows = []
    deploy_echo()
    Load(port, requests[:200], None, clients).run()
    s = Load(port, requests, None, clients).run().summary()
    rows.append((1, 0, s))
    print(f"  echo, no model: {s['rps']:.0f} req/s, p50 {s['p50_ms']:.2f} ms, p99 {s['p99_ms']:.2f} ms", flush=True)
    for replica_count in (1, 2):
        for max_batch_size in (1, 16):
            serve.delete(APP)
            deploy(graph, replicas=replica_count, max_batch_size=max_batch_size)
            wait_running(replica_count)
            Load(port, requests[:200], expected[:200], clients).run()  # warm-up
            s = Load(port, requests, expected, clients).run().summary()
            if s["lost"] or s["wrong"] or s["retries"]:
                raise AssertionError(f"bench run with failures: {s}")
            rows.append((replica_count, max_batch_size, s))
            print(f"  {replica_count} replica(s), max_batch_size {max_batch_size}: {s['rps']:.0f} req/s, "
                  f"p50 {s['p50_ms']:.2f} ms, p99 {s['p99_ms']:.2f} ms", flush=True)
    return rows


def in_process_floor(graph, requests):
    from classifier_app import run_rows
    run = sg.load(graph).session(threads=1).classify
    for x in requests[:200]:
        run_rows(run, x)
    t0 = time.perf_counter()
    for x in requests:
        run_rows(run, x)
    return (time.perf_counter() - t0) / len(requests) * 1e6


HEADING = "## Serving on Ray Serve (make test-serve)"


def write_results(path, rows, floor_us, failure, events, args, load_average):
    echo = rows[0][2]["rps"]
    model = [r[2]["rps"] for r in rows[1:]]
    lines = [HEADING, "",
             f"examples/serve/classifier_app.py (examples/layers.py's classify, f32[N, 16] -> f32[N, 4]; 1-4 rows a "
             f"request, JSON and .npy bodies alternating) on a three-node Ray {ray_version()} cluster on one "
             f"{os.cpu_count()}-core machine, shared with the clients ({args.clients} threads, Python http.client) and "
             f"the cluster's own processes; one HTTP proxy on the head; a replica is 1 CPU, 1 thread; batching waits "
             f"at most 2 ms. {args.bench_requests} requests a row, after 200 of warm-up; latency is a request's "
             "round trip at the client.", "",
             "| replicas | batching | requests/s | p50 ms | p99 ms |", "|---:|---|---:|---:|---:|"]
    for replica_count, max_batch_size, s in rows:
        batching = {0: "echo deployment, no model", 1: "off (max_batch_size 1)"}.get(
            max_batch_size, f"max_batch_size {max_batch_size}")
        lines.append(f"| {replica_count} | {batching} | {s['rps']:.0f} | {s['p50_ms']:.2f} | {s['p99_ms']:.2f} |")
    lines += ["", f"Lower bounds: the same requests run in one process on one Session take {floor_us:.0f} µs each "
              f"({1e6 / floor_us:.0f} requests/s on one core); the echo row, the same HTTP requests answered with "
              "their own body by a deployment without a model, is the ceiling the HTTP proxy and Ray's calls leave "
              f"on this machine. Load average during the run: {load_average}.", "",
              f"The model's rows reach {min(model) / echo:.0%} to {max(model) / echo:.0%} of the echo row's rate: here "
              "the proxy, not the model, sets the rate, so neither a second replica nor batching can raise it. "
              "They pay where a request's run costs more than its trip through the proxy, with one proxy per "
              "node (docs/deployment.md).", "",
              f"Failures under load ({failure['requests']} requests, 4 replicas, batching on): "
              + "; ".join(events) + f". {failure['retries']} retries {failure['retry_kinds']}, "
              f"{failure['lost']} lost, {failure['wrong']} answers not bit-identical to the in-process run; "
              f"{failure['rps']:.0f} requests/s, p50 {failure['p50_ms']:.2f} ms, p99 {failure['p99_ms']:.0f} ms "
              "(with retries).", ""]
    with open(path) as f:
        text = f.read()
    start = text.find(HEADING)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines)
    else:
        end = text.find("\n## ", start + len(HEADING))
        text = text[:start] + "\n".join(lines) + ("\n" + text[end + 1:] if end >= 0 else "")
    with open(path, "w") as f:
        f.write(text)


def ray_version():
    import ray
    return ray.__version__


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph-compile", required=True)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--bench-requests", type=int, default=3000)
    ap.add_argument("--results", help="bench/RESULTS.md to write the figures into")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="sgserve-")
    graph_path = build_graph(work, args.graph_compile)
    with open(graph_path, "rb") as f:
        graph = f.read()
    from classifier_app import run_rows
    reference = sg.load(graph).session(threads=1).classify
    requests = make_requests(args.requests, width=16)
    expected = [run_rows(reference, x).copy() for x in requests]

    t_start = time.monotonic()
    env = dict(FAST_FAILURE_DETECTION, PYTHONPATH=os.pathsep.join(sys.path[:2]))
    cluster = LocalCluster(os.path.join(os.path.dirname(sys.executable), "ray"), cpus_per_node=[2, 2, 2], env=env)
    ok = False
    try:
        cluster.start()
        from ray import serve
        port = cluster.http_port
        serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": port})
        print(f"test-serve: cluster of 3 nodes up in {time.monotonic() - t_start:.0f} s; HTTP on port {port}",
              flush=True)

        load, events = failure_run(cluster, port, graph, requests, expected, args.clients)
        s = load.summary()
        print(f"test-serve: {s['requests']} requests in {s['seconds']:.1f} s ({s['rps']:.0f}/s), "
              f"p50 {s['p50_ms']:.2f} ms, p99 {s['p99_ms']:.1f} ms; " + "; ".join(events), flush=True)
        print(f"test-serve: {s['retries']} retries {s['retry_kinds']}, {s['lost']} lost, {s['wrong']} wrong",
              flush=True)
        if s["lost"] or s["wrong"]:
            raise AssertionError(f"lost requests {load.lost[:10]}, wrong answers {load.wrong[:10]}")
        if len(events) < 3:
            raise AssertionError(f"the failures did not all happen: {events}")

        if args.bench_requests:
            print("test-serve: throughput and latency", flush=True)
            rows = bench(port, graph, requests[:args.bench_requests], expected[:args.bench_requests], args.clients)
            floor_us = in_process_floor(graph, requests[:args.bench_requests])
            if args.results:
                write_results(args.results, rows, floor_us, s, events, args,
                              " / ".join(f"{a:.1f}" for a in os.getloadavg()))
                print(f"test-serve: figures written to {args.results}")
        ok = True
    finally:
        left = cluster.stop()
        print(f"test-serve: cluster stopped ({len(left)} processes left: {left}); "
              f"{time.monotonic() - t_start:.0f} s in all", flush=True)
        if left and ok:
            raise AssertionError(f"processes outlived the cluster: {left}")
    print("test-serve: passed")


if __name__ == "__main__":
    main()
