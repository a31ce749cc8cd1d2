//! `explain` keeps only the pod's events (`gather_for_explain`, a read of the logs per round of
//! the pod's identity) and must show what `timeline::explain` over every event shows: every
//! real case's log, offline, for every pod UID, sandbox ID and `namespace/name` its events name.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use podcoroner_core::event::LogKind;
use podcoroner_core::timeline::explain;
use podcoroner_logs::Source;
use podcoroner_node::gather::{SourceOptions, gather_for_explain};

fn offline(log: &Path) -> SourceOptions {
    SourceOptions {
        runtime_endpoint: None,
        timeout: std::time::Duration::from_secs(1),
        node_name: "node-1".to_string(),
        manifest_dir: PathBuf::from("/nonexistent/manifests"),
        manifest_url: None,
        kubeconfig: None,
        pods_file: None,
        no_apiserver: true,
        kubelet_root_dir: PathBuf::from("/nonexistent/kubelet"),
        kubelet_logs: vec![Source::File(log.to_path_buf())],
        runtime_logs: vec![],
        since: None,
        offline: true,
    }
}

#[test]
fn the_pods_events_kept_give_the_timeline_of_every_event() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cases");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut compared = 0;
    let mut named_uid = 0;
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .flat_map(|d| d.flatten().map(|f| f.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    cases.sort();
    for log in cases {
        // Every event, read in the year and zone gather reads them in: a log's yearless lines
        // (syslog's prefix) in the year of its own dated records (dockerd's `time=`), when they
        // differ; its zone-less lines before a record showed the zone, in that zone.
        let source = Source::File(log.clone());
        let first = podcoroner_logs::read(&source, LogKind::Kubelet, None).unwrap();
        let read_as = podcoroner_logs::ReadAs {
            year: first.year_before_dated(),
            offset: first.zone_shown.filter(|_| first.zoneless_before_zone),
        };
        let all = if read_as == podcoroner_logs::ReadAs::default() {
            first.events
        } else {
            podcoroner_logs::read_as(&source, LogKind::Kubelet, None, read_as)
                .unwrap()
                .events
        };
        let mut queries = BTreeSet::new();
        for e in &all {
            let i = &e.event.ids;
            queries.extend(i.pod_uid.iter().map(|u| u.to_string()));
            queries.extend(i.sandbox_id.iter().map(|s| s[..12].to_string()));
            for p in &i.pods {
                if let Some(ns) = &p.namespace {
                    queries.insert(format!("{ns}/{}", p.name));
                }
            }
        }
        for q in queries.iter().take(8) {
            let g = rt.block_on(gather_for_explain(&offline(&log), q)).unwrap();
            let whole = explain(q, &g.view, &all);
            let kept = explain(q, &g.view, &g.events);
            assert_eq!(kept, whole, "{} {q}", log.display());
            assert!(g.events.len() <= all.len());
            // A pod UID asked for is the UID of the pod the timeline names, with no view but
            // the logs: the records naming the pod beside its UID give it.
            if !q.contains('/')
                && !kept.pods.is_empty()
                && all
                    .iter()
                    .any(|e| e.event.ids.pod_uid.as_deref() == Some(q))
            {
                named_uid += 1;
                assert!(
                    kept.pods.iter().any(|p| p.uid == *q),
                    "{} {q}: {:?}",
                    log.display(),
                    kept.pods
                );
            }
            compared += 1;
        }
    }
    assert!(compared > 100, "{compared} queries compared");
    assert!(named_uid > 20, "{named_uid} pod UIDs asked for");
}
