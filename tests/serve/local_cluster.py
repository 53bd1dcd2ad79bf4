"""A real multi-node Ray cluster on one machine: a head and worker nodes, each its
own raylet on 127.0.0.1 with its own ports and temp dir, each started by
`ray start --block` in a session of its own (Ray's worker processes leave the
process group but keep the session). A node is killed as a machine would die
(SIGKILL to every process of its session), and stop() ends every session it
started, by id: `ray stop` would end every Ray process of the machine, other
clusters too."""
import os
import signal
import socket
import subprocess
import tempfile
import time


def _free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _port_block(size, first=20000, last=60000, step=211):
    """The first block of `size` free ports from a start that varies per process, so
    that two runs on one machine do not pick the same block."""
    start = first + (os.getpid() * step) % (last - first - size)
    for base in range(start, last - size, size):
        if all(_free(p) for p in range(base, base + size)):
            return base
    raise RuntimeError("no block of free ports")


class LocalCluster:
    # Ports per node: node manager, object manager, metrics, dashboard agent (2),
    # runtime env agent, then the worker processes' range.
    PORTS_PER_NODE = 40

    def __init__(self, ray_bin, cpus_per_node, object_store_bytes=200 << 20, env=None):
        self.ray = ray_bin
        self.cpus = list(cpus_per_node)
        self.store = object_store_bytes
        self.env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", **(env or {}))
        self.base = _port_block(self.PORTS_PER_NODE * len(self.cpus) + 3)
        self.gcs_port = self.base
        self.http_port = self.base + 2 + self.PORTS_PER_NODE * len(self.cpus)  # free for the caller
        self.dir = tempfile.mkdtemp(prefix="sgray-")  # short: Ray's socket paths are limited
        self.nodes = []  # (Popen, temp dir), head first
        self.address = f"127.0.0.1:{self.gcs_port}"

    def _args(self, i):
        p = self.base + 2 + i * self.PORTS_PER_NODE
        return ["--node-ip-address=127.0.0.1", f"--num-cpus={self.cpus[i]}", f"--object-store-memory={self.store}",
                f"--node-manager-port={p}", f"--object-manager-port={p + 1}", f"--metrics-export-port={p + 2}",
                f"--dashboard-agent-listen-port={p + 3}", f"--dashboard-agent-grpc-port={p + 4}",
                f"--runtime-env-agent-port={p + 5}", f"--min-worker-port={p + 10}",
                f"--max-worker-port={p + self.PORTS_PER_NODE - 1}", "--disable-usage-stats", "--block"]

    def _start_node(self, i):
        temp = os.path.join(self.dir, f"n{i}")
        if i == 0:
            cmd = [self.ray, "start", "--head", f"--port={self.gcs_port}", "--include-dashboard=false",
                   f"--ray-client-server-port={self.base + 1}", f"--temp-dir={temp}"]
        else:
            cmd = [self.ray, "start", f"--address={self.address}", f"--temp-dir={temp}"]
        log = open(os.path.join(self.dir, f"node{i}.log"), "wb")
        proc = subprocess.Popen(cmd + self._args(i), stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                start_new_session=True)
        self.nodes.append((proc, temp))

    def start(self, timeout_s=120):
        import ray
        self._start_node(0)
        deadline = time.monotonic() + timeout_s
        while not self._gcs_up():
            self._check_alive(0)
            if time.monotonic() > deadline:
                raise TimeoutError("the head node did not start")
            time.sleep(0.5)
        for i in range(1, len(self.cpus)):
            self._start_node(i)
        ray.init(address=self.address, _node_ip_address="127.0.0.1", logging_level="warning",
                 log_to_driver=False)
        while len([n for n in ray.nodes() if n["Alive"]]) < len(self.cpus):
            for i in range(len(self.nodes)):
                self._check_alive(i)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(ray.nodes())} of {len(self.cpus)} nodes joined")
            time.sleep(0.5)
        return self

    def _gcs_up(self):
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.gcs_port)) == 0

    def _check_alive(self, i):
        proc = self.nodes[i][0]
        if proc.poll() is not None:
            with open(os.path.join(self.dir, f"node{i}.log"), errors="replace") as f:
                raise RuntimeError(f"node {i} exited ({proc.returncode}):\n{f.read()[-3000:]}")

    def node_id(self, i):
        """The Ray node id of node i (found by its raylet's port)."""
        import ray
        port = self.base + 2 + i * self.PORTS_PER_NODE
        return next(n["NodeID"] for n in ray.nodes() if n["NodeManagerPort"] == port)

    def kill_node(self, i):
        """Kills node i and every process it started at once, as a machine failing."""
        self._signal_sessions([self.nodes[i][0].pid], signal.SIGKILL)
        self.nodes[i][0].wait()

    @staticmethod
    def _members(sessions):
        """Pids of the live (not zombie) processes in these sessions."""
        pids = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z" and int(fields[3]) in sessions:  # state, session id
                pids.append(int(pid))
        return pids

    def _signal_sessions(self, sessions, sig):
        for pid in self._members(set(sessions)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def stop(self):
        """Ends every node: SIGTERM to `ray start --block` (which stops its node), then
        SIGKILL to whatever is left in the nodes' sessions. Returns the pids still
        alive (none when all went well); safe after a failed start."""
        try:
            import ray
            ray.shutdown()
        except Exception:  # noqa: BLE001 - stopping goes on whatever the driver says
            pass
        for proc, _ in reversed(self.nodes):
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + 20
        for proc, _ in reversed(self.nodes):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        sessions = [proc.pid for proc, _ in self.nodes]
        self._signal_sessions(sessions, signal.SIGKILL)
        for proc, _ in self.nodes:
            proc.wait()
        time.sleep(0.5)
        return self._members(set(sessions))
