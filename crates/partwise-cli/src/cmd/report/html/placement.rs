//! The report's placement section: each co-partition group's placement by
//! its assignor, and the co-location matrices.

use super::*;

pub(super) fn placement(s: &mut String, m: &Model) {
    if m.topology.placements.is_empty() {
        return;
    }
    open_section(
        s,
        "placement",
        "Placement: which member reads partition p of each topic",
    );
    for (i, p) in m.topology.placements.iter().enumerate() {
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
pub(super) fn colocation_table(
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
