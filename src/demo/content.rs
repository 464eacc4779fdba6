//! Realistic tool outputs for the demo: big ones that get retained (a lock file, a single-line
//! minified JSON document, a build log with its error near the end) and small ones that stay
//! inline. All deterministic for a given random generator.

use fastrand::Rng;
use std::fmt::Write as _;

const WORDS: &[&str] = &[
    "core", "util", "parse", "stream", "fast", "tiny", "json", "glob", "color", "path", "http",
    "signal", "event", "async", "lru", "cache", "semver", "chalk", "yaml", "micro", "lodash",
    "debug", "retry", "mime",
];

fn name(rng: &mut Rng) -> String {
    let a = WORDS[rng.usize(..WORDS.len())];
    let b = WORDS[rng.usize(..WORDS.len())];
    if a == b {
        a.to_owned()
    } else {
        format!("{a}-{b}")
    }
}

fn version(rng: &mut Rng) -> String {
    format!("{}.{}.{}", rng.u8(0..9), rng.u8(0..30), rng.u8(0..20))
}

fn hash(rng: &mut Rng, len: usize) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..len).map(|_| B64[rng.usize(..64)] as char).collect()
}

/// A `package-lock.json` of `packages` entries, pretty-printed: thousands of short lines.
/// `needle` is one package name guaranteed to be in it.
pub(super) fn package_lock(rng: &mut Rng, packages: usize, needle: &str) -> String {
    let mut out = String::from("{\n  \"name\": \"web-console\",\n  \"version\": \"2.4.0\",\n  \"lockfileVersion\": 3,\n  \"requires\": true,\n  \"packages\": {\n");
    let _ = writeln!(
        out,
        "    \"\": {{\n      \"name\": \"web-console\",\n      \"version\": \"2.4.0\"\n    }},"
    );
    let at = packages * 7 / 10;
    for i in 0..packages {
        let n = if i == at {
            needle.to_owned()
        } else {
            format!("{}-{i}", name(rng))
        };
        let _ = write!(
            out,
            "    \"node_modules/{n}\": {{\n      \"version\": \"{v}\",\n      \"integrity\": \"sha512-{h}==\",\n      \"license\": \"MIT\"",
            v = version(rng),
            h = hash(rng, 86)
        );
        if rng.u8(..4) == 0 {
            let _ = write!(
                out,
                ",\n      \"dependencies\": {{\n        \"{}\": \"^{}\"\n      }}",
                name(rng),
                version(rng)
            );
        }
        if rng.u8(..9) == 0 {
            out.push_str(",\n      \"dev\": true");
        }
        out.push_str(if i + 1 == packages {
            "\n    }\n"
        } else {
            "\n    },\n"
        });
    }
    out.push_str("  }\n}\n");
    out
}

/// One line of minified JSON (an API schema): a single enormous line.
pub(super) fn minified_schema(rng: &mut Rng, paths: usize) -> String {
    let mut out = String::from(
        r#"{"openapi":"3.1.0","info":{"title":"Billing API","version":"7.2.0"},"paths":{"#,
    );
    let deprecated_at = paths / 2;
    for i in 0..paths {
        if i > 0 {
            out.push(',');
        }
        let resource = name(rng).replace('-', "_");
        let _ = write!(
            out,
            r##""/v1/{resource}/{{id}}/{i}":{{"get":{{"operationId":"get_{resource}_{i}","summary":"Fetch one {resource} record","parameters":[{{"name":"id","in":"path","required":true,"schema":{{"type":"string","pattern":"^[a-z0-9]{{24}}$"}}}}],"responses":{{"200":{{"description":"OK","content":{{"application/json":{{"schema":{{"$ref":"#/components/schemas/{resource}"}}}}}}}},"404":{{"description":"Not found"}}}}{dep}}}}}"##,
            dep = if i == deprecated_at {
                r#","deprecated":true,"x-sunset":"2026-12-31""#
            } else {
                ""
            }
        );
    }
    out.push_str(r#"},"components":{"schemas":{}}}"#);
    out
}

/// A build log with hundreds of compile lines, some warnings, and the error near the end.
pub(super) fn build_log(rng: &mut Rng, crates: usize) -> String {
    let mut out = String::from("$ cargo build --release --locked\n    Updating index\n");
    for i in 0..crates {
        let _ = writeln!(out, "   Compiling {}-{i} v{}", name(rng), version(rng));
        // An error the model never sees: in the middle of the log, far from the stub's head
        // and tail and from the end it peeks at.
        if i == crates / 2 {
            out.push_str("warning: build script of `openssl-sys v0.9.103` failed on its first attempt: connection reset by peer (retried)\n");
        }
        if rng.u8(..25) == 0 {
            let _ = writeln!(
                out,
                "warning: unused variable: `ctx`\n  --> src/{}.rs:{}:9\n   |\n{:>3} |     let ctx = Context::new();\n   |         ^^^ help: if this is intentional, prefix it with an underscore: `_ctx`\n   |\n   = note: `#[warn(unused_variables)]` on by default\n",
                name(rng).replace('-', "_"),
                rng.u16(10..400),
                rng.u16(10..400)
            );
        }
    }
    out.push_str("   Compiling billing-core v0.9.0 (/work/billing/core)\n");
    out.push_str(concat!(
        "error[E0308]: mismatched types\n",
        "   --> core/src/invoice.rs:214:30\n",
        "    |\n",
        "214 |         let total: Cents = line.amount * line.quantity;\n",
        "    |                    -----   ^^^^^^^^^^^^^^^^^^^^^^^^^^^ expected `Cents`, found `u64`\n",
        "    |                    |\n",
        "    |                    expected due to this\n",
        "    |\n",
        "help: call `Into::into` on this expression to convert `u64` into `Cents`\n",
        "    |\n",
        "214 |         let total: Cents = (line.amount * line.quantity).into();\n",
        "    |                            +                           ++++++++\n",
        "\n",
        "For more information about this error, try `rustc --explain E0308`.\n",
        "error: could not compile `billing-core` (lib) due to 1 previous error\n",
    ));
    out
}

/// A short test run: inline.
pub(super) fn test_output(passed: u32, failed: &[&str]) -> String {
    let mut out = String::from("running tests\n");
    for f in failed {
        let _ = writeln!(out, "test {f} ... FAILED");
    }
    let _ = writeln!(
        out,
        "\ntest result: {}. {passed} passed; {} failed; 0 ignored",
        if failed.is_empty() { "ok" } else { "FAILED" },
        failed.len()
    );
    out
}

/// A source file of `lines` lines, read whole.
pub(super) fn source_file(rng: &mut Rng, lines: usize) -> String {
    let mut out = String::from("use std::collections::HashMap;\n\n");
    for i in 0..lines {
        match i % 12 {
            0 => {
                let _ = writeln!(out, "/// Handles the `{}` step.", name(rng));
            }
            1 => {
                let _ = writeln!(out, "pub fn step_{i}(input: &Input, cache: &mut HashMap<String, u64>) -> Result<u64> {{");
            }
            11 => out.push_str("}\n\n"),
            _ => {
                let _ = writeln!(
                    out,
                    "    let v{i} = cache.get(\"{}\").copied().unwrap_or({});",
                    name(rng),
                    rng.u32(..10_000)
                );
            }
        }
    }
    out
}

/// A `cargo test --color=always` log of `tests` tests in terminal colours (SGR sequences), one
/// failing: what a build log looks like before any viewer strips it.
pub(super) fn coloured_log(tests: usize) -> String {
    const GREEN: &str = "\u{1b}[32m";
    const RED: &str = "\u{1b}[1;31m";
    const YELLOW: &str = "\u{1b}[33m";
    const BOLD: &str = "\u{1b}[1m";
    const RESET: &str = "\u{1b}[0m";
    let mut out =
        format!("{BOLD}{GREEN}   Compiling{RESET} billing-core v0.9.0 (/work/billing/core)\n");
    out.push_str(&format!(
        "{YELLOW}warning{RESET}{BOLD}: unused import: `std::fmt`{RESET}\n"
    ));
    out.push_str(&format!(
        "{BOLD}{GREEN}    Finished{RESET} `test` profile in 41.07s\n"
    ));
    out.push_str(&format!(
        "     {BOLD}{GREEN}Running{RESET} unittests src/lib.rs\n\nrunning {tests} tests\n"
    ));
    for i in 0..tests {
        let (mark, colour) = if i == tests / 2 {
            ("FAILED", RED)
        } else {
            ("ok", GREEN)
        };
        let _ = writeln!(
            out,
            "test invoice::tests::case_{i:04} ... {colour}{mark}{RESET}"
        );
    }
    out.push_str(&format!(
        "\ntest result: {RED}FAILED{RESET}. {} passed; 1 failed; 0 ignored; 0 measured\n",
        tests - 1
    ));
    out
}
