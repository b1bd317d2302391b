//! The assignor catalog in words: the ABOUT cell of `partwise partitioners`
//! and the `-a` help of `assign`, from the core's one list
//! (`Assignor::catalog`).

use partwise::assign::{Assignor, CatalogEntry};

/// An assignor's ABOUT cell: its release, how its answer varies, or why it
/// is refused.
pub fn assignor_about(e: &CatalogEntry) -> String {
    let mut parts: Vec<String> = Vec::new();
    if e.default {
        parts.push(format!("{}'s default", e.client));
    }
    if let Some(r) = &e.release {
        parts.push(r.clone());
    }
    if let Some(v) = e.varies_by {
        parts.push(format!("varies by {v}: simulated over several runs"));
    }
    if let Some(r) = e.reason {
        parts.push(r.to_string());
    }
    parts.join("; ")
}

/// Every assignor spec, one line each, for `assign --help`.
pub fn assignor_help() -> String {
    let mut s = String::from(
        "Assignor spec, CLIENT[:NAME] (CLIENT alone is its default). The KIP-848 ones take the \
         broker's Kafka version, kip848:uniform@4.0.0 ... @4.4.0 (default: the newest). \
         Every spec (`partwise partitioners` lists them too):\n",
    );
    for e in Assignor::catalog() {
        let how = match (e.simulated, e.deterministic) {
            (false, _) => "refused",
            (true, Some(false)) => "not deterministic",
            _ => "deterministic",
        };
        s.push_str(&format!("  {} [{}, {how}]", e.spec, e.client));
        let about = assignor_about(&e);
        if !about.is_empty() {
            s.push_str(&format!(": {about}"));
        }
        s.push('\n');
    }
    s
}
