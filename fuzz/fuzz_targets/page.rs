//! Fuzz the InnoDB page parser/validator: `cargo +nightly fuzz run page`.
//! The same entry point runs on stable in tests/checksum_fuzz.rs.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    innotune::checksum::page::fuzz_one(data);
});
