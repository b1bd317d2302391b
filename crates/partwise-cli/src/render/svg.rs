//! The bar chart of partition loads, as SVG: `skew --plot`'s file and the
//! chart of `report`'s page.

use partwise::traffic::skew::SkewStats;

/// The bar chart of partition loads: `--plot`'s file, and (with `inline`,
/// an id prefix unique in the page) the chart of `report`'s page. Hot bars
/// are hatched and labelled as well as red, so the chart reads without colour.
pub fn load_svg(loads: &[u64], stats: &SkewStats, title: &str, inline: Option<&str>) -> String {
    let (w, h, pad) = (900.0, 360.0, 40.0);
    let n = loads.len().max(1) as f64;
    let max = stats.max.max(1) as f64;
    let bw = (w - 2.0 * pad) / n;
    // Invisible characters escaped as the tables show them (and C0
    // controls are not even allowed in XML 1.0), by the one escaper.
    let esc = super::html::escape;
    let id = inline.unwrap_or("plot");
    let open = match inline {
        // In a page the SVG namespace is implied, and the chart is one image
        // named by its title for screen readers.
        Some(_) => format!(
            "<svg class=\"chart\" role=\"img\" aria-labelledby=\"{id}-title\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n<title id=\"{id}-title\">{}</title>\n",
            esc(title)
        ),
        None => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n"
        ),
    };
    let mut s = format!(
        "{open}<defs><pattern id=\"{id}-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><path d=\"M0 0H6V6H0Z\" fill=\"#d62728\"/><path d=\"M0 0V6\" stroke=\"#fff\" stroke-width=\"2\"/></pattern></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{pad}\" y=\"24\" font-family=\"sans-serif\" font-size=\"14\">{}</text>\n",
        esc(title)
    );
    for (p, &l) in loads.iter().enumerate() {
        let bh = (h - 2.0 * pad) * l as f64 / max;
        let hot = stats.hot_partitions.contains(&(p as u32));
        s.push_str(&format!(
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{}\"><title>partition {p}: {l}{}</title></rect>\n",
            pad + p as f64 * bw,
            h - pad - bh,
            (bw * 0.9).max(0.5),
            bh,
            if hot { format!("url(#{id}-hatch)") } else { "#1f77b4".to_string() },
            if hot { " (hot)" } else { "" }
        ));
    }
    // Labels only while they fit: past a few dozen they would overlap.
    if stats.hot_partitions.len() <= 24 {
        for &p in &stats.hot_partitions {
            let l = loads[p as usize];
            let bh = (h - 2.0 * pad) * l as f64 / max;
            s.push_str(&format!(
                "<text x=\"{:.2}\" y=\"{:.2}\" font-family=\"sans-serif\" font-size=\"11\" text-anchor=\"middle\">HOT {p}</text>\n",
                pad + (p as f64 + 0.45) * bw,
                (h - pad - bh - 4.0).max(36.0)
            ));
        }
    }
    let my = h - pad - (h - 2.0 * pad) * stats.mean / max;
    s.push_str(&format!(
        "<line x1=\"{pad}\" x2=\"{:.2}\" y1=\"{my:.2}\" y2=\"{my:.2}\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n<text x=\"{:.2}\" y=\"{:.2}\" font-family=\"sans-serif\" font-size=\"11\">mean</text>\n",
        w - pad,
        w - pad - 30.0,
        my - 4.0
    ));
    s.push_str(&format!(
        "<text x=\"{pad}\" y=\"{:.2}\" font-family=\"sans-serif\" font-size=\"11\">partitions 0..{} (hatched red: hot, above {} x mean)</text>\n</svg>\n",
        h - 12.0,
        loads.len().saturating_sub(1),
        partwise::traffic::skew::HOT_FACTOR
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::load_svg;
    use partwise::traffic::skew::SkewStats;

    /// The chart's title is a name from the command line (a topic, a file):
    /// every character that could end its text or attribute is escaped, the
    /// apostrophe as well, by the same escaper as the report's page.
    #[test]
    fn the_title_is_escaped_apostrophes_included() {
        let loads = [3, 1];
        let title = "O'Brien's \"keys\" <b>&</b>";
        for inline in [None, Some("chart-0")] {
            let svg = load_svg(&loads, &SkewStats::of(&loads), title, inline);
            assert!(
                svg.contains("O&#39;Brien&#39;s &quot;keys&quot; &lt;b&gt;&amp;&lt;/b&gt;"),
                "{svg}"
            );
            assert!(!svg.contains("O'Brien"), "{svg}");
        }
    }
}
