//! The report's Redis and live sections: the Redis families' slots, and
//! what the cluster says (`report -b`, `--redis`): audits, groups, Redis
//! load and hot tags.

use super::*;

pub(super) fn redis(s: &mut String, m: &Model) {
    if m.topology.redis.is_empty() {
        return;
    }
    open_section(s, "redis", "Redis: the slot of each key family");
    for (i, (f, v)) in m
        .topology
        .redis
        .iter()
        .zip(&m.topology.check.families)
        .enumerate()
    {
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

pub(super) fn live(s: &mut String, m: &Model) {
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

/// Every group of the cluster with its type (ListGroups), the declared and
/// described ones marked.
fn cluster_groups(s: &mut String, l: &crate::ops::report::live::Listing) {
    use crate::ops::report::live::Listing;
    sub_section(s, "live-groups", "Groups on the cluster");
    let l = match l {
        Listing::Failed { error } => {
            let _ = writeln!(
                s,
                "<p><strong>&#10007; The groups could not be listed:</strong> {}</p>\n</section>",
                esc(error)
            );
            return;
        }
        Listing::Listed(l) => l,
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

/// Each primary's share of the cluster's load, with the measure and why.
fn redis_load(s: &mut String, r: &crate::ops::report::live::LiveRedis) {
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
    r: &crate::ops::report::live::LiveRedis,
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
