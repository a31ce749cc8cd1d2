//! Whether a log source was understood: never a silent clean bill.
//!
//! A source whose records are mostly not understood (more than
//! [`MAX_NOT_UNDERSTOOD_PER_MILLE`] of them fit no shape), or that holds no record at all, must
//! not be reported as "0 findings": the diagnosis did not read it. [`Understanding`] counts a
//! source's records as they are parsed; blank lines, shell prompts and Markdown markup
//! and the flag library's deprecation warnings ([`non_record`]) are neither understood nor not
//! understood. [`Understanding::verdict`] says
//! what the SOURCES block, the JSON report and the agent's `/readyz` say.

use super::assemble::{is_markup, is_prompt};

/// The share of a source's records that may fit no shape before the source is reported as not
/// understood: 200 per mille (20 %).
pub const MAX_NOT_UNDERSTOOD_PER_MILLE: u64 = 200;
/// How many of the first records that fit no shape are kept, with their line numbers: 5.
pub const KEPT_FAILED_RECORDS: usize = 5;
/// How many bytes of each kept record: 200.
pub const KEPT_FAILED_BYTES: usize = 200;

/// A record that is not a log record and is not counted as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonRecord {
    /// Empty or whitespace only.
    Blank,
    /// A shell prompt or command echo (`user@node-a:~$ …`, `# …`), or journalctl's `-- …` meta
    /// line.
    Prompt,
    /// Markdown markup around a paste: a code fence, a quoted blank line.
    Markup,
    /// What the kubelet writes to stderr before its log starts: the flag library's warning
    /// for a deprecated flag (spf13/pflag `flag.go`: `Flag --%s has been deprecated, %s`,
    /// `Flag shorthand -%s has been deprecated, %s`), on every start that passes one.
    FlagDeprecated,
}

/// What `text` is when it is not a log record (see [`NonRecord`]); `None` for anything else.
pub fn non_record(text: &str) -> Option<NonRecord> {
    if text.trim().is_empty() {
        Some(NonRecord::Blank)
    } else if is_prompt(text) {
        Some(NonRecord::Prompt)
    } else if is_markup(text) {
        Some(NonRecord::Markup)
    } else if is_flag_deprecated(text) {
        Some(NonRecord::FlagDeprecated)
    } else {
        None
    }
}

/// pflag's `Flag --<name> has been deprecated, …` (or `Flag shorthand -<c> …`), indented or not.
fn is_flag_deprecated(text: &str) -> bool {
    let t = text.trim_start();
    (t.starts_with("Flag --") || t.starts_with("Flag shorthand -"))
        && t.contains(" has been deprecated")
}

/// Counts of one source's records, in reading order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Understanding {
    /// Records of a known shape.
    pub understood: u64,
    /// Records that fit no shape and are no [`NonRecord`].
    pub not_understood: u64,
    /// Blank lines, prompts and markup.
    pub non_records: u64,
    /// The first [`KEPT_FAILED_RECORDS`] records not understood: line number and text (cut to
    /// [`KEPT_FAILED_BYTES`]).
    pub first_failed: Vec<(u64, String)>,
}

/// What [`Understanding::verdict`] says about a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to judge: no line, or only blank lines, prompts and markup.
    Empty,
    /// At most [`MAX_NOT_UNDERSTOOD_PER_MILLE`] of the records fit no shape.
    Understood,
    /// Too many records fit no shape (`per_mille` of them), or none fits one
    /// (`per_mille == 1000`).
    NotUnderstood {
        /// The share of records that fit no shape, per mille.
        per_mille: u64,
    },
}

impl Understanding {
    /// Counts one record: `parsed` is whether it fits a known shape; `line` its first line.
    pub fn count(&mut self, text: &str, parsed: bool, line: u64) {
        if parsed {
            self.understood += 1;
        } else if non_record(text).is_some() {
            self.non_records += 1;
        } else {
            self.not_understood += 1;
            if self.first_failed.len() < KEPT_FAILED_RECORDS {
                self.first_failed.push((line, cut(text, KEPT_FAILED_BYTES)));
            }
        }
    }

    /// Adds the counts of the part of the source read after this one (its line numbers already
    /// shifted), keeping the first failed records in order.
    pub fn append(&mut self, later: Understanding) {
        self.understood += later.understood;
        self.not_understood += later.not_understood;
        self.non_records += later.non_records;
        for f in later.first_failed {
            if self.first_failed.len() < KEPT_FAILED_RECORDS {
                self.first_failed.push(f);
            }
        }
    }

    /// Whether the source was understood (see the module docs).
    pub fn verdict(&self) -> Verdict {
        let records = self.understood + self.not_understood;
        if records == 0 {
            return Verdict::Empty;
        }
        let per_mille = self.not_understood * 1000 / records;
        if self.understood == 0 || per_mille > MAX_NOT_UNDERSTOOD_PER_MILLE {
            Verdict::NotUnderstood { per_mille }
        } else {
            Verdict::Understood
        }
    }

    /// One line for a report: `N of M records fit no known shape; first: line L: text; …`.
    pub fn describe_failures(&self, origin: &str) -> String {
        let records = self.understood + self.not_understood;
        let mut s = if self.understood == 0 {
            format!("no record of a known shape in {records} records")
        } else {
            format!(
                "{} of {records} records fit no known shape",
                self.not_understood
            )
        };
        for (i, (line, text)) in self.first_failed.iter().enumerate() {
            s.push_str(if i == 0 { "; first: " } else { "; " });
            s.push_str(&format!("{origin}:{line}: {text}"));
        }
        s
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_key_echo_is_part_of_the_shell_session() {
        // containerd/containerd#2744: a `journalctl -f` paste ended with Ctrl-C.
        assert_eq!(non_record("^C"), Some(NonRecord::Prompt));
        assert_eq!(non_record("^C "), Some(NonRecord::Prompt));
        assert_eq!(non_record("^Cx"), None);
        assert_eq!(non_record("a ^C"), None);
    }

    #[test]
    fn a_log_command_pasted_without_its_prompt_is_no_record() {
        // cilium/cilium#40345
        let cmd = "journalctl -u kubelet.service | grep -i sandbox | egrep 'cilium' |tai";
        assert_eq!(non_record(cmd), Some(NonRecord::Prompt));
        assert_eq!(
            non_record("sudo crictl logs 3f2a | tail"),
            Some(NonRecord::Prompt)
        );
        assert_eq!(
            non_record("kubectl logs -n kube-system cilium-x"),
            Some(NonRecord::Prompt)
        );
        assert_eq!(non_record("cat the logs below"), None);
        assert_eq!(non_record("docker ps"), None);
    }

    #[test]
    fn the_flag_librarys_deprecation_warnings_are_no_records() {
        // kubernetes/kubernetes#100152: a kubelet's stderr before its log starts
        for l in [
            "Flag --cloud-provider has been deprecated, will be removed in 1.23, in favor of removing cloud provider code from Kubelet.",
            "  Flag --chaos-chance has been deprecated, will be removed in a future version.",
            "Flag shorthand -x has been deprecated, use --other",
        ] {
            assert_eq!(non_record(l), Some(NonRecord::FlagDeprecated), "{l}");
        }
        assert_eq!(non_record("Flag --x is set"), None);
        assert_eq!(non_record("the Flag --x has been deprecated"), None);
    }

    #[test]
    fn a_glog_file_header_is_no_record() {
        // kubernetes-sigs/sig-windows-tools#76: a Windows kubelet's log file
        for l in [
            "Log file created at: 2020/05/03 13:38:35",
            "Running on machine: w1",
            "Binary: Built with gc go1.13.9 for windows/amd64",
            "Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg",
        ] {
            assert_eq!(non_record(l), Some(NonRecord::Prompt), "{l}");
        }
        assert_eq!(non_record("Running on machine learning"), None);
    }

    #[test]
    fn journalctl_meta_lines_pasted_indented_are_no_records() {
        // deckhouse/deckhouse#336: the header pasted with the indentation of its block.
        let header = "  -- Logs begin at Wed 2021-11-17 13:38:23 MSK, end at Tue 2021-11-30 16:48:44 MSK. --";
        assert_eq!(non_record(header), Some(NonRecord::Prompt));
        assert_eq!(non_record("\t-- No entries --"), Some(NonRecord::Prompt));
        assert_eq!(non_record("  --help"), None);
    }

    #[test]
    fn verdicts() {
        let mut u = Understanding::default();
        assert_eq!(u.verdict(), Verdict::Empty);
        u.count("", false, 1);
        u.count("user@node-a:~$ journalctl -u kubelet", false, 2);
        u.count("> ```", false, 3);
        assert_eq!(u.verdict(), Verdict::Empty);
        assert_eq!(u.non_records, 3);
        for n in 0..4 {
            u.count("I0101 …", true, 4 + n);
        }
        u.count("some table row", false, 8);
        // 1 of 5: 20 %, not more.
        assert_eq!(u.verdict(), Verdict::Understood);
        u.count("another row", false, 9);
        assert_eq!(u.verdict(), Verdict::NotUnderstood { per_mille: 333 });
        assert_eq!(
            u.describe_failures("k.log"),
            "2 of 6 records fit no known shape; first: k.log:8: some table row; k.log:9: another row"
        );
        let mut none = Understanding::default();
        none.count("x y z", false, 1);
        assert_eq!(none.verdict(), Verdict::NotUnderstood { per_mille: 1000 });
        assert!(
            none.describe_failures("f")
                .starts_with("no record of a known shape in 1")
        );
    }

    #[test]
    fn append_keeps_order_and_the_cap() {
        let mut a = Understanding::default();
        let mut b = Understanding::default();
        for n in 0..4 {
            a.count("x", false, n);
            b.count("y", false, 10 + n);
        }
        b.count("I0101", true, 20);
        a.append(b);
        assert_eq!((a.understood, a.not_understood), (1, 8));
        let lines: Vec<u64> = a.first_failed.iter().map(|f| f.0).collect();
        assert_eq!(lines, [0, 1, 2, 3, 10]);
    }
}
