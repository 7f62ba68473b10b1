"""The simulated Mesos masters over plain HTTP (`requests`, as any script
or dashboard reads them), compared with the captures of real masters in
tests/fixtures/ and Mesos 1.9's documented endpoints."""

import unittest

import requests

from realclients import DEMO_AGENTS, DEMO_APPS, fixture, marathon_client, shared_sim, wait_until

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
        response = self.get("/api/v1")
        self.assertEqual(response.status_code, 405)
        self.assertEqual(response.headers.get("Allow"), "POST")


if __name__ == "__main__":
    unittest.main()
