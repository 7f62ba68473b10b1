//! `roller plan demo`: a walkthrough of the plan engine. It drives the
//! DC/OS SDK's hello-world `deploy` plan (from `examples/hello-world.json`)
//! through initial deployment and a configuration change, as the SDK's
//! "Plans and Deployment" page tells it, then shows a canary phase waiting
//! for an operator's `continue`. Every tree is printed by the same renderer
//! as `roller plan show`.

use std::io::{self, Write};

use crate::plan::{self, Operation, Phase, Plan, Status, Step, StepIndex, Strategy, Target};

const HELLO_WORLD: &str = include_str!("../../examples/hello-world.json");

/// The statuses a step passes through on the way to COMPLETE.
const LIFECYCLE: [Status; 4] = [
    Status::Prepared,
    Status::Starting,
    Status::Started,
    Status::Complete,
];

pub(crate) fn run(out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "roller plan demo: the plan engine on the DC/OS SDK's hello-world deploy plan."
    )?;
    let mut plan = Plan::from_json(HELLO_WORLD).expect("the embedded example is a valid plan");

    section(out, "Initial deployment", &plan)?;
    run_to_completion(out, &mut plan)?;

    // The configuration change: one more hello pod, and both world pods
    // relaunched with new resources.
    plan.phases[0].steps.push(Step::new("hello-1:[server]"));
    for step in &mut plan.phases[1].steps {
        step.status = Status::Pending;
    }
    section(out, "Configuration change", &plan)?;
    run_to_completion(out, &mut plan)?;

    canary(out)
}

fn section(out: &mut dyn Write, title: &str, plan: &Plan) -> io::Result<()> {
    writeln!(out, "\n== {title}")?;
    out.write_all(plan::tree(plan).as_bytes())
}

fn show(out: &mut dyn Write, caption: &str, plan: &Plan) -> io::Result<()> {
    writeln!(out, "\n-- {caption}")?;
    out.write_all(plan::tree(plan).as_bytes())
}

/// Moves the candidates through their lifecycle, one status at a time,
/// until the plan has no candidate left.
fn run_to_completion(out: &mut dyn Write, plan: &mut Plan) -> io::Result<()> {
    loop {
        let candidates = plan::plan_candidates(plan);
        if candidates.is_empty() {
            return Ok(());
        }
        for at in candidates {
            advance(out, plan, at)?;
        }
    }
}

fn advance(out: &mut dyn Write, plan: &mut Plan, at: StepIndex) -> io::Result<()> {
    let current = plan.step(at).status;
    let next = LIFECYCLE
        .iter()
        .position(|&s| s == current)
        .map_or(LIFECYCLE[0], |i| {
            LIFECYCLE[(i + 1).min(LIFECYCLE.len() - 1)]
        });
    plan.step_mut(at).status = next;
    let caption = format!("{} -> {next}", plan.step(at).name);
    show(out, &caption, plan)
}

/// A roll-shaped plan whose replace phase is a canary: nothing moves until
/// the operator continues, one canary step at a time.
fn canary(out: &mut dyn Write) -> io::Result<()> {
    let steps = (1..=4)
        .map(|n| {
            let mut step = Step::new(format!("i-0a1b2c3d00000000{n}"));
            step.asset = Some(step.name.clone());
            step
        })
        .collect();
    let mut plan = Plan::new(
        "roll-agents",
        Strategy::Serial,
        vec![Phase::new("replace", Strategy::SerialCanary, steps)],
    );
    section(out, "Canary: the phase waits for the operator", &plan)?;
    for round in 1..=2 {
        plan.apply(Operation::Continue, Target::Phase(0));
        show(
            out,
            &format!("roller plan continue --phase replace (canary {round} of 2)"),
            &plan,
        )?;
        let at = plan::plan_candidates(&plan)[0];
        for _ in LIFECYCLE {
            advance(out, &mut plan, at)?;
        }
    }
    writeln!(
        out,
        "\n-- the canary is over: the serial strategy takes the rest"
    )?;
    run_to_completion(out, &mut plan)
}
