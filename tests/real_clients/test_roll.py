"""End to end: a real `roller run` rolls a simulator of its own while
boto3 and marathon-python watch, and afterwards both see what a finished
roll must leave: only new instances in service, every app healthy."""

import os
import subprocess
import tempfile
import threading
import time
import unittest

from realclients import (
    DEMO_AGENTS,
    DEMO_APPS,
    DEMO_GROUP,
    DEMO_HEALTH_CHECKED,
    Sim,
    aws_clients,
    get_json,
    marathon_client,
    roller_bin,
)

# The demo roll is some ten simulated minutes of waits: a few real
# seconds at this scale.
TIME_SCALE = 300
ROLL_TIMEOUT_S = 90


class Watcher(threading.Thread):
    """Polls both clients while the roll runs: what they saw, and any
    answer they could not parse."""

    def __init__(self, sim):
        super().__init__(daemon=True)
        self.asg, _ = aws_clients(sim)
        self.marathon = marathon_client(sim.marathon)
        self.stop = threading.Event()
        self.errors = []
        self.max_desired = 0
        self.max_size = 0
        self.suspended = set()
        self.polls = 0

    def run(self):
        while not self.stop.is_set():
            try:
                (group,) = self.asg.describe_auto_scaling_groups(AutoScalingGroupNames=[DEMO_GROUP])["AutoScalingGroups"]
                self.max_desired = max(self.max_desired, group["DesiredCapacity"])
                self.max_size = max(self.max_size, group["MaxSize"])
                self.suspended |= {p["ProcessName"] for p in group["SuspendedProcesses"]}
                self.marathon.list_apps(embed_tasks=True)
                self.marathon.list_deployments()
                self.polls += 1
            except Exception as e:  # any answer a client cannot take
                self.errors.append(repr(e))
            self.stop.wait(0.1)


class RollWhileTheClientsWatch(unittest.TestCase):
    def test_a_roll_replaces_every_instance_and_leaves_every_app_healthy(self):
        work = tempfile.TemporaryDirectory()
        self.addCleanup(work.cleanup)
        env_file = os.path.join(work.name, "sim.toml")
        sim = Sim.start("demo", time_scale=TIME_SCALE, write_env=env_file)
        self.addCleanup(sim.stop)
        # Generous waits (simulated time): a loaded machine must not turn
        # a slow poll into a pause.
        with open(env_file, "a", encoding="utf-8") as f:
            f.write('\n[timeouts]\nscale_up = "1h"\nderegister = "1h"\nhealthy = "1h"\ntask_move = "1h"\n')

        asg, ec2 = aws_clients(sim)
        client = marathon_client(sim.marathon)
        (before,) = asg.describe_auto_scaling_groups(AutoScalingGroupNames=[DEMO_GROUP])["AutoScalingGroups"]
        originals = {i["InstanceId"] for i in before["Instances"]}
        self.assertEqual(len(originals), DEMO_AGENTS)

        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("AWS_") and k not in ("ROLLER_SIM_AWS",)
        }
        env.update(
            AWS_ACCESS_KEY_ID="simulated",
            AWS_SECRET_ACCESS_KEY="simulated",
            AWS_REGION="us-east-1",
            AWS_EC2_METADATA_DISABLED="true",
            AWS_CONFIG_FILE=os.devnull,
            AWS_SHARED_CREDENTIALS_FILE=os.devnull,
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        watcher = Watcher(sim)
        watcher.start()
        started = time.monotonic()
        try:
            run = subprocess.run(
                [roller_bin(), "run", "--env", env_file, "--target", str(DEMO_AGENTS), "--no-live", "-q"],
                cwd=work.name,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=ROLL_TIMEOUT_S,
            )
        finally:
            watcher.stop.set()
            watcher.join(timeout=10)
        took = time.monotonic() - started
        self.assertEqual(run.returncode, 0, f"roller run exit {run.returncode} after {took:.1f} s:\n{run.stderr[-3000:]}")
        self.assertEqual(watcher.errors, [])
        self.assertGreater(watcher.polls, 3)

        # What boto3 saw during the roll: a surge within MaxSize and the
        # roller's suspended processes (its default list).
        self.assertGreater(watcher.max_desired, DEMO_AGENTS)
        self.assertLessEqual(watcher.max_desired, watcher.max_size)
        self.assertIn("AZRebalance", watcher.suspended)

        # After: only new instances, all in service, as many as before.
        (after,) = asg.describe_auto_scaling_groups(AutoScalingGroupNames=[DEMO_GROUP])["AutoScalingGroups"]
        now = {i["InstanceId"]: i for i in after["Instances"]}
        self.assertEqual(len(now), DEMO_AGENTS)
        self.assertFalse(set(now) & originals, "an original instance is still in the group")
        self.assertTrue(all(i["LifecycleState"] == "InService" for i in now.values()))
        self.assertEqual(after["DesiredCapacity"], DEMO_AGENTS)
        self.assertEqual(after["MaxSize"], before["MaxSize"])
        self.assertEqual(after["SuspendedProcesses"], [])
        reservations = ec2.describe_instances(InstanceIds=sorted(originals))["Reservations"]
        self.assertEqual({i["State"]["Name"] for r in reservations for i in r["Instances"]}, {"terminated"})

        # Every app healthy, on the new instances' agents.
        apps = client.list_apps(embed_tasks=True)
        self.assertEqual({a.id: a.instances for a in apps}, DEMO_APPS)
        self.assertEqual(client.list_deployments(), [])
        reservations = ec2.describe_instances(InstanceIds=sorted(now))["Reservations"]
        new_hosts = {i["PrivateDnsName"] for r in reservations for i in r["Instances"]}
        for app in apps:
            self.assertEqual(app.tasks_running, app.instances, app.id)
            if app.id in DEMO_HEALTH_CHECKED:
                self.assertEqual(app.tasks_healthy, app.instances, app.id)
                self.assertTrue(all(t.health_check_results and t.health_check_results[0].alive for t in app.tasks))
            for task in app.tasks:
                self.assertIn(task.host, new_hosts, f"{task.id} on an old host")
        slaves = get_json(sim.mesos[0] + "/master/slaves")["slaves"]
        self.assertEqual({s["hostname"] for s in slaves}, new_hosts)


if __name__ == "__main__":
    unittest.main()
