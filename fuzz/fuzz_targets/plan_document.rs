//! `roller::fuzz_targets::plan_document` under libFuzzer.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roller::fuzz_targets::plan_document(data));
