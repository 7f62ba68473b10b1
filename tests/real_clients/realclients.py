"""What the real-client tests share: the simulator they talk to, clients
made the way an operator makes them, the fixtures, and a bounded wait.

`scripts/real-clients` starts one `roller sim` for the whole run and
passes its endpoints in the environment (ROLLER_SIM_AWS, ROLLER_SIM_MESOS,
ROLLER_SIM_MARATHON, ROLLER_SIM_CONTROL); tests that change the world in
ways other tests would notice start a private simulator with `Sim.start`.
Run alone (`python -m unittest` in this folder), the shared simulator is
started here too, from ROLLER_BIN (default: the debug build under
CARGO_TARGET_DIR or target/).
"""

import atexit
import json
import os
import pathlib
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"

# The shared simulator's scenario and time scale (scripts/real-clients
# starts it with these).
SCENARIO = os.environ.get("ROLLER_SIM_SCENARIO", "demo")
# What the demo scenario holds (tests/scenarios/demo.toml): compared with
# what the clients see, so a simulator that lost an app or an agent fails.
DEMO_GROUP = "mesos-agents-demo"
DEMO_AGENTS = 12
DEMO_APPS = {
    "/web/frontend": 4,
    "/web/api": 3,
    "/data/cache": 3,
    "/data/indexer": 1,
    "/jobs/worker-1": 2,
    "/jobs/worker-2": 2,
    "/jobs/worker-3": 2,
    "/jobs/worker-4": 2,
    "/ops/metrics": 2,
    "/ops/scheduler": 1,
}
DEMO_HEALTH_CHECKED = {"/web/frontend", "/web/api", "/data/cache", "/data/indexer"}


def roller_bin():
    if os.environ.get("ROLLER_BIN"):
        return os.environ["ROLLER_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR") or str(REPO / "target")
    return str(pathlib.Path(target) / "debug" / "roller")


def fixture(name):
    with open(FIXTURES / name, encoding="utf-8") as f:
        return json.load(f)


def wait_until(what, predicate, timeout=20.0, interval=0.05):
    """Polls `predicate` until it returns something truthy, at most
    `timeout` real seconds; returns that value or fails naming `what`."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")
        time.sleep(interval)


def get_json(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)


def _die_with_parent():
    """In the child, before exec: on Linux, SIGTERM when the test process
    dies, so that no simulator outlives a run killed mid-way."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Sim:
    """A `roller sim` process and the endpoints it printed."""

    def __init__(self, process, endpoints, lines):
        self.process = process
        self.aws = endpoints["AWS_ENDPOINT_URL"]
        self.mesos = endpoints["MESOS"].split(",")
        self.marathon = endpoints["MARATHON"].split(",")
        self.control = endpoints["SIM"]
        self._lines = lines

    @classmethod
    def from_env(cls):
        if not os.environ.get("ROLLER_SIM_MARATHON"):
            return None
        return cls(
            None,
            {
                "AWS_ENDPOINT_URL": os.environ["ROLLER_SIM_AWS"],
                "MESOS": os.environ["ROLLER_SIM_MESOS"],
                "MARATHON": os.environ["ROLLER_SIM_MARATHON"],
                "SIM": os.environ["ROLLER_SIM_CONTROL"],
            },
            None,
        )

    @classmethod
    def start(cls, scenario="demo", time_scale=60, write_env=None, timeout=30.0):
        """Starts `roller sim` and waits (bounded) for its READY line."""
        args = [roller_bin(), "sim", "--scenario", scenario, "--time-scale", str(time_scale), "-q"]
        if write_env:
            args += ["--write-env", str(write_env)]
        log = tempfile.TemporaryFile(mode="w+")
        process = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            text=True,
            preexec_fn=_die_with_parent,
        )
        lines = queue.Queue()

        def pump():
            for line in process.stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        endpoints = {}
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line == "READY":
                break
            if line is None:
                process.kill()
                process.wait()
                log.seek(0)
                raise RuntimeError(
                    f"roller sim did not print READY within {timeout} s "
                    f"(exit {process.returncode}): {log.read()[-2000:]}"
                )
            if "=" in line and not line.startswith("#"):
                key, value = line.split("=", 1)
                endpoints[key] = value
        log.close()
        return cls(process, endpoints, lines)

    def stop(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def faults(self, body):
        request = urllib.request.Request(
            self.control + "/faults",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as r:
            return json.load(r)


_shared = None
_shared_lock = threading.Lock()


def shared_sim():
    """The simulator the whole run shares (started here when run alone)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Sim.from_env()
            if _shared is None:
                _shared = Sim.start(SCENARIO)
                atexit.register(_shared.stop)
        return _shared


def marathon_client(urls):
    import marathon

    return marathon.MarathonClient(list(urls), timeout=10)


def aws_clients(sim):
    """boto3 clients for the simulator's AWS endpoint, dummy credentials,
    no shared config: nothing of a developer's own AWS setup is read."""
    import boto3
    import botocore.config

    session = boto3.session.Session(
        aws_access_key_id="simulated",
        aws_secret_access_key="simulated",
        region_name="us-east-1",
    )
    config = botocore.config.Config(retries={"max_attempts": 1, "mode": "standard"})
    return (
        session.client("autoscaling", endpoint_url=sim.aws, config=config),
        session.client("ec2", endpoint_url=sim.aws, config=config),
    )
