//! Integration tests of the `roller` binary: each test runs the built
//! binary in a fresh temporary folder and checks its exit code, its output
//! and the files it leaves (see `test.rs` for the builder).

mod api;
mod bad_input;
mod canary;
mod cluster;
mod controls;
mod crash;
mod demo;
mod disk;
mod faults;
mod golden;
mod health;
mod help;
mod live;
mod one_roll;
mod operate;
mod plans;
mod rebalance;
mod run;
mod s3;
mod secrets;
mod show;
mod sim;
mod test;
mod tls;
