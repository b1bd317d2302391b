//! `route --summary` on several threads prints what one thread prints, byte
//! for byte (stdout, stderr, exit code), in every output format, whatever
//! the ranges the file is cut into.

use crate::common::{partwise, temp_file};

/// Above the size from which a file is read on several threads (4 MiB).
const HALF: usize = 3 << 20;

/// A key file of `2 * HALF` bytes whose middle byte is the `\n` of a
/// `\r\n` (two threads cut right after it), with lines of every length
/// (up to one of 70 kB, which three threads' cuts fall into), empty lines,
/// `\r\n` endings, keys with invisible characters in both halves (more than
/// the three a run names) and, with `final_newline` false, a last line
/// without its newline.
fn key_file(final_newline: bool) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut line = |out: &mut Vec<u8>, i: u64| {
        let r = next();
        match r % 50 {
            0 => {}
            1 => out.extend_from_slice(b"\r"),
            2 if i.is_multiple_of(97) => out.extend_from_slice("zero\u{200b}width".as_bytes()),
            _ => {
                let len = 1 + (r >> 8) % 40;
                for j in 0..len {
                    out.push(b'a' + ((r >> (j % 48)) % 26) as u8);
                }
                if r.is_multiple_of(7) {
                    out.push(b'\r');
                }
            }
        }
        out.push(b'\n');
    };
    let mut first = Vec::with_capacity(HALF);
    let mut i = 0;
    while first.len() < HALF - 64 {
        line(&mut first, i);
        i += 1;
    }
    first.extend(std::iter::repeat_n(b'x', HALF - 1 - first.len()));
    first.push(b'\r');
    assert_eq!(first.len(), HALF);
    let mut second = vec![b'\n'];
    while second.len() < HALF / 3 {
        line(&mut second, i);
        i += 1;
    }
    // One long line where three threads cut (at a third and two thirds).
    second.extend(std::iter::repeat_n(b'L', 70_000));
    second.push(b'\n');
    while second.len() < HALF - 40 {
        line(&mut second, i);
        i += 1;
    }
    second.extend(std::iter::repeat_n(b'y', HALF - second.len() - 1));
    second.push(if final_newline { b'\n' } else { b'z' });
    assert_eq!(second.len(), HALF);
    first.extend(second);
    first
}

fn run(args: &[&str], threads: usize) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let out = partwise()
        .args(args)
        .args(["--threads", &threads.to_string()])
        .output()
        .unwrap();
    (out.status.code(), out.stdout, out.stderr)
}

#[test]
fn summary_on_threads_matches_one_thread_in_every_format() {
    for final_newline in [true, false] {
        let f = temp_file(key_file(final_newline));
        let path = f.path().to_str().unwrap();
        for format in ["table", "json", "ndjson"] {
            let args = [
                "route",
                "-i",
                path,
                "-p",
                "7",
                "-p",
                "12",
                "-P",
                "java",
                "-P",
                "librdkafka",
                "-P",
                "sarama",
                "--summary",
                "--format",
                format,
            ];
            let one = run(&args, 1);
            assert_eq!(one.0, Some(0), "{}", String::from_utf8_lossy(&one.2));
            // The invisible characters are named (line numbers of the whole
            // file) and the rest counted.
            let err = String::from_utf8_lossy(&one.2);
            assert_eq!(err.matches("zero-width").count(), 3, "{err}");
            assert!(err.contains("more keys hold invisible characters"), "{err}");
            for threads in [2, 3, 7] {
                let many = run(&args, threads);
                assert!(
                    many == one,
                    "--threads {threads}, --format {format}, final newline {final_newline}: \
                     stdout\n{}\nstderr\n{}\nagainst one thread's\n{}\n{}",
                    String::from_utf8_lossy(&many.1),
                    String::from_utf8_lossy(&many.2),
                    String::from_utf8_lossy(&one.1),
                    err
                );
            }
        }
    }
}

#[test]
fn summary_on_threads_reports_the_first_bad_line_as_one_thread_does() {
    // Hex keys, two bad lines in the second half: the error names the
    // first, with its line number in the file, as one thread's run does.
    let mut text = Vec::new();
    let mut n = 0u32;
    while text.len() < 5 << 20 {
        text.extend_from_slice(format!("{n:08x}\n").as_bytes());
        n += 1;
    }
    let at = text.len() * 3 / 4;
    let at = at + text[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    text.splice(at..at, b"not-hex\nzz\n".iter().copied());
    let f = temp_file(&text);
    let path = f.path().to_str().unwrap();
    let args = [
        "route",
        "-i",
        path,
        "-p",
        "12",
        "--key-format",
        "hex",
        "--summary",
    ];
    let one = run(&args, 1);
    assert_eq!(one.0, Some(2));
    let line = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let err = String::from_utf8_lossy(&one.2);
    assert!(err.contains(&format!("line {line}:")), "{err}");
    assert_eq!(run(&args, 2), one);
}

#[test]
fn summary_on_threads_drops_a_byte_order_mark_once() {
    let mut text = b"\xEF\xBB\xBF".to_vec();
    let mut n = 0u32;
    while text.len() < 5 << 20 {
        text.extend_from_slice(format!("key-{n}\r\n").as_bytes());
        n += 1;
    }
    let f = temp_file(&text);
    let path = f.path().to_str().unwrap();
    let args = [
        "route",
        "-i",
        path,
        "-p",
        "5",
        "--summary",
        "--format",
        "json",
    ];
    let one = run(&args, 1);
    assert_eq!(one.0, Some(0));
    assert!(String::from_utf8_lossy(&one.2).contains("byte-order mark"));
    assert_eq!(run(&args, 2), one);
}
