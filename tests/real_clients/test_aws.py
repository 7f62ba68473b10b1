"""boto3 (botocore's own Query-protocol parsers) against the simulated
Auto Scaling and EC2. Expectations come from the scenario and from AWS's
documented behaviour and error codes; reads go to the shared simulator,
changes to one simulator per test."""

import datetime
import ipaddress
import unittest

from botocore.exceptions import ClientError

from realclients import DEMO_AGENTS, DEMO_GROUP, Sim, aws_clients, get_json, shared_sim, wait_until

ACTIVITY_STATUSES = {
    "PendingSpotBidPlacement",
    "WaitingForSpotInstanceRequestId",
    "WaitingForSpotInstanceId",
    "WaitingForInstanceId",
    "PreInService",
    "InProgress",
    "WaitingForELBConnectionDraining",
    "MidLifecycleAction",
    "WaitingForInstanceWarmup",
    "Successful",
    "Failed",
    "Cancelled",
    "WaitingForConnectionDraining",
}


def error_code(caught):
    return caught.exception.response["Error"]["Code"]


def group_of(asg):
    (group,) = asg.describe_auto_scaling_groups(AutoScalingGroupNames=[DEMO_GROUP])["AutoScalingGroups"]
    return group


def in_service(group):
    return sorted(i["InstanceId"] for i in group["Instances"] if i["LifecycleState"] == "InService")


class AwsReads(unittest.TestCase):
    """The shared simulator, read only."""

    @classmethod
    def setUpClass(cls):
        cls.sim = shared_sim()
        cls.asg, cls.ec2 = aws_clients(cls.sim)

    def group_instances(self):
        reservations = self.ec2.describe_instances(
            Filters=[{"Name": "tag:aws:autoscaling:groupName", "Values": [DEMO_GROUP]}]
        )["Reservations"]
        return [i for r in reservations for i in r["Instances"]]

    def test_describe_group_is_the_scenarios_group(self):
        group = group_of(self.asg)
        self.assertEqual(group["AutoScalingGroupName"], DEMO_GROUP)
        self.assertEqual((group["MinSize"], group["MaxSize"], group["DesiredCapacity"]), (12, 24, 12))
        self.assertEqual(group["LaunchTemplate"]["LaunchTemplateName"], "mesos-agent")
        self.assertEqual(group["LaunchTemplate"]["Version"], "7")
        self.assertEqual(len(group["AvailabilityZones"]), 3)
        self.assertTrue(group["AutoScalingGroupARN"].startswith("arn:aws:autoscaling:us-east-1:"))
        self.assertTrue(group["AutoScalingGroupARN"].endswith(":autoScalingGroupName/" + DEMO_GROUP))
        self.assertEqual(len(group["Instances"]), DEMO_AGENTS)
        for instance in group["Instances"]:
            self.assertEqual(instance["LifecycleState"], "InService")
            # DescribeAutoScalingGroups writes Healthy; the instances call
            # writes HEALTHY (AWS's own inconsistency).
            self.assertEqual(instance["HealthStatus"], "Healthy")
            self.assertIn(instance["AvailabilityZone"], group["AvailabilityZones"])
            self.assertRegex(instance["InstanceId"], r"^i-[0-9a-f]{17}$")
        self.assertEqual(group["SuspendedProcesses"], [])
        self.assertIsInstance(group["CreatedTime"], datetime.datetime)
        self.assertEqual({t["Key"]: t["Value"] for t in group["Tags"]}, {"Environment": "demo"})

    def test_the_groups_paginator_and_an_unknown_name(self):
        pages = list(self.asg.get_paginator("describe_auto_scaling_groups").paginate(PaginationConfig={"PageSize": 1}))
        names = [g["AutoScalingGroupName"] for p in pages for g in p["AutoScalingGroups"]]
        self.assertEqual(names, [DEMO_GROUP])
        # AWS answers an unknown name with an empty list, not an error.
        answer = self.asg.describe_auto_scaling_groups(AutoScalingGroupNames=["no-such-group"])
        self.assertEqual(answer["AutoScalingGroups"], [])

    def test_describe_auto_scaling_instances_pages_through_the_group(self):
        paginator = self.asg.get_paginator("describe_auto_scaling_instances")
        pages = list(paginator.paginate(PaginationConfig={"PageSize": 5}))
        self.assertEqual([len(p["AutoScalingInstances"]) for p in pages], [5, 5, 2])
        instances = [i for p in pages for i in p["AutoScalingInstances"]]
        self.assertEqual(sorted(i["InstanceId"] for i in instances), in_service(group_of(self.asg)))
        for instance in instances:
            self.assertEqual(instance["AutoScalingGroupName"], DEMO_GROUP)
            self.assertEqual(instance["HealthStatus"], "HEALTHY")
            self.assertEqual(instance["LifecycleState"], "InService")
        one = self.asg.describe_auto_scaling_instances(InstanceIds=[instances[0]["InstanceId"]])
        self.assertEqual([i["InstanceId"] for i in one["AutoScalingInstances"]], [instances[0]["InstanceId"]])
        # MaxRecords is 1 to 50 for this call.
        with self.assertRaises(ClientError) as caught:
            self.asg.describe_auto_scaling_instances(MaxRecords=51)
        self.assertEqual(error_code(caught), "ValidationError")

    def test_describe_tags_filters(self):
        by_group = self.asg.describe_tags(Filters=[{"Name": "auto-scaling-group", "Values": [DEMO_GROUP]}])["Tags"]
        self.assertEqual(
            [(t["ResourceId"], t["ResourceType"], t["Key"], t["Value"]) for t in by_group],
            [(DEMO_GROUP, "auto-scaling-group", "Environment", "demo")],
        )
        by_key = self.asg.describe_tags(Filters=[{"Name": "key", "Values": ["Environment"]}])["Tags"]
        self.assertEqual([t["Value"] for t in by_key], ["demo"])
        none = self.asg.describe_tags(Filters=[{"Name": "value", "Values": ["no-such-value"]}])["Tags"]
        self.assertEqual(none, [])

    def test_describe_scaling_activities(self):
        activities = self.asg.describe_scaling_activities(AutoScalingGroupName=DEMO_GROUP)["Activities"]
        self.assertGreaterEqual(len(activities), DEMO_AGENTS)
        for activity in activities:
            self.assertEqual(activity["AutoScalingGroupName"], DEMO_GROUP)
            self.assertIn(activity["StatusCode"], ACTIVITY_STATUSES)
            self.assertIsInstance(activity["StartTime"], datetime.datetime)
            self.assertTrue(0 <= activity["Progress"] <= 100)
        paginator = self.asg.get_paginator("describe_scaling_activities")
        pages = list(paginator.paginate(AutoScalingGroupName=DEMO_GROUP, PaginationConfig={"PageSize": 5}))
        self.assertEqual([a["ActivityId"] for p in pages for a in p["Activities"]], [a["ActivityId"] for a in activities])

    def test_ec2_instances_of_the_group_by_its_tag(self):
        instances = self.group_instances()
        group = group_of(self.asg)
        self.assertEqual(sorted(i["InstanceId"] for i in instances), in_service(group))
        zones = {i["InstanceId"]: i["AvailabilityZone"] for i in group["Instances"]}
        for instance in instances:
            self.assertEqual(instance["State"]["Name"], "running")
            self.assertEqual(instance["Placement"]["AvailabilityZone"], zones[instance["InstanceId"]])
            # us-east-1's private DNS names: ip-A-B-C-D.ec2.internal.
            ip = instance["PrivateIpAddress"]
            self.assertEqual(instance["PrivateDnsName"], "ip-" + ip.replace(".", "-") + ".ec2.internal")
            self.assertIn({"Key": "aws:autoscaling:groupName", "Value": DEMO_GROUP}, instance["Tags"])

    def test_ec2_instances_carry_metadata_options_sriov_and_linuxs_platform_fields(self):
        # The Instance shape of EC2's API reference (botocore's ec2
        # 2016-11-15 model): `platform` is "windows" for Windows and
        # otherwise absent, `platformDetails` names Linux/UNIX; Amazon
        # Linux HVM images set `sriovNetSupport`; `metadataOptions` is on
        # every instance, here with EC2's defaults. A private agent's
        # instance has no public address and an empty public name; a
        # running one, no `stateReason`.
        instances = self.group_instances()
        self.assertEqual(len(instances), DEMO_AGENTS)
        for instance in instances:
            self.assertNotIn("Platform", instance)
            self.assertEqual(instance["PlatformDetails"], "Linux/UNIX")
            self.assertEqual(instance["SriovNetSupport"], "simple")
            self.assertEqual(
                instance["MetadataOptions"],
                {
                    "State": "applied",
                    "HttpTokens": "optional",
                    "HttpPutResponseHopLimit": 1,
                    "HttpEndpoint": "enabled",
                    "HttpProtocolIpv6": "disabled",
                    "InstanceMetadataTags": "disabled",
                },
            )
            self.assertNotIn("PublicIpAddress", instance)
            self.assertEqual(instance["PublicDnsName"], "")
            self.assertNotIn("StateReason", instance)

    def test_the_masters_agents_are_the_groups_instances(self):
        slaves = get_json(self.sim.mesos[0] + "/master/slaves")["slaves"]
        by_host = {i["PrivateDnsName"]: i for i in self.group_instances()}
        self.assertEqual({s["hostname"] for s in slaves}, set(by_host))

    def test_ec2_filters_by_private_ip_private_dns_and_id(self):
        target = self.group_instances()[3]
        for filters in (
            [{"Name": "private-ip-address", "Values": [target["PrivateIpAddress"]]}],
            [{"Name": "private-dns-name", "Values": [target["PrivateDnsName"]]}],
            [{"Name": "instance-id", "Values": [target["InstanceId"]]}],
        ):
            reservations = self.ec2.describe_instances(Filters=filters)["Reservations"]
            found = [i["InstanceId"] for r in reservations for i in r["Instances"]]
            self.assertEqual(found, [target["InstanceId"]], filters)
        reservations = self.ec2.describe_instances(InstanceIds=[target["InstanceId"]])["Reservations"]
        self.assertEqual([i["InstanceId"] for r in reservations for i in r["Instances"]], [target["InstanceId"]])
        none = self.ec2.describe_instances(Filters=[{"Name": "private-ip-address", "Values": ["192.0.2.1"]}])
        self.assertEqual(none["Reservations"], [])

    def test_ec2_paginator_pages_through_every_instance(self):
        pages = list(self.ec2.get_paginator("describe_instances").paginate(PaginationConfig={"PageSize": 5}))
        self.assertGreater(len(pages), 1)
        ids = [i["InstanceId"] for p in pages for r in p["Reservations"] for i in r["Instances"]]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertEqual(sorted(ids), in_service(group_of(self.asg)))

    def test_ec2_errors_carry_awss_codes(self):
        with self.assertRaises(ClientError) as caught:
            self.ec2.describe_instances(InstanceIds=["i-0123456789abcdef0"])
        self.assertEqual(error_code(caught), "InvalidInstanceID.NotFound")
        self.assertIn("i-0123456789abcdef0", caught.exception.response["Error"]["Message"])
        with self.assertRaises(ClientError) as caught:
            self.ec2.describe_instances(InstanceIds=["not-an-instance"])
        self.assertEqual(error_code(caught), "InvalidInstanceID.Malformed")

    def test_changes_to_an_unknown_group_are_validation_errors(self):
        for call in (
            lambda: self.asg.set_desired_capacity(AutoScalingGroupName="no-such-group", DesiredCapacity=1),
            lambda: self.asg.update_auto_scaling_group(AutoScalingGroupName="no-such-group", MaxSize=3),
            lambda: self.asg.suspend_processes(AutoScalingGroupName="no-such-group", ScalingProcesses=["AZRebalance"]),
            lambda: self.asg.terminate_instance_in_auto_scaling_group(
                InstanceId="i-0123456789abcdef0", ShouldDecrementDesiredCapacity=True
            ),
        ):
            with self.assertRaises(ClientError) as caught:
                call()
            self.assertEqual(error_code(caught), "ValidationError")
            self.assertEqual(caught.exception.response["ResponseMetadata"]["HTTPStatusCode"], 400)


class AwsChanges(unittest.TestCase):
    """Each test on a simulator of its own (60x)."""

    def setUp(self):
        self.sim = Sim.start("demo", time_scale=60)
        self.addCleanup(self.sim.stop)
        self.asg, self.ec2 = aws_clients(self.sim)

    def test_suspend_and_resume_az_rebalance(self):
        self.asg.suspend_processes(AutoScalingGroupName=DEMO_GROUP, ScalingProcesses=["AZRebalance"])
        suspended = group_of(self.asg)["SuspendedProcesses"]
        self.assertEqual([p["ProcessName"] for p in suspended], ["AZRebalance"])
        # AWS: "User suspended at 2024-05-01T12:00:00Z".
        self.assertRegex(suspended[0]["SuspensionReason"], r"^User suspended at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.asg.resume_processes(AutoScalingGroupName=DEMO_GROUP, ScalingProcesses=["AZRebalance"])
        self.assertEqual(group_of(self.asg)["SuspendedProcesses"], [])

    def test_a_warm_pool_fills_beside_the_group_and_is_deleted(self):
        # No pool: no configuration, no instances.
        none = self.asg.describe_warm_pool(AutoScalingGroupName=DEMO_GROUP)
        self.assertNotIn("WarmPoolConfiguration", none)
        self.assertEqual(none["Instances"], [])
        self.asg.put_warm_pool(
            AutoScalingGroupName=DEMO_GROUP,
            MinSize=1,
            MaxGroupPreparedCapacity=14,
            InstanceReusePolicy={"ReuseOnScaleIn": True},
        )

        def warmed():
            answer = self.asg.describe_warm_pool(AutoScalingGroupName=DEMO_GROUP)
            return [i for i in answer["Instances"] if i["LifecycleState"] == "Warmed:Stopped"]

        # MaxGroupPreparedCapacity 14 - desired 12.
        wait_until("two warm instances", lambda: len(warmed()) == 2)
        answer = self.asg.describe_warm_pool(AutoScalingGroupName=DEMO_GROUP, MaxRecords=1)
        self.assertEqual(
            answer["WarmPoolConfiguration"],
            {
                "MaxGroupPreparedCapacity": 14,
                "MinSize": 1,
                "PoolState": "Stopped",
                "InstanceReusePolicy": {"ReuseOnScaleIn": True},
            },
        )
        self.assertEqual(len(answer["Instances"]), 1)
        self.assertIn("NextToken", answer)
        for instance in warmed():
            self.assertEqual(instance["LaunchTemplate"]["Version"], "7")
            self.assertNotIn(instance["InstanceId"], in_service(group_of(self.asg)))
        self.asg.delete_warm_pool(AutoScalingGroupName=DEMO_GROUP, ForceDelete=True)
        self.assertNotIn("WarmPoolConfiguration", self.asg.describe_warm_pool(AutoScalingGroupName=DEMO_GROUP))

    def test_set_desired_capacity_launches_an_instance_and_its_agent_registers(self):
        self.asg.set_desired_capacity(AutoScalingGroupName=DEMO_GROUP, DesiredCapacity=13)
        self.assertEqual(group_of(self.asg)["DesiredCapacity"], 13)
        wait_until("13 instances in service", lambda: len(in_service(group_of(self.asg))) == 13)
        wait_until(
            "a 13th agent",
            lambda: len(get_json(self.sim.mesos[0] + "/master/slaves")["slaves"]) == 13,
        )
        # Above MaxSize: refused.
        with self.assertRaises(ClientError) as caught:
            self.asg.set_desired_capacity(AutoScalingGroupName=DEMO_GROUP, DesiredCapacity=25)
        self.assertEqual(error_code(caught), "ValidationError")
        self.assertIn("above max value 24", caught.exception.response["Error"]["Message"])

    def test_update_max_size_lets_the_capacity_go_above_the_old_max(self):
        self.asg.update_auto_scaling_group(AutoScalingGroupName=DEMO_GROUP, MaxSize=30)
        self.assertEqual(group_of(self.asg)["MaxSize"], 30)
        self.asg.set_desired_capacity(AutoScalingGroupName=DEMO_GROUP, DesiredCapacity=25)
        self.assertEqual(group_of(self.asg)["DesiredCapacity"], 25)

    def test_terminate_with_decrement_needs_room_above_min_size(self):
        victim = in_service(group_of(self.asg))[0]
        with self.assertRaises(ClientError) as caught:
            self.asg.terminate_instance_in_auto_scaling_group(InstanceId=victim, ShouldDecrementDesiredCapacity=True)
        self.assertEqual(error_code(caught), "ValidationError")
        self.assertIn("min size", caught.exception.response["Error"]["Message"])

        self.asg.update_auto_scaling_group(AutoScalingGroupName=DEMO_GROUP, MinSize=11)
        activity = self.asg.terminate_instance_in_auto_scaling_group(
            InstanceId=victim, ShouldDecrementDesiredCapacity=True
        )["Activity"]
        self.assertIn(victim, activity["Description"])
        self.assertIn(activity["StatusCode"], ACTIVITY_STATUSES)
        self.assertEqual(group_of(self.asg)["DesiredCapacity"], 11)
        wait_until("the instance gone from the group", lambda: victim not in {i["InstanceId"] for i in group_of(self.asg)["Instances"]})
        gone = self.ec2.describe_instances(InstanceIds=[victim])["Reservations"][0]["Instances"][0]
        self.assertIn(gone["State"]["Name"], {"shutting-down", "terminated"})
        # Why it stopped: Auto Scaling terminated it through EC2's API.
        self.assertEqual(
            gone["StateReason"],
            {"Code": "Client.UserInitiatedShutdown", "Message": "Client.UserInitiatedShutdown: User initiated shutdown"},
        )
        self.assertEqual(len(in_service(group_of(self.asg))), 11)

    def test_create_or_update_tags_shows_in_the_group_and_describe_tags(self):
        self.asg.create_or_update_tags(
            Tags=[
                {
                    "ResourceId": DEMO_GROUP,
                    "ResourceType": "auto-scaling-group",
                    "Key": "roller:test",
                    "Value": "one",
                    "PropagateAtLaunch": True,
                }
            ]
        )
        tags = self.asg.describe_tags(Filters=[{"Name": "key", "Values": ["roller:test"]}])["Tags"]
        self.assertEqual([(t["Value"], t["PropagateAtLaunch"]) for t in tags], [("one", True)])
        self.asg.create_or_update_tags(
            Tags=[{"ResourceId": DEMO_GROUP, "ResourceType": "auto-scaling-group", "Key": "roller:test", "Value": "two"}]
        )
        group_tags = {t["Key"]: t["Value"] for t in group_of(self.asg)["Tags"]}
        self.assertEqual(group_tags, {"Environment": "demo", "roller:test": "two"})


# The `cluster` scenario's groups (tests/scenarios/cluster.toml).
CLUSTER_PRIVATE = "mesos-agents-prod"
CLUSTER_PUBLIC = "mesos-agents-public"


class AwsCluster(unittest.TestCase):
    """A simulator of the `cluster` scenario (two groups), private to this
    class: boto3 finds every group, pages through them and filters them
    by tag, as roller will find the groups another roll has tagged."""

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim.start("cluster", time_scale=60)
        cls.asg, cls.ec2 = aws_clients(cls.sim)

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def names(self, **kwargs):
        paginator = self.asg.get_paginator("describe_auto_scaling_groups")
        pages = list(paginator.paginate(PaginationConfig={"PageSize": 1}, **kwargs))
        self.assertTrue(all(len(p["AutoScalingGroups"]) <= 1 for p in pages))
        return [g["AutoScalingGroupName"] for p in pages for g in p["AutoScalingGroups"]]

    def test_every_group_one_page_at_a_time_agrees_with_the_simulator(self):
        names = self.names()
        self.assertEqual(names, [CLUSTER_PRIVATE, CLUSTER_PUBLIC])
        report = get_json(self.sim.control + "/report")
        self.assertEqual(sorted(g["name"] for g in report["groups"]), names)
        groups = self.asg.describe_auto_scaling_groups()["AutoScalingGroups"]
        sizes = {g["AutoScalingGroupName"]: len(g["Instances"]) for g in groups}
        self.assertEqual(sizes, {g["name"]: g["final_state"]["instances_live"] for g in report["groups"]})
        self.assertEqual(sizes, {CLUSTER_PRIVATE: 55, CLUSTER_PUBLIC: 5})

    def test_public_agents_have_a_public_address_and_private_ones_none(self):
        # EC2 writes `ipAddress` (PublicIpAddress) and a public `dnsName`
        # only for an instance that has a public IPv4 address: the public
        # agents' (at the edge, in subnets that give one), not the
        # private agents'.
        pages = self.ec2.get_paginator("describe_instances").paginate()
        instances = [i for p in pages for r in p["Reservations"] for i in r["Instances"]]
        group = lambda i: next(t["Value"] for t in i["Tags"] if t["Key"] == "aws:autoscaling:groupName")  # noqa: E731
        public = [i for i in instances if group(i) == CLUSTER_PUBLIC]
        private = [i for i in instances if group(i) == CLUSTER_PRIVATE]
        self.assertEqual((len(public), len(private)), (5, 55))
        for instance in private:
            self.assertNotIn("PublicIpAddress", instance)
            self.assertEqual(instance["PublicDnsName"], "")
        for instance in public:
            ip = ipaddress.ip_address(instance["PublicIpAddress"])
            self.assertTrue(ip.is_global, ip)
            # us-east-1's public names: ec2-A-B-C-D.compute-1.amazonaws.com.
            name = "ec2-" + str(ip).replace(".", "-") + ".compute-1.amazonaws.com"
            self.assertEqual(instance["PublicDnsName"], name)
            (interface,) = instance["NetworkInterfaces"]
            self.assertEqual(
                interface["Association"], {"PublicIp": str(ip), "PublicDnsName": name, "IpOwnerId": "amazon"}
            )
        self.assertEqual(len({i["PublicIpAddress"] for i in public}), 5)

    def test_the_groups_another_roll_tagged_are_found_by_tag_key(self):
        self.assertEqual(self.names(Filters=[{"Name": "tag-key", "Values": ["roller:run-id"]}]), [])
        self.asg.create_or_update_tags(
            Tags=[
                {
                    "ResourceId": CLUSTER_PUBLIC,
                    "ResourceType": "auto-scaling-group",
                    "Key": "roller:run-id",
                    "Value": "run-1",
                    "PropagateAtLaunch": False,
                }
            ]
        )
        tagged = self.asg.describe_auto_scaling_groups(Filters=[{"Name": "tag-key", "Values": ["roller:run-id"]}])
        self.assertEqual([g["AutoScalingGroupName"] for g in tagged["AutoScalingGroups"]], [CLUSTER_PUBLIC])
        self.assertIn(
            {
                "ResourceId": CLUSTER_PUBLIC,
                "ResourceType": "auto-scaling-group",
                "Key": "roller:run-id",
                "Value": "run-1",
                "PropagateAtLaunch": False,
            },
            tagged["AutoScalingGroups"][0]["Tags"],
        )
        self.assertEqual(self.names(Filters=[{"Name": "tag-key", "Values": ["roller:run-id"]}]), [CLUSTER_PUBLIC])
        self.assertEqual(self.names(Filters=[{"Name": "tag:roller:run-id", "Values": ["run-1"]}]), [CLUSTER_PUBLIC])
        self.assertEqual(self.names(Filters=[{"Name": "tag-value", "Values": ["public", "private"]}]), [CLUSTER_PRIVATE, CLUSTER_PUBLIC])
        self.asg.delete_tags(
            Tags=[{"ResourceId": CLUSTER_PUBLIC, "ResourceType": "auto-scaling-group", "Key": "roller:run-id"}]
        )
        self.assertEqual(self.names(Filters=[{"Name": "tag-key", "Values": ["roller:run-id"]}]), [])


if __name__ == "__main__":
    unittest.main()
