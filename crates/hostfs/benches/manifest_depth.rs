//! What a deeply nested manifest costs: `parse` (serde_yaml alone, what podcoroner ran before
//! the depth bound) beside `parse_file` (the kubelet's depth bound first) on the break-it
//! review's files, and `parse_file` on the worst file within the bounds (10 MiB at the deepest
//! nesting serde_yaml takes, and up to the flow cost budget). `cargo bench -p podcoroner-hostfs --bench manifest_depth`; each
//! row is the median of a few runs, in milliseconds.

use std::time::{Duration, Instant};

use podcoroner_hostfs::manifests::{parse, parse_file};

fn pod_with(x: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: d\n  x: {x}\nspec:\n  containers: [{{name: a}}]\n"
    )
}

fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2].as_secs_f64() * 1000.0
}

fn main() {
    let flow = |n: usize| pod_with(&format!("{}{}", "[".repeat(n), "]".repeat(n)));
    let maps = |n: usize| pod_with(&format!("{}1{}", "{a: ".repeat(n), "}".repeat(n)));
    println!(
        "{:<44} {:>14} {:>14}",
        "file", "parse (before)", "parse_file"
    );
    for (name, text, before) in [
        ("[ x 20000 (40 KB)", flow(20_000), true),
        ("[ x 40000 (80 KB)", flow(40_000), true),
        ("{a: x 20000", maps(20_000), true),
        (
            "[ x 200000 (400 KB, the issue's file)",
            flow(200_000),
            false,
        ),
        ("{a: x 100000 (the issue's file)", maps(100_000), false),
    ] {
        let after = median_ms(5, || {
            let _ = parse_file(text.as_bytes());
        });
        let before = if before {
            format!(
                "{:.1}",
                median_ms(3, || {
                    let _ = parse(text.as_bytes());
                })
            )
        } else {
            "(> 60 s)".to_string()
        };
        println!("{name:<44} {before:>14} {after:>14.3}");
    }
    // The worst within bounds: 10 MiB of flow sequences 120 deep.
    let unit = format!("{}1{}, ", "[".repeat(120), "]".repeat(120));
    let n = (10 * 1024 * 1024 - 200) / unit.len();
    let worst = pod_with(&format!("[{}]", unit.repeat(n)));
    let ms = median_ms(3, || {
        let _ = parse_file(worst.as_bytes());
    });
    println!(
        "{:<44} {:>14} {ms:>14.1}",
        format!("10 MiB, 120 deep ({} KB)", worst.len() / 1024),
        "(13 s, once)"
    );
    // The worst still parsed: flow nesting 120 deep, repeated up to the flow cost budget.
    let mut units = 1;
    let budget = podcoroner_hostfs::manifests::MAX_FLOW_COST;
    while podcoroner_hostfs::manifests::measure(
        &pod_with(&format!("[{}]", unit.repeat(units * 2))),
        usize::MAX,
    )
    .flow_cost
        <= budget
    {
        units *= 2;
    }
    let under = pod_with(&format!("[{}]", unit.repeat(units)));
    let ms = median_ms(3, || {
        let _ = parse_file(under.as_bytes());
    });
    let ms_before = median_ms(3, || {
        let _ = parse(under.as_bytes());
    });
    println!(
        "{:<44} {ms_before:>14.1} {ms:>14.1}",
        format!("120 deep, under the budget ({} KB)", under.len() / 1024)
    );
    // 10 MiB of block YAML (a huge but ordinary manifest): parsed whole.
    let block = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: d\n  annotations:\n{}spec:\n  containers: [{{name: a}}]\n",
        (0..)
            .map(|i| format!("    key-{i}: value {i} [a, b]\n"))
            .take_while({
                let mut total = 0;
                move |l: &String| {
                    total += l.len();
                    total < 10 * 1024 * 1024 - 200
                }
            })
            .collect::<String>()
    );
    let ms = median_ms(3, || {
        let _ = parse_file(block.as_bytes());
    });
    let ms_before = median_ms(3, || {
        let _ = parse(block.as_bytes());
    });
    println!(
        "{:<44} {ms_before:>14.1} {ms:>14.1}",
        "10 MiB of block YAML"
    );
    let real = pod_with("[a, b]");
    let ms = median_ms(101, || {
        let _ = parse_file(real.as_bytes());
    });
    let ms_before = median_ms(101, || {
        let _ = parse(real.as_bytes());
    });
    println!(
        "{:<44} {ms_before:>14.3} {ms:>14.3}",
        "a real pod (shallow)"
    );
}
