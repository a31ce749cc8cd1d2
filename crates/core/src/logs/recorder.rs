//! The kubelet's event recorder's lines read as records: which object a pod event is about
//! (kind, namespace, name, UID), its reason and its message.
//!
//! client-go's `tools/record/event.go` writes an event to the kubelet's log in three shapes, all
//! read here (the time is the line's):
//!
//! | Shape | Call (client-go `tools/record/event.go`) | Kubelet versions |
//! |---|---|---|
//! | `Event(v1.ObjectReference{Kind:"Pod", Namespace:"ns", Name:"n", UID:"u", …}): type: 'Normal' reason: 'Killing' Stopping container c` | `StartLogging`: `logf("Event(%#v): type: '%v' reason: '%v' %v", e.InvolvedObject, e.Type, e.Reason, e.Message)`, the kubelet's `StartLogging(klog.V(3).Infof)` | ≤ 1.20 (`api.ObjectReference` before 1.6) |
//! | `"Event occurred" object="ns/n" fieldPath=… kind="Pod" apiVersion="v1" type="Normal" reason="Killing" message="…"` | `StartStructuredLogging(3)`: no UID | 1.21+ |
//! | `Server rejected event '&v1.Event{…, InvolvedObject:v1.ObjectReference{Kind:"Pod", …}, Reason:"Killing", Message:"…", …}': '<err>' (will not retry!)` (also `Unable to write event '…'`, `Unable to construct event '…'`) | `recordToSink`/`recordEvent`: `klog.Errorf("Server rejected event '%#v': '%v' (will not retry!)", event, err)` | until contextual logging |
//! | `"Server rejected event (will not retry!)" err=… event="&Event{ObjectMeta:{…},InvolvedObject:ObjectReference{Kind:Pod,Namespace:ns,Name:n,UID:u,…,},Reason:Killing,Message:…,Source:EventSource{…},…}"` (also `Unable to write event (may retry after sleeping)`, `(retry limit exceeded!)`, `(broadcaster is shut down)`, `Unable to construct event (will not retry!)`) | `recordEvent`: `ErrorS(err, "Server rejected event (will not retry!)", "event", event)`; the value is `(*v1.Event).String()` | the newest trees |
//!
//! The `%#v` dump is Go syntax (strings quoted, `, ` between fields); `String()` is unquoted
//! with `,` between fields, so its `Message` runs to `,Source:EventSource{`. A dump cut by the
//! end of its line keeps what it has: the involved object comes before `Reason`, which comes
//! before `Message`.

use super::record::ParsedLine;

/// One pod event as the recorder logged it. Borrowed from the line; a string of the `%#v`
/// dump keeps its Go escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded<'t> {
    /// `InvolvedObject.Kind` (`Pod`, `Node`, …).
    pub kind: &'t str,
    /// `InvolvedObject.Namespace` (empty for a cluster object).
    pub namespace: &'t str,
    /// `InvolvedObject.Name`.
    pub name: &'t str,
    /// `InvolvedObject.UID` (`None` in the structured `Event occurred`, which has none).
    pub uid: Option<&'t str>,
    /// The event's reason (`Killing`, `Started`, `Evicted`, …).
    pub reason: &'t str,
    /// The event's message (empty when the line is cut before it).
    pub message: &'t str,
}

/// The pod event `line` (whose message is `msg`) logs, in any of the recorder's shapes; `None`
/// when it is none of them or names no object.
pub fn read<'t>(msg: &'t str, line: &'t ParsedLine<'_>) -> Option<Recorded<'t>> {
    if msg.starts_with("Event occurred") {
        let object = line.field("object")?;
        // JSON logging nests it: `"object":{"name":"n","namespace":"ns"}`.
        let member = |key: &str| {
            let at = object.find(&format!("\"{key}\""))? + key.len() + 2;
            let rest = object[at..].trim_start().strip_prefix(':')?.trim_start();
            let rest = rest.strip_prefix('"')?;
            rest.find('"').map(|end| &rest[..end])
        };
        let (namespace, name) = if object.trim_start().starts_with('{') {
            (member("namespace").unwrap_or(""), member("name")?)
        } else {
            match object.split_once('/') {
                Some((ns, n)) => (ns, n),
                None => ("", object),
            }
        };
        return Some(Recorded {
            kind: line.field("kind").unwrap_or(""),
            namespace,
            name,
            uid: None,
            reason: line.field("reason").unwrap_or(""),
            message: line.field("message").unwrap_or(""),
        });
    }
    if let Some(rest) = msg.strip_prefix("Event(") {
        return legacy(rest);
    }
    let dump = match line.field("event") {
        Some(e) if e.contains("ObjectReference{") => e,
        _ if msg.contains("event '&") || msg.contains("event: '&") => msg,
        _ => return None,
    };
    event_dump(dump)
}

/// `v1.ObjectReference{…}): type: 'Normal' reason: 'Killing' <message>`.
fn legacy(rest: &str) -> Option<Recorded<'_>> {
    let open = rest.find("ObjectReference{")? + "ObjectReference".len();
    let (body, after) = block(&rest[open..]);
    let mut r = reference(body)?;
    let after = after.unwrap_or("");
    if let Some(at) = after.find("reason: '") {
        let s = &after[at + "reason: '".len()..];
        let end = s.find('\'').unwrap_or(s.len());
        r.reason = &s[..end];
        r.message = s.get(end + 1..).unwrap_or("").trim();
    }
    Some(r)
}

/// A `*v1.Event` as `%#v` or `String()` prints it.
fn event_dump(dump: &str) -> Option<Recorded<'_>> {
    let at = dump.find("InvolvedObject:")?;
    let open = at + dump[at..].find('{')?;
    let (body, after) = block(&dump[open..]);
    let mut r = reference(body)?;
    if let Some(after) = after {
        r.reason = value(after, "Reason").unwrap_or("");
        r.message = match value(after, "Message") {
            // `String()`'s message is unquoted and may hold commas: it runs to `Source`.
            Some(m) if !after.contains("Message:\"") => {
                let start = after.find("Message:").map_or(0, |p| p + "Message:".len());
                let s = &after[start..];
                s.find(",Source:").map_or(m, |end| &s[..end])
            }
            Some(m) => m,
            None => "",
        };
    }
    Some(r)
}

/// The body of the `{…}` block `s` starts with, and what follows its end (`None` when the line
/// is cut inside it). Quoted strings (with Go escapes) and nested braces (`FieldPath:
/// spec.containers{c}`) are skipped.
fn block(s: &str) -> (&str, Option<&str>) {
    let b = s.as_bytes();
    let (mut depth, mut i, mut quoted) = (0usize, 0usize, false);
    while i < b.len() {
        match b[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b'{' if !quoted => depth += 1,
            b'}' if !quoted => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return (&s[1.min(i)..i], Some(&s[i + 1..]));
                }
            }
            _ => {}
        }
        i += 1;
    }
    (s.get(1..).unwrap_or(""), None)
}

/// The value of `key:` in a Go dump: a quoted string without its quotes (escapes kept), or a
/// bare value up to `,` or `}`. The key must begin a field (after `{`, `,` or `, `).
fn value<'t>(s: &'t str, key: &str) -> Option<&'t str> {
    let mut from = 0;
    while let Some(p) = s[from..].find(key) {
        let at = from + p;
        from = at + key.len();
        let starts_field = at == 0 || matches!(s.as_bytes()[at - 1], b'{' | b',' | b' ');
        let Some(rest) = s[from..].strip_prefix(':') else {
            continue;
        };
        if !starts_field {
            continue;
        }
        if let Some(q) = rest.strip_prefix('"') {
            let b = q.as_bytes();
            let mut i = 0;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            return Some(&q[..i.min(q.len())]);
        }
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        return Some(rest[..end].trim());
    }
    None
}

/// The involved object of an `ObjectReference{…}` body; `None` without a name.
fn reference(body: &str) -> Option<Recorded<'_>> {
    let name = value(body, "Name").filter(|n| !n.is_empty())?;
    Some(Recorded {
        kind: value(body, "Kind").unwrap_or(""),
        namespace: value(body, "Namespace").unwrap_or(""),
        name,
        // A UID cut by the end of the line is no UID.
        uid: value(body, "UID").filter(|u| super::ids::is_pod_uid(u)),
        reason: "",
        message: "",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::{ParseContext, parse};

    fn read_line(text: &str) -> Option<(String, String, String, Option<String>, String, String)> {
        let mut ctx = ParseContext::new(2023);
        let line = parse(text, &mut ctx);
        let msg = line.msg.trim();
        read(msg, &line).map(|r| {
            (
                r.kind.to_string(),
                r.namespace.to_string(),
                r.name.to_string(),
                r.uid.map(str::to_string),
                r.reason.to_string(),
                r.message.to_string(),
            )
        })
    }

    #[test]
    fn case_03s_cut_server_rejected_dump_names_the_pod_and_its_uid() {
        // testdata/cases/03-…/messages.log, the two physical lines joined as the assembler joins
        // them, cut at the end as the issue shows it.
        let text = r#"2023-01-20T12:26:08.334088+00:00 node-a kubelet[41736]: E0120 13:26:08.333859   41736 event.go:267] Server rejected event '&v1.Event{TypeMeta:v1.TypeMeta{Kind:"", APIVersion:""}, ObjectMeta:v1.ObjectMeta{Name:"app-1-0.173c04020d231c35", GenerateName:"", Namespace:"team-ns", SelfLink:"", UID:"", ResourceVersion:""}, InvolvedObject:v1.ObjectReference{Kind:"Pod", Namespace:"team-ns", Name:"app-1-0", UID:"f60d3b37-9704-4142-8dc7-430a4725ecfe", APIVersion:"v1", ResourceVersion:"297365633", FieldPath:"spec.containers{app-1}"}, Reason:"Killing", Message:"Stopping container app-1", Source:v1.EventSource{Component:"kubelet", Host:"node-a"}, FirstTimestamp:time.Date(2023, time.January, 20, 13, 26, 8, 331832373, time.Local), Count:1,"#;
        let got = read_line(text).expect("a recorder line");
        assert_eq!(
            got,
            (
                "Pod".into(),
                "team-ns".into(),
                "app-1-0".into(),
                Some("f60d3b37-9704-4142-8dc7-430a4725ecfe".into()),
                "Killing".into(),
                "Stopping container app-1".into()
            )
        );
    }

    #[test]
    fn legacy_start_logging_line() {
        let text = r#"I0120 13:26:08.331900   41736 event.go:221] Event(v1.ObjectReference{Kind:"Pod", Namespace:"team-ns", Name:"app-1-0", UID:"f60d3b37-9704-4142-8dc7-430a4725ecfe", APIVersion:"v1", ResourceVersion:"297365633", FieldPath:"spec.containers{app-1}"}): type: 'Normal' reason: 'Killing' Stopping container app-1"#;
        let got = read_line(text).unwrap();
        assert_eq!(got.2, "app-1-0");
        assert_eq!(
            got.3.as_deref(),
            Some("f60d3b37-9704-4142-8dc7-430a4725ecfe")
        );
        assert_eq!(
            (got.4.as_str(), got.5.as_str()),
            ("Killing", "Stopping container app-1")
        );
    }

    #[test]
    fn structured_server_rejected_string_dump() {
        // The `String()` form as kubelets of the newest trees log it (shape from public issue
        // threads: `event="&Event{ObjectMeta:{…},InvolvedObject:ObjectReference{…},…}"`).
        let text = r#"E0120 13:26:08.333859   41736 event.go:359] "Server rejected event (will not retry!)" err="namespaces \"team-ns\" not found" event="&Event{ObjectMeta:{app-1-0.173c04020d231c35  team-ns    0 0001-01-01 00:00:00 +0000 UTC <nil> <nil> map[] map[] [] [] []},InvolvedObject:ObjectReference{Kind:Pod,Namespace:team-ns,Name:app-1-0,UID:f60d3b37-9704-4142-8dc7-430a4725ecfe,APIVersion:v1,ResourceVersion:297365633,FieldPath:spec.containers{app-1},},Reason:Killing,Message:Stopping container app-1, now,Source:EventSource{Component:kubelet,Host:node-a,},Count:1,}""#;
        let got = read_line(text).unwrap();
        assert_eq!(got.1, "team-ns");
        assert_eq!(got.2, "app-1-0");
        assert_eq!(
            got.3.as_deref(),
            Some("f60d3b37-9704-4142-8dc7-430a4725ecfe")
        );
        assert_eq!(got.4, "Killing");
        assert_eq!(got.5, "Stopping container app-1, now");
    }

    #[test]
    fn structured_event_occurred_has_no_uid() {
        let text = r#"I0120 13:26:08.331900   41736 event.go:389] "Event occurred" object="team-ns/app-1-0" fieldPath="spec.containers{app-1}" kind="Pod" apiVersion="v1" type="Normal" reason="Killing" message="Stopping container app-1""#;
        let got = read_line(text).unwrap();
        assert_eq!((got.1.as_str(), got.2.as_str()), ("team-ns", "app-1-0"));
        assert_eq!(got.3, None);
        assert_eq!(got.4, "Killing");
    }

    #[test]
    fn cut_inside_the_reference_keeps_the_name_and_nothing_after() {
        let text = r#"E0120 13:26:08.333859   41736 event.go:267] Server rejected event '&v1.Event{ObjectMeta:v1.ObjectMeta{Name:"x.1"}, InvolvedObject:v1.ObjectReference{Kind:"Pod", Namespace:"ns", Name:"web-0", UID:"f60d3b37-97"#;
        let got = read_line(text).unwrap();
        assert_eq!(got.2, "web-0");
        assert_eq!(got.4, "");
        // A cut UID is no UID.
        assert_eq!(got.3, None);
    }

    #[test]
    fn json_event_occurred_nests_its_object() {
        let text = r#"{"ts":1764592208000.5,"caller":"record/event.go:389","msg":"Event occurred","v":3,"object":{"name":"web-0","namespace":"shop"},"fieldPath":"spec.containers{web}","kind":"Pod","apiVersion":"v1","type":"Normal","reason":"Killing","message":"Stopping container web"}"#;
        let got = read_line(text).expect("a recorder line");
        assert_eq!((got.1.as_str(), got.2.as_str()), ("shop", "web-0"));
        assert_eq!(got.4, "Killing");
    }

    #[test]
    fn other_lines_are_not_recorder_lines() {
        assert_eq!(
            read_line(
                r#"I0120 13:26:08.331900   41736 kubelet.go:1] "SyncLoop ADD" source="api" pods=["a/b"]"#
            ),
            None
        );
    }
}
