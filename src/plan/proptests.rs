//! Property tests: random trees, random operation sequences. Whatever
//! operators and the roll do, the engine must not panic, its document must
//! round-trip byte for byte, a COMPLETE parent must have only COMPLETE
//! children, and no two candidates may share an asset.

use proptest::prelude::*;

use super::{
    Canary, Operation, Outcome, Phase, Plan, Status, Step, StepIndex, Target, candidates, info,
    tree,
};

const ASSETS: [&str; 3] = ["i-1", "i-2", "i-3"];

fn any_step_status() -> impl Strategy<Value = Status> {
    proptest::sample::select(Status::STEP_STATUSES.to_vec())
}

fn any_strategy(canary: bool) -> impl Strategy<Value = super::Strategy> {
    let all: Vec<super::Strategy> = super::Strategy::ALL
        .into_iter()
        .filter(|s| canary || !s.is_canary())
        .collect();
    proptest::sample::select(all)
}

/// A step of phase `phase` at `index`, depending on some earlier siblings.
fn any_step(phase: usize, index: usize) -> impl Strategy<Value = Step> {
    (
        any_step_status(),
        any::<bool>(),
        proptest::option::of(proptest::sample::select(ASSETS.to_vec())),
        proptest::collection::vec(0..index.max(1), 0..=index.min(2)),
        "[a-z\"\\\\ é]{0,6}",
    )
        .prop_map(move |(status, interrupted, asset, deps, message)| Step {
            id: format!("s{phase}-{index}"),
            name: format!("step-{index}"),
            status,
            interrupted,
            asset: asset.map(str::to_string),
            depends_on: deps
                .into_iter()
                .filter(|&d| d < index)
                .map(|d| format!("s{phase}-{d}"))
                .collect(),
            message,
            kind: None,
        })
}

fn any_phase(index: usize) -> impl Strategy<Value = Phase> {
    (0usize..5).prop_flat_map(move |len| {
        let steps: Vec<_> = (0..len).map(|i| any_step(index, i)).collect();
        (
            steps,
            any_strategy(true),
            any::<bool>(),
            1u32..4,
            proptest::collection::vec(0..index.max(1), 0..=index.min(2)),
        )
            .prop_map(move |(steps, strategy, interrupted, count, deps)| {
                let mut phase = Phase {
                    id: format!("p{index}"),
                    name: format!("phase-{}", index % 3),
                    strategy,
                    interrupted,
                    depends_on: deps
                        .into_iter()
                        .filter(|&d| d < index)
                        .map(|d| format!("p{d}"))
                        .collect(),
                    canary: strategy
                        .is_canary()
                        .then_some(Canary { count, steps: None }),
                    steps,
                };
                phase.set_up_canary();
                phase
            })
    })
}

fn any_plan() -> impl Strategy<Value = Plan> {
    (0usize..4).prop_flat_map(|len| {
        let phases: Vec<_> = (0..len).map(any_phase).collect();
        (
            phases,
            any_strategy(false),
            any::<bool>(),
            proptest::collection::vec("[a-z ]{1,8}", 0..2),
        )
            .prop_map(|(phases, strategy, interrupted, errors)| {
                let mut plan = Plan::new("plan", strategy, phases);
                plan.interrupted = interrupted;
                plan.errors = errors;
                plan
            })
    })
}

/// An operation, or the roll storing a status on a step; targets are picked
/// by number modulo what exists.
#[derive(Clone, Debug)]
enum Action {
    Operate(Operation, u8, usize, usize),
    SetStatus(usize, usize, Status),
}

fn any_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (
            proptest::sample::select(Operation::ALL.to_vec()),
            0u8..3,
            any::<usize>(),
            any::<usize>()
        )
            .prop_map(|(op, kind, a, b)| Action::Operate(op, kind, a, b)),
        (any::<usize>(), any::<usize>(), any_step_status())
            .prop_map(|(a, b, s)| Action::SetStatus(a, b, s)),
    ]
}

fn pick_step(plan: &Plan, a: usize, b: usize) -> Option<StepIndex> {
    let steps: Vec<StepIndex> = plan.steps().map(|(at, _)| at).collect();
    (!steps.is_empty()).then(|| steps[(a ^ b) % steps.len()])
}

fn perform(plan: &mut Plan, action: &Action) {
    match *action {
        Action::Operate(op, kind, a, b) => {
            let target = match kind {
                0 => Some(Target::Plan),
                1 => (!plan.phases.is_empty()).then(|| Target::Phase(a % plan.phases.len())),
                _ => pick_step(plan, a, b).map(Target::Step),
            };
            if let Some(target) = target {
                let before = plan.clone();
                if plan.apply(op, target) == Outcome::AlreadyDone {
                    assert_eq!(*plan, before, "{op} said already done but changed the plan");
                }
            }
        }
        Action::SetStatus(a, b, status) => {
            if let Some(at) = pick_step(plan, a, b) {
                plan.step_mut(at).status = status;
            }
        }
    }
}

fn check_invariants(plans: &[&Plan]) {
    for plan in plans {
        let text = plan.to_json();
        let loaded = Plan::from_json(&text).expect("a saved plan loads");
        assert_eq!(&loaded, *plan, "load(save(plan)) == plan");
        assert_eq!(
            loaded.to_json(),
            text,
            "save(load(save(plan))) is byte-identical"
        );

        let _ = tree(plan);
        let _ = info(plan);
        if plan.status() == Status::Complete {
            assert!(plan.phases.iter().all(|p| p.status() == Status::Complete));
        }
        for phase in &plan.phases {
            if phase.status() == Status::Complete {
                assert!(phase.steps.iter().all(|s| s.status() == Status::Complete));
            }
        }
    }
    let chosen = candidates(plans);
    let mut seen = std::collections::HashSet::new();
    for candidate in &chosen {
        let step = plans[candidate.plan].step(candidate.at);
        assert!(
            step.is_eligible(),
            "candidate {} is not eligible",
            step.name
        );
        if let Some(asset) = &step.asset {
            assert!(seen.insert(asset.clone()), "asset {asset} chosen twice");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_plans_under_random_operations_keep_every_invariant(
        plans in proptest::collection::vec(any_plan(), 1..4),
        actions in proptest::collection::vec((0usize..3, any_action()), 0..24),
    ) {
        let mut plans = plans;
        check_invariants(&plans.iter().collect::<Vec<_>>());
        for (which, action) in &actions {
            let index = which % plans.len();
            perform(&mut plans[index], action);
            check_invariants(&plans.iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn any_text_is_loaded_or_refused_without_a_panic(text in "\\PC{0,200}") {
        let _: Result<Plan, _> = Plan::from_json(&text);
    }
}
