//! The report as one self-contained HTML page drawn from
//! [`crate::ops::report::model::Model`]: inline CSS, inline SVG and one line of script
//! (opening every `<details>` to print), nothing fetched. Every user string
//! (keys, topic, group and member names, patterns) passes through [`esc`].
//! Big tables are plain tables in `<details>`: no per-cell script, so a
//! 1,000 x 1,000 report stays fast.

mod live;
mod load;
mod placement;

use crate::ops::report::model::{Matrix, Model, Placement, Verdict, MAX_MATRIX_ROWS};
use crate::output::key_cell;
use crate::render::html::escape as esc;
use crate::render::svg::load_svg;
use live::{live, redis};
use load::{resize, skew};
use partwise::assign::Colocation;
use placement::{colocation_table, placement};
use std::fmt::Write as _;

/// Rows above which a table starts folded in a `<details>`.
const FOLD_ROWS: usize = 64;

/// A key as a table cell shows it (printable text, or `0x..` hex), escaped.
fn key(k: &[u8]) -> String {
    esc(&key_cell(k))
}

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 1rem 3rem; color: #1b1b1b; background: #fff; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem; border: 2px solid #1b1b1b; }
.skip:focus { left: 1rem; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
a { color: #0b4f9c; }
:focus-visible { outline: 3px solid #0b4f9c; outline-offset: 2px; }
section { margin-top: 1.5rem; }
h1 { font-size: 1.5rem; margin: 1rem 0 .25rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #888; padding-bottom: .2rem; }
h3 { font-size: 1.05rem; }
.verdict { list-style: none; padding: 0; }
.verdict > li { border-left: 6px solid; padding: .4rem .75rem; margin: .5rem 0; }
.verdict > li.ok { border-color: #1a6b2a; background: #eef7ef; }
.verdict > li.bad { border-color: #a3161b; background: #fdeeed; border-left-style: double; border-left-width: 8px; }
.mark { font-weight: 700; }
.ok .mark, td.ok { color: #145222; }
.bad .mark { color: #8c1116; }
.fixes { margin: .25rem 0 0 1rem; padding: 0; }
table { border-collapse: collapse; margin: .5rem 0; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border: 1px solid #999; padding: .15rem .45rem; text-align: left; }
thead th { background: #eceff3; }
td.split, td.differs, td.hot { background: #fde0dc repeating-linear-gradient(45deg, transparent 0 6px, #f4b8b0 6px 8px); color: #5e0b0e; font-weight: 600; }
td.idle { color: #4a4a4a; font-style: italic; }
.scroll { overflow-x: auto; max-width: 100%; }
details > summary { cursor: pointer; font-weight: 600; padding: .25rem 0; }
.chart { max-width: 100%; height: auto; border: 1px solid #ccc; }
.note { color: #4a4a4a; }
@media print {
  .skip, nav { display: none; }
  body { max-width: none; font-size: 11pt; }
  section { break-inside: auto; }
  h2, h3 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
  .verdict > li, td.split, td.differs, td.hot { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
"#;

/// The whole page.
pub fn page(m: &Model) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let verdict = m.verdict();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>partwise report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<a class=\"skip\" href=\"#verdict\">Skip to the verdict</a>\n<header>\n<h1>partwise report: {}</h1>\n<p class=\"note\">{} sample keys. Made by <code>partwise report</code>; the same content is in <code>--format json</code>.</p>\n<nav aria-label=\"Sections\"><ul>",
        esc(&m.file),
        esc(&m.file),
        m.samples.len()
    );
    let mut sections = vec![("verdict", "Verdict")];
    if !m.topology.maps.is_empty() {
        sections.push(("layout", "Layout"));
    }
    if !m.topology.placements.is_empty() {
        sections.push(("placement", "Placement"));
    }
    if !m.topology.skew.is_empty() {
        sections.push(("skew", "Skew"));
    }
    if !m.topology.resize.is_empty() {
        sections.push(("resize", "Resize"));
    }
    if !m.topology.redis.is_empty() {
        sections.push(("redis", "Redis"));
    }
    if m.live_kafka.is_some() || m.live_redis.is_some() {
        sections.push(("live", "Live"));
    }
    for (id, name) in &sections {
        let _ = write!(s, "<li><a href=\"#{id}\">{name}</a></li>");
    }
    s.push_str("</ul></nav>\n</header>\n<main>\n");
    verdict_section(&mut s, m, &verdict);
    layout(&mut s, m);
    placement(&mut s, m);
    skew(&mut s, m);
    resize(&mut s, m);
    redis(&mut s, m);
    live(&mut s, m);
    // The one script: a printout shows the folded tables too.
    s.push_str("</main>\n<script>addEventListener('beforeprint',function(){document.querySelectorAll('details').forEach(function(d){d.open=true})})</script>\n</body>\n</html>\n");
    s
}

fn open_section(s: &mut String, id: &str, title: &str) {
    let _ = writeln!(
        s,
        "<section id=\"{id}\" tabindex=\"-1\" aria-labelledby=\"{id}-h\">\n<h2 id=\"{id}-h\">{title}</h2>"
    );
}

fn sub_section(s: &mut String, id: &str, title: &str) {
    let _ = writeln!(
        s,
        "<section id=\"{id}\" tabindex=\"-1\" aria-labelledby=\"{id}-h\">\n<h3 id=\"{id}-h\">{title}</h3>"
    );
}

/// Starts a table, folded in a `<details>` when it has more than
/// [`FOLD_ROWS`] rows; [`close_table`] ends it.
fn open_table(s: &mut String, rows: usize, caption: &str) {
    if rows > FOLD_ROWS {
        let _ = writeln!(s, "<details><summary>{caption} ({rows} rows)</summary>");
    }
    // A wide table scrolls inside its box: focusable, so the keyboard can scroll it.
    let _ = writeln!(
        s,
        "<div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-label=\"{caption}\"><table>\n<caption>{caption}</caption>"
    );
}

fn close_table(s: &mut String, rows: usize) {
    s.push_str("</tbody></table></div>\n");
    if rows > FOLD_ROWS {
        s.push_str("</details>\n");
    }
}

fn verdict_section(s: &mut String, m: &Model, verdict: &[Verdict]) {
    let bad = verdict.iter().filter(|v| !v.ok).count();
    let head = if bad == 0 {
        "Verdict: everything holds".to_string()
    } else {
        format!("Verdict: {bad} finding{}", if bad == 1 { "" } else { "s" })
    };
    open_section(s, "verdict", &head);
    if verdict.is_empty() {
        s.push_str("<p>The file declares nothing to check.</p>\n");
    }
    s.push_str("<ul class=\"verdict\">\n");
    for v in verdict {
        let _ = write!(
            s,
            "<li class=\"{}\" data-area=\"{}\"><span class=\"mark\">{}</span> {} <a href=\"#{}\">details</a>",
            if v.ok { "ok" } else { "bad" },
            v.area,
            if v.ok { "&#10003; OK:" } else { "&#10007; FINDING:" },
            esc(&v.text),
            v.anchor
        );
        if !v.fixes.is_empty() {
            s.push_str("<ul class=\"fixes\">");
            for f in &v.fixes {
                let _ = write!(s, "<li><strong>Fix:</strong> {}</li>", esc(f));
            }
            s.push_str("</ul>");
        }
        s.push_str("</li>\n");
    }
    s.push_str("</ul>\n");
    if m.samples.is_empty() {
        s.push_str("<p class=\"note\">No sample keys were given (<code>-i KEYS</code>): the partition map, skew and slots need them.</p>\n");
    }
    s.push_str("</section>\n");
}

fn layout(s: &mut String, m: &Model) {
    if m.topology.maps.is_empty() {
        return;
    }
    open_section(s, "layout", "Layout: where the sample keys land");
    for (i, (pm, g)) in m
        .topology
        .maps
        .iter()
        .zip(&m.topology.check.groups)
        .enumerate()
    {
        let title = format!(
            "Co-partition group {} ({}): {}",
            esc(&pm.name),
            esc(&g.topics.join(", ")),
            if g.ok() {
                "co-partitioned"
            } else {
                "NOT co-partitioned"
            }
        );
        sub_section(s, &format!("layout-{i}"), &title);
        findings(
            s,
            g.reasons
                .iter()
                .map(|r| (r.to_string(), r.fix().to_string())),
        );
        if pm.producers.is_empty() {
            s.push_str("<p>No keyed producer: no key has a partition to show.</p>\n");
        } else if !pm.rows.is_empty() {
            let rows = pm.rows.len();
            open_table(
                s,
                rows,
                &format!(
                    "Partition of each sample key under each producer of {}",
                    esc(&pm.name)
                ),
            );
            s.push_str("<thead><tr><th scope=\"col\">Key</th>");
            for (p, n) in pm.producers.iter().zip(&pm.partitions) {
                let _ = write!(
                    s,
                    "<th scope=\"col\">{} / {} ({}, {}, {n} partitions)</th>",
                    esc(&p.topic),
                    esc(p.name.as_deref().unwrap_or("producer")),
                    p.partitioner.map_or("-", |x| x.spec()),
                    p.key_format
                );
            }
            s.push_str("<th scope=\"col\">Same partition everywhere</th></tr></thead>\n<tbody>\n");
            for (r, row) in pm.rows.iter().enumerate() {
                let _ = write!(s, "<tr><th scope=\"row\">{}</th>", key(&m.samples[r]));
                for p in row {
                    match p {
                        Some(p) => {
                            let _ = write!(s, "<td>{p}</td>");
                        }
                        None => s.push_str("<td>none</td>"),
                    }
                }
                if pm.aligned(r) {
                    s.push_str("<td class=\"ok\">&#10003; yes</td>");
                } else {
                    s.push_str("<td class=\"differs\">&#10007; DIFFERS</td>");
                }
                s.push_str("</tr>\n");
            }
            close_table(s, rows);
            let shown_apart = (0..rows).filter(|&r| !pm.aligned(r)).count();
            let apart = g.sample.map_or(0, |a| a.keys - a.aligned);
            omitted_note(
                s,
                m.keys_omitted(),
                apart.saturating_sub(shown_apart),
                "on different partitions",
            );
        }
        s.push_str("</section>\n");
    }
    s.push_str("</section>\n");
}

/// The sample keys past the listed rows ([`crate::output::MAX_KEY_ROWS`]):
/// counted, with how many of them break (`what`), never listed.
fn omitted_note(s: &mut String, omitted: usize, broken: usize, what: &str) {
    if omitted > 0 {
        let _ = writeln!(
            s,
            "<p>{omitted} more sample keys not shown ({broken} of them {what}).</p>"
        );
    }
}

fn findings(s: &mut String, items: impl Iterator<Item = (String, String)>) {
    let mut any = false;
    for (what, fix) in items {
        if !any {
            s.push_str("<ul class=\"findings\">\n");
            any = true;
        }
        let _ = writeln!(
            s,
            "<li><strong>&#10007; {}</strong><br><strong>Fix:</strong> {}</li>",
            esc(&what),
            esc(&fix)
        );
    }
    if any {
        s.push_str("</ul>\n");
    }
}

fn share(part: u64, whole: u64) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole.max(1) as f64)
}

fn same_or_differs(s: &mut String, differs: bool) {
    s.push_str(if differs {
        "<td class=\"differs\">&#10007; DIFFERS</td>"
    } else {
        "<td class=\"ok\">&#10003; same</td>"
    });
}
