//! SIGBUS from a mapped key file that shrank under us, as an error.
//!
//! The handler may only do async-signal-safe work: it writes a message
//! prepared before the mapping and exits 2. Only faults while a mapping is
//! live are ours; any other SIGBUS keeps its default action.

use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

/// The message for the file being read (leaked: one per file read).
static MESSAGE: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static LIVE: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();

extern "C" fn on_sigbus(sig: libc::c_int) {
    let msg = MESSAGE.load(Ordering::SeqCst);
    if LIVE.load(Ordering::SeqCst) == 0 || msg.is_null() {
        // Not ours: default action, raised again.
        // SAFETY: signal and raise are async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return;
    }
    // SAFETY: `msg` is a leaked NUL-terminated string; strlen, write and
    // _exit are async-signal-safe.
    unsafe {
        libc::write(2, msg.cast(), libc::strlen(msg));
        libc::_exit(2);
    }
}

/// Marks a mapping of `path` live for its lifetime.
pub struct Guard;

impl Guard {
    pub fn new(path: &Path) -> Guard {
        INSTALL.call_once(|| {
            // SAFETY: installs a handler that only touches atomics and
            // async-signal-safe calls.
            unsafe {
                libc::signal(libc::SIGBUS, on_sigbus as *const () as libc::sighandler_t);
            }
        });
        let text = format!(
            "partwise: error: {}: the file changed size while it was read (truncated by another process?); nothing was answered from it\n",
            path.display()
        );
        let c = CString::new(text.replace('\0', "?")).unwrap_or_default();
        let old = MESSAGE.swap(c.into_raw(), Ordering::SeqCst);
        if !old.is_null() && LIVE.load(Ordering::SeqCst) == 0 {
            // SAFETY: `old` came from CString::into_raw and no live
            // mapping can fault with it any more.
            drop(unsafe { CString::from_raw(old) });
        }
        LIVE.fetch_add(1, Ordering::SeqCst);
        Guard
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}
