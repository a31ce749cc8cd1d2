use super::*;

const NOW: Timestamp = Timestamp::UNIX_EPOCH;

const CRICTL_PODS_02: &str = "$ crictl pods
9ae3dcda0548f       11 minutes ago      NotReady            nginx-849c964dbd-kcfdx   default             0                   (default)
ca2fe4bb08311       39 minutes ago      NotReady            nginx-849c964dbd-mghkk   default             0                   (default)
d20096711aee1       39 minutes ago      NotReady            nginx-849c964dbd-bl7jd   default             0   ";

const CRICTL_PODS_03: &str = "user@node-a:~> sudo crictl pods -s NotReady | grep team-ns
POD ID              CREATED             STATE               NAME                     NAMESPACE           ATTEMPT             RUNTIME
06f0eea7928b1       2 days ago          NotReady            app-1-0          team-ns           0                   (default)
user@node-a:~>";

const KUBECTL_02: &str = "# No nginx Pod on the node 
$ kubectl get pods -A -o wide --field-selector=spec.nodeName=node-a
NAMESPACE     NAME                 READY   STATUS    RESTARTS        AGE     IP             NODE   NOMINATED NODE   READINESS GATES
kube-system   antrea-agent-dbfbt   2/2     Running   1 (3h29m ago)   3d3h    10.0.0.12    node-a   <none>           <none>
sonobuoy      sonobuoy             1/1     Running   0               3h14m   10.0.0.22   node-a   <none>           <none>";

#[test]
fn crictl_table_without_header_and_a_cut_last_row() {
    let got = crictl_pods_table(CRICTL_PODS_02, "crictl-pods.txt").unwrap();
    assert_eq!(got.rows.len(), 3);
    assert!(got.not_understood.is_empty());
    let first = &got.rows[0];
    assert_eq!(first.id, "9ae3dcda0548f");
    assert_eq!(first.age, Some(SignedDuration::from_secs(11 * 60)));
    assert_eq!(first.state, Some(SandboxState::NotReady));
    assert_eq!(
        (first.namespace.as_str(), first.name.as_str()),
        ("default", "nginx-849c964dbd-kcfdx")
    );
    assert_eq!(first.attempt, Some(0));
    assert_eq!(first.origin, "crictl-pods.txt:2");
    // The cut row: RUNTIME missing, the rest read.
    let last = &got.rows[2];
    assert_eq!(last.age, Some(SignedDuration::from_secs(39 * 60)));
    assert_eq!(last.attempt, Some(0));
    assert_eq!(last.origin, "crictl-pods.txt:4");
}

#[test]
fn crictl_table_with_header_prompts_and_days() {
    let got = crictl_pods_table(CRICTL_PODS_03, "p").unwrap();
    assert_eq!(got.rows.len(), 1);
    assert_eq!(got.rows[0].age, Some(SignedDuration::from_hours(48)));
    assert_eq!(got.rows[0].name, "app-1-0");
    assert!(got.not_understood.is_empty());
}

#[test]
fn crictl_table_errors_and_unread_lines() {
    let e = crictl_pods_table("no pods here\n", "f.txt").unwrap_err();
    assert_eq!(e.at, "f.txt");
    let got = crictl_pods_table(
        "garbage\n9ae3dcda0548f  About an hour ago  Ready  a  b  1\n",
        "f",
    )
    .unwrap();
    assert_eq!(got.not_understood, vec!["f:1".to_string()]);
    assert_eq!(got.rows[0].age, Some(SignedDuration::from_secs(3600)));
    assert_eq!(got.rows[0].state, Some(SandboxState::Ready));
    // A cut inside CREATED: the row is kept, what is missing is None.
    let cut = crictl_pods_table("9ae3dcda0548f  11 min", "f").unwrap();
    assert_eq!((cut.rows[0].age, cut.rows[0].state), (None, None));
}

#[test]
fn human_durations_of_go_units() {
    for (s, secs) in [
        ("Less than a second", 0),
        ("1 second", 1),
        ("About a minute", 60),
        ("11 minutes", 660),
        ("About an hour", 3600),
        ("5 hours", 18_000),
        ("2 days", 172_800),
        ("3 weeks", 1_814_400),
    ] {
        assert_eq!(
            human_duration(s),
            Some(SignedDuration::from_secs(secs)),
            "{s}"
        );
    }
    assert_eq!(human_duration("11 parsecs"), None);
    assert_eq!(human_duration("3d3h"), None);
}

#[test]
fn kubectl_table_restarts_with_spaces() {
    let got = kubectl_pods_table(KUBECTL_02, "kubectl-get-pods.txt").unwrap();
    assert_eq!(got.rows.len(), 2);
    assert_eq!(got.rows[0].namespace.as_deref(), Some("kube-system"));
    assert_eq!(got.rows[0].name, "antrea-agent-dbfbt");
    assert_eq!(got.rows[0].status, "Running");
    assert_eq!(got.rows[0].origin, "kubectl-get-pods.txt:4");
    assert_eq!(got.rows[1].name, "sonobuoy");
    let e = kubectl_pods_table("antrea-agent-dbfbt   2/2   Running\n", "k.txt").unwrap_err();
    assert!(e.reason.contains("header"), "{e}");
    assert!(
        kubectl_pods_table("No resources found in default namespace.\n", "k")
            .unwrap()
            .rows
            .is_empty()
    );
    let e = kubectl_pods_table("NAME   READY   STATUS\nlonely\n", "k").unwrap_err();
    assert_eq!(e.at, "k:2");
}

#[test]
fn inspectp_cut_and_nested() {
    let cut = "{\n  \"status\": {\n    \"id\": \"cf46d31391b99e9ca5f9ca29f4db027108e170f164c730079f8e72dc9abbacfa\",\n    \"metadata\": {\n      \"attempt\": 0,\n      \"name\": \"svclb-x\",\n      \"namespace\": \"kube-system\",\n      \"u";
    let got = crictl_inspectp(cut, "i.json").unwrap();
    let s = &got.rows[0];
    assert_eq!(
        (s.attempt, s.name.as_str(), s.namespace.as_str()),
        (Some(0), "svclb-x", "kube-system")
    );
    assert_eq!((s.uid.as_deref(), s.state), (None, None));
    assert_eq!(s.origin, "i.json:3");
    assert!(
        got.lacks
            .iter()
            .any(|l| l.contains("no uid, state, createdAt")),
        "{:?}",
        got.lacks
    );
    let whole = "{\"status\":{\"id\":\"cf46d31391b99e9ca5f9ca29f4db027108e170f164c730079f8e72dc9abbacfa\",\"metadata\":{\"attempt\":1,\"name\":\"p\",\"uid\":\"u-1\",\"namespace\":\"n\"},\"state\":\"SANDBOX_NOTREADY\",\"createdAt\":\"1700000000123456789\"},\"info\":{}}";
    let s = &crictl_inspectp(whole, "w").unwrap().rows[0];
    assert_eq!(
        (s.attempt, s.uid.as_deref(), s.state),
        (Some(1), Some("u-1"), Some(SandboxState::NotReady))
    );
    assert_eq!(s.created_at.map(|t| t.as_second()), Some(1_700_000_000));
    assert!(crictl_inspectp("{\"id\": \"abc\"}", "x").is_err());
}

/// Each finding's sandbox ID and severity, in order.
fn severities(f: &[Finding]) -> Vec<(String, Severity)> {
    f.iter()
        .map(|f| (f.sandbox_id.clone().unwrap(), f.severity))
        .collect()
}

fn pods(rows: &str) -> Option<(Vec<PastedPod>, String)> {
    Some((
        kubectl_pods_table(rows, "k").unwrap().rows,
        "kubectl get pods table k".to_string(),
    ))
}

#[test]
fn judged_by_the_keep_rules() {
    let min = std::time::Duration::from_secs(600);
    let sandboxes = crictl_pods_table(CRICTL_PODS_02, "c").unwrap().rows;
    // Pods gone from the pasted API view: warnings, never gc_eligible.
    let gone = judge(
        &PastedViews::new(sandboxes.clone(), pods(KUBECTL_02)),
        min,
        NOW,
    );
    assert_eq!(gone.len(), 3);
    assert!(
        gone.iter()
            .all(|f| f.severity == Severity::Warning && !f.gc_eligible)
    );
    assert_eq!(gone[0].sandbox_id.as_deref(), Some("9ae3dcda0548f…"));
    // Younger than min age: not judged.
    assert!(
        judge(
            &PastedViews::new(sandboxes.clone(), pods(KUBECTL_02)),
            std::time::Duration::from_secs(3600),
            NOW
        )
        .is_empty()
    );
    // The pod still in the API: an info leftover.
    let live =
        pods("NAMESPACE  NAME  READY  STATUS\ndefault  nginx-849c964dbd-kcfdx  1/1  Running\n");
    let f = judge(
        &PastedViews::new(sandboxes[..1].to_vec(), live.clone()),
        min,
        NOW,
    );
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
    // No API view: info, saying why.
    let f = judge(&PastedViews::new(sandboxes[..1].to_vec(), None), min, NOW);
    assert_eq!(f[0].severity, Severity::Info);
    assert!(f[0].summary.contains("without the API view"));
    // An older NOTREADY sandbox beside a newer one of the same live pod: a warning.
    let two = crictl_pods_table(
        "aaaaaaaaaaaa1  2 hours ago  NotReady  web-0  shop  1\naaaaaaaaaaaa0  3 hours ago  NotReady  web-0  shop  0\n",
        "c",
    )
    .unwrap()
    .rows;
    let f = judge(
        &PastedViews::new(
            two,
            pods("NAMESPACE  NAME  READY  STATUS\nshop  web-0  0/1  Running\n"),
        ),
        min,
        NOW,
    );
    let sev = severities(&f);
    assert_eq!(
        sev,
        vec![
            ("aaaaaaaaaaaa1…".to_string(), Severity::Info),
            ("aaaaaaaaaaaa0…".to_string(), Severity::Warning)
        ]
    );
    // A sandbox whose state the paste lacks is not judged.
    let cut = crictl_pods_table("9ae3dcda0548f  11 min", "f")
        .unwrap()
        .rows;
    assert!(judge(&PastedViews::new(cut, None), min, NOW).is_empty());
}

#[test]
fn failing_gc_in_the_logs_makes_a_leftover_a_warning() {
    use crate::event::{LogKind, LoggedEvent};
    use crate::logs::{ParseContext, classify, parse};
    let line = "E0829 19:33:49.707784    2373 kuberuntime_gc.go:142] Failed to remove sandbox \"d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718\": rpc error: code = 2 desc = device or resource busy";
    let parsed = parse(line, &mut ParseContext::new(2025));
    let event = classify(&parsed).expect("a catalogued line").into_owned();
    let events = vec![LoggedEvent::new(
        event,
        LogKind::Kubelet,
        "kubelet.log".into(),
        1,
        line.into(),
        0,
    )];
    let table = "d2a22654e52de  2 hours ago  NotReady  web-0  shop  0\n9ae3dcda0548f  2 hours ago  NotReady  web-1  shop  0\n";
    let views = PastedViews::new(crictl_pods_table(table, "c").unwrap().rows, None);
    let mut f = judge(&views, std::time::Duration::from_secs(600), NOW);
    assert!(f.iter().all(|f| f.severity == Severity::Info));
    add_logs(
        &mut f,
        &views,
        &events,
        std::time::Duration::from_secs(600),
        NOW,
    );
    let by_id = severities(&f);
    assert_eq!(
        by_id,
        vec![
            ("d2a22654e52de…".to_string(), Severity::Warning),
            ("9ae3dcda0548f…".to_string(), Severity::Info)
        ]
    );
    assert!(
        f[0].evidence
            .iter()
            .any(|e| e.detail().contains("kubelet.log:1")),
        "{:?}",
        f[0].evidence
    );
    assert!(
        f[1].evidence
            .iter()
            .any(|e| e.detail().starts_with("no stop or removal attempt"))
    );
    assert!(f.iter().all(|f| !f.gc_eligible));
}

#[test]
fn a_listing_of_one_namespace_shows_no_pod_of_another_gone() {
    let min = std::time::Duration::from_secs(600);
    let sandboxes = crictl_pods_table(CRICTL_PODS_02, "c").unwrap().rows;
    // `kubectl get pods` without -A: no NAMESPACE column, the context's namespace only.
    let one_ns =
        pods("NAME   READY   STATUS    RESTARTS   AGE\nweb-0  1/1     Running   0          3d\n");
    let f = judge(&PastedViews::new(sandboxes.clone(), one_ns), min, NOW);
    assert_eq!(f.len(), 3);
    assert!(f.iter().all(|f| f.severity == Severity::Info), "{f:#?}");
    assert!(
        f[0].summary.contains("does not cover namespace default"),
        "{}",
        f[0].summary
    );
    // An -A table that lists other pods of the namespace covers it.
    let same_ns = pods("NAMESPACE  NAME  READY  STATUS\ndefault  web-0  1/1  Running\n");
    let f = judge(&PastedViews::new(sandboxes, same_ns), min, NOW);
    assert!(f.iter().all(|f| f.severity == Severity::Warning));
}

#[test]
fn a_row_cut_before_name_is_not_judged() {
    let got = crictl_pods_table("9ae3dcda0548f       5 hours ago         NotReady\n", "s").unwrap();
    assert!(
        got.lacks.iter().any(|l| l.contains("cut before NAME")),
        "{:?}",
        got.lacks
    );
    let f = judge(
        &PastedViews::new(
            got.rows,
            pods("NAMESPACE  NAME  READY  STATUS\ndefault  web-0  1/1  Running\n"),
        ),
        std::time::Duration::ZERO,
        NOW,
    );
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn a_sandbox_pasted_twice_is_judged_once() {
    let table = crictl_pods_table(CRICTL_PODS_02, "c").unwrap().rows;
    let full = format!(
        "{{\"status\":{{\"id\":\"9ae3dcda0548f{}\",\"metadata\":{{\"attempt\":0,\"name\":\"nginx-849c964dbd-kcfdx\",\"uid\":\"u-1\",\"namespace\":\"default\"}},\"state\":\"SANDBOX_NOTREADY\"}}}}",
        "0".repeat(51)
    );
    let inspectp = crictl_inspectp(&full, "i").unwrap().rows;
    // And a different sandbox whose ID shares the first 13 hex digits: kept apart.
    let mut other = table[1].clone();
    other.id = "9ae3dcda0548f".to_string();
    other.name = "other".to_string();
    let views = PastedViews::new([table.clone(), table, inspectp, vec![other]].concat(), None);
    let f = judge(&views, std::time::Duration::from_secs(600), NOW);
    let ids: Vec<(&str, &str)> = f
        .iter()
        .map(|f| {
            (
                f.sandbox_id.as_deref().unwrap(),
                f.pod.as_ref().unwrap().name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            (
                "9ae3dcda0548f000000000000000000000000000000000000000000000000000",
                "nginx-849c964dbd-kcfdx"
            ),
            ("ca2fe4bb08311…", "nginx-849c964dbd-mghkk"),
            ("d20096711aee1…", "nginx-849c964dbd-bl7jd"),
            ("9ae3dcda0548f…", "other"),
        ]
    );
    // The merged sandbox has the UID the inspectp paste gave.
    assert_eq!(f[0].pod.as_ref().unwrap().uid, "u-1");
}

#[test]
fn young_pasted_sandboxes_are_counted_not_judged() {
    let sandboxes = crictl_pods_table(CRICTL_PODS_02, "c").unwrap().rows;
    let views = PastedViews::new(sandboxes, pods(KUBECTL_02));
    let hour = std::time::Duration::from_secs(3600);
    assert!(judge(&views, hour, NOW).is_empty());
    // 11 and 39 minutes old: the youngest is judged 49 minutes after the paste.
    let (count, until) = too_young(&views, hour, NOW).unwrap();
    assert_eq!(count, 3);
    assert_eq!(until.duration_since(NOW), SignedDuration::from_mins(49));
    assert_eq!(
        too_young(&views, std::time::Duration::from_secs(600), NOW),
        None
    );
}

#[test]
fn sandboxes_read_but_not_judged_are_listed_with_why() {
    let min = std::time::Duration::from_secs(600);
    // Cut before STATE, cut before NAME, and whole: two listed, one judged.
    let table = "aaaaaaaaaaaa1  2 hours ago\naaaaaaaaaaaa2  2 hours ago  NotReady\naaaaaaaaaaaa3  2 hours ago  NotReady  web-0  shop  0\n";
    let views = PastedViews::new(crictl_pods_table(table, "c").unwrap().rows, None);
    let (found, not_judged) = judge_all(&views, min, NOW);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].sandbox_id.as_deref(), Some("aaaaaaaaaaaa3…"));
    let got: Vec<_> = not_judged
        .iter()
        .map(|n| {
            (
                n.sandbox_id.as_str(),
                n.at.as_str(),
                n.why.split(':').next().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "aaaaaaaaaaaa1",
                "c:1",
                "its state is not in the paste (cut before STATE or \"state\")"
            ),
            (
                "aaaaaaaaaaaa2",
                "c:2",
                "NOTREADY, but the row is cut before NAME"
            ),
        ]
    );
    // No age, beside an API view that lacks the pod: listed, not guessed.
    let inspectp = r#"{"status": {"id": "cf46d31391b99e9ca5f9ca29f4db027108e170f164c730079f8e72dc9abbacfa", "metadata": {"attempt": 0, "name": "svclb-0", "namespace": "kube-system", "uid": "11111111-2222-4333-8444-555555555502"}, "state": "SANDBOX_NOTREADY""#;
    let views = PastedViews::new(
        crictl_inspectp(inspectp, "i").unwrap().rows,
        pods("NAMESPACE  NAME  READY  STATUS\nkube-system  other  1/1  Running\n"),
    );
    let (found, not_judged) = judge_all(&views, min, NOW);
    assert!(found.is_empty());
    assert_eq!(not_judged.len(), 1);
    assert!(not_judged[0].why.contains("its age is not in the paste"));
}

#[test]
fn a_byte_order_mark_hides_no_column() {
    let t = "\u{feff}NAMESPACE  NAME  READY  STATUS\nshop  web-0  1/1  Running\n";
    let got = kubectl_pods_table(t, "k").unwrap();
    assert_eq!(got.rows[0].namespace.as_deref(), Some("shop"));
    assert!(got.rows[0].all_namespaces);
    let c = crictl_pods_table(
        "\u{feff}aaaaaaaaaaaa1  2 hours ago  NotReady  web-0  shop  0\n",
        "c",
    )
    .unwrap();
    assert_eq!(c.rows.len(), 1);
    assert!(c.not_understood.is_empty());
}

#[test]
fn a_pod_of_the_same_name_on_another_node_is_not_this_nodes_pod() {
    let min = std::time::Duration::from_secs(600);
    // `kubectl get pods -A -o wide`: web-0 runs on node-b; the pasted sandboxes are node-a's.
    let wide = "NAMESPACE  NAME  READY  STATUS  RESTARTS  AGE  IP  NODE  NOMINATED NODE  READINESS GATES\n\
                shop  web-0  1/1  Running  0  1h  10.0.0.1  node-b  <none>  <none>\n\
                shop  web-1  1/1  Running  0  1h  10.0.0.2  node-a  <none>  <none>\n\
                shop  web-2  1/1  Running  0  1h  10.0.0.3  node-a  <none>  <none>\n";
    let table = "aaaaaaaaaaaa0  2 hours ago  NotReady  web-0  shop  0\n\
                 aaaaaaaaaaaa1  2 hours ago  NotReady  web-1  shop  0\n\
                 aaaaaaaaaaaa2  2 hours ago  Ready  web-2  shop  0\n";
    let mut views = PastedViews::new(crictl_pods_table(table, "c").unwrap().rows, pods(wide));
    assert_eq!(
        views.pods.as_ref().unwrap().0[0].node.as_deref(),
        Some("node-b")
    );
    // The node of most listed pods whose sandboxes are pasted.
    assert_eq!(views.infer_node().as_deref(), Some("node-a"));
    // Without the node, NODE is not read: web-0 counts as listed (info).
    let f = judge(&views, min, NOW);
    assert!(f.iter().all(|f| f.severity == Severity::Info), "{f:?}");
    views.node = views.infer_node();
    let f = judge(&views, min, NOW);
    let sev = severities(&f);
    assert_eq!(
        sev,
        vec![
            ("aaaaaaaaaaaa0…".to_string(), Severity::Warning),
            ("aaaaaaaaaaaa1…".to_string(), Severity::Info)
        ]
    );
    assert!(
        f[0].evidence.iter().any(|e| e
            .detail()
            .contains("is on node node-b (NODE), not on node-a")),
        "{:?}",
        f[0].evidence
    );
    // A tie names no node.
    let tie = "NAMESPACE  NAME  READY  STATUS  RESTARTS  AGE  IP  NODE\nshop  web-0  1/1  Running  0  1h  10.0.0.1  node-b\nshop  web-1  1/1  Running  0  1h  10.0.0.2  node-a\n";
    let views = PastedViews::new(
        crictl_pods_table(&table[..table.rfind("aaaaaaaaaaaa2").unwrap()], "c")
            .unwrap()
            .rows,
        pods(tie),
    );
    assert_eq!(views.infer_node(), None);
}

#[test]
fn an_id_whose_value_runs_past_the_next_id_key_is_read_whole() {
    // Found by the pasted_views fuzz target (it panicked slicing an empty ID): the first `"id"`
    // value holds the next `"id"` key.
    let a = "a".repeat(64);
    let text = format!(r#"{{"id":"{a}"id":"{a}","state":2}}"#);
    let got = crictl_inspectp(&text, "i").unwrap();
    assert_eq!(got.rows.len(), 2);
    assert!(got.rows.iter().all(|r| r.id == a), "{:?}", got.rows);
}

#[test]
fn kubectl_get_all_reads_its_pods_table_only() {
    // kubernetes-sigs/kind#1714: `kubectl get all` prints a table per kind.
    let text = "NAME                           READY   STATUS        RESTARTS   AGE\n\
pod/author-64d579698f-x9nxv    2/2     Terminating   0          4d17h\n\
\n\
NAME                 TYPE        CLUSTER-IP     EXTERNAL-IP   PORT(S)    AGE\n\
service/author       ClusterIP   10.96.14.150   <none>        8080/TCP   4d17h\n\
\n\
NAME                     READY   UP-TO-DATE   AVAILABLE   AGE\n\
deployment.apps/author   0/1     1            0           4d17h\n";
    let got = kubectl_pods_table(text, "all.txt").unwrap();
    let names: Vec<(&str, &str)> = got
        .rows
        .iter()
        .map(|p| (p.name.as_str(), p.status.as_str()))
        .collect();
    assert_eq!(names, vec![("author-64d579698f-x9nxv", "Terminating")]);
    assert!(got.not_understood.is_empty(), "{:?}", got.not_understood);
}
