//! `--key-format` specs and the keys they decode (hex, base64, int32/int64,
//! avro-sr): the first line is the format, the rest the key.
#![no_main]
use libfuzzer_sys::fuzz_target;
use partwise::KeyFormat;

fuzz_target!(|data: &[u8]| {
    let (spec, key) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"hex"[..], data),
    };
    if let Ok(spec) = std::str::from_utf8(spec) {
        if let Ok(f) = spec.parse::<KeyFormat>() {
            let _ = f.encode(key);
        }
    }
    for f in ["hex", "base64", "int32", "int64", "avro-sr:7"] {
        let _ = f.parse::<KeyFormat>().unwrap().encode(key);
    }
});
