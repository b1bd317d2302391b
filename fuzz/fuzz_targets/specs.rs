//! Partitioner specs (priority rules included) and assignor specs: what
//! parses places keys within the count and prints a spec that parses back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use partwise::assign::Assignor;
use partwise::{PartitionCount, Partitioner};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = text.parse::<Partitioner>() {
        for n in [1u32, 7, 1 << 20] {
            let count = PartitionCount::new(n).unwrap();
            for key in [&b""[..], b"VIP_1", b"BBCA"] {
                assert!(p.place(Some(key), count).partition().is_none_or(|q| q < n));
            }
        }
        let again: Partitioner = p.spec().parse().expect("a canonical spec parses");
        assert_eq!(again.spec(), p.spec());
    }
    if let Ok(a) = text.parse::<Assignor>() {
        let again: Assignor = a.spec().parse().expect("a canonical spec parses");
        assert_eq!(again.spec(), a.spec());
    }
    let _ = text.parse::<PartitionCount>();
});
