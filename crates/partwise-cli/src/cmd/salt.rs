//! `partwise salt`: the smallest salt range that cools a hot key.

use crate::exit::{CliError, ExitCode, Result};
use crate::output::{Format, Table};
use partwise::salt::{recommend, salted_key};
use serde_json::json;
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    /// The hot key
    #[arg(long)]
    key: String,
    /// Its share of the topic's traffic (0.95 = 95%)
    #[arg(long, allow_negative_numbers = true)]
    share: f64,
    #[command(flatten)]
    routing: super::Routing,
    /// Target: the hottest partition at most R x the mean load
    #[arg(
        long,
        value_name = "R",
        default_value_t = 1.5,
        allow_negative_numbers = true
    )]
    target_ratio: f64,
    /// Largest salt range to consider
    #[arg(long, default_value_t = 1000)]
    max_range: u32,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

const TRADE_OFF: &str = "records of the key stay ordered only within each salt (KEY_1, KEY_2, ...), not across them; readers must merge the partitions listed";

fn pct(v: &[f64]) -> Vec<String> {
    v.iter().map(|x| format!("{:.1}%", x * 100.0)).collect()
}

pub fn run(a: Args) -> Result<ExitCode> {
    let (n, p) = a.routing.parse()?;
    let plan = recommend(p, a.key.as_bytes(), a.share, n, a.target_ratio, a.max_range)
        .map_err(|e| CliError::msg(e.to_string()))?;
    let used = plan.range.unwrap_or(a.max_range.max(1));
    let salted: Vec<String> = (1..=used.min(64))
        .map(|i| String::from_utf8_lossy(&salted_key(a.key.as_bytes(), i)).into_owned())
        .collect();
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json | Format::Ndjson => {
            let v = json!({
                "key": a.key,
                "share": a.share,
                "partitioner": p.spec(),
                "partitions": n.get(),
                "target_ratio": a.target_ratio,
                "range": plan.range,
                "before_max_over_mean": plan.before_max_over_mean,
                "after_max_over_mean": plan.after_max_over_mean,
                "before": plan.before,
                "after": plan.after,
                "spans": plan.spans,
                "salted_keys": salted,
                "trade_off": TRADE_OFF,
            });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        }
        Format::Table => {
            match plan.range {
                Some(s) => writeln!(
                    out,
                    "salt '{}' over S = {s} ({}_1 .. {}_{s}): hottest partition {:.2} x mean -> {:.2} x mean (target {})",
                    a.key, a.key, a.key, plan.before_max_over_mean, plan.after_max_over_mean, a.target_ratio
                )?,
                None => writeln!(
                    out,
                    "no salt range up to {} brings the hottest partition under {} x mean (best {:.2} x): with {:.0}% of traffic on one key and {} partitions the target may be unreachable",
                    a.max_range, a.target_ratio, plan.after_max_over_mean, a.share * 100.0, n
                )?,
            }
            let spans: Vec<String> = plan.spans.iter().map(u32::to_string).collect();
            writeln!(out, "the salted key spans partitions {}", spans.join(", "))?;
            let mut t = Table::new(["", "LOAD PER PARTITION"]);
            t.row(["before".to_string(), pct(&plan.before).join(" ")]);
            t.row(["after".to_string(), pct(&plan.after).join(" ")]);
            t.write(&mut out)?;
            writeln!(out, "trade-off: {TRADE_OFF}")?;
        }
    }
    Ok(ExitCode::Ok)
}
