//! A topology file: parse, validate, and check what parses.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(t) = partwise::topology::Topology::parse(text) {
            let _ = partwise::check::check(&t, &[b"BBCA", b"", b"{"]);
        }
    }
});
