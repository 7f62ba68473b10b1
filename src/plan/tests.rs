//! Table tests of strategies and operations: each row is an initial tree,
//! a sequence of operations, and the statuses and candidates expected after.
//!
//! Trees are written compactly: a phase is `(name, strategy, steps)` where
//! `strategy` may carry a canary count (`serial-canary:3`) and `steps` are
//! status letters, `!` marking an interrupted step:
//! P PENDING, R PREPARED, S STARTING, T STARTED, C COMPLETE, D DELAYED,
//! E ERROR, W WAITING. Steps are named after their phase: `a1`, `a2`, ...
//! A summary reads `PLAN; phase=STATUS ...; candidates: a1 b2`.

use super::*;

pub(crate) fn letter_status(letter: char) -> Status {
    match letter {
        'P' => Status::Pending,
        'R' => Status::Prepared,
        'S' => Status::Starting,
        'T' => Status::Started,
        'C' => Status::Complete,
        'D' => Status::Delayed,
        'E' => Status::Error,
        'W' => Status::Waiting,
        other => panic!("unknown status letter {other}"),
    }
}

fn build(strategy: &str, phases: &[(&str, &str, &str)]) -> Plan {
    let phases = phases
        .iter()
        .map(|(name, strategy, steps)| {
            let (strategy, count) = match strategy.split_once(':') {
                Some((s, n)) => (s, Some(n.parse().unwrap())),
                None => (*strategy, None),
            };
            let steps = steps
                .split_whitespace()
                .enumerate()
                .map(|(i, code)| {
                    let mut step = Step::new(format!("{name}{}", i + 1));
                    step.status = letter_status(code.chars().next().unwrap());
                    step.interrupted = code.ends_with('!');
                    step
                })
                .collect();
            let mut phase = Phase::new(*name, Strategy::Serial, steps);
            phase.strategy = strategy.parse().unwrap();
            phase.canary = count.map(|count| Canary { count, steps: None });
            phase.set_up_canary();
            phase
        })
        .collect();
    Plan::new("p", strategy.parse().unwrap(), phases)
}

fn target(plan: &Plan, name: &str) -> Target {
    if name == "plan" {
        return Target::Plan;
    }
    if let Some(i) = plan.phases.iter().position(|p| p.name == name) {
        return Target::Phase(i);
    }
    match plan.find(None, Some(name)).unwrap() {
        found @ Target::Step(_) => found,
        other => panic!("{name} is not a step: {other:?}"),
    }
}

/// Applies `operation` (or `set:X`, which stores status letter X on a step)
/// and returns "changed" or "already done".
fn act(plan: &mut Plan, operation: &str, on: &str) -> &'static str {
    let target = target(plan, on);
    if let Some(letter) = operation.strip_prefix("set:") {
        let Target::Step(at) = target else {
            panic!("set applies to steps")
        };
        plan.step_mut(at).status = letter_status(letter.chars().next().unwrap());
        return "changed";
    }
    match plan.apply(operation.parse().unwrap(), target) {
        Outcome::Changed => "changed",
        Outcome::AlreadyDone => "already done",
    }
}

pub(crate) fn summary(plan: &Plan) -> String {
    let phases: Vec<String> = plan
        .phases
        .iter()
        .map(|p| format!("{}={}", p.name, p.status()))
        .collect();
    let candidates: Vec<String> = plan_candidates(plan)
        .into_iter()
        .map(|at| plan.step(at).name.clone())
        .collect();
    format!(
        "{}; {}; candidates: {}",
        plan.status(),
        phases.join(" "),
        candidates.join(" ")
    )
}

struct Case {
    name: &'static str,
    strategy: &'static str,
    phases: &'static [(&'static str, &'static str, &'static str)],
    /// (operation, target, expected outcome, expected summary after it)
    steps: &'static [(&'static str, &'static str, &'static str, &'static str)],
}

fn check(cases: &[Case]) {
    for case in cases {
        let mut plan = build(case.strategy, case.phases);
        for (i, (operation, on, outcome, expected)) in case.steps.iter().enumerate() {
            let got = if *operation == "show" {
                "changed"
            } else {
                act(&mut plan, operation, on)
            };
            if *operation != "show" {
                assert_eq!(
                    got, *outcome,
                    "{}: step {i} ({operation} {on}) outcome",
                    case.name
                );
            }
            assert_eq!(
                summary(&plan),
                *expected,
                "{}: after step {i} ({operation} {on})",
                case.name
            );
        }
    }
}

#[test]
#[rustfmt::skip]
fn strategies_pick_the_candidates_the_sdk_picks() {
    check(&[
        Case {
            name: "serial picks the first incomplete step only",
            strategy: "serial",
            phases: &[("a", "serial", "C P P")],
            steps: &[("show", "", "", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2")],
        },
        Case {
            name: "parallel picks every eligible step, but never a DELAYED one",
            strategy: "serial",
            phases: &[("a", "parallel", "S P C D")],
            steps: &[("show", "", "", "IN_PROGRESS; a=IN_PROGRESS; candidates: a1 a2")],
        },
        Case {
            name: "serial is blocked by an ERROR step",
            strategy: "serial",
            phases: &[("a", "serial", "C E P")],
            steps: &[("show", "", "", "ERROR; a=ERROR; candidates: ")],
        },
        Case {
            name: "serial is blocked by an interrupted (WAITING) step",
            strategy: "serial",
            phases: &[("a", "serial", "C P! P")],
            steps: &[
                ("show", "", "", "WAITING; a=WAITING; candidates: "),
                ("continue", "a2", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2"),
            ],
        },
        Case {
            name: "serial skips nothing: a stored WAITING step is a candidate and blocks the rest",
            strategy: "serial",
            phases: &[("a", "serial", "W P")],
            steps: &[("show", "", "", "WAITING; a=WAITING; candidates: a1")],
        },
        Case {
            name: "an interrupted STARTED step keeps its status and is no candidate",
            strategy: "serial",
            phases: &[("a", "parallel", "T! P")],
            steps: &[("show", "", "", "PENDING; a=PENDING; candidates: a2")],
        },
        Case {
            name: "the SDK's fall-through: serial [DELAYED, PENDING] reads DELAYED, not ERROR",
            strategy: "serial",
            phases: &[("a", "serial", "D P")],
            steps: &[("show", "", "", "DELAYED; a=DELAYED; candidates: ")],
        },
        Case {
            name: "a DELAYED step is never a plan-level candidate, while its parallel siblings are",
            strategy: "serial",
            phases: &[("a", "parallel", "D P T")],
            steps: &[
                ("show", "", "", "PENDING; a=PENDING; candidates: a2 a3"),
                ("set:T", "a1", "changed", "PENDING; a=PENDING; candidates: a1 a2 a3"),
            ],
        },
        Case {
            name: "an ERROR step in a parallel phase stops the whole phase at plan level",
            strategy: "parallel",
            phases: &[("a", "parallel", "E P P"), ("b", "serial", "P")],
            steps: &[("show", "", "", "ERROR; a=ERROR b=PENDING; candidates: b1")],
        },
        Case {
            name: "a serial plan whose first phase is interrupted waits, with no candidates",
            strategy: "serial",
            phases: &[("a", "serial", "P"), ("b", "serial", "P P")],
            steps: &[
                ("interrupt", "a", "changed", "WAITING; a=WAITING b=PENDING; candidates: "),
                ("continue", "a", "changed", "PENDING; a=PENDING b=PENDING; candidates: a1"),
            ],
        },
        Case {
            name: "a parallel plan whose first phase is interrupted runs the second",
            strategy: "parallel",
            phases: &[("a", "serial", "P"), ("b", "serial", "P P")],
            steps: &[("interrupt", "a", "changed", "PENDING; a=WAITING b=PENDING; candidates: b1")],
        },
        Case {
            name: "an interrupted plan has no candidates and reads WAITING",
            strategy: "parallel",
            phases: &[("a", "parallel", "C S P")],
            steps: &[
                ("interrupt", "plan", "changed", "WAITING; a=IN_PROGRESS; candidates: "),
                ("interrupt", "plan", "already done", "WAITING; a=IN_PROGRESS; candidates: "),
                ("continue", "plan", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2 a3"),
            ],
        },
    ]);
}

#[test]
#[rustfmt::skip]
fn canary_phases_wait_for_each_continue_then_hand_over() {
    check(&[
        Case {
            name: "canary with pre-completed steps: the canaries are the 2nd and 4th",
            strategy: "serial",
            phases: &[("a", "serial-canary", "C P C P P")],
            steps: &[
                ("show", "", "", "WAITING; a=WAITING; candidates: "),
                ("continue", "a", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2"),
                // The SDK answers 208 to continue on a running phase.
                ("continue", "a", "already done", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2"),
                ("force-complete", "a2", "changed", "WAITING; a=WAITING; candidates: "),
                ("continue", "a", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a4"),
                ("force-complete", "a4", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a5"),
            ],
        },
        Case {
            name: "canary with N=3 takes three continues",
            strategy: "serial",
            phases: &[("a", "serial-canary:3", "P P P P")],
            steps: &[
                ("continue", "a", "changed", "PENDING; a=PENDING; candidates: a1"),
                ("force-complete", "a1", "changed", "WAITING; a=WAITING; candidates: "),
                ("continue", "a", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2"),
                ("force-complete", "a2", "changed", "WAITING; a=WAITING; candidates: "),
                ("continue", "a", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a3"),
                ("force-complete", "a3", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a4"),
            ],
        },
        Case {
            name: "interrupt during the canary is ignored",
            strategy: "serial",
            phases: &[("a", "serial-canary", "P P P")],
            steps: &[
                ("interrupt", "a", "already done", "WAITING; a=WAITING; candidates: "),
                ("continue", "a", "changed", "PENDING; a=PENDING; candidates: a1"),
                ("interrupt", "a", "already done", "PENDING; a=PENDING; candidates: a1"),
                ("force-complete", "a1", "changed", "WAITING; a=WAITING; candidates: "),
                ("continue", "a", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2"),
                // The canary is over: interrupt now reaches the serial strategy.
                ("interrupt", "a", "changed", "WAITING; a=WAITING; candidates: "),
            ],
        },
        Case {
            name: "parallel-canary releases all remaining steps at the 2nd continue",
            strategy: "serial",
            phases: &[("a", "parallel-canary", "P P P P")],
            steps: &[
                ("continue", "a", "changed", "PENDING; a=PENDING; candidates: a1"),
                ("force-complete", "a1", "changed", "WAITING; a=WAITING; candidates: "),
                ("continue", "a", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2 a3 a4"),
            ],
        },
        Case {
            name: "a canary phase with fewer steps than its count ends after them",
            strategy: "serial",
            phases: &[("a", "serial-canary", "C P")],
            steps: &[
                ("continue", "a", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2"),
                ("force-complete", "a2", "changed", "COMPLETE; a=COMPLETE; candidates: "),
            ],
        },
        Case {
            name: "a canary step force-completed while held is released with the next one",
            strategy: "serial",
            phases: &[("a", "serial-canary", "P P P")],
            steps: &[
                ("force-complete", "a1", "changed", "WAITING; a=WAITING; candidates: "),
                ("continue", "a", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a2"),
                ("force-complete", "a2", "changed", "IN_PROGRESS; a=IN_PROGRESS; candidates: a3"),
            ],
        },
        Case {
            name: "a continue on the plan does not cascade into a canary phase",
            strategy: "serial",
            phases: &[("a", "serial-canary", "P P")],
            steps: &[("continue", "plan", "already done", "WAITING; a=WAITING; candidates: ")],
        },
    ]);
}

#[test]
#[rustfmt::skip]
fn operations_follow_the_sdk_plan_api() {
    check(&[
        Case {
            name: "force-complete recurses to steps; again is already done",
            strategy: "serial",
            phases: &[("a", "serial", "P S"), ("b", "serial", "E")],
            steps: &[
                ("force-complete", "a", "changed", "ERROR; a=COMPLETE b=ERROR; candidates: "),
                ("force-complete", "a", "already done", "ERROR; a=COMPLETE b=ERROR; candidates: "),
                ("force-complete", "plan", "changed", "COMPLETE; a=COMPLETE b=COMPLETE; candidates: "),
                ("force-complete", "plan", "already done", "COMPLETE; a=COMPLETE b=COMPLETE; candidates: "),
            ],
        },
        Case {
            name: "restart sets steps PENDING and clears the target's interrupt",
            strategy: "serial",
            phases: &[("a", "serial", "C C"), ("b", "serial", "E")],
            steps: &[
                ("interrupt", "a", "already done", "ERROR; a=COMPLETE b=ERROR; candidates: "),
                ("restart", "b1", "changed", "IN_PROGRESS; a=COMPLETE b=PENDING; candidates: b1"),
                ("restart", "b1", "already done", "IN_PROGRESS; a=COMPLETE b=PENDING; candidates: b1"),
                ("restart", "plan", "changed", "PENDING; a=PENDING b=PENDING; candidates: a1"),
            ],
        },
        Case {
            name: "restart of an interrupted PENDING step clears the interrupt (it read WAITING)",
            strategy: "serial",
            phases: &[("a", "serial", "P!")],
            steps: &[("restart", "a1", "changed", "PENDING; a=PENDING; candidates: a1")],
        },
        Case {
            name: "start restarts a complete plan and lets it proceed",
            strategy: "serial",
            phases: &[("a", "serial", "C C")],
            steps: &[
                ("interrupt", "plan", "already done", "COMPLETE; a=COMPLETE; candidates: "),
                ("start", "plan", "changed", "PENDING; a=PENDING; candidates: a1"),
                ("start", "plan", "already done", "PENDING; a=PENDING; candidates: a1"),
            ],
        },
        Case {
            name: "stop interrupts and resets; stop again is already done",
            strategy: "serial",
            phases: &[("a", "serial", "C S")],
            steps: &[
                ("stop", "plan", "changed", "WAITING; a=PENDING; candidates: "),
                ("stop", "plan", "already done", "WAITING; a=PENDING; candidates: "),
                ("start", "plan", "changed", "PENDING; a=PENDING; candidates: a1"),
            ],
        },
        Case {
            name: "stop on a step interrupts it and resets it to read WAITING",
            strategy: "serial",
            phases: &[("a", "parallel", "S P")],
            steps: &[
                ("stop", "a1", "changed", "PENDING; a=PENDING; candidates: a2"),
                ("continue", "a1", "changed", "PENDING; a=PENDING; candidates: a1 a2"),
                ("continue", "a1", "already done", "PENDING; a=PENDING; candidates: a1 a2"),
            ],
        },
        Case {
            name: "continue on a running phase is already done (the SDK's 208)",
            strategy: "serial",
            phases: &[("a", "serial", "S P")],
            steps: &[("continue", "a", "already done", "STARTING; a=STARTING; candidates: a1")],
        },
        Case {
            name: "continue on a complete phase is already done",
            strategy: "serial",
            phases: &[("a", "serial", "C")],
            steps: &[("continue", "a", "already done", "COMPLETE; a=COMPLETE; candidates: ")],
        },
    ]);
}

#[test]
fn the_dependency_strategy_follows_explicit_edges() {
    let mut plan = build(
        "dependency",
        &[("a", "dependency", "P P P"), ("b", "serial", "P")],
    );
    // b waits for a; in a, a3 waits for a1 and a2.
    plan.phases[1].depends_on = vec!["a".into()];
    plan.phases[0].steps[2].depends_on = vec!["a1".into(), plan.phases[0].steps[1].id.clone()];
    let text = plan.to_json();
    let mut plan = Plan::from_json(&text).unwrap();
    assert_eq!(
        summary(&plan),
        "PENDING; a=PENDING b=PENDING; candidates: a1 a2"
    );
    act(&mut plan, "force-complete", "a1");
    assert_eq!(
        summary(&plan),
        "IN_PROGRESS; a=IN_PROGRESS b=PENDING; candidates: a2"
    );
    act(&mut plan, "force-complete", "a2");
    assert_eq!(
        summary(&plan),
        "IN_PROGRESS; a=IN_PROGRESS b=PENDING; candidates: a3"
    );
    act(&mut plan, "force-complete", "a3");
    assert_eq!(
        summary(&plan),
        "IN_PROGRESS; a=COMPLETE b=PENDING; candidates: b1"
    );
}

#[test]
fn two_steps_on_one_asset_are_never_candidates_at_once_across_plans() {
    let with_assets = |strategy: &str, phases: &[(&str, &str, &str)], assets: &[&str]| {
        let mut plan = build(strategy, phases);
        for ((_, step), asset) in plan.clone().steps().zip(assets) {
            let at = plan.find(None, Some(&step.name)).unwrap();
            let Target::Step(at) = at else { unreachable!() };
            plan.step_mut(at).asset = (!asset.is_empty()).then(|| asset.to_string());
        }
        plan
    };
    // deploy wants i-1 and i-2; recovery wants i-2 and i-3.
    let deploy = with_assets("serial", &[("a", "parallel", "P P")], &["i-1", "i-2"]);
    let recovery = with_assets("serial", &[("r", "parallel", "P P")], &["i-2", "i-3"]);
    let names = |plans: &[&Plan]| -> Vec<String> {
        candidates(plans)
            .into_iter()
            .map(|c| plans[c.plan].step(c.at).name.clone())
            .collect()
    };
    // Plan priority is the order given.
    assert_eq!(names(&[&deploy, &recovery]), ["a1", "a2", "r2"]);
    assert_eq!(names(&[&recovery, &deploy]), ["r1", "r2", "a1"]);

    // A step already working on an asset keeps it, whatever the priority.
    let recovery_working = with_assets("serial", &[("r", "parallel", "T P")], &["i-2", "i-3"]);
    assert_eq!(names(&[&deploy, &recovery_working]), ["a1", "r1", "r2"]);
    // ... even when its plan is interrupted.
    let mut paused = recovery_working.clone();
    paused.apply(Operation::Interrupt, Target::Plan);
    assert_eq!(names(&[&deploy, &paused]), ["a1"]);

    // Within one plan, the first step in order claims the asset.
    let same = with_assets("serial", &[("a", "parallel", "P P P")], &["i-1", "i-1", ""]);
    assert_eq!(names(&[&same]), ["a1", "a3"]);
}

#[test]
fn a_hand_written_canary_phase_is_set_up_once_and_never_re_derived() {
    let text = r#"{"name": "roll", "phases": [{"name": "replace", "strategy": "canary",
        "steps": [{"name": "s1", "status": "COMPLETE"}, {"name": "s2"}, {"name": "s3"}, {"name": "s4"}]}]}"#;
    let mut plan: Plan = Plan::from_json(text).unwrap();
    let chosen = plan.phases[0].canary.clone().unwrap();
    assert_eq!(chosen.count, 2);
    let ids: Vec<&String> = plan.phases[0].steps[1..3].iter().map(|s| &s.id).collect();
    assert_eq!(
        chosen.steps.as_ref().unwrap().iter().collect::<Vec<_>>(),
        ids
    );

    // Once stored, restarting s1 does not make it a canary on reload.
    plan.apply(
        Operation::Restart,
        Target::Step(StepIndex { phase: 0, step: 0 }),
    );
    let reloaded = Plan::from_json(&plan.to_json()).unwrap();
    assert_eq!(reloaded.phases[0].canary, Some(chosen));
    assert_eq!(reloaded, plan);
}

#[test]
fn ids_left_out_of_a_document_are_the_same_on_every_load() {
    let text = r#"{"name": "deploy", "phases": [{"name": "hello", "steps": [{"name": "a"}, {"name": "a"}]},
        {"id": "given", "name": "world", "steps": [{"name": "b"}]}]}"#;
    let first: Plan = Plan::from_json(text).unwrap();
    let second = Plan::from_json(text).unwrap();
    assert_eq!(first, second);
    assert_eq!(first.phases[1].id, "given");
    let ids: std::collections::HashSet<&String> = first
        .phases
        .iter()
        .flat_map(|p| std::iter::once(&p.id).chain(p.steps.iter().map(|s| &s.id)))
        .collect();
    assert_eq!(ids.len(), 5, "two steps of one name still get distinct ids");
}

#[test]
fn the_tree_drawn_from_the_json_view_read_back_is_the_plans_own_tree() {
    for text in [
        include_str!("../../examples/hello-world.json"),
        include_str!("../../examples/strategies.json"),
    ] {
        let plan: Plan = Plan::from_json(text).unwrap();
        let json = serde_json::to_string(&info(&plan)).unwrap();
        let read: PlanInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(info_tree(&read), tree(&plan));
    }
}
