//! The JSON of a skew report: `skew --format json`, and each topic's skew
//! in `report`'s JSON twin: the core's report as serde writes it.

use partwise::traffic::Report;
use serde_json::Value;

/// A skew report as JSON: `skew --format json`, and each topic's skew in
/// `report`'s JSON twin.
pub fn report_json(r: &Report) -> Value {
    serde_json::to_value(r).expect("a skew report is plain data")
}
