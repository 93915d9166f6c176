//! The HTML report: one self-contained page (inline style and script, no network), the
//! sessions ranked by waste, each loop on a timeline of its events with the guard's verdicts
//! and what the loop cost.

use crate::{ranked, LoopReport, Report, SessionReport, TimelineEvent, Wasted};
use loopguard::orchestrator::Action;
use std::fmt::Write as _;
use std::io::Write;

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#f7f8fa}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0}
.muted{color:#667085}.session{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:14px 16px;margin:14px 0}
.totals{display:flex;gap:24px;margin:12px 0 18px}.totals div{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:10px 14px}
.totals b{display:block;font-size:20px}
table{border-collapse:collapse;width:100%;background:#fff}td,th{border-bottom:1px solid #eceef2;padding:4px 8px;text-align:left}
th{font-weight:600;color:#475467}td.num{text-align:right;font-variant-numeric:tabular-nums}
.loop{border-left:4px solid #98a2b3;margin:12px 0 4px;padding:4px 10px}
.loop.steer{border-color:#f79009}.loop.block{border-color:#d92d20}.loop.abort{border-color:#7a2e8e}.loop.compact{border-color:#1570ef}
.strip{display:flex;gap:2px;align-items:flex-end;height:34px;margin:8px 0;overflow-x:auto}
.ev{width:10px;min-width:10px;height:18px;border-radius:2px;background:#d0d5dd}
.ev.call{background:#84adff}.ev.result{background:#b3e6c4}.ev.result.error{background:#fda29b}
.ev.user{background:#fedf89}.ev.assistant{background:#d9d6fe}.ev.compaction{background:#667085}
.ev.verdict{height:32px;width:6px;min-width:6px}.ev.verdict.steer{background:#f79009}.ev.verdict.block{background:#d92d20}
.ev.verdict.abort{background:#7a2e8e}.ev.verdict.compact{background:#1570ef}
.legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
details{margin-top:4px}code{font:12px ui-monospace,monospace;word-break:break-all}
"#;

/// The page's script: counts what it shows into the header, so that a reader (and the
/// rendering test) sees the page was laid out, and lets a click on a strip open its list.
const SCRIPT: &str = r#"
(function(){
  var loops=document.querySelectorAll('.loop').length;
  var sessions=document.querySelectorAll('.session').length;
  var s=document.getElementById('status');
  if(s){s.textContent=sessions+' sessions with loops, '+loops+' loops shown';s.setAttribute('data-rendered','yes');}
  document.querySelectorAll('.strip').forEach(function(st){
    st.addEventListener('click',function(){var d=st.parentNode.querySelector('details');if(d){d.open=!d.open;}});
  });
})();
"#;

/// Writes the HTML report.
pub fn write_html(out: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    let mut p = String::with_capacity(64 * 1024);
    page(&mut p, report);
    out.write_all(p.as_bytes())
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn usd(u: Option<f64>) -> String {
    u.map(|u| format!("${u:.2}"))
        .unwrap_or_else(|| "–".to_owned())
}

fn saved(w: &Wasted) -> String {
    format!(
        "{} tokens, {} lines{}",
        w.tokens,
        w.events,
        w.usd.map(|u| format!(", ${u:.2}")).unwrap_or_default()
    )
}

fn page(p: &mut String, r: &Report) {
    let with: Vec<&SessionReport> = ranked(r)
        .into_iter()
        .filter(|s| !s.findings.is_empty())
        .collect();
    let loops: usize = with.iter().map(|s| s.loops.len()).sum();
    let _ = write!(
        p,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>loopguard scan</title><style>{STYLE}</style></head><body>"
    );
    let _ = write!(
        p,
        "<h1>loopguard scan</h1><div class=\"muted\">preset <code>{}</code> · lines are 0-based · <span id=\"status\">{} sessions with loops, {} loops</span></div>",
        esc(&r.preset),
        with.len(),
        loops
    );
    let _ = write!(
        p,
        "<div class=\"totals\"><div><b>{}</b>sessions</div><div><b>{}</b>with loops</div><div><b>{}</b>loops</div><div><b>{}</b>tokens the guard would have saved</div><div><b>{}</b>saved</div></div>",
        r.summary.sessions,
        r.summary.sessions_with_findings,
        loops,
        r.summary.wasted.tokens,
        usd(r.summary.wasted.usd)
    );
    p.push_str("<div class=\"legend muted\"><span><i style=\"background:#84adff\"></i>call</span><span><i style=\"background:#b3e6c4\"></i>result</span><span><i style=\"background:#fda29b\"></i>error result</span><span><i style=\"background:#d9d6fe\"></i>assistant</span><span><i style=\"background:#fedf89\"></i>user</span><span><i style=\"background:#f79009\"></i>steer</span><span><i style=\"background:#d92d20\"></i>block</span><span><i style=\"background:#7a2e8e\"></i>abort</span></div>");
    p.push_str("<h2 style=\"margin-top:16px\">Sessions ranked by waste</h2><table><tr><th>#</th><th>session</th><th>format</th><th>loops</th><th class=\"num\">loop tokens</th><th class=\"num\">would have saved</th></tr>");
    for (i, s) in with.iter().enumerate() {
        let lt: u64 = s.loops.iter().map(|l| l.tokens).sum();
        let _ = write!(
            p,
            "<tr><td>{}</td><td><a href=\"#s{i}\"><code>{}</code></a></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{lt}</td><td class=\"num\">{}</td></tr>",
            i + 1,
            esc(&s.path),
            esc(s.format),
            s.loops.len(),
            esc(&saved(&s.wasted))
        );
    }
    p.push_str("</table>");
    if with.is_empty() {
        p.push_str("<p>No loops found.</p>");
    }
    for (i, s) in with.iter().enumerate() {
        session(p, i, s);
    }
    let _ = writeln!(p, "<script>{SCRIPT}</script></body></html>");
}

fn session(p: &mut String, i: usize, s: &SessionReport) {
    let model = s
        .model
        .as_deref()
        .map(|m| format!(" · {}", esc(m)))
        .unwrap_or_default();
    let _ = write!(
        p,
        "<div class=\"session\" id=\"s{i}\"><h2><code>{}</code></h2><div class=\"muted\">{}{model} · {} lines · would have saved {}</div>",
        esc(&s.path),
        esc(s.format),
        s.events,
        esc(&saved(&s.wasted))
    );
    for l in &s.loops {
        one_loop(p, l);
    }
    p.push_str("</div>");
}

fn action_class(a: Action) -> &'static str {
    a.as_str()
}

fn one_loop(p: &mut String, l: &LoopReport) {
    let tool = l
        .tool
        .as_deref()
        .map(|t| format!(", tool <code>{}</code>", esc(t)))
        .unwrap_or_default();
    let mut cost = format!("{} tokens of text", l.tokens);
    if let (Some(i), Some(o)) = (l.input_tokens, l.output_tokens) {
        let _ = write!(cost, ", {i} input / {o} output tokens");
    }
    if l.usd.is_some() {
        let _ = write!(cost, ", {}", usd(l.usd));
    }
    let _ = write!(
        p,
        "<div class=\"loop {}\" data-detector=\"{}\"><b>{}</b>{tool} · lines {}–{} · {} findings · guard: <b>{}</b> · cost: {}",
        action_class(l.action),
        esc(&l.detector),
        esc(&l.detector),
        l.lines[0],
        l.lines[1],
        l.findings,
        l.action.as_str(),
        esc(&cost)
    );
    p.push_str("<div class=\"strip\" title=\"click for the events\">");
    for e in &l.timeline {
        mark(p, e);
    }
    p.push_str("</div><details><summary>events</summary><table>");
    for e in &l.timeline {
        let what = match (e.kind, &e.action, &e.tool) {
            ("verdict", Some(a), _) => format!("<b>{}</b>", a.as_str()),
            (k, _, Some(t)) => format!("{k} <code>{}</code>", esc(t)),
            (k, _, None) => k.to_owned(),
        };
        let _ = write!(
            p,
            "<tr><td class=\"num\">{}</td><td>{what}{}</td><td><code>{}</code></td></tr>",
            e.line,
            if e.error { " (error)" } else { "" },
            esc(&e.label)
        );
    }
    p.push_str("</table></details></div>");
}

fn mark(p: &mut String, e: &TimelineEvent) {
    let mut class = e.kind.to_owned();
    if let Some(a) = e.action {
        class.push(' ');
        class.push_str(action_class(a));
    }
    if e.error {
        class.push_str(" error");
    }
    let title = match &e.tool {
        Some(t) => format!("line {}: {} {t}: {}", e.line, e.kind, e.label),
        None => format!("line {}: {}: {}", e.line, e.kind, e.label),
    };
    let _ = write!(
        p,
        "<span class=\"ev {}\" title=\"{}\"></span>",
        class,
        esc(&title)
    );
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }
}
