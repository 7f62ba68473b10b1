"""marathon-python 0.13 (PyPI `marathon`) against the simulated Marathons.

Every expectation comes from Marathon itself (its RAML examples and 1.5
captures in tests/fixtures/, its source where they say nothing) or from
the scenario (tests/scenarios/demo.toml), never from the simulator's own
answers. Reads go to the shared simulator; tests that kill tasks or change
apps get a simulator of their own.
"""

import queue
import re
import threading
import time
import unittest
import uuid

import marathon
import requests
from marathon.exceptions import ConflictError, InternalServerError, MarathonHttpError, NotFoundError
from marathon.models import MarathonApp, MarathonDeployment, MarathonGroup, MarathonInfo, MarathonTask

from realclients import (
    DEMO_APPS,
    DEMO_HEALTH_CHECKED,
    Sim,
    fixture,
    get_json,
    marathon_client,
    shared_sim,
    wait_until,
)


def authority(url):
    return url.split("://", 1)[1].split("/", 1)[0]


def all_healthy(client):
    """Every app at its instance count, health-checked apps all healthy."""
    apps = client.list_apps()
    return len(apps) == len(DEMO_APPS) and all(
        a.tasks_running == a.instances
        and (a.tasks_healthy == a.instances if a.id in DEMO_HEALTH_CHECKED else True)
        and not a.deployments
        for a in apps
    )


class MarathonReads(unittest.TestCase):
    """The shared simulator, read only."""

    @classmethod
    def setUpClass(cls):
        cls.sim = shared_sim()
        cls.client = marathon_client(cls.sim.marathon)
        wait_until("every app running and healthy", lambda: all_healthy(cls.client))

    def test_list_versions_and_get_version_read_the_apps_definitions(self):
        for app_id, instances in DEMO_APPS.items():
            versions = self.client.list_versions(app_id)
            self.assertTrue(versions, app_id)
            # Newest first (AppVersionsResource): the newest is the app's.
            self.assertEqual(versions[0], self.client.get_app(app_id).version, app_id)
            oldest = self.client.get_version(app_id, versions[-1])
            self.assertIsInstance(oldest, MarathonApp)
            self.assertEqual((oldest.id, oldest.instances, oldest.version), (app_id, instances, versions[-1]))
        with self.assertRaises(NotFoundError):
            self.client.get_version("/web/frontend", "2001-01-01T00:00:00.000Z")

    def test_ping_pongs(self):
        self.assertEqual(self.client.ping(), b"pong")

    def test_get_info_parses_and_names_the_framework_the_masters_list(self):
        info = self.client.get_info()
        self.assertIsInstance(info, MarathonInfo)
        self.assertEqual(info.name, "marathon")
        self.assertTrue(info.elected)
        self.assertEqual(info.leader, authority(self.sim.marathon[0]))
        state = get_json(self.sim.mesos[0] + "/master/state")
        ids = [f["id"] for f in state["frameworks"] if f["name"] == "marathon"]
        self.assertEqual(ids, [info.framework_id])
        # Every key of the RAML example, marathon_config in full.
        example = fixture("marathon-v2-info-raml-example.json")
        raw = requests.get(self.sim.marathon[0] + "/v2/info", timeout=10).json()
        self.assertLessEqual(set(example), set(raw))
        self.assertLessEqual(set(example["marathon_config"]), set(raw["marathon_config"]))
        self.assertLessEqual(set(example["zookeeper_config"]), set(raw["zookeeper_config"]))

    def test_get_leader_is_the_first_marathon(self):
        leader = self.client.get_leader()
        self.assertEqual(set(leader), set(fixture("marathon-v2-leader-docs-example.json")))
        self.assertEqual(leader["leader"], authority(self.sim.marathon[0]))

    def test_list_apps_are_the_scenarios_apps_with_counts(self):
        apps = self.client.list_apps()
        self.assertTrue(all(isinstance(a, MarathonApp) for a in apps))
        self.assertEqual({a.id: a.instances for a in apps}, DEMO_APPS)
        for app in apps:
            self.assertEqual(app.tasks, [], f"{app.id}: tasks without embed")
            self.assertEqual(app.tasks_running, app.instances, app.id)
            if app.id in DEMO_HEALTH_CHECKED:
                self.assertEqual(app.tasks_healthy, app.instances, app.id)
                self.assertEqual(len(app.health_checks), 1, app.id)
            else:
                # An app without health checks reports none healthy.
                self.assertEqual(app.tasks_healthy, 0, app.id)
                self.assertEqual(app.health_checks, [], app.id)

    def test_list_apps_embed_tasks_gives_tasks_with_health_results(self):
        # marathon-python asks embed=app.tasks; Marathon takes the app.,
        # apps. and group.apps. prefixes alike (InfoEmbedResolver).
        apps = self.client.list_apps(embed_tasks=True)
        self.assertEqual({a.id for a in apps}, set(DEMO_APPS))
        for app in apps:
            self.assertEqual(len(app.tasks), app.instances, app.id)
            for task in app.tasks:
                self.assertIsInstance(task, MarathonTask)
                self.assertEqual(task.app_id, app.id)
                self.assertEqual(task.state, "TASK_RUNNING")
                self.assertIsNotNone(task.started_at)
                if app.id in DEMO_HEALTH_CHECKED:
                    self.assertEqual(len(task.health_check_results), 1, task.id)
                    result = task.health_check_results[0]
                    self.assertTrue(result.alive)
                    self.assertIsNotNone(result.last_success)
                    # Marathon >= 1.5: the instance id, app.marathon-uuid.
                    app_part, uuid_part = task.id.split(".", 1)
                    self.assertEqual(result.instance_id, f"{app_part}.marathon-{uuid_part}")
                else:
                    self.assertEqual(task.health_check_results, [], task.id)

    def test_get_app_embeds_its_tasks_unasked(self):
        app = self.client.get_app("/web/frontend")
        self.assertEqual(app.id, "/web/frontend")
        self.assertEqual(app.instances, 4)
        self.assertEqual(len(app.tasks), 4)
        self.assertEqual(app.health_checks[0].protocol, "HTTP")
        self.assertEqual(app.health_checks[0].interval_seconds, 10)
        self.assertEqual(app.health_checks[0].grace_period_seconds, 60)
        self.assertEqual(app.upgrade_strategy.minimum_health_capacity, 1)
        self.assertIsNotNone(app.version_info.last_config_change_at)
        self.assertTrue(all(t.health_check_results for t in app.tasks))
        api = self.client.get_app("/web/api")
        self.assertEqual(api.upgrade_strategy.minimum_health_capacity, 0.5)
        self.assertEqual(api.health_checks[0].protocol, "MESOS_HTTP")
        cache = self.client.get_app("/data/cache")
        self.assertEqual([c.json_repr() for c in cache.constraints], [["hostname", "UNIQUE"]])
        self.assertEqual(len({t.host for t in cache.tasks}), 3)

    def test_list_tasks_run_on_the_masters_agents(self):
        tasks = self.client.list_tasks()
        self.assertEqual(len(tasks), sum(DEMO_APPS.values()))
        slaves = get_json(self.sim.mesos[0] + "/master/slaves")["slaves"]
        hosts = {s["id"]: s["hostname"] for s in slaves}
        for task in tasks:
            self.assertIn(task.app_id, DEMO_APPS)
            self.assertEqual(hosts.get(task.slave_id), task.host, task.id)

    def test_list_tasks_of_one_app(self):
        tasks = self.client.list_tasks("/web/api")
        self.assertEqual(len(tasks), 3)
        self.assertEqual({t.app_id for t in tasks}, {"/web/api"})

    def test_tasks_carry_every_key_of_marathons_examples(self):
        raw = requests.get(self.sim.marathon[0] + "/v2/tasks", timeout=10).json()["tasks"]
        for name in ("marathon-v2-tasks-raml-example.json", "marathon-v2-apps-appid-tasks-raml-example.json"):
            example = fixture(name)["tasks"][0]
            for task in raw:
                self.assertLessEqual(set(example), set(task), f"{name}: {task['id']}")
        apps = requests.get(self.sim.marathon[0] + "/v2/apps", timeout=10).json()["apps"]
        example = fixture("marathon-v2-apps-raml-example.json")["apps"][0]
        for app in apps:
            self.assertLessEqual(set(example), set(app), app["id"])

    def test_each_task_has_a_host_port_per_service_port(self):
        # As every task of Marathon's examples and captures: host ports
        # from the agent's offered range (Mesos' default 31000-32000).
        slaves = get_json(self.sim.mesos[0] + "/master/slaves")["slaves"]
        ranges = {s["resources"]["ports"] for s in slaves}
        self.assertEqual(ranges, {"[31000-32000]"})
        for task in self.client.list_tasks():
            self.assertEqual(len(task.ports), len(task.service_ports), task.id)
            self.assertTrue(all(31000 <= p <= 32000 for p in task.ports), task.ports)
        endpoints = self.client.list_endpoints()
        self.assertEqual(len(endpoints), sum(DEMO_APPS.values()))
        apps = {a.id: a for a in self.client.list_apps()}
        for endpoint in endpoints:
            self.assertEqual([endpoint.service_port], apps[endpoint.app_id].ports)

    def test_no_deployments_in_the_steady_state(self):
        self.assertEqual(self.client.list_deployments(), [])

    def test_unknown_app_is_not_found(self):
        with self.assertRaises(NotFoundError) as caught:
            self.client.get_app("/no/such/app")
        self.assertEqual(caught.exception.status_code, 404)
        self.assertEqual(caught.exception.error_message, "App '/no/such/app' does not exist")
        with self.assertRaises(NotFoundError):
            self.client.list_tasks("/no/such/app")

    def test_a_following_marathon_forwards_to_the_leader_and_says_so(self):
        # LeaderProxyFilter (a filter on /*): a non-leader forwards every
        # request, /v2/info and /ping included, and hands back the
        # leader's answer with the leader's headers and its own
        # X-Marathon-Via (JavaUrlConnectionRequestForwarder).
        leader, follower_url = self.sim.marathon[0], self.sim.marathon[1]
        follower = marathon_client([follower_url])
        self.assertEqual(
            sorted(a.id for a in follower.list_apps()),
            sorted(a.id for a in self.client.list_apps()),
        )
        info = follower.get_info()
        self.assertTrue(info.elected, "the leader's own /v2/info")
        self.assertEqual(info.leader, authority(leader))
        self.assertEqual(follower.get_leader()["leader"], authority(leader))
        self.assertEqual(follower.ping(), b"pong")
        via = "1.1 " + authority(self.sim.marathon[2])
        for path in ("/v2/apps", "/v2/info", "/ping"):
            response = requests.get(self.sim.marathon[2] + path, timeout=10)
            self.assertEqual(response.status_code, 200, path)
            self.assertEqual(response.headers.get("X-Marathon-Leader"), leader, path)
            self.assertEqual(response.headers.get("X-Marathon-Via"), via, path)
            direct = requests.get(leader + path, timeout=10)
            self.assertEqual(direct.headers.get("X-Marathon-Leader"), leader, path)
            self.assertNotIn("X-Marathon-Via", direct.headers, path)

    def test_a_request_a_follower_forwarded_before_is_a_proxying_loop(self):
        # JavaUrlConnectionRequestForwarder: its own X-Marathon-Via on the
        # request is a loop, refused with 502 "Detected proxying loop.".
        follower = self.sim.marathon[1]
        looped = requests.get(
            follower + "/v2/apps", headers={"X-Marathon-Via": "1.1 " + authority(follower)}, timeout=10
        )
        self.assertEqual(looped.status_code, 502)
        self.assertIn("Detected proxying loop.", looped.text)
        other = requests.get(
            follower + "/v2/apps", headers={"X-Marathon-Via": "1.1 " + authority(self.sim.marathon[2])}, timeout=10
        )
        self.assertEqual(other.status_code, 200)

    def test_groups_are_the_apps_parent_paths(self):
        groups = self.client.list_groups()
        self.assertTrue(all(isinstance(g, MarathonGroup) for g in groups))
        expected = sorted({app.rsplit("/", 1)[0] for app in DEMO_APPS})
        self.assertEqual(sorted(g.id for g in groups), expected)
        web = self.client.get_group("/web")
        self.assertEqual(web.id, "/web")
        self.assertEqual(sorted(a.id for a in web.apps), ["/web/api", "/web/frontend"])
        self.assertEqual({a.id: a.instances for a in web.apps}, {"/web/api": 3, "/web/frontend": 4})
        self.assertEqual(web.groups, [])
        with self.assertRaises(NotFoundError):
            self.client.get_group("/no/such/group")

    def test_event_subscriptions_need_the_http_callback_subscriber(self):
        # Marathon without --event_subscriber http_callback (its default,
        # and /v2/info names no event_subscriber) refuses with a 400.
        self.assertIsNone(self.client.get_info().event_subscriber)
        with self.assertRaises(MarathonHttpError) as caught:
            self.client.list_event_subscriptions()
        self.assertEqual(caught.exception.status_code, 400)


class MarathonTaskKills(unittest.TestCase):
    """Kills and scaling, on a simulator of their own."""

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim.start("demo", time_scale=60)
        # Stopped even when the rest of setUpClass fails.
        cls.addClassCleanup(cls.sim.stop)
        cls.client = marathon_client(cls.sim.marathon)
        wait_until("every app running and healthy", lambda: all_healthy(cls.client))

    def running(self, app_id):
        return [t for t in self.client.list_tasks(app_id) if t.state == "TASK_RUNNING"]

    def test_kill_task_returns_it_and_marathon_replaces_it(self):
        before = self.running("/jobs/worker-1")
        victim = before[0]
        killed = self.client.kill_task("/jobs/worker-1", victim.id)
        self.assertIsInstance(killed, MarathonTask)
        self.assertEqual(killed.id, victim.id)
        ids = wait_until(
            "a replacement running",
            lambda: (lambda ids: ids if len(ids) == 2 and victim.id not in ids else None)(
                {t.id for t in self.running("/jobs/worker-1")}
            ),
        )
        self.assertNotIn(victim.id, ids)
        self.assertEqual(self.client.get_app("/jobs/worker-1").instances, 2)

    def test_kill_task_with_scale_answers_the_deployment_and_is_not_replaced(self):
        victim = self.running("/jobs/worker-2")[0]
        answer = self.client.kill_task("/jobs/worker-2", victim.id, scale=True)
        # AppTasksResource: with scale=true, the deployment, not the task.
        self.assertIsInstance(answer, dict)
        self.assertEqual(set(answer), {"version", "deploymentId"})
        wait_until(
            "the scale-down deployment to finish",
            lambda: answer["deploymentId"] not in {d.id for d in self.client.list_deployments()},
        )
        app = self.client.get_app("/jobs/worker-2")
        self.assertEqual(app.instances, 1)
        left = wait_until(
            "the killed task gone, one left",
            lambda: (lambda ids: ids if len(ids) == 1 and victim.id not in ids else None)(
                {t.id for t in self.client.list_tasks("/jobs/worker-2")}
            ),
        )
        self.assertEqual(len(left), 1)

    def test_kill_given_tasks_kills_and_marathon_replaces(self):
        victim = self.running("/jobs/worker-3")[0]
        self.assertTrue(self.client.kill_given_tasks([victim.id]))
        wait_until(
            "a replacement running",
            lambda: (lambda ids: len(ids) == 2 and victim.id not in ids)({t.id for t in self.running("/jobs/worker-3")}),
        )

    def test_kill_tasks_on_a_host_kills_only_that_hosts_tasks(self):
        tasks = self.running("/jobs/worker-4")
        host = tasks[0].host
        on_host = {t.id for t in tasks if t.host == host}
        killed = self.client.kill_tasks("/jobs/worker-4", host=host)
        self.assertEqual({t.id for t in killed}, on_host)
        self.assertTrue(all(isinstance(t, MarathonTask) for t in killed))
        wait_until(
            "replacements running",
            lambda: (lambda ids: len(ids) == 2 and not ids & on_host)({t.id for t in self.running("/jobs/worker-4")}),
        )

    def test_kill_unknown_task_is_not_found(self):
        missing = f"jobs_worker-1.{uuid.uuid4()}"
        with self.assertRaises(NotFoundError) as caught:
            self.client.kill_task("/jobs/worker-1", missing)
        self.assertEqual(caught.exception.error_message, f"Task '{missing}' does not exist")

    def test_kill_given_tasks_with_an_unreadable_id_is_a_bad_request(self):
        with self.assertRaises(MarathonHttpError) as caught:
            self.client.kill_given_tasks(["not-a-task-id"])
        self.assertEqual(caught.exception.status_code, 400)

    def test_scale_app_up_deploys_and_runs_the_new_instance(self):
        answer = self.client.scale_app("/ops/metrics", instances=3)
        self.assertEqual(set(answer), {"version", "deploymentId"})
        self.assertTrue(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", answer["version"]), answer)
        wait_until(
            "the scale-up deployment to finish with 3 running",
            lambda: answer["deploymentId"] not in {d.id for d in self.client.list_deployments()}
            and self.client.get_app("/ops/metrics").tasks_running == 3,
        )


class MarathonDeployments(unittest.TestCase):
    """A deployment caught in progress: real time (1x), so it lasts."""

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim.start("demo", time_scale=1)
        # Stopped even when the rest of setUpClass fails.
        cls.addClassCleanup(cls.sim.stop)
        cls.client = marathon_client(cls.sim.marathon)

    def test_a_scale_up_is_listed_and_locks_the_app(self):
        answer = self.client.scale_app("/web/frontend", instances=5)
        deployments = self.client.list_deployments()
        self.assertTrue(all(isinstance(d, MarathonDeployment) for d in deployments))
        mine = [d for d in deployments if d.id == answer["deploymentId"]]
        self.assertEqual(len(mine), 1, deployments)
        deployment = mine[0]
        self.assertEqual(deployment.affected_apps, ["/web/frontend"])
        self.assertEqual(
            [(a.action, a.app) for step in deployment.steps for a in step.actions],
            [("ScaleApplication", "/web/frontend")],
        )
        self.assertEqual([(a.action, a.app) for a in deployment.current_actions], [("ScaleApplication", "/web/frontend")])
        raw = requests.get(self.sim.marathon[0] + "/v2/deployments", timeout=10).json()
        example = fixture("marathon-v2-deployments-raml-example.json")[0]
        for d in raw:
            self.assertLessEqual(set(example), set(d))
        self.assertEqual([d.id for d in self.client.get_app("/web/frontend").deployments], [deployment.id])

        # Another change to the app while it deploys: 409, unless forced.
        with self.assertRaises(ConflictError) as caught:
            self.client.scale_app("/web/frontend", instances=6)
        self.assertEqual(caught.exception.status_code, 409)
        self.assertIn("force=true", caught.exception.error_message)
        task = self.client.list_tasks("/web/frontend")[0]
        with self.assertRaises(ConflictError):
            self.client.kill_task("/web/frontend", task.id, scale=True)
        forced = self.client.scale_app("/web/frontend", instances=6, force=True)
        self.assertEqual(set(forced), {"version", "deploymentId"})
        self.assertEqual(self.client.get_app("/web/frontend").instances, 6)


if __name__ == "__main__":
    unittest.main()


class MarathonLaunchQueue(unittest.TestCase):
    """An app whose relaunched tasks fail: Marathon's rate limiter holds
    its next launch back, `list_queue()` shows the delay, `reset_delay()`
    drops it. At 10x, so a delay of a second or two can be seen."""

    APP = "/ops/metrics"  # no health checks: a failing start is TASK_FAILED

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim.start("demo", time_scale=10)
        cls.addClassCleanup(cls.sim.stop)
        cls.client = marathon_client(cls.sim.marathon)
        wait_until("every app running and healthy", lambda: all_healthy(cls.client))

    def test_a_failing_app_waits_in_the_queue_until_its_delay_is_reset(self):
        self.assertEqual(self.client.list_queue(), [])
        self.sim.faults({"world": {"never_healthy_apps": [self.APP]}})
        ids = [t.id for t in self.client.list_tasks(self.APP)]
        self.assertTrue(self.client.kill_given_tasks(ids))

        def delayed():
            for item in self.client.list_queue():
                if item.app.id == self.APP and item.delay.overdue is False:
                    return item
            return None

        # Kills add no delay (Marathon's rate limiter counts TASK_FAILED,
        # not TASK_KILLED); the replacements' failures do.
        item = wait_until("the app held back by a launch delay", delayed, timeout=60)
        self.assertIn(item.count, (1, 2))
        self.assertGreaterEqual(item.delay.time_left_seconds, 1)
        self.assertEqual(item.app.instances, 2)
        self.assertTrue(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", item.since), item.since)

        self.sim.faults({"world": {"never_healthy_apps": []}})
        try:
            self.client.reset_delay(self.APP)
        except NotFoundError:
            # Launched in between: the delay ran out by itself.
            pass
        wait_until(
            "the app running again",
            lambda: self.client.get_app(self.APP).tasks_running == 2 and self.client.list_queue() == [],
            timeout=60,
        )
        with self.assertRaises(NotFoundError) as caught:
            self.client.reset_delay(self.APP)
        self.assertEqual(
            caught.exception.error_message,
            f"Application {self.APP} not found in tasks queue.",
        )


class MarathonDeploymentCancel(unittest.TestCase):
    """DELETE /v2/deployments/{id} as DeploymentsResource.cancel answers
    it, on a simulator of their own at real time, its health-checked apps'
    new tasks never healthy (a scale-up that does not end by itself)."""

    STUCK = ["/web/frontend", "/web/api"]

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim.start("demo", time_scale=1)
        cls.addClassCleanup(cls.sim.stop)
        cls.client = marathon_client(cls.sim.marathon)
        wait_until("every app running and healthy", lambda: all_healthy(cls.client))
        cls.sim.faults({"world": {"never_healthy_apps": cls.STUCK}})

    def test_delete_deployment_rolls_a_scale_up_back(self):
        scaled = self.client.scale_app("/web/frontend", instances=5)
        stuck = scaled["deploymentId"]
        # Without force: a new deployment reverting the plan (200 and a
        # deployment result).
        rollback = self.client.delete_deployment(stuck)
        self.assertEqual(set(rollback), {"deploymentId", "version"})
        self.assertNotEqual(rollback["deploymentId"], stuck)
        self.assertTrue(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", rollback["version"]), rollback)
        self.assertEqual(self.client.get_app("/web/frontend").instances, 4)
        listed = [d.id for d in self.client.list_deployments()]
        self.assertNotIn(stuck, listed)
        self.assertIn(rollback["deploymentId"], listed)
        # The revert is a version of the app of its own, the count as before.
        self.assertEqual(self.client.list_versions("/web/frontend")[0], rollback["version"])
        self.assertEqual(self.client.get_version("/web/frontend", rollback["version"]).instances, 4)
        wait_until(
            "the rollback to finish with the four healthy tasks",
            lambda: not self.client.list_deployments()
            and (lambda app: (app.tasks_running, app.tasks_healthy) == (4, 4))(self.client.get_app("/web/frontend")),
            timeout=30,
        )

    def test_delete_deployment_with_force_is_202_and_rolls_nothing_back(self):
        # Through a follower: the leader's answer either way.
        follower = marathon_client(self.sim.marathon[1:2])
        stuck = follower.scale_app("/web/api", instances=4)["deploymentId"]
        self.assertEqual(follower.delete_deployment(stuck, force=True), {})
        self.assertNotIn(stuck, [d.id for d in self.client.list_deployments()])
        self.assertEqual(self.client.get_app("/web/api").instances, 4)
        again = self.client.scale_app("/web/api", instances=5)["deploymentId"]
        raw = requests.delete(f"{self.sim.marathon[0]}/v2/deployments/{again}", params={"force": "true"}, timeout=10)
        self.assertEqual(raw.status_code, 202)
        self.assertEqual(raw.content, b"")
        self.assertEqual(self.client.get_app("/web/api").instances, 5)

    def test_delete_unknown_deployment_is_not_found(self):
        missing = str(uuid.uuid4())
        with self.assertRaises(NotFoundError) as caught:
            self.client.delete_deployment(missing)
        self.assertEqual(caught.exception.error_message, f"DeploymentPlan {missing} does not exist")
        with self.assertRaises(NotFoundError):
            self.client.delete_deployment(missing, force=True)


class MarathonElection(unittest.TestCase):
    """No leader: LeaderProxyFilter refuses every path, /ping and
    /v2/leader included, with 503 "Could not determine the current
    leader"; a new leader is named by every Marathon."""

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim.start("demo", time_scale=60)
        cls.addClassCleanup(cls.sim.stop)

    def test_without_a_leader_every_path_is_refused_until_one_is_elected(self):
        self.sim.faults({"marathon_leader": None})
        client = marathon_client(self.sim.marathon)
        for call in (client.ping, client.get_leader, client.list_apps):
            with self.assertRaises(InternalServerError) as caught:
                call()
            self.assertEqual(caught.exception.status_code, 503)
        for url in self.sim.marathon:
            response = requests.get(url + "/ping", timeout=10)
            self.assertEqual(response.status_code, 503, url)
            self.assertIn("Could not determine the current leader", response.text)
        self.sim.faults({"marathon_leader": 1})
        self.assertEqual(client.get_leader()["leader"], authority(self.sim.marathon[1]))
        response = requests.get(self.sim.marathon[0] + "/v2/apps", timeout=10)
        self.assertEqual(response.headers.get("X-Marathon-Leader"), self.sim.marathon[1])
        self.assertEqual(response.headers.get("X-Marathon-Via"), "1.1 " + authority(self.sim.marathon[0]))


class MarathonEventStream(unittest.TestCase):
    """`event_stream()` (GET /v2/events, server-sent events) parsed into
    marathon-python's event models: the client asks the last URL (a
    standby), follows its redirect to the leader, and reads a scale-up's
    events as Marathon's event bus publishes them."""

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim.start("demo", time_scale=20)
        cls.addClassCleanup(cls.sim.stop)
        cls.client = marathon_client(cls.sim.marathon)
        wait_until("every app running and healthy", lambda: all_healthy(cls.client))

    def test_a_scale_up_streams_its_api_post_deployment_status_and_health_events(self):
        from marathon.models.events import (
            MarathonApiPostEvent,
            MarathonDeploymentInfo,
            MarathonDeploymentSuccess,
            MarathonEventStreamAttached,
            MarathonHealthStatusChangedEvent,
            MarathonStatusUpdateEvent,
        )

        events = queue.Queue()

        def read():
            try:
                for event in self.client.event_stream():
                    events.put(event)
            except Exception as err:  # surfaced below, in the test's thread
                events.put(err)

        threading.Thread(target=read, daemon=True).start()
        seen = []

        def until(what, predicate, timeout=20.0):
            deadline = time.monotonic() + timeout
            while not any(predicate(e) for e in seen):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {what} in {len(seen)} events: {[type(e).__name__ for e in seen]}")
                try:
                    event = events.get(timeout=left)
                except queue.Empty:
                    continue
                if isinstance(event, Exception):
                    raise event
                seen.append(event)

        until("attach", lambda e: isinstance(e, MarathonEventStreamAttached))
        app = "/web/frontend"
        self.client.scale_app(app, instances=DEMO_APPS[app] + 1)
        until("api post", lambda e: isinstance(e, MarathonApiPostEvent) and e.app_definition["id"] == app)
        until("deployment info", lambda e: isinstance(e, MarathonDeploymentInfo))
        until(
            "the new task running",
            lambda e: isinstance(e, MarathonStatusUpdateEvent) and e.app_id == app and e.task_status == "TASK_RUNNING",
        )
        until("its check passing", lambda e: isinstance(e, MarathonHealthStatusChangedEvent) and e.alive)
        until("deployment success", lambda e: isinstance(e, MarathonDeploymentSuccess))
        info = next(e for e in seen if isinstance(e, MarathonDeploymentInfo))
        self.assertEqual(info.plan.steps[0].actions[0].app, app)
        update = next(e for e in seen if isinstance(e, MarathonStatusUpdateEvent))
        self.assertTrue(update.task_id.startswith("web_frontend."), update.task_id)
        self.assertTrue(update.slave_id and update.host, vars(update))
