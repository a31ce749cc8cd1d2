//! `RuntimeNetworkNotReady`: the container runtime reports its pod network not ready.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

/// How long the network must stay not ready, where the log ends, to be a finding: a node's
/// first seconds say it until the runtime has loaded its CNI config, and a `kubeadm init` says
/// it until the network add-on's pod writes one; three minutes past that is a node left without
/// one.
const NOT_READY_FOR: SignedDuration = SignedDuration::from_mins(3);

/// Records of the condition at most this far apart are one outage: the kubelet checks the
/// runtime's status every 5 s (`updateRuntimeUp`) and logs each check that finds it false.
const SAME_OUTAGE: SignedDuration = SignedDuration::from_mins(1);

/// How long the kubelet's log must go on after the last record for the network to count as
/// ready again (six of its 5 s checks without the record).
const READY_AGAIN: SignedDuration = SignedDuration::from_secs(30);

/// What the runtime says is missing, from the condition's `message:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// No CNI network config loaded (containerd's `cni plugin not initialized`, dockershim's
    /// `cni config uninitialized`, CRI-O's `No CNI configuration file in …`, older CRI-O's
    /// `Missing CNI default network`).
    NoCniConfig,
    /// kubenet has no pod CIDR (`Kubenet does not have netConfig. This is most likely due to
    /// lack of PodCIDR`): the Node's `spec.podCIDR` is not set.
    NoPodCidr,
    /// Anything else the runtime says.
    Other,
}

fn why_of(text: &str) -> Why {
    if text.contains("lack of PodCIDR") {
        return Why::NoPodCidr;
    }
    if [
        "cni plugin not initialized",
        "cni config uninitialized",
        "No CNI configuration file",
        "no network config found",
        "no networks found",
        "Missing CNI default network",
    ]
    .iter()
    .any(|p| text.contains(p))
    {
        Why::NoCniConfig
    } else {
        Why::Other
    }
}

/// The runtime's own words: the condition's `message:` up to its closing quote (structured
/// klog escapes the quotes inside it as `\"`, unescaped here), at most 200 characters (`…`
/// when cut there or by the log); `no message` for an empty one; else the record's error.
fn message(e: &LoggedEvent) -> String {
    let t = &*e.text;
    let Some(at) = t.find("message:") else {
        return super::teardown::error_quote(e);
    };
    let rest = &t[at + "message:".len()..];
    let mut said = String::new();
    let mut closed = false;
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'"') => {
                said.push('"');
                chars.next();
            }
            '"' => {
                closed = true;
                break;
            }
            c => said.push(c),
        }
    }
    // journalctl's pager ends a line it cut at the terminal's width with `>`.
    let said = if closed {
        said.trim()
    } else {
        said.trim().trim_end_matches('>').trim_end()
    };
    if said.is_empty() {
        return "no message".to_string();
    }
    let cut = said.chars().count() > 200;
    let mut out: String = said.chars().take(200).collect();
    if cut || !closed {
        out.push('…');
    }
    out
}

/// The times a record stands for, as spans: its own time, and the span of the repeats folded
/// into it ([`crate::event::Folded`]) as one stretch when they are dense enough to be one
/// outage (on average at most [`SAME_OUTAGE`] apart: a diagnosis keeps the first and last few
/// of a repetition and folds the middle ones, so the kubelet's 5 s checks over an hour are a
/// handful of records and one fold).
fn spans(e: &LoggedEvent) -> Vec<(Timestamp, Timestamp)> {
    let mut out: Vec<(Timestamp, Timestamp)> = e.time.map(|t| (t, t)).into_iter().collect();
    if let Some(f) = e.folded.as_deref()
        && let Some((a, b)) = f.span
    {
        let gaps = i64::try_from(f.records.saturating_sub(1))
            .unwrap_or(i64::MAX)
            .max(1);
        let mean_gap_secs = b.duration_since(a).as_secs() / gaps;
        if mean_gap_secs <= SAME_OUTAGE.as_secs() {
            out.push((a, b));
        } else {
            out.extend([(a, a), (b, b)]);
        }
    }
    out
}

/// The last outage of `group`: its spans ([`spans`]) joined while less than [`SAME_OUTAGE`]
/// apart, the latest of the joined stretches, as (start, end).
fn last_outage(group: &[&LoggedEvent]) -> Option<(Timestamp, Timestamp)> {
    let mut all: Vec<(Timestamp, Timestamp)> = group.iter().flat_map(|e| spans(e)).collect();
    all.sort_unstable();
    let mut joined: Option<(Timestamp, Timestamp)> = None;
    for (a, b) in all {
        joined = match joined {
            Some((s, e)) if a.duration_since(e) <= SAME_OUTAGE => Some((s, e.max(b))),
            _ => Some((a, b)),
        };
    }
    joined
}

/// `kubelet.go` `updateRuntimeUp`: `Container runtime network not ready` (the runtime's
/// `NetworkReady` condition false, logged at each 5 s check) in an outage that lasts to where
/// the log ends (the kubelet's log not going on [`READY_AGAIN`] past it). The kubelet sets the
/// node's Ready condition false with the runtime's message, and its pod workers refuse every
/// pod but host-network ones (`network is not ready`). A warning, the cause from the
/// condition's message, when the outage lasts [`NOT_READY_FOR`] or the kubelet says the node
/// did not become Ready within 2 minutes of its last start (`kubelet_node_status.go`
/// `fastNodeStatusUpdate`: `Node not becoming ready in time after startup`); a shorter one
/// (a pasted excerpt of seconds) is an info: it cannot be told from a node's first seconds.
pub(super) fn runtime_network_not_ready(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let all: Vec<&LoggedEvent> = logs.of(&[EventKind::RuntimeNetworkNotReady]).collect();
    if all.is_empty() || kubelet_goes_on_after(logs, &all, READY_AGAIN) {
        return;
    }
    let Some((start, end)) = last_outage(&all) else {
        return;
    };
    // The Node turned Ready after the outage's last record (`Recording event message for
    // node` event=NodeReady, V(2)): the network is ready.
    let ready: Vec<&LoggedEvent> = logs.of(&[EventKind::NodeReadyRecorded]).collect();
    if ready.iter().any(|r| r.time.is_some_and(|t| t >= end)) {
        return;
    }
    // The kubelet's own word (1.27+) that the node is not Ready 2 min after its last start:
    // the outage it speaks of, going on from about then (it logs the runtime's conditions at
    // error level only from then on), with no kubelet start and no NodeReady after it.
    let starts: Vec<&LoggedEvent> = logs.of(&[EventKind::KubeletStarted]).collect();
    let not_ready_after_start = logs
        .of(&[EventKind::NodeNotReadyAfterStartup])
        .filter(|e| {
            !starts.iter().any(|k| after(k, e))
                && !ready.iter().any(|r| after(r, e))
                && e.time
                    .is_some_and(|t| start <= t.saturating_add(SAME_OUTAGE).unwrap_or(t))
        })
        .last();
    let lasted = end.duration_since(start);
    let short = lasted < NOT_READY_FOR && not_ready_after_start.is_none();
    let outage: Vec<&LoggedEvent> = all
        .iter()
        .copied()
        .filter(|e| {
            let last = e.folded.as_ref().and_then(|f| f.span).map(|(_, b)| b);
            e.time.max(last).is_some_and(|t| t >= start)
        })
        .collect();
    let Some(latest) = outage.last() else {
        return;
    };
    let said = message(latest);
    let fix = match why_of(&latest.text) {
        Why::NoCniConfig => {
            "no CNI network config is loaded: is a network add-on (Calico, Flannel, Cilium, …) \
             installed, and its pod running on this node (kubectl -n kube-system get pods -o wide \
             --field-selector spec.nodeName=<node>)? ls /etc/cni/net.d /opt/cni/bin; crictl info \
             (status.conditions, NetworkReady) and the runtime's log (containerd: `failed to load \
             cni`, CRI-O: journalctl -u crio); a runtime that does not reload a config written \
             since needs a restart (systemctl restart containerd or crio; under dockershim the \
             kubelet loads it: systemctl restart kubelet)"
        }
        Why::NoPodCidr => {
            "kubenet takes the pod network from the Node's spec.podCIDR, which is not set: kubectl \
             get node <node> -o jsonpath='{.spec.podCIDR}'; the controller manager allocates it \
             with --allocate-node-cidrs=true and --cluster-cidr (or set it when the node \
             registers)"
        }
        Why::Other => {
            "crictl info (status.conditions, NetworkReady) and the runtime's log say why; the \
             network add-on's pod on this node (kubectl -n kube-system get pods -o wide \
             --field-selector spec.nodeName=<node>)"
        }
    };
    let counted = format!(
        "{}{}",
        plural(records(&outage), "record", "records"),
        over(&outage)
    );
    let (severity, summary) = if short {
        (
            Severity::Info,
            format!(
                "the container runtime reports its pod network not ready where the log ends \
                 ({said}; {counted}): too short to tell a node's first minutes from a node left \
                 without a network; if it lasts, the Node stays NotReady and no pod but \
                 host-network ones starts on it"
            ),
        )
    } else {
        let kubelet_said = if not_ready_after_start.is_some() {
            ", and the kubelet says the Node did not become Ready within 2 minutes of its start \
             (`Node not becoming ready in time after startup`)"
        } else {
            ""
        };
        (
            Severity::Warning,
            format!(
                "the container runtime reports its pod network not ready ({said}; {counted}), \
                 and nothing after shows it ready{kubelet_said}: the Node is NotReady and no pod \
                 but host-network ones starts on it"
            ),
        )
    };
    let mut f = finding(
        FindingKind::RuntimeNetworkNotReady,
        severity,
        summary,
        "kubelet.go updateRuntimeUp (every 5 s: the runtime's NetworkReady condition, CRI Status) \
         sets the node's Ready condition false with the runtime's message; the pod workers refuse \
         pods that are not host-network (`network is not ready`)",
        fix.to_string(),
    );
    f.evidence = quote(&outage);
    if let Some(e) = not_ready_after_start {
        f.evidence.push(line(e));
    }
    out.push(f);
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    runtime_network_not_ready(input.logs, out);
}
