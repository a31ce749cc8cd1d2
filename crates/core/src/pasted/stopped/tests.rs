use super::super::*;
use crate::event::{LogKind, LoggedEvent};
use crate::logs::{ParseContext, classify, parse};

const LATER: &str = "2030-01-01T00:00:00Z";
const MIN: std::time::Duration = std::time::Duration::from_secs(600);
const UID: &str = "f60d3b37-9704-4142-8dc7-430a4725ecfe";

/// Case 03's kubelet line, shortened: the recorder's rejected event, a Killing of the pod.
fn kill(uid: &str, time: &str) -> String {
    format!(
        r#"E0120 {time}   41736 event.go:267] Server rejected event '&v1.Event{{ObjectMeta:v1.ObjectMeta{{Name:"app-1-0.173c04020d231c35", Namespace:"team-ns"}}, InvolvedObject:v1.ObjectReference{{Kind:"Pod", Namespace:"team-ns", Name:"app-1-0", UID:"{uid}", APIVersion:"v1", FieldPath:"spec.containers{{app-1}}"}}, Reason:"Killing", Message:"Stopping container app-1", Source:v1.EventSource{{Component:"kubelet", Host:"node-a"}}, Count:1,"#
    )
}

fn events(lines: &[String]) -> Vec<LoggedEvent> {
    let mut ctx = ParseContext::new(2023);
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let parsed = parse(l, &mut ctx);
            classify(&parsed).map(|e| {
                LoggedEvent::new(
                    e.into_owned(),
                    LogKind::Kubelet,
                    "messages.log".into(),
                    i as u64 + 1,
                    l.as_str().into(),
                    0,
                )
            })
        })
        .collect()
}

const TABLE_03: &str = "06f0eea7928b1       2 days ago          NotReady            app-1-0          team-ns           0                   (default)\n";

fn judged(views: &PastedViews, lines: &[String], now: &str) -> Finding {
    let now: Timestamp = now.parse().unwrap();
    let mut f = judge(views, MIN, now);
    assert_eq!(f.len(), 1);
    add_logs(&mut f, views, &events(lines), MIN, now);
    f.pop().unwrap()
}

fn table(text: &str) -> PastedViews {
    PastedViews::new(
        crictl_pods_table(text, "crictl-pods.txt").unwrap().rows,
        None,
    )
}

#[test]
fn a_stopped_pod_with_no_later_record_leaves_a_leaked_sandbox() {
    let f = judged(&table(TABLE_03), &[kill(UID, "13:26:08.333859")], LATER);
    assert_eq!(f.severity, Severity::Warning, "{f:?}");
    assert_eq!(f.pod.as_ref().unwrap().uid, UID);
    assert!(f.summary.contains(UID), "{}", f.summary);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.detail().starts_with("messages.log:1: pod event Killing")),
        "{:?}",
        f.evidence
    );
    assert!(!f.gc_eligible);
}

#[test]
fn a_later_record_of_the_pod_name_keeps_it_an_info() {
    // A StatefulSet re-creating the pod under its name: a new UID, a SyncLoop ADD after the kill.
    let add = r#"I0120 13:27:00.000000   41736 kubelet.go:2000] "SyncLoop ADD" source="api" pods=["team-ns/app-1-0"]"#;
    let f = judged(
        &table(TABLE_03),
        &[kill(UID, "13:26:08.333859"), add.to_string()],
        LATER,
    );
    assert_eq!(f.severity, Severity::Info);
    // Two UIDs or none beside the kill: the kill's is named.
    assert_eq!(f.pod.as_ref().unwrap().uid, UID);
}

#[test]
fn an_evicted_pod_keeps_its_sandbox_as_failed() {
    let evicted = r#"I0120 13:26:07.000000   41736 event.go:389] "Event occurred" object="team-ns/app-1-0" fieldPath="" kind="Pod" apiVersion="v1" type="Warning" reason="Evicted" message="The node was low on resource: memory.""#;
    let f = judged(
        &table(TABLE_03),
        &[evicted.to_string(), kill(UID, "13:26:08.333859")],
        LATER,
    );
    assert_eq!(f.severity, Severity::Info);
}

#[test]
fn a_kill_just_before_the_diagnosis_or_the_paste_is_not_a_leak() {
    // The diagnosis (the latest the paste can be) 30 s after the kill.
    let f = judged(
        &table(TABLE_03),
        &[kill(UID, "13:26:08.333859")],
        "2023-01-20T13:26:38Z",
    );
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.detail().contains("younger than --min-age")),
        "{:?}",
        f.evidence
    );
    // The paste's time known from inspectp's createdAt plus the table's age: 2 days after the
    // sandbox was created, which is 40 s after the kill.
    let inspectp = r#"{"status": {"id": "06f0eea7928b1a540bcf0a8c1a90497200faf30b4dec4858e046e80a970db1a5", "metadata": {"attempt": 0, "name": "app-1-0", "namespace": "team-ns", "uid": "f60d3b37-9704-4142-8dc7-430a4725ecfe"}, "state": "SANDBOX_NOTREADY", "createdAt": "2023-01-18T13:26:48Z"}}"#;
    let mut views = table(TABLE_03);
    views.add_sandboxes(crictl_inspectp(inspectp, "i").unwrap().rows);
    assert_eq!(views.sandboxes().len(), 1, "merged once");
    let f = judged(&views, &[kill(UID, "13:26:08.333859")], LATER);
    assert_eq!(f.severity, Severity::Info, "{f:?}");
}

#[test]
fn a_stop_of_another_uid_or_before_the_sandbox_is_not_its_stop() {
    let inspectp = |uid: &str, created: &str| {
        format!(
            r#"{{"status": {{"id": "06f0eea7928b1a540bcf0a8c1a90497200faf30b4dec4858e046e80a970db1a5", "metadata": {{"attempt": 0, "name": "app-1-0", "namespace": "team-ns", "uid": "{uid}"}}, "state": "SANDBOX_NOTREADY", "createdAt": "{created}"}}}}"#
        )
    };
    let views = |uid: &str, created: &str| {
        PastedViews::new(
            crictl_inspectp(&inspectp(uid, created), "i").unwrap().rows,
            None,
        )
    };
    // The same UID, created before the kill: a warning.
    let f = judged(
        &views(UID, "2023-01-18T00:00:00Z"),
        &[kill(UID, "13:26:08.333859")],
        LATER,
    );
    assert_eq!(f.severity, Severity::Warning);
    // Another pod of that name (its UID differs): no stop of this one.
    let other = "0a0a0a0a-9704-4142-8dc7-430a4725ecfe";
    let f = judged(
        &views(other, "2023-01-18T00:00:00Z"),
        &[kill(UID, "13:26:08.333859")],
        LATER,
    );
    assert_eq!(f.severity, Severity::Info);
    // Created after the kill: the kill was of an earlier sandbox.
    let f = judged(
        &views(UID, "2023-01-21T00:00:00Z"),
        &[kill(UID, "13:26:08.333859")],
        LATER,
    );
    assert_eq!(f.severity, Severity::Info);
}

#[test]
fn a_pod_the_pasted_api_view_lists_keeps_its_newest_sandbox() {
    let pods = kubectl_pods_table(
        "NAMESPACE  NAME  READY  STATUS\nteam-ns  app-1-0  0/1  Failed\n",
        "k",
    )
    .unwrap()
    .rows;
    let views = PastedViews::new(
        crictl_pods_table(TABLE_03, "c").unwrap().rows,
        Some((pods, "kubectl get pods k".into())),
    );
    let f = judged(&views, &[kill(UID, "13:26:08.333859")], LATER);
    assert_eq!(f.severity, Severity::Info);
}
