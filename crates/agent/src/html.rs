//! The page `/` serves a person: node, sources' health, open findings with evidence and
//! remediation. Self-contained: no scripts, no external assets.

use std::fmt::Write as _;

use super::http::{FindingsReport, Readiness};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders the page.
pub fn page(node: &str, ready: &Readiness, findings: &FindingsReport) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>podcoroner: {n}</title>\
         <style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}}\
         .critical{{color:#a00}}.warning{{color:#a60}}.info{{color:#056}}.bad{{color:#a00}}.good{{color:#070}}\
         code{{font-size:.9em;word-break:break-all}}</style></head><body>\
         <h1>podcoroner on node <code>{n}</code></h1>",
        n = esc(node)
    );
    let _ = write!(
        o,
        "<h2>Sources: <span class=\"{}\">{}</span></h2><table><tr><th>source</th><th>state</th><th>since</th><th>detail</th></tr>",
        if ready.ready { "good" } else { "bad" },
        if ready.ready { "ready" } else { "NOT ready" }
    );
    for (name, h) in &ready.sources {
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            if h.healthy { "good" } else { "bad" },
            if h.healthy { "healthy" } else { "failing" },
            h.since,
            esc(h
                .last_error
                .as_deref()
                .or(h.detail.as_deref())
                .unwrap_or(""))
        );
    }
    let s = &findings.summary;
    let _ = write!(
        o,
        "</table><h2>Open findings: {} critical, {} warning, {} info</h2>",
        s.critical, s.warning, s.info
    );
    if findings.findings.is_empty() {
        o.push_str("<p>None.</p>");
    }
    for t in &findings.findings {
        let f = &t.tracked.finding;
        let pod = f.pod.as_ref().map_or(String::new(), |p| {
            if p.name.is_empty() {
                format!("pod uid {}", p.uid)
            } else {
                format!("{}/{}", p.namespace, p.name)
            }
        });
        let _ = write!(
            o,
            "<section><h3 class=\"{sev}\">{sev}: {kind} <small>{pod}</small></h3><p>{summary}</p>\
             <p><small>first seen {first}, last seen {last}</small></p><ul>",
            sev = f.severity.as_str(),
            kind = esc(&f.kind),
            pod = esc(&pod),
            summary = esc(&f.summary),
            first = t.tracked.first_seen,
            last = t.tracked.last_seen
        );
        for e in &f.evidence {
            let _ = write!(
                o,
                "<li>[{}] <code>{}</code></li>",
                esc(&e.source),
                esc(&e.detail)
            );
        }
        let _ = write!(
            o,
            "</ul><p><b>Kubelet:</b> {}</p><p><b>Fix:</b> <code>{}</code></p></section>",
            esc(&f.kubelet_rule),
            esc(&f.remediation)
        );
    }
    o.push_str("</body></html>\n");
    o
}
