//! `podcoroner fleet` (and `kubectl podcoroner`, the same binary named `kubectl-podcoroner`):
//! every node's findings through the API server (`podcoroner_fleet`), docs/fleet.md.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use podcoroner_fleet::report::{Filters, FleetReport, NodeStatus, Outcome};

use crate::{EXIT_ERROR, EXIT_FINDINGS, FailOn, Output};

/// The name kubectl gives a plugin for `kubectl podcoroner` (a `kubectl-<name>` executable on
/// `PATH`): invoked under it, the binary acts as `podcoroner fleet`.
pub const KUBECTL_PLUGIN_NAME: &str = "kubectl-podcoroner";

/// `argv` with `fleet` inserted after the program name when the program is named
/// [`KUBECTL_PLUGIN_NAME`] (its basename), so that `kubectl podcoroner NODE` is
/// `podcoroner fleet NODE`.
pub fn plugin_args(mut argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let plugin = argv
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .is_some_and(|n| n == KUBECTL_PLUGIN_NAME);
    if plugin {
        argv.insert(1, "fleet".into());
    }
    argv
}

#[derive(Debug, Args)]
#[command(rename_all = "kebab-case")]
pub struct FleetArgs {
    /// Show this one node's findings as `podcoroner diagnose` prints them.
    node_name: Option<String>,
    /// The kubeconfig; default: in-cluster, then `$KUBECONFIG` or `~/.kube/config`.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The agents' namespace.
    #[arg(long, short = 'n', default_value = podcoroner_fleet::DEFAULT_NAMESPACE)]
    namespace: String,
    /// The agents' DaemonSet: its pod selector finds the agent pods.
    #[arg(long, default_value = podcoroner_fleet::DEFAULT_DAEMONSET)]
    daemonset: String,
    /// Only the Nodes matching this label selector (`kubectl get nodes -l`'s syntax, e.g.
    /// `node-role.kubernetes.io/worker,topology.kubernetes.io/zone=eu-1a`).
    #[arg(long = "node", value_name = "SELECTOR", conflicts_with = "node_name")]
    node_selector: Option<String>,
    /// Only findings of these kinds (repeat, or separate with commas).
    #[arg(long, value_name = "KIND", value_delimiter = ',', value_parser = parse_kind)]
    kind: Vec<String>,
    /// Only findings at or above this severity.
    #[arg(long, value_enum)]
    severity: Option<SeverityArg>,
    /// At most this many agents asked at once through the API server.
    #[arg(long, value_name = "N", default_value = "32", value_parser = clap::value_parser!(u32).range(1..=1024))]
    concurrency: u32,
    /// Each agent's answer through the API server's pod proxy must come within this (and every
    /// discovery request: the DaemonSet, the Node and pod LISTs). An agent answers from memory
    /// in milliseconds; 5s leaves room for a loaded API server while a node that never answers
    /// holds one of the --concurrency slots no longer than that.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = podcoroner_agent::config::parse_positive_duration)]
    timeout: Duration,
    /// Output format: the table (by kind, then by node, then the nodes not read), or the
    /// podcoroner.fleet/v1 JSON schema (docs/output.md); with NODE, the table `diagnose` prints
    /// or the agent's podcoroner.diagnosis/v1 answer.
    #[arg(short, long, value_enum, default_value_t = Output::Table)]
    output: Output,
    /// Exit 1 when a finding shown is at or above this severity.
    #[arg(long, value_enum, default_value_t = FailOn::Warning)]
    fail_on: FailOn,
}

/// `--severity`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SeverityArg {
    Critical,
    Warning,
    Info,
}

impl From<SeverityArg> for podcoroner_core::Severity {
    fn from(s: SeverityArg) -> Self {
        match s {
            SeverityArg::Critical => podcoroner_core::Severity::Critical,
            SeverityArg::Warning => podcoroner_core::Severity::Warning,
            SeverityArg::Info => podcoroner_core::Severity::Info,
        }
    }
}

fn parse_kind(s: &str) -> Result<String, String> {
    podcoroner_core::FindingKind::parse(s)
        .map(|k| k.as_str().to_string())
        .ok_or_else(|| {
            format!(
                "unknown finding kind {s:?}; the kinds: {}",
                podcoroner_core::FindingKind::ALL
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// Exit codes as `diagnose`'s: 0 no finding shown at or above `--fail-on`, 1 there are, 2 an
/// error (no usable kubeconfig, no DaemonSet, no agent pod at all, no node matching, a refused
/// LIST, or no node read at all; with NODE: that node not read).
pub async fn run(args: FleetArgs) -> anyhow::Result<u8> {
    let filters = Filters {
        node_selector: args.node_selector.clone(),
        node: args.node_name.clone(),
        kinds: args.kind.clone(),
        severity: args.severity.map(Into::into),
    };
    let opts = podcoroner_fleet::Options {
        kubeconfig: args.kubeconfig.clone(),
        namespace: args.namespace.clone(),
        daemonset: args.daemonset.clone(),
        node_selector: args.node_selector.clone(),
        node: args.node_name.clone(),
        kinds: args.kind.clone(),
        concurrency: args.concurrency as usize,
        timeout: args.timeout,
    };
    let mut gathered = podcoroner_fleet::gather(&opts).await?;
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let max = if let Some(name) = &args.node_name {
        let one = gathered.nodes.pop().context("no node read")?;
        let report = match one.outcome {
            Outcome::Read(r) => r,
            Outcome::NotRead(status, reason) => {
                eprintln!(
                    "error: node {name}: {}{}: {reason}",
                    status.as_str(),
                    one.agent_pod
                        .map(|p| format!(" (agent pod {}/{p})", args.namespace))
                        .unwrap_or_default()
                );
                return Ok(EXIT_ERROR);
            }
        };
        let diagnosis = podcoroner_fleet::report::node_diagnosis(&report, &filters);
        print(
            &mut stdout,
            args.output,
            || podcoroner_node::render::table(&diagnosis),
            &report,
        )?;
        diagnosis.max_severity()
    } else {
        let report = FleetReport::new(
            &args.namespace,
            &args.daemonset,
            filters,
            gathered.nodes,
            jiff::Timestamp::now(),
        );
        print(
            &mut stdout,
            args.output,
            || podcoroner_fleet::render::table(&report),
            &report,
        )?;
        stdout.flush().context("writing to stdout")?;
        let s = &report.summary;
        if s.read < s.nodes {
            eprintln!(
                "note: {} of {} nodes not read ({} no agent, {} agent not ready, {} agent unreachable, {} invalid answer): their findings are unknown",
                s.nodes - s.read,
                s.nodes,
                s.no_agent,
                s.not_ready,
                s.unreachable,
                s.invalid_response
            );
        }
        if s.read == 0 {
            let first = report
                .nodes
                .iter()
                .find(|n| n.status != NodeStatus::Ok)
                .and_then(|n| n.reason.clone())
                .unwrap_or_default();
            eprintln!("error: no node's agent could be read (first reason: {first})");
            return Ok(EXIT_ERROR);
        }
        report.max_severity()
    };
    stdout.flush().context("writing to stdout")?;
    Ok(match (args.fail_on.threshold(), max) {
        (Some(threshold), Some(max)) if max >= threshold => EXIT_FINDINGS,
        _ => 0,
    })
}

/// Writes the table, or `json` pretty-printed (streamed), to `out`.
fn print(
    out: &mut impl std::io::Write,
    output: Output,
    table: impl FnOnce() -> String,
    json: &impl serde::Serialize,
) -> anyhow::Result<()> {
    match output {
        Output::Table => out
            .write_all(table().as_bytes())
            .context("writing to stdout")?,
        Output::Json => {
            serde_json::to_writer_pretty(&mut *out, json)
                .map_err(std::io::Error::from)
                .context("writing the report to stdout")?;
            out.write_all(b"\n").context("writing to stdout")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_name_runs_fleet() {
        let args = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(
            plugin_args(args(&["/usr/local/bin/kubectl-podcoroner", "node-1"])),
            args(&["/usr/local/bin/kubectl-podcoroner", "fleet", "node-1"])
        );
        assert_eq!(
            plugin_args(args(&["podcoroner", "diagnose"])),
            args(&["podcoroner", "diagnose"])
        );
        assert_eq!(
            plugin_args(args(&["kubectl-podcoroner-old"])),
            args(&["kubectl-podcoroner-old"])
        );
    }
}
