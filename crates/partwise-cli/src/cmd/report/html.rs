//! The report as one self-contained HTML page drawn from
//! [`super::model::Model`]: inline CSS, inline SVG and one line of script
//! (opening every `<details>` to print), nothing fetched. Every user string
//! (keys, topic, group and member names, patterns) passes through [`esc`].
//! Big tables are plain tables in `<details>`: no per-cell script, so a
//! 1,000 x 1,000 report stays fast.

use super::model::{Matrix, Model, Placement, Verdict, MAX_MATRIX_ROWS};
use crate::output::key_cell;
use crate::render::html::escape as esc;
use crate::render::svg::load_svg;
use partwise::assign::Colocation;
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
    if !m.maps.is_empty() {
        sections.push(("layout", "Layout"));
    }
    if !m.placements.is_empty() {
        sections.push(("placement", "Placement"));
    }
    if !m.skew.is_empty() {
        sections.push(("skew", "Skew"));
    }
    if !m.resize.is_empty() {
        sections.push(("resize", "Resize"));
    }
    if !m.redis.is_empty() {
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
    if m.maps.is_empty() {
        return;
    }
    open_section(s, "layout", "Layout: where the sample keys land");
    for (i, (pm, g)) in m.maps.iter().zip(&m.check.groups).enumerate() {
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

fn placement(s: &mut String, m: &Model) {
    if m.placements.is_empty() {
        return;
    }
    open_section(
        s,
        "placement",
        "Placement: which member reads partition p of each topic",
    );
    for (i, p) in m.placements.iter().enumerate() {
        one_placement(s, i, p);
    }
    s.push_str("</section>\n");
}

fn one_placement(s: &mut String, i: usize, p: &Placement) {
    let v = &p.verdict;
    let title = format!(
        "Consumer group {} ({}) on {}: {}",
        esc(&v.consumer_group),
        v.assignor,
        esc(&v.copartition),
        match v.kind() {
            None => "units whole",
            Some("counts-differ") => "PARTITION COUNTS DIFFER",
            Some(_) => "UNITS SPLIT",
        }
    );
    sub_section(s, &format!("placement-{i}"), &title);
    if !v.unsubscribed.is_empty() {
        let _ = writeln!(
            s,
            "<p><strong>&#10007; Does not subscribe to {}</strong>: those partitions are never in its members' hands.</p>",
            esc(&v.unsubscribed.join(", "))
        );
    }
    if let Some(f) = &v.fix {
        let _ = write!(s, "<p><strong>Fix:</strong> {}", esc(&f.advice));
        if !f.assignors.is_empty() {
            let specs: Vec<&str> = f.assignors.iter().map(|a| a.spec()).collect();
            let _ = write!(
                s,
                " (assignors that keep units whole: {})",
                specs.join(", ")
            );
        }
        s.push_str("</p>\n");
        if f.realign.is_some() {
            s.push_str("<ol>\n");
            for line in f.lines().iter().skip(1) {
                let _ = writeln!(s, "<li>{}</li>", esc(line));
            }
            s.push_str("</ol>\n");
        }
    }
    if let Some(c) = &v.cut {
        let _ = writeln!(s, "<p><strong>Cut short:</strong> {}.</p>", esc(&c.note()));
    }
    for mx in &p.matrices {
        matrix(s, p, mx);
    }
    // The sweep: every assignor at every member count.
    let rows = p.sweep.len();
    open_table(
        s,
        rows,
        "Split partition indices by assignor and member count (0: units whole)",
    );
    s.push_str("<thead><tr><th scope=\"col\">Assignor</th>");
    for c in &p.sweep_counts {
        let _ = write!(
            s,
            "<th scope=\"col\">{c} member{}</th>",
            if *c == 1 { "" } else { "s" }
        );
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in &p.sweep {
        let declared = row.assignor == v.assignor;
        let _ = write!(
            s,
            "<tr><th scope=\"row\">{}{}</th>",
            row.assignor.spec(),
            if declared { " (declared)" } else { "" }
        );
        for c in &row.counts {
            let Some(c) = c else {
                s.push_str("<td>not run</td>");
                continue;
            };
            match &c.error {
                Some(e) => {
                    let _ = write!(s, "<td title=\"{}\">error</td>", esc(e));
                }
                None if c.split_count == 0 => s.push_str("<td class=\"ok\">0</td>"),
                None => {
                    let _ = write!(s, "<td class=\"split\">&#10007; {}</td>", c.split_count);
                }
            }
        }
        s.push_str("</tr>\n");
    }
    close_table(s, rows);
    s.push_str("</section>\n");
}

fn matrix(s: &mut String, p: &Placement, mx: &Matrix) {
    let v = &p.verdict;
    match &mx.colocation {
        Err(e) => {
            let _ = writeln!(
                s,
                "<p>The assignor could not run at {} members: {}</p>",
                mx.members.len(),
                esc(e)
            );
        }
        Ok(co) => {
            let rows = co.owners.len();
            let _ =
                writeln!(
                s,
                "<p>{} {} members, {} of {rows} partition indices are split across members.</p>",
                if mx.declared { "As declared, at" } else { "Not declared, but at" },
                mx.members.len(),
                co.split.len()
            );
            let columns: Vec<(&str, u32)> = p
                .unit_topics
                .iter()
                .map(|&t| (p.topics[t as usize].0.as_str(), p.topics[t as usize].1))
                .collect();
            colocation_table(
                s,
                &format!(
                    "Co-location at {} members ({}): the member that owns each partition index",
                    mx.members.len(),
                    v.assignor
                ),
                &columns,
                co,
                &|m| mx.members[m].clone(),
            );
        }
    }
}

/// Member names longer than this (longer than the ids Kafka generates) are
/// shown in a matrix cell by number (`#3`), and named once under the table:
/// a name repeated in every cell would make the page as many times its
/// length as the matrix has cells.
const MAX_CELL_NAME: usize = 64;

/// A co-location matrix: a row per partition index (the first
/// [`MAX_MATRIX_ROWS`], the rest counted), the owner of that partition of
/// each of `columns` (topic, partition count), split rows marked in words
/// and by pattern.
fn colocation_table(
    s: &mut String,
    caption: &str,
    columns: &[(&str, u32)],
    co: &Colocation,
    member: &dyn Fn(usize) -> String,
) {
    let rows = co.owners.len().min(MAX_MATRIX_ROWS);
    let mut numbered = std::collections::BTreeMap::new();
    open_table(s, rows, caption);
    s.push_str("<thead><tr><th scope=\"col\">Index</th>");
    for (t, _) in columns {
        let _ = write!(s, "<th scope=\"col\">{}</th>", esc(t));
    }
    s.push_str("<th scope=\"col\">Co-located</th></tr></thead>\n<tbody>\n");
    for (idx, owners) in co.owners.iter().enumerate().take(rows) {
        let split = co.split.binary_search(&(idx as u32)).is_ok();
        let cls = if split { " class=\"split\"" } else { "" };
        let _ = write!(s, "<tr><th scope=\"row\">{idx}</th>");
        for ((_, n), o) in columns.iter().zip(owners) {
            if (idx as u32) >= *n {
                s.push_str("<td></td>");
                continue;
            }
            match o {
                Some(m) => {
                    let name = member(*m);
                    if name.len() > MAX_CELL_NAME {
                        let _ = write!(s, "<td{cls}>#{m}</td>");
                        numbered.entry(*m).or_insert(name);
                    } else {
                        let _ = write!(s, "<td{cls}>{}</td>", esc(&name));
                    }
                }
                None => {
                    let _ = write!(s, "<td{cls}>(none)</td>");
                }
            }
        }
        if split {
            s.push_str("<td class=\"split\">&#10007; SPLIT</td></tr>\n");
        } else {
            s.push_str("<td class=\"ok\">&#10003; yes</td></tr>\n");
        }
    }
    close_table(s, rows);
    if !numbered.is_empty() {
        s.push_str("<p>Members shown by number:");
        for (m, name) in &numbered {
            let _ = write!(s, " #{m} {};", esc(name));
        }
        s.push_str("</p>\n");
    }
    let more = co.owners.len() - rows;
    if more > 0 {
        let split = co.split.len() - co.split.partition_point(|&p| (p as usize) < rows);
        let _ = writeln!(
            s,
            "<p>{more} more partition indices not shown ({split} of them split).</p>"
        );
    }
}

fn share(part: u64, whole: u64) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole.max(1) as f64)
}

fn skew(s: &mut String, m: &Model) {
    if m.skew.is_empty() {
        return;
    }
    open_section(
        s,
        "skew",
        if m.weighted() {
            "Skew: records of the counted keys per partition"
        } else {
            "Sample keys per partition (the load is unknown without --counts)"
        },
    );
    if let Some(w) = &m.live_weights {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(&w.to_string()));
    }
    for (i, t) in m.skew.iter().enumerate() {
        let stats = &t.report.stats;
        let title = format!(
            "Topic {} ({} partitions, {}): {}",
            esc(&t.topic),
            t.partitions,
            t.partitioner.spec(),
            if !t.weighted {
                "load unknown".to_string()
            } else if stats.hot_partitions.is_empty() {
                "no hot partition".to_string()
            } else {
                format!("{} hot", stats.hot_partitions.len())
            }
        );
        let id = format!("skew-{i}");
        sub_section(s, &id, &title);
        if !t.weighted {
            let _ = writeln!(
                s,
                "<p class=\"note\">These are {} sample keys, each counted once: how many keys land on each partition, not how much traffic. No partition is called hot from them. Give the keys with their counts (<code>--counts</code>, a file of <code>KEY,COUNT</code> lines, instead of <code>-i</code>) to see the load.</p>",
                t.tally.lines
            );
        }
        if t.weighted {
            let _ = writeln!(
                s,
                "<p>{} keys, total load {}: max/mean {:.2}, cv {:.3}, gini {:.3}. Hot partitions (above {} x mean): <strong class=\"hot-list\">{}</strong>. Idle: {}.</p>",
                t.tally.lines,
                t.report.total,
                stats.max_over_mean,
                stats.cv,
                stats.gini,
                partwise::traffic::skew::HOT_FACTOR,
                if stats.hot_partitions.is_empty() { "none".to_string() } else { stats.hot_partitions.iter().map(|p| format!("HOT {p}")).collect::<Vec<_>>().join(", ") },
                if stats.idle_partitions.is_empty() { "none".to_string() } else { stats.idle_partitions.len().to_string() }
            );
        } else {
            let _ = writeln!(
                s,
                "<p>{} keys: at most {} on one partition ({:.2} x the mean), {} partitions without a sample key.</p>",
                t.tally.lines,
                stats.max,
                stats.max_over_mean,
                stats.idle_partitions.len()
            );
        }
        s.push_str(&load_svg(
            &t.tally.loads,
            stats,
            &if t.weighted {
                format!("{}: records per partition", t.topic)
            } else {
                format!("{}: sample keys per partition (not traffic)", t.topic)
            },
            Some(&format!("{id}-chart")),
        ));
        let rows = t.tally.loads.len();
        open_table(
            s,
            rows,
            &format!(
                "{} per partition of {}",
                if t.weighted { "Load" } else { "Sample keys" },
                esc(&t.topic)
            ),
        );
        let _ = writeln!(
            s,
            "<thead><tr><th scope=\"col\">Partition</th><th scope=\"col\">{}</th><th scope=\"col\">Share</th><th scope=\"col\">State</th></tr></thead>\n<tbody>",
            if t.weighted { "Records" } else { "Sample keys" }
        );
        for (p, &l) in t.tally.loads.iter().enumerate() {
            let hot = stats.hot_partitions.contains(&(p as u32));
            let (cls, mark) = if hot {
                (" class=\"hot\"", "&#9650; HOT")
            } else if l == 0 {
                (" class=\"idle\"", "idle")
            } else {
                ("", "")
            };
            let _ = writeln!(
                s,
                "<tr><th scope=\"row\">{p}</th><td>{l}</td><td>{}</td><td{cls}>{mark}</td></tr>",
                share(l, t.report.total)
            );
        }
        close_table(s, rows);
        // Keys counted once each are no heavier than one another.
        let rows = if t.weighted { t.report.heavy.len() } else { 0 };
        if rows > 0 {
            open_table(
                s,
                rows,
                &format!(
                    "Heavy hitters of {} (estimates at most {} below the true count)",
                    esc(&t.topic),
                    t.report.error_bound
                ),
            );
            s.push_str("<thead><tr><th scope=\"col\">Key</th><th scope=\"col\">Estimate</th><th scope=\"col\">Share</th><th scope=\"col\">Partition</th></tr></thead>\n<tbody>\n");
            for h in &t.report.heavy {
                let _ = writeln!(
                    s,
                    "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td></tr>",
                    key(&h.hitter.key),
                    h.hitter.estimate,
                    share(h.hitter.estimate, t.report.total),
                    h.partition.map_or("-".into(), |p| p.to_string())
                );
            }
            close_table(s, rows);
        }
        if let (Some(cs), Some(g)) = (&t.report.consumers, &t.consumer_group) {
            let rows = cs.members.len();
            open_table(
                s,
                rows,
                &format!(
                    "Consumer shares of {} in group {} ({}, {} members){}",
                    esc(&t.topic),
                    esc(g),
                    t.assignor.spec(),
                    rows,
                    if t.weighted {
                        ", of records"
                    } else {
                        ", of sample keys (not traffic)"
                    }
                ),
            );
            s.push_str("<thead><tr><th scope=\"col\">Member</th><th scope=\"col\">Partitions</th><th scope=\"col\">Share</th><th scope=\"col\">State</th></tr></thead>\n<tbody>\n");
            for c in &cs.members {
                let list: Vec<String> = c.partitions.iter().map(u32::to_string).collect();
                let _ = writeln!(
                    s,
                    "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td>{}</tr>",
                    esc(&c.member),
                    list.join(", "),
                    share(c.load, t.report.total),
                    if c.load == 0 {
                        "<td class=\"idle\">idle</td>"
                    } else {
                        "<td></td>"
                    }
                );
            }
            close_table(s, rows);
        }
        s.push_str("<p class=\"note\">Lag forecast: the topology file declares no produce or consume rates; <code>partwise skew --rate-mbps --consume-mbps-per-partition</code> forecasts it.</p>\n</section>\n");
    }
    s.push_str("</section>\n");
}

fn resize(s: &mut String, m: &Model) {
    if m.resize.is_empty() {
        return;
    }
    open_section(
        s,
        "resize",
        "Resize: what nearby partition counts would move",
    );
    for r in &m.resize {
        let rows = r.to.len();
        open_table(
            s,
            rows,
            &format!(
                "Resizing {} from {} partitions ({})",
                esc(&r.topic),
                r.from,
                r.partitioner.spec()
            ),
        );
        let _ = writeln!(
            s,
            "<thead><tr><th scope=\"col\">To</th><th scope=\"col\">Keys that move (expected)</th><th scope=\"col\">Sample keys that move</th>{}<th scope=\"col\">Fixes</th></tr></thead>\n<tbody>",
            if m.weighted() { "<th scope=\"col\">Records that move</th>" } else { "" }
        );
        for (n, plan, moved) in &r.to {
            let records = match plan.measured.filter(|_| m.weighted()) {
                Some(x) => format!(
                    "<td>{} of {} ({:.1}%)</td>",
                    x.records_moved,
                    x.records,
                    x.records_share().unwrap_or(0.0) * 100.0
                ),
                None => String::new(),
            };
            let expected = plan.expected.map_or("all (keys ignored)".to_string(), |f| {
                format!("{}/{} = {:.1}%", f.moved, f.period, f.value() * 100.0)
            });
            let fixes: String = if plan.fixes.is_empty() {
                "none needed".to_string()
            } else {
                let items: Vec<String> = plan
                    .fixes
                    .iter()
                    .map(|f| format!("<li>{}</li>", esc(&f.to_string())))
                    .collect();
                format!("<ul class=\"fixes\">{}</ul>", items.concat())
            };
            let _ = writeln!(
                s,
                "<tr><th scope=\"row\">{n}</th><td>{expected}</td><td>{moved} of {}</td>{records}<td>{}</td></tr>",
                m.samples.len(),
                fixes
            );
        }
        close_table(s, rows);
    }
    s.push_str("</section>\n");
}

fn redis(s: &mut String, m: &Model) {
    if m.redis.is_empty() {
        return;
    }
    open_section(s, "redis", "Redis: the slot of each key family");
    for (i, (f, v)) in m.redis.iter().zip(&m.check.families).enumerate() {
        let title = format!(
            "Family {} ({}): {}",
            esc(&f.name),
            esc(&f.patterns.join(", ")),
            if v.ok() {
                "co-located"
            } else {
                "NOT co-located"
            }
        );
        sub_section(s, &format!("redis-{i}"), &title);
        if v.shared_hash_tag {
            if let Some(Some(tag)) = v.hash_tags.first() {
                let _ = writeln!(s, "<p>Shared hash tag <code>{{{}}}</code>.</p>", esc(tag));
            }
        }
        findings(
            s,
            v.reasons
                .iter()
                .map(|r| (r.to_string(), r.fix().to_string())),
        );
        let rows = f.rows.len();
        if rows > 0 {
            open_table(
                s,
                rows,
                &format!("Slot of each sample key's members of {}", esc(&f.name)),
            );
            s.push_str("<thead><tr><th scope=\"col\">Key</th>");
            for p in &f.patterns {
                let _ = write!(s, "<th scope=\"col\">{}</th>", esc(p));
            }
            s.push_str("<th scope=\"col\">One slot</th></tr></thead>\n<tbody>\n");
            for (r, slots) in f.rows.iter().enumerate() {
                let _ = write!(s, "<tr><th scope=\"row\">{}</th>", key(&m.samples[r]));
                for slot in slots {
                    let _ = write!(s, "<td>{slot}</td>");
                }
                if slots.windows(2).all(|w| w[0] == w[1]) {
                    s.push_str("<td class=\"ok\">&#10003; yes</td>");
                } else {
                    s.push_str("<td class=\"differs\">&#10007; SPLIT</td>");
                }
                s.push_str("</tr>\n");
            }
            close_table(s, rows);
            let shown_split = f
                .rows
                .iter()
                .filter(|slots| !slots.windows(2).all(|w| w[0] == w[1]))
                .count();
            let split = v.colocated.map_or(0, |a| a.keys - a.aligned);
            omitted_note(
                s,
                m.keys_omitted(),
                split.saturating_sub(shown_split),
                "in more than one slot",
            );
        }
        s.push_str("<p class=\"note\">The node of each slot needs a live cluster: <code>partwise redis check -c NODE</code>.</p>\n</section>\n");
    }
    s.push_str("</section>\n");
}

fn same_or_differs(s: &mut String, differs: bool) {
    s.push_str(if differs {
        "<td class=\"differs\">&#10007; DIFFERS</td>"
    } else {
        "<td class=\"ok\">&#10003; same</td>"
    });
}

fn live(s: &mut String, m: &Model) {
    if m.live_kafka.is_none() && m.live_redis.is_none() {
        return;
    }
    open_section(s, "live", "Live: the clusters beside the declaration");
    if let Some(k) = &m.live_kafka {
        for (i, (g, r)) in k.audits.iter().enumerate() {
            sub_section(
                s,
                &format!("live-kafka-{i}"),
                &format!("Co-partition group {} on the cluster", esc(g)),
            );
            match r {
                Err(e) => {
                    let _ = writeln!(
                        s,
                        "<p><strong>&#10007; The audit failed:</strong> {}</p>",
                        esc(e)
                    );
                }
                Ok(r) => {
                    let topics = m.topics_live(r);
                    let rows = topics.len();
                    open_table(s, rows, &format!("Declared and live topics of {}", esc(g)));
                    s.push_str("<thead><tr><th scope=\"col\">Topic</th><th scope=\"col\">Declared partitions</th><th scope=\"col\">Live partitions</th><th scope=\"col\">Declared partitioner</th><th scope=\"col\">Written by (from sampled records)</th><th scope=\"col\">Live against declared</th></tr></thead>\n<tbody>\n");
                    for t in &topics {
                        let _ = write!(
                            s,
                            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                            esc(&t.name),
                            t.declared.map_or("-".into(), |n| n.to_string()),
                            t.live.map_or("missing".into(), |n| n.to_string()),
                            t.partitioner.map_or("-", |p| p.spec()),
                            if t.inferred.is_empty() { "-".to_string() } else { esc(&t.inferred.join(", ")) }
                        );
                        same_or_differs(s, !t.differences.is_empty());
                        s.push_str("</tr>\n");
                    }
                    close_table(s, rows);
                    let mut items: Vec<(String, String)> = topics
                        .iter()
                        .flat_map(|t| t.differences.iter().map(|d| (d.to_string(), d.fix())))
                        .collect();
                    if let Some(v) = &r.verdict {
                        items.extend(
                            v.findings
                                .iter()
                                .map(|f| (f.to_string(), f.fix().to_string())),
                        );
                        if v.copartitioned {
                            s.push_str("<p>&#10003; The sampled records say the topics are co-partitioned.</p>\n");
                        }
                    }
                    findings(s, items.into_iter());
                }
            }
            s.push_str("</section>\n");
        }
        for (i, ((g, r), model)) in k.groups.iter().zip(&k.server_models).enumerate() {
            sub_section(
                s,
                &format!("live-group-{i}"),
                &format!("Consumer group {} on the cluster", esc(g)),
            );
            if let Some(bm) = model {
                let declared = m
                    .declared
                    .consumer_groups
                    .iter()
                    .find(|c| &c.name == g)
                    .map_or("-", |c| c.assignor.as_str());
                let text = match (bm.assignor, bm.assignor.and_then(|a| a.kafka_versions())) {
                    (Some(a), Some(v)) => format!(
                        "Server assignor model: {} (Kafka {v}), the broker's release ({}).",
                        a.spec(),
                        bm.evidence
                    ),
                    (Some(a), None) => format!(
                        "Server assignor model: {}, the broker's release ({}).",
                        a.spec(),
                        bm.evidence
                    ),
                    (None, _) => format!(
                        "Server assignor model: undecided ({}); the prediction uses {declared} as declared.",
                        bm.evidence
                    ),
                };
                let _ = writeln!(s, "<p>{}</p>", esc(&text));
            }
            match r {
                Err(e) => {
                    let _ = writeln!(s, "<p><strong>&#10007;</strong> {}</p>", esc(e));
                }
                Ok((d, a)) => {
                    let declared = m.declared.consumer_groups.iter().find(|c| &c.name == g);
                    let _ = writeln!(
                        s,
                        "<p>State {}, {} protocol, assignor {}; {} live members (declared: {}).{}</p>",
                        esc(if d.state.is_empty() { "unknown" } else { &d.state }),
                        esc(&d.group_protocol),
                        esc(if d.protocol.is_empty() { "-" } else { &d.protocol }),
                        d.members.len(),
                        declared.map_or("-".to_string(), |c| match &c.members {
                            partwise::topology::Members::Count(n) => n.to_string(),
                            partwise::topology::Members::Ids(ids) => ids.len().to_string(),
                            partwise::topology::Members::Range(lo, hi) => format!("{lo}..{hi}"),
                        }),
                        match a.matches_live {
                            Some(true) => " &#10003; The live assignment is what the declared assignor gives these members.",
                            Some(false) => " <strong>&#10007; The live assignment is not what the declared assignor gives these members.</strong>",
                            None => "",
                        }
                    );
                    if let Some(view) = &a.live {
                        for set in &view.sets {
                            let columns: Vec<(&str, u32)> = set
                                .topics
                                .iter()
                                .map(|t| {
                                    let n = view
                                        .group
                                        .topics
                                        .iter()
                                        .find(|x| &x.name == t)
                                        .map_or(0, |x| x.partitions);
                                    (t.as_str(), n)
                                })
                                .collect();
                            colocation_table(
                                s,
                                &format!(
                                    "Live co-location of {} in {}",
                                    esc(&set.topics.join(", ")),
                                    esc(g)
                                ),
                                &columns,
                                &set.colocation,
                                &|o| view.group.members[o].id.clone(),
                            );
                        }
                    }
                }
            }
            s.push_str("</section>\n");
        }
    }
    if let Some(k) = &m.live_kafka {
        for (i, r) in k.streams.iter().enumerate() {
            let g = &r.group;
            sub_section(
                s,
                &format!("live-streams-{i}"),
                &format!("Streams group {} on the cluster", esc(&g.group)),
            );
            let _ = writeln!(
                s,
                "<p>State {}, streams protocol, group epoch {}, {} members.</p>",
                esc(&g.state),
                g.group_epoch,
                g.members.len()
            );
            if !r.tasks.is_empty() {
                open_table(
                    s,
                    r.tasks.len(),
                    &format!("Active tasks of {}", esc(&g.group)),
                );
                s.push_str("<thead><tr><th scope=\"col\">Task</th><th scope=\"col\">Member</th><th scope=\"col\">Partitions held</th><th scope=\"col\">Missing</th></tr></thead>\n<tbody>\n");
                for t in &r.tasks {
                    let held: Vec<String> =
                        t.holds.iter().map(|(x, p)| format!("{x}[{p}]")).collect();
                    let _ = writeln!(
                        s,
                        "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td></tr>",
                        esc(&t.task.to_string()),
                        esc(&t.member_id),
                        esc(&held.join(", ")),
                        esc(&if t.missing.is_empty() {
                            "-".to_string()
                        } else {
                            t.missing.join(", ")
                        })
                    );
                }
                close_table(s, r.tasks.len());
            }
            findings(
                s,
                r.findings
                    .iter()
                    .map(|f| (f.message.clone(), f.fix.clone())),
            );
            s.push_str("</section>\n");
        }
        cluster_groups(s, &k.listing);
    }
    if let Some(r) = &m.live_redis {
        redis_load(s, r);
        for (i, (f, c)) in m
            .declared
            .redis_families
            .iter()
            .zip(&r.families)
            .enumerate()
        {
            sub_section(
                s,
                &format!("live-redis-{i}"),
                &format!("Family {} on the cluster at {}", esc(&f.name), esc(&r.seed)),
            );
            let rows = c.keys.len();
            if rows > 0 {
                open_table(
                    s,
                    rows,
                    &format!(
                        "Slot and node of each sample key's members of {}",
                        esc(&f.name)
                    ),
                );
                s.push_str("<thead><tr><th scope=\"col\">Key</th>");
                for p in &f.patterns {
                    let _ = write!(s, "<th scope=\"col\">{}</th>", esc(p));
                }
                s.push_str("<th scope=\"col\">One slot</th><th scope=\"col\">One node</th></tr></thead>\n<tbody>\n");
                for k in &c.keys {
                    let _ = write!(s, "<tr><th scope=\"row\">{}</th>", key(&k.key));
                    for mem in &k.members {
                        let node = mem
                            .node
                            .as_ref()
                            .map_or_else(|| "no node".to_string(), ToString::to_string);
                        let _ = write!(
                            s,
                            "<td>{} @ {}{}</td>",
                            mem.slot,
                            esc(&node),
                            if mem.live_slot.is_some() {
                                ""
                            } else {
                                " (unverified)"
                            }
                        );
                    }
                    same_or_differs(s, !k.co_located());
                    same_or_differs(s, !k.same_node());
                    s.push_str("</tr>\n");
                }
                close_table(s, rows);
            }
            if let Some((hot, unsampled)) = r.hot.get(i) {
                redis_hot(s, r, f, hot, unsampled);
            }
            findings(
                s,
                c.errors.iter().map(|e| {
                    (
                        e.to_string(),
                        "check that node (partwise redis slots -c NODE)".to_string(),
                    )
                }),
            );
            s.push_str("</section>\n");
        }
    }
    s.push_str("</section>\n");
}

/// Each primary's share of the cluster's load, with the measure and why.
/// Every group of the cluster with its type (ListGroups), the declared and
/// described ones marked.
fn cluster_groups(s: &mut String, l: &super::live::Listing) {
    sub_section(s, "live-groups", "Groups on the cluster");
    let l = match l {
        super::live::Listing::Failed { error } => {
            let _ = writeln!(
                s,
                "<p><strong>&#10007; The groups could not be listed:</strong> {}</p>\n</section>",
                esc(error)
            );
            return;
        }
        super::live::Listing::Listed(l) => l,
    };
    let mut by_type: Vec<(&str, usize)> = Vec::new();
    for g in &l.groups {
        match by_type.iter_mut().find(|(t, _)| *t == g.group_type) {
            Some((_, n)) => *n += 1,
            None => by_type.push((&g.group_type, 1)),
        }
    }
    let counts: Vec<String> = by_type.iter().map(|(t, n)| format!("{n} {t}")).collect();
    let _ = writeln!(
        s,
        "<p>{} groups{}. A streams group is described above when the file declares it or it reads a topic of the file.</p>",
        l.groups.len(),
        if counts.is_empty() { String::new() } else { format!(": {}", esc(&counts.join(", "))) }
    );
    if let Some(why) = &l.types_unknown {
        let _ = writeln!(s, "<p>{}</p>", esc(why));
    }
    if !l.groups.is_empty() {
        open_table(s, l.groups.len(), "Groups on the cluster");
        s.push_str("<thead><tr><th scope=\"col\">Group</th><th scope=\"col\">Type</th><th scope=\"col\">State</th><th scope=\"col\">Declared</th><th scope=\"col\">Described</th></tr></thead>\n<tbody>\n");
        for g in &l.groups {
            let _ = writeln!(
                s,
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&g.group),
                esc(&g.group_type),
                esc(g.state.as_deref().unwrap_or("-")),
                if g.declared { "yes" } else { "no" },
                match &g.error {
                    Some(e) => format!("could not be: {}", esc(e)),
                    None if g.described => "yes".to_string(),
                    None => "no".to_string(),
                }
            );
        }
        close_table(s, l.groups.len());
    }
    s.push_str("</section>\n");
}

fn redis_load(s: &mut String, r: &super::live::LiveRedis) {
    let l = &r.load;
    sub_section(
        s,
        "live-redis-load",
        &format!("Load per primary of the cluster at {}", esc(&r.seed)),
    );
    let _ = writeln!(
        s,
        "<p>By {}: {}.</p>",
        esc(l.measure.unit()),
        esc(&l.reason)
    );
    let rows = l.nodes.len();
    if rows > 0 {
        open_table(s, rows, "Load per primary");
        let _ = writeln!(
            s,
            "<thead><tr><th scope=\"col\">Node</th><th scope=\"col\">Server</th><th scope=\"col\">{}</th><th scope=\"col\">Share</th><th scope=\"col\">Slots</th></tr></thead>\n<tbody>",
            esc(l.measure.unit())
        );
        for n in &l.nodes {
            let _ = writeln!(
                s,
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td></tr>",
                esc(&n.node.to_string()),
                esc(&n.server),
                n.load,
                100.0 * n.share,
                n.slots_owned
            );
        }
        close_table(s, rows);
    }
    s.push_str("</section>\n");
}

/// The hot tags among a family's keys, by the cluster's measure.
fn redis_hot(
    s: &mut String,
    r: &super::live::LiveRedis,
    f: &partwise::topology::RedisFamily,
    hot: &[partwise_redis::HotTag],
    unsampled: &[String],
) {
    let unit = esc(r.load.measure.unit());
    let of = f.patterns.first().map_or(String::new(), |p| esc(p));
    if hot.is_empty() {
        let _ = writeln!(
            s,
            "<p>No hot tag by {unit} among the keys of <code>{of}</code> (as <code>redis hot</code> judges: {}).</p>",
            esc(&r.load.reason)
        );
    } else {
        let list: Vec<String> = hot
            .iter()
            .map(|t| {
                format!(
                    "<strong>{{{}}}</strong> on {} ({:.1}% of its node, {:.1}% of the cluster)",
                    key(&t.tag),
                    esc(&t.node.to_string()),
                    100.0 * t.node_share,
                    100.0 * t.cluster_share
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "<p>Hot tags by {unit} among the keys of <code>{of}</code>: {}. Spread each one's keys over more tags unless they must share a slot ({}).</p>",
            list.join(", "),
            esc(&r.load.reason)
        );
    }
    for u in unsampled {
        let _ = writeln!(s, "<p class=\"note\">Not sampled: {}</p>", esc(u));
    }
}
