//! A fake broker for hostile-peer tests: a loopback listener that answers
//! every connection the one wrong way it is told to (never, with garbage,
//! by closing, with an absurd frame length or array count, or as a TLS
//! server answers plaintext). No broker is needed: any command pointed at
//! it must end in time, with exit 2 naming the address.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// How a hostile listener treats each connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// Accepts and never answers.
    Silent,
    /// Reads the request, answers bytes that are no protocol.
    Garbage,
    /// Closes at once.
    Close,
    /// Answers a frame length of 2^31 - 1 and nothing after it.
    HugeFrame,
    /// What a TLS server says to a plaintext request: an alert, then close.
    TlsAlert,
    /// Answers each request well framed, with its correlation id, as an
    /// ApiVersions response whose array announces 2^31 - 1 elements (a
    /// decoder that reserves the count first asks for hundreds of GiB).
    AbsurdCount,
}

/// A loopback listener that treats every connection as `peer` does, on a
/// thread of its own for as long as the test runs; its `HOST:PORT`.
pub fn listener(peer: Peer) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            std::thread::spawn(move || serve(peer, &mut c));
        }
    });
    addr
}

fn serve(peer: Peer, c: &mut TcpStream) {
    let mut buf = [0u8; 4096];
    match peer {
        Peer::Close => return,
        Peer::Silent => {}
        Peer::Garbage => {
            let _ = c.read(&mut buf);
            let _ = c.write_all(&b"\xff\xff\xff\xffnot a protocol\r\n".repeat(200));
        }
        Peer::HugeFrame => {
            let _ = c.read(&mut buf);
            let _ = c.write_all(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1]);
        }
        Peer::AbsurdCount => loop {
            let mut len = [0u8; 4];
            if c.read_exact(&mut len).is_err() {
                return;
            }
            let mut req = vec![0u8; (u32::from_be_bytes(len) as usize).min(1 << 20)];
            if req.len() < 8 || c.read_exact(&mut req).is_err() {
                return;
            }
            let version = i16::from_be_bytes([req[2], req[3]]);
            let mut body = req[4..8].to_vec(); // the correlation id
            body.extend([0, 0]); // error code
            if version >= 3 {
                body.extend([0xfe, 0xff, 0xff, 0xff, 0x0f]); // compact count
            } else {
                body.extend(i32::MAX.to_be_bytes());
            }
            body.extend([0; 16]);
            let mut frame = (body.len() as u32).to_be_bytes().to_vec();
            frame.extend(body);
            if c.write_all(&frame).is_err() {
                return;
            }
        },
        Peer::TlsAlert => {
            let _ = c.read(&mut buf);
            // Alert record, TLS 1.2, fatal (2), unexpected_message (10).
            let _ = c.write_all(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0a]);
            return;
        }
    }
    // Hold the connection open until the client gives up.
    std::thread::sleep(Duration::from_secs(60));
}
