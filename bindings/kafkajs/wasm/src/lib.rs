//! The KafkaJS binding's WebAssembly module (`bindings/kafkajs/partwise.wasm`):
//! the classic leader's `copartitioned` assignment ([`partwise_wire::leader`],
//! the very code the Rust runtime's leader runs), the consumer protocol's
//! subscription and assignment bytes, and the partwise partitioners.
//!
//! The ABI is a handful of `extern "C"` functions over byte buffers, so the
//! JavaScript side needs nothing but `WebAssembly.Instance`:
//!
//! - `pw_input(len) -> ptr`: room for `len` input bytes in the module's
//!   memory (reused between calls); the caller writes its request there;
//! - `pw_<call>(len) -> status`: reads the request of `len` bytes, writes
//!   its answer to the output buffer and returns 0, or writes an error
//!   message (UTF-8) there and returns 1;
//! - `pw_output_ptr()`, `pw_output_len()`: where the answer is, valid until
//!   the next call.
//!
//! Requests and answers are little-endian: `u32` counts and lengths, a
//! string or byte string as its `u32` length then its bytes, an optional
//! string as a `u8` flag (0 absent, 1 present) then the string. Each call's
//! layout is documented on its function in [`calls`].

pub mod calls;
pub mod codec;

use std::cell::RefCell;

thread_local! {
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Room for `len` request bytes; the pointer stays valid until the next
/// `pw_input`.
#[no_mangle]
pub extern "C" fn pw_input(len: usize) -> *mut u8 {
    INPUT.with(|i| {
        let mut i = i.borrow_mut();
        i.clear();
        i.resize(len, 0);
        i.as_mut_ptr()
    })
}

/// Where the last call's answer (or error message) starts.
#[no_mangle]
pub extern "C" fn pw_output_ptr() -> *const u8 {
    OUTPUT.with(|o| o.borrow().as_ptr())
}

/// How long the last call's answer (or error message) is.
#[no_mangle]
pub extern "C" fn pw_output_len() -> usize {
    OUTPUT.with(|o| o.borrow().len())
}

/// Runs `call` on the first `len` request bytes and stores its answer.
fn run(len: usize, call: impl FnOnce(&[u8], &mut Vec<u8>) -> Result<(), String>) -> u32 {
    INPUT.with(|i| {
        OUTPUT.with(|o| {
            let input = i.borrow();
            let mut out = o.borrow_mut();
            out.clear();
            let request = &input[..len.min(input.len())];
            match call(request, &mut out) {
                Ok(()) => 0,
                Err(message) => {
                    out.clear();
                    out.extend_from_slice(message.as_bytes());
                    1
                }
            }
        })
    })
}

macro_rules! export {
    ($($name:ident => $call:path),* $(,)?) => {
        $(
            #[doc = concat!("[`", stringify!($call), "`] over the request buffer.")]
            #[no_mangle]
            pub extern "C" fn $name(len: usize) -> u32 {
                run(len, $call)
            }
        )*
    };
}

export! {
    pw_read_members => calls::read_members,
    pw_assign => calls::assign,
    pw_release_members => calls::release_members,
    pw_encode_subscription => calls::encode_subscription,
    pw_subscription_topics => calls::subscription_topics,
    pw_decode_subscription => calls::decode_subscription,
    pw_decode_assignment => calls::decode_assignment,
    pw_partitioner_new => calls::partitioner_new,
    pw_partitioner_spec => calls::partitioner_spec,
    pw_partitioner_free => calls::partitioner_free,
}

/// Where one record goes under partitioner `handle` ([`calls::place`]):
/// the partition (>= 0), or a key-less strategy or refusal as a negative
/// code; -1 is an error whose message is the output.
#[no_mangle]
pub extern "C" fn pw_place(handle: u32, len: usize) -> i64 {
    let mut code = -1;
    let status = run(len, |request, out| {
        code = calls::place(handle, request, out)?;
        Ok(())
    });
    if status == 0 {
        code
    } else {
        -1
    }
}
