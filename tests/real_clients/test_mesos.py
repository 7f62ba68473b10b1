"""The simulated Mesos masters over plain HTTP (`requests`, as any script
or dashboard reads them), compared with the captures of real masters in
tests/fixtures/ and Mesos 1.9's documented endpoints."""

import json
import time
import unittest

import requests

from realclients import DEMO_AGENTS, DEMO_APPS, Sim, fixture, get_json, marathon_client, shared_sim, wait_until

# Keys of the fixture's (Mesos 0.19) /master/state that Mesos 1.9 no
# longer writes (the task counters moved to /metrics/snapshot), or writes
# only when set (git_*, log_dir): src/master/readonly_handler.cpp.
STATE_KEYS_GONE_OR_OPTIONAL = {
    "failed_tasks",
    "finished_tasks",
    "killed_tasks",
    "lost_tasks",
    "staged_tasks",
    "started_tasks",
    "git_sha",
    "git_tag",
    "log_dir",
}


def authority(url):
    return url.split("://", 1)[1].split("/", 1)[0]


class MesosMasters(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = shared_sim()
        cls.leader = cls.sim.mesos[0]
        cls.session = requests.Session()
        cls.marathon = marathon_client(cls.sim.marathon)
        wait_until(
            "every Marathon task running",
            lambda: len([t for t in cls.marathon.list_tasks() if t.state == "TASK_RUNNING"])
            == sum(DEMO_APPS.values()),
        )

    def get(self, path, master=None, **kwargs):
        response = self.session.get((master or self.leader) + path, timeout=10, **kwargs)
        return response

    def state(self):
        response = self.get("/master/state")
        self.assertEqual(response.status_code, 200)
        return response.json()

    def test_state_has_the_keys_of_a_real_masters_state(self):
        state = self.state()
        real = fixture("mesos-0.19-master-state-mesosdns.json")
        self.assertLessEqual(set(real) - STATE_KEYS_GONE_OR_OPTIONAL, set(state))
        framework = state["frameworks"][0]
        # An HTTP framework has no pid; reregistered_time only after a
        # re-registration.
        self.assertLessEqual(set(real["frameworks"][0]) - {"pid", "reregistered_time"}, set(framework))
        self.assertLessEqual(set(real["frameworks"][0]["tasks"][0]), set(framework["tasks"][0]))
        for slave in state["slaves"]:
            self.assertLessEqual(set(real["slaves"][0]), set(slave))
        self.assertTrue(all(isinstance(v, str) for v in state["flags"].values()))
        self.assertEqual(state["leader"], state["pid"])
        self.assertEqual(state["leader"], "master@" + authority(self.leader))

    def test_state_lists_marathon_with_the_tasks_marathon_lists(self):
        state = self.state()
        frameworks = [f for f in state["frameworks"] if f["name"] == "marathon"]
        self.assertEqual(len(frameworks), 1)
        framework = frameworks[0]
        self.assertEqual(framework["id"], self.marathon.get_info().framework_id)
        self.assertTrue(framework["active"])
        marathon_tasks = {t.id: t for t in self.marathon.list_tasks()}
        self.assertEqual({t["id"] for t in framework["tasks"]}, set(marathon_tasks))
        for task in framework["tasks"]:
            self.assertEqual(task["state"], "TASK_RUNNING")
            self.assertEqual(task["slave_id"], marathon_tasks[task["id"]].slave_id)
            self.assertEqual(task["framework_id"], framework["id"])
            self.assertEqual(task["statuses"][-1]["state"], "TASK_RUNNING")
        self.assertEqual(len(state["slaves"]), DEMO_AGENTS)
        self.assertEqual(state["activated_slaves"], DEMO_AGENTS)

    def test_state_summary_counts_the_tasks_per_agent_and_framework(self):
        summary = self.get("/master/state-summary").json()
        real = fixture("mesos-master-state-summary-dcosui.json")
        self.assertLessEqual(set(real), set(summary))
        for slave in summary["slaves"]:
            self.assertLessEqual(set(real["slaves"][0]) - {"reregistered_time"}, set(slave))
        for framework in summary["frameworks"]:
            self.assertLessEqual(set(real["frameworks"][0]) - {"pid"}, set(framework))
        tasks = sum(DEMO_APPS.values())
        self.assertEqual(len(summary["slaves"]), DEMO_AGENTS)
        self.assertEqual(sum(s["TASK_RUNNING"] for s in summary["slaves"]), tasks)
        (framework,) = summary["frameworks"]
        self.assertEqual(framework["TASK_RUNNING"], tasks)
        hosts = {t.slave_id for t in self.marathon.list_tasks()}
        self.assertEqual(set(framework["slave_ids"]), hosts)

    def test_frameworks_endpoint_lists_marathon(self):
        answer = self.get("/master/frameworks").json()
        self.assertEqual(set(answer), {"frameworks", "completed_frameworks", "unregistered_frameworks"})
        self.assertEqual([f["name"] for f in answer["frameworks"]], ["marathon"])
        self.assertEqual(answer["completed_frameworks"], [])

    def test_tasks_endpoint_pages_with_limit_and_offset(self):
        every = self.get("/master/tasks", params={"limit": 1000}).json()["tasks"]
        self.assertEqual({t["id"] for t in every}, {t.id for t in self.marathon.list_tasks()})
        first = self.get("/master/tasks", params={"limit": 5, "offset": 0}).json()["tasks"]
        second = self.get("/master/tasks", params={"limit": 5, "offset": 5}).json()["tasks"]
        self.assertEqual(len(first), 5)
        self.assertEqual(len(second), 5)
        self.assertEqual([t["id"] for t in first + second], [t["id"] for t in every[:10]])
        beyond = self.get("/master/tasks", params={"offset": len(every)}).json()["tasks"]
        self.assertEqual(beyond, [])

    def test_flags_are_strings_with_mesos_defaults(self):
        flags = self.get("/master/flags").json()["flags"]
        # Mesos' defaults (docs/configuration/master.md), which the demo
        # scenario keeps.
        self.assertEqual(flags["agent_ping_timeout"], "15secs")
        self.assertEqual(flags["max_agent_ping_timeouts"], "5")
        self.assertEqual(flags["agent_reregister_timeout"], "10mins")
        self.assertEqual(flags["allocation_interval"], "1secs")
        self.assertEqual(flags["quorum"], "2")

    def test_a_follower_redirects_to_the_leader_and_a_client_following_it_gets_the_leaders_answer(self):
        follower = self.sim.mesos[1]
        raw = self.get("/master/state", master=follower, allow_redirects=False)
        self.assertEqual(raw.status_code, 307)
        # Protocol-relative, as Mesos writes it.
        self.assertEqual(raw.headers["Location"], "//" + authority(self.leader) + "/master/state")
        followed = self.get("/master/state", master=follower)
        self.assertEqual(followed.status_code, 200)
        self.assertEqual([r.status_code for r in followed.history], [307])
        self.assertEqual(authority(followed.url), authority(self.leader))
        self.assertEqual(followed.json()["pid"], "master@" + authority(self.leader))
        # A query survives the redirect.
        paged = self.get("/master/tasks", master=self.sim.mesos[2], params={"limit": 3})
        self.assertEqual(len(paged.json()["tasks"]), 3)

    def test_master_redirect_points_every_master_at_the_leader(self):
        for master in self.sim.mesos:
            raw = self.get("/master/redirect", master=master, allow_redirects=False)
            self.assertEqual(raw.status_code, 307, master)
            self.assertEqual(raw.headers["Location"], "//" + authority(self.leader))

    def test_health_answers_on_every_master(self):
        for master in self.sim.mesos:
            self.assertEqual(self.get("/health", master=master).status_code, 200)

    def test_get_agents_has_the_operator_api_docs_shape(self):
        response = self.session.post(self.leader + "/api/v1", json={"type": "GET_AGENTS"}, timeout=10)
        self.assertEqual(response.status_code, 200)
        ours = response.json()
        real = fixture("mesos-v1-GET_AGENTS-response-docs-example.json")
        self.assertEqual(set(ours), set(real))
        self.assertEqual(ours["type"], "GET_AGENTS")
        real_agent = real["get_agents"]["agents"][0]
        agents = ours["get_agents"]["agents"]
        self.assertEqual(len(agents), DEMO_AGENTS)
        names = lambda resources: {r["name"] for r in resources}  # noqa: E731
        for agent in agents:
            self.assertLessEqual(set(real_agent), set(agent))
            self.assertLessEqual(set(real_agent["agent_info"]), set(agent["agent_info"]))
            self.assertEqual(names(agent["agent_info"]["resources"]), names(real_agent["agent_info"]["resources"]))
            self.assertEqual(names(agent["total_resources"]), names(real_agent["total_resources"]))
            for resource in agent["total_resources"]:
                real_resource = next(r for r in real_agent["total_resources"] if r["name"] == resource["name"])
                self.assertEqual(set(resource), set(real_resource), resource["name"])
            self.assertIsInstance(agent["registered_time"]["nanoseconds"], int)
        slaves = self.get("/master/slaves").json()["slaves"]
        self.assertEqual({a["agent_info"]["id"]["value"] for a in agents}, {s["id"] for s in slaves})

    def test_a_get_of_api_v1_is_405_expecting_post(self):
        # master/http.cpp `api`: `MethodNotAllowed({"POST"}, request.method)`,
        # whose text and Allow header libprocess' http.hpp writes.
        response = self.get("/api/v1")
        self.assertEqual(response.status_code, 405)
        self.assertEqual(response.headers.get("Allow"), "POST")
        self.assertEqual(response.text, "405 Method Not Allowed. Expecting one of { 'POST' }, but received 'GET'.")


class MesosReregistration(unittest.TestCase):
    """An agent that re-registers: after a failover the new leader knows
    each agent only once it re-registers (master.cpp `__reregisterSlave`
    sets `reregisteredTime`), and readonly_handler.cpp writes
    `reregistered_time` (float seconds) only when it is set. A simulator
    of its own: the failover would move every other test's leader."""

    def setUp(self):
        self.sim = Sim.start("demo", time_scale=60)
        self.addCleanup(self.sim.stop)

    def test_agents_carry_reregistered_time_only_once_they_reregistered_with_a_new_leader(self):
        first = get_json(self.sim.mesos[0] + "/master/slaves")["slaves"]
        self.assertEqual(len(first), DEMO_AGENTS)
        for agent in first:
            self.assertIsInstance(agent["registered_time"], float)
            self.assertNotIn("reregistered_time", agent)
        registered_first = max(a["registered_time"] for a in first)

        self.sim.faults({"mesos_leader": 1})
        leader = self.sim.mesos[1]
        state = wait_until(
            "the second master to lead",
            lambda: (lambda s: s if s.get("elected_time") and s["leader"] == s["pid"] else None)(
                get_json(leader + "/master/state")
            ),
        )
        self.assertEqual(state["leader"], "master@" + authority(leader))
        slaves = get_json(leader + "/master/slaves")["slaves"]
        self.assertEqual({a["id"] for a in slaves}, {a["id"] for a in first})
        for agent in slaves:
            self.assertIsInstance(agent["reregistered_time"], float)
            self.assertGreaterEqual(agent["reregistered_time"], state["elected_time"])
            self.assertGreaterEqual(agent["reregistered_time"], registered_first)
            self.assertLessEqual(agent["registered_time"], agent["reregistered_time"])
        # The v1 listing carries it too, in nanoseconds.
        v1 = requests.post(leader + "/api/v1", json={"type": "GET_AGENTS"}, timeout=10).json()
        for agent in v1["get_agents"]["agents"]:
            self.assertIsInstance(agent["reregistered_time"]["nanoseconds"], int)



def named(machine):
    """A machine as Mesos names it in its refusals: `JSON::protobuf(id)`
    stringified by stout's jsonify (compact, keys in order)."""
    return json.dumps(machine, separators=(",", ":"), sort_keys=True)


class MesosMaintenance(unittest.TestCase):
    """The maintenance endpoints against Mesos' source: machines compared
    as `MachineID` equality compares them (include/mesos/type_utils.hpp:
    the hostname lowercased, the ip exact, a field left out is not a field
    given) and the refusals of master/maintenance.cpp and
    master/http.cpp (400, their text). A simulator of its own."""

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim.start("demo", time_scale=60)
        cls.addClassCleanup(cls.sim.stop)
        cls.leader = cls.sim.mesos[0]
        cls.session = requests.Session()

    def post(self, path, body):
        return self.session.post(self.leader + path, json=body, timeout=10)

    def agents(self):
        return self.session.get(self.leader + "/master/slaves", timeout=10).json()["slaves"]

    def machine_of(self, agent):
        # The ip an agent announced is its pid's: slave(1)@IP:PORT.
        ip = agent["pid"].split("@", 1)[1].rsplit(":", 1)[0]
        return {"hostname": agent["hostname"], "ip": ip}

    def schedule(self, machines):
        start = time.time_ns()
        return self.post(
            "/master/maintenance/schedule",
            {
                "windows": [
                    {
                        "machine_ids": machines,
                        "unavailability": {"start": {"nanoseconds": start}, "duration": {"nanoseconds": 3600 * 10**9}},
                    }
                ]
            },
        )

    def status(self):
        return self.session.get(self.leader + "/master/maintenance/status", timeout=10).json()

    def assertRefused(self, response, text):
        self.assertEqual((response.status_code, response.text), (400, text))

    def tearDown(self):
        # Leave no machine down or scheduled for the next test.
        down = self.status().get("down_machines", [])
        if down:
            self.post("/master/machine/up", down)
        self.post("/master/maintenance/schedule", {})

    def test_a_machine_is_its_hostname_in_any_case_with_its_ip(self):
        agent = self.agents()[3]
        announced = self.machine_of(agent)
        shouted = dict(announced, hostname=announced["hostname"].upper())
        self.assertEqual(self.schedule([shouted]).status_code, 200)
        self.assertEqual([m["id"] for m in self.status()["draining_machines"]], [shouted])
        # Down by the name the agent announced: the same machine (Mesos'
        # maintenance docs: "The hostname is not case-sensitive").
        self.assertEqual(self.post("/master/machine/down", [announced]).status_code, 200)
        self.assertNotIn(agent["id"], [a["id"] for a in self.agents()])
        self.assertEqual(self.status()["down_machines"], [shouted])
        self.assertEqual(self.post("/master/machine/up", [announced]).status_code, 200)
        schedule = self.session.get(self.leader + "/master/maintenance/schedule", timeout=10).json()
        self.assertEqual(schedule.get("windows", []), [])
        wait_until(
            "the machine's agent to register again",
            lambda: any(a["hostname"] == agent["hostname"] for a in self.agents()),
        )

    def test_a_machine_named_without_its_ip_is_not_the_agents_machine(self):
        # "In order for Mesos to recognize an agent as coming from a
        # particular machine, both the hostname and ip fields must match."
        agent = self.agents()[5]
        hostname_only = {"hostname": agent["hostname"]}
        self.assertEqual(self.schedule([hostname_only]).status_code, 200)
        self.assertEqual(self.post("/master/machine/down", [hostname_only]).status_code, 200)
        self.assertIn(agent["id"], [a["id"] for a in self.agents()])
        self.assertEqual(self.status()["down_machines"], [hostname_only])
        # The agent's own machine was never scheduled: the master knows it
        # (an agent registered on it) and it is UP.
        own = self.machine_of(agent)
        self.assertRefused(
            self.post("/master/machine/down", [own]),
            f"Machine '{named(own)}' is not in DRAINING mode and cannot be brought down",
        )

    def test_a_machine_down_by_its_hostname_alone_is_not_the_scheduled_machine_with_its_ip(self):
        # master/http.cpp `_startMaintenance`: every machine must be in
        # the master's machines (compared by `MachineID` equality, where an
        # ip left out differs from an ip given), else 400 and nothing is
        # taken down.
        agent = self.agents()[7]
        full = self.machine_of(agent)
        self.assertEqual(self.schedule([full]).status_code, 200)
        hostname_only = {"hostname": agent["hostname"]}
        self.assertRefused(
            self.post("/master/machine/down", [hostname_only]),
            f"Machine '{named(hostname_only)}' is not part of a maintenance schedule",
        )
        self.assertIn(agent["id"], [a["id"] for a in self.agents()])
        status = self.status()
        self.assertEqual([m["id"] for m in status["draining_machines"]], [full])
        self.assertNotIn("down_machines", status)

    def test_machines_in_the_wrong_mode_are_refused_with_mesos_texts(self):
        agents = self.agents()
        down, draining = self.machine_of(agents[1]), self.machine_of(agents[2])
        never_seen = {"hostname": "spare-host", "ip": "10.255.0.9"}
        self.assertRefused(
            self.post("/master/machine/down", [never_seen]),
            f"Machine '{named(never_seen)}' is not part of a maintenance schedule",
        )
        self.assertEqual(self.schedule([down, draining]).status_code, 200)
        self.assertEqual(self.post("/master/machine/down", [down]).status_code, 200)
        self.assertRefused(
            self.post("/master/machine/down", [down]),
            f"Machine '{named(down)}' is not in DRAINING mode and cannot be brought down",
        )
        self.assertRefused(
            self.post("/master/machine/up", [draining]),
            f"Machine '{named(draining)}' is not in DOWN mode and cannot be brought up",
        )
        # A schedule leaving out a DOWN machine.
        self.assertRefused(
            self.schedule([draining]),
            f"Machine '{named(down)}' is deactivated and cannot be removed from the schedule",
        )
        # The v1 calls share the checks.
        v1 = self.post("/api/v1", {"type": "STOP_MAINTENANCE", "stop_maintenance": {"machines": [draining]}})
        self.assertRefused(v1, f"Machine '{named(draining)}' is not in DOWN mode and cannot be brought up")
        self.assertEqual(self.post("/master/machine/up", [down]).status_code, 200)
        self.assertRefused(
            self.post("/master/machine/up", [down]),
            f"Machine '{named(down)}' is not in DOWN mode and cannot be brought up",
        )

    def test_malformed_machines_and_windows_are_refused_with_mesos_texts(self):
        def window(machines, duration):
            return {
                "windows": [
                    {
                        "machine_ids": machines,
                        "unavailability": {"start": {"nanoseconds": 0}, "duration": {"nanoseconds": duration}},
                    }
                ]
            }

        cases = [
            ("/master/machine/down", [], "List of machines is empty"),
            ("/master/machine/down", [{}], "Both 'hostname' and 'ip' for a machine are empty"),
            ("/master/machine/up", [{"hostname": "h", "ip": "10.0.0"}], "Failed to parse IPv4: 10.0.0"),
            (
                "/master/machine/down",
                [{"hostname": "Machine1", "ip": "10.0.0.1"}, {"hostname": "machine1", "ip": "10.0.0.1"}],
                'Machine \'{"hostname":"machine1","ip":"10.0.0.1"}\' appears more than once in the schedule',
            ),
            ("/master/maintenance/schedule", window([], 1), "List of machines in the maintenance window is empty"),
            (
                "/master/maintenance/schedule",
                window([{"hostname": "m", "ip": "10.0.0.1"}], -1),
                "Unavailability 'duration' is negative",
            ),
            (
                "/master/maintenance/schedule",
                window([{"hostname": "M", "ip": "10.0.0.1"}, {"hostname": "m", "ip": "10.0.0.1"}], 1),
                'Machine \'{"hostname":"m","ip":"10.0.0.1"}\' appears more than once in the schedule',
            ),
        ]
        for path, body, text in cases:
            with self.subTest(path=path, body=body):
                self.assertRefused(self.post(path, body), text)
        self.assertEqual(self.status(), {})


if __name__ == "__main__":
    unittest.main()
