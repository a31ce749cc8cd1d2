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
    /// `cni config uninitialized`, CRI-O's `No CNI configuration file in …`).
    NoCniConfig,
    /// Anything else the runtime says.
    Other,
}

fn why_of(text: &str) -> Why {
    if [
        "cni plugin not initialized",
        "cni config uninitialized",
        "No CNI configuration file",
        "no network config found",
        "no networks found",
    ]
    .iter()
    .any(|p| text.contains(p))
    {
        Why::NoCniConfig
    } else {
        Why::Other
    }
}

/// The runtime's own words: the condition's `message:`, else the record's error.
fn message(e: &LoggedEvent) -> String {
    let t = &*e.text;
    match t.find("message:") {
        Some(at) => {
            let rest = &t[at + "message:".len()..];
            let end = rest.find(['"', '}']).unwrap_or(rest.len());
            rest[..end].trim().chars().take(200).collect()
        }
        None => super::teardown::error_quote(e),
    }
}

/// `kubelet.go` `updateRuntimeUp`: `Container runtime network not ready` (the runtime's
/// `NetworkReady` condition false, logged at each 5 s check) in one outage of at least
/// [`NOT_READY_FOR`] that lasts to where the log ends (the kubelet's log not going on
/// [`READY_AGAIN`] past it). The kubelet sets the node's Ready condition false with the
/// runtime's message, and its pod workers refuse every pod but host-network ones (`network is
/// not ready`). A warning, the cause from the condition's message.
pub(super) fn runtime_network_not_ready(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let all: Vec<&LoggedEvent> = logs.of(&[EventKind::RuntimeNetworkNotReady]).collect();
    if all.is_empty() || kubelet_goes_on_after(logs, &all, READY_AGAIN) {
        return;
    }
    // The last outage: back from the last record while the records are less than
    // SAME_OUTAGE apart.
    let mut times: Vec<Timestamp> = record_times(&all).collect();
    times.sort_unstable();
    let Some(&last) = times.last() else {
        return;
    };
    let start = times
        .windows(2)
        .rev()
        .find(|w| w[1].duration_since(w[0]) > SAME_OUTAGE)
        .map_or(times[0], |w| w[1]);
    if last.duration_since(start) < NOT_READY_FOR {
        return;
    }
    let outage: Vec<&LoggedEvent> = all
        .iter()
        .copied()
        .filter(|e| {
            let end = e.folded.as_ref().and_then(|f| f.span).map(|(_, b)| b);
            e.time.max(end).is_some_and(|t| t >= start)
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
             cni`); a runtime that does not reload a config written since needs a restart \
             (systemctl restart containerd)"
        }
        Why::Other => {
            "crictl info (status.conditions, NetworkReady) and the runtime's log say why; the \
             network add-on's pod on this node (kubectl -n kube-system get pods -o wide \
             --field-selector spec.nodeName=<node>)"
        }
    };
    let mut f = finding(
        FindingKind::RuntimeNetworkNotReady,
        Severity::Warning,
        format!(
            "the container runtime reports its pod network not ready ({said}; {}{}), and nothing \
             after shows it ready: the Node is NotReady and no pod but host-network ones starts \
             on it",
            plural(records(&outage), "record", "records"),
            over(&outage),
        ),
        "kubelet.go updateRuntimeUp (every 5 s: the runtime's NetworkReady condition, CRI Status) \
         sets the node's Ready condition false with the runtime's message; the pod workers refuse \
         pods that are not host-network (`network is not ready`)",
        fix.to_string(),
    );
    f.evidence = quote(&outage);
    out.push(f);
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    runtime_network_not_ready(input.logs, out);
}
