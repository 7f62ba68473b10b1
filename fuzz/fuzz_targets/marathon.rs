//! `roller::fuzz_targets::marathon` under libFuzzer.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roller::fuzz_targets::marathon(data));
