//! Plan documents the tests share.

/// As a human writes it: no version, no ids, no strategies, no statuses.
pub const HAND_WRITTEN: &str = r#"{
  "name": "deploy",
  "phases": [
    { "name": "hello", "steps": [{ "name": "hello-0" }] },
    { "name": "world", "steps": [{ "name": "world-0" }, { "name": "world-1" }] }
  ]
}
"#;

/// `HAND_WRITTEN`'s tree.
pub const HAND_WRITTEN_TREE: &str = "\
deploy (serial strategy) (PENDING)
├─ hello (serial strategy) (PENDING)
│  └─ hello-0 (PENDING)
└─ world (serial strategy) (PENDING)
   ├─ world-0 (PENDING)
   └─ world-1 (PENDING)
";

/// Two phases that both have a step named `check`; the first phase's id
/// (`drain`) is the second phase's name.
pub const TWO_PHASES: &str = r#"{
  "version": 1,
  "name": "roll",
  "phases": [
    {
      "id": "drain",
      "name": "prepare",
      "steps": [
        { "id": "p-1", "name": "i-0aaa" },
        { "id": "p-2", "name": "check" }
      ]
    },
    {
      "id": "ph-2",
      "name": "drain",
      "steps": [
        { "id": "d-1", "name": "i-0bbb" },
        { "id": "d-2", "name": "check" }
      ]
    }
  ]
}
"#;

/// A serial-canary phase of four PENDING steps, never continued, no ids.
pub const CANARY: &str = r#"{
  "name": "roll-agents",
  "phases": [
    {
      "name": "replace",
      "strategy": "serial-canary",
      "steps": [
        { "name": "i-01", "status": "PENDING" },
        { "name": "i-02", "status": "PENDING" },
        { "name": "i-03", "status": "PENDING" },
        { "name": "i-04", "status": "PENDING" }
      ]
    }
  ]
}
"#;
