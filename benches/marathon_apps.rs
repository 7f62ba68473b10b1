//! Benchmark: parse and judge a `GET /v2/apps?embed=apps.tasks` answer of
//! 2,000 apps / 20,000 tasks built from the fixture shapes, against merely
//! parsing the same bytes into `serde_json::Value`, in the same run.
//! Prints the median time of each, the peak heap of each (a counting
//! global allocator), and their ratio. Run with `scripts/bench`.
//!
//! Targets (issue 3): parse + judge under 50 ms and under 50 MB, and no
//! slower than the `Value` parse.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const APPS: usize = 2_000;
const TASKS_PER_APP: usize = 10;
const AGENTS: usize = 200;
const RUNS: usize = 15;

/// Counts live heap bytes and remembers the highest count since the last
/// `reset_peak`.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours, passed through.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours, passed through.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours, passed through.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as ours, passed through.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// 2,000 apps shaped like the Marathon 1.5 fixtures (one in ten without
/// health checks, one in twenty deploying, a failing health result here and
/// there), each with ten tasks spread over 200 agents; compact JSON, as
/// Marathon sends it.
fn response() -> Vec<u8> {
    let checked = fixture("marathon-1.5-v2-apps-embed-tasks-healthchecks.json");
    let unchecked = fixture("marathon-1.5-v2-apps-embed-tasks-no-healthchecks.json");
    let checked_app = &checked["apps"][0];
    let unchecked_app = &unchecked["apps"][0];
    let mut apps = Vec::with_capacity(APPS);
    for a in 0..APPS {
        let with_checks = a % 10 != 0;
        let mut app = if with_checks {
            checked_app.clone()
        } else {
            unchecked_app.clone()
        };
        let id = format!("/team-{}/service-{a}", a % 40);
        let name = id.trim_start_matches('/').replace('/', "_");
        let template = app["tasks"][0].clone();
        let mut tasks = Vec::with_capacity(TASKS_PER_APP);
        let mut healthy = 0;
        for t in 0..TASKS_PER_APP {
            let mut task = template.clone();
            let uuid = format!("{a:08x}-68a7-11e7-a229-{t:012x}");
            task["id"] = json!(format!("{name}.{uuid}"));
            task["appId"] = json!(id);
            task["slaveId"] = json!(format!(
                "c28a2184-c702-482c-91c8-5af9318434d4-S{}",
                (a * 7 + t) % AGENTS
            ));
            task["host"] = json!(format!("10.0.{}.{}", (a + t) % 250, t + 10));
            if with_checks {
                let alive = (a + t) % 97 != 0;
                healthy += u32::from(alive);
                let result = &mut task["healthCheckResults"][0];
                result["alive"] = json!(alive);
                result["instanceId"] = json!(format!("{name}.marathon-{uuid}"));
            }
            tasks.push(task);
        }
        app["id"] = json!(id);
        app["instances"] = json!(TASKS_PER_APP);
        app["tasksRunning"] = json!(TASKS_PER_APP);
        app["tasksHealthy"] = json!(if with_checks { healthy } else { 0 });
        app["tasksUnhealthy"] = json!(if with_checks {
            TASKS_PER_APP as u32 - healthy
        } else {
            0
        });
        app["tasks"] = Value::Array(tasks);
        if a % 20 == 5 {
            app["deployments"] = json!([{"id": format!("5ed4c0c5-9ff8-4a6f-a0cd-{a:012x}")}]);
        }
        apps.push(app);
    }
    serde_json::to_vec(&json!({ "apps": apps })).expect("serializable")
}

struct Figures {
    median: Duration,
    min: Duration,
    /// The highest live heap while running, the response included.
    peak_bytes: usize,
}

/// Runs `work` RUNS times (after one warm-up); the peak heap is of a
/// single run, measured from what was live before it (the response).
fn measure(body: &[u8], work: impl Fn(&[u8]) -> usize) -> Figures {
    black_box(work(body));
    let mut times = Vec::with_capacity(RUNS);
    let mut peak_bytes = 0;
    for _ in 0..RUNS {
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let started = Instant::now();
        black_box(work(black_box(body)));
        times.push(started.elapsed());
        peak_bytes = peak_bytes.max(PEAK.load(Ordering::Relaxed));
    }
    times.sort();
    Figures {
        median: times[RUNS / 2],
        min: times[0],
        peak_bytes,
    }
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1_000_000.0
}

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1_000.0
}

fn main() {
    // `cargo bench` passes `--bench`; a filter or `--list` is not ours.
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let body = response();
    let live_with_response = LIVE.load(Ordering::Relaxed);

    // Sanity: the typed path sees every app and task and finds the
    // deploying and the failing ones unhealthy.
    let apps = roller::marathon::parse_apps(&body).expect("the generated response parses");
    let tasks: usize = apps.iter().map(|app| app.tasks.len()).sum();
    let verdict =
        roller::roll::decide::health::judge(&apps, &[], roller::roll::decide::health::Settle::NONE);
    let unhealthy = verdict.unhealthy().count();
    assert_eq!((apps.len(), tasks), (APPS, APPS * TASKS_PER_APP));
    assert!(unhealthy > 0 && unhealthy < APPS);
    drop((apps, verdict));

    let typed = measure(&body, |body| {
        let apps = roller::marathon::parse_apps(body).expect("parses");
        let verdict = roller::roll::decide::health::judge(
            &apps,
            &[],
            roller::roll::decide::health::Settle::NONE,
        );
        verdict.unhealthy().count()
    });
    let value = measure(&body, |body| {
        let value: Value = serde_json::from_slice(body).expect("parses");
        value["apps"].as_array().map_or(0, Vec::len)
    });

    let ratio = typed.median.as_secs_f64() / value.median.as_secs_f64();
    let verdict = |ok: bool| if ok { "ok" } else { "MISSED" };
    println!(
        "marathon_apps: {APPS} apps, {} tasks, {:.1} MB response ({unhealthy} apps unhealthy)",
        APPS * TASKS_PER_APP,
        mb(body.len())
    );
    println!(
        "  parse + judge (typed):  median {:6.2} ms  min {:6.2} ms  peak heap {:6.1} MB (live before: {:.1} MB, the response buffer; + {:.1} MB)",
        ms(typed.median),
        ms(typed.min),
        mb(typed.peak_bytes),
        mb(live_with_response),
        mb(typed.peak_bytes.saturating_sub(live_with_response)),
    );
    println!(
        "  serde_json::Value parse: median {:6.2} ms  min {:6.2} ms  peak heap {:6.1} MB (live before: {:.1} MB, the response buffer; + {:.1} MB)",
        ms(value.median),
        ms(value.min),
        mb(value.peak_bytes),
        mb(live_with_response),
        mb(value.peak_bytes.saturating_sub(live_with_response)),
    );
    println!("  ratio typed / Value: {ratio:.2}");
    println!(
        "  targets: < 50 ms {}; < 50 MB {}; no slower than Value {}",
        verdict(typed.median < Duration::from_millis(50)),
        verdict(typed.peak_bytes < 50_000_000),
        verdict(ratio <= 1.0),
    );
}
