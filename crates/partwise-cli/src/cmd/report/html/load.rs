//! The report's load sections: each topic's skew (with its chart and heavy
//! keys) and what a partition-count change would move.

use super::*;

pub(super) fn skew(s: &mut String, m: &Model) {
    if m.topology.skew.is_empty() {
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
    for (i, t) in m.topology.skew.iter().enumerate() {
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

pub(super) fn resize(s: &mut String, m: &Model) {
    if m.topology.resize.is_empty() {
        return;
    }
    open_section(
        s,
        "resize",
        "Resize: what nearby partition counts would move",
    );
    for r in &m.topology.resize {
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
