//! The headless `run` command: its JSON report matches the scene and the physics, and bad
//! flags fail early with exit code 2.

use impulse_cloth::sim::ScenePreset;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_impulse-cloth"))
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("impulse-cloth-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Run `impulse-cloth run ARGS --json FILE`, check it succeeded, and parse the report.
/// Assert that a command exited successfully, showing its standard error if not.
fn assert_ran(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run_json(file: &str, args: &[&str]) -> serde_json::Value {
    let json = tmp(file);
    let out = bin().args(args).arg("--json").arg(&json).output().unwrap();
    assert_ran(&out);
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

/// |d − L|/L of every edge at the exported `positions`.
fn strains<'a>(
    positions: &'a serde_json::Value,
    edges: &'a [serde_json::Value],
    rest: &'a [serde_json::Value],
) -> impl Iterator<Item = f64> + 'a {
    let pos = positions.as_array().unwrap();
    edges.iter().zip(rest).map(move |(e, l)| {
        let d = dist(
            &pos[e[0].as_u64().unwrap() as usize],
            &pos[e[1].as_u64().unwrap() as usize],
        );
        let l = l.as_f64().unwrap();
        (d - l).abs() / l
    })
}

fn dist(a: &serde_json::Value, b: &serde_json::Value) -> f64 {
    let a: Vec<f64> = a
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let b: Vec<f64> = b
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[test]
fn json_report_matches_scene_and_physics() {
    let json = tmp("report.json");
    let obj = tmp("obj");
    let out = bin()
        .args([
            "run",
            "--grid",
            "10",
            "--steps",
            "12",
            "--slack",
            "0.1",
            "--tolerance",
            "1e-3",
            // One step a frame, so that every step's positions are recorded.
            "--substeps",
            "1",
            "--positions-every",
            "1",
            "--quiet",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--obj-dir")
        .arg(&obj)
        .output()
        .unwrap();
    assert_ran(&out);
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["constraints"], 180);
    assert_eq!(r["particles"], 100);
    assert_eq!(r["grid"], serde_json::json!([10, 10]));
    let inv = r["inverse_masses"].as_array().unwrap();
    assert_eq!(inv.len(), 100);
    for (i, k) in inv.iter().enumerate() {
        let k = k.as_f64().unwrap();
        if i == 0 || i == 9 {
            assert_eq!(k, 0.0, "corner {i} should be pinned");
        } else {
            assert!(
                (k - 100.0 / 0.2).abs() < 1e-9,
                "particle {i}: inverse mass {k}"
            );
        }
    }
    let edges = r["edges"].as_array().unwrap();
    let rest = r["rest_lengths"].as_array().unwrap();
    assert_eq!(edges.len(), 180);
    for (e, l) in edges.iter().zip(rest) {
        assert!((l.as_f64().unwrap() - 1.0 / 9.0).abs() < 1e-12);
        let (a, b) = (e[0].as_u64().unwrap(), e[1].as_u64().unwrap());
        assert!(b == a + 1 || b == a + 10, "edge {a}-{b} is not a grid edge");
    }
    let frames = r["frames"].as_array().unwrap();
    assert_eq!(frames[0]["step"], 0);
    assert_eq!(frames.len(), 13);
    // Strain recomputed from the exported positions equals the reported max_strain.
    let worst = frames[1..]
        .iter()
        .flat_map(|f| strains(&f["positions"], edges, rest))
        .fold(0.0f64, f64::max);
    let reported = r["max_strain"].as_f64().unwrap();
    assert!(
        (worst - reported).abs() <= 1e-9 * reported.max(1e-12),
        "recomputed {worst} vs reported {reported}"
    );
    assert_eq!(r["final_positions"], frames.last().unwrap()["positions"]);
    assert_eq!(std::fs::read_dir(&obj).unwrap().count(), 13);
    // The phases' means add up to the step's: each step's total is the sum of its phases.
    let phases = &r["phase_ms"];
    let sum: f64 = ["forces", "collision", "position", "integration", "velocity"]
        .iter()
        .map(|k| phases[k].as_f64().unwrap_or(-1.0))
        .inspect(|&ms| assert!(ms >= 0.0, "phase_ms: {phases}"))
        .sum();
    let mean = r["ms_per_step"]["mean"].as_f64().unwrap();
    assert!(
        (sum - mean).abs() <= 1e-6 * mean.max(1e-3),
        "phases {sum} ms against a step's {mean} ms"
    );
}

#[test]
fn invalid_flags_exit_with_code_2() {
    for args in [
        vec!["run", "--grid", "0"],
        vec!["run", "--grid", "3x"],
        vec!["run", "--solver", "magic"],
        vec!["run", "--tolerance", "-1"],
        vec!["run", "--tolerance", "nan"],
        vec!["run", "--dt", "0"],
        vec!["run", "--gravity", "1,2"],
        vec!["run", "--pin", "0,9999", "--grid", "4"],
        vec!["run", "--ball", "0,0,0,-1"],
        vec!["run", "--slack", "0.95"],
        vec!["run", "--limit-stretch", "0"],
        vec!["run", "--limit-stretch", "3"],
        vec!["run", "--limit-passes", "0"],
        vec!["run", "--scene", "curtain-rod", "--grid", "0x3"],
        vec!["run", "--json", "/nonexistent-dir/x.json"],
        vec!["run", "--json", "/"],
        vec!["run", "--steps", "18446744073709551615"],
        vec![
            "run",
            "--self-collision",
            "false",
            "--self-collision-from",
            "3",
        ],
        vec!["run", "--self-collision-from", "-1"],
        vec!["bench", "paper", "--steps", "100000000000"],
        vec!["run", "--grid", "4294967296x4294967296"],
        vec!["bench", "nothing"],
        vec![
            "bench",
            "paper",
            "--only",
            "no-such-solver",
            "--out",
            "/nonexistent-dir/b",
        ],
    ] {
        let out = bin().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty(), "{args:?}: no message");
    }
    // A negative number is read as the flag's value and rejected for what it is, not as
    // an unknown flag `-1`.
    for args in [
        vec!["run", "--tolerance", "-1"],
        vec!["run", "--mass", "-0.2"],
        vec!["run", "--dt", "-0.03"],
        vec!["bench", "paper", "--budget-ms", "-5"],
    ] {
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("must be a finite number > 0"),
            "{args:?}: {err}"
        );
    }
    // Integer flags are read the same way and name themselves in the error.
    for (args, flag) in [
        (vec!["run", "--steps", "-5"], "--steps"),
        (vec!["run", "--max-iterations", "-1"], "--max-iterations"),
        (vec!["bench", "paper", "--grids", "-10"], "--grids"),
    ] {
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("invalid value '-") && err.contains(flag),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn strain_limit_report_matches_its_frames() {
    let r = run_json(
        "limits.json",
        &[
            "run",
            "--solver",
            "strain-limit",
            "--scene",
            "drape",
            "--grid",
            "12",
            "--dt",
            "0.01",
            // One step per frame: the report's counts are per step, the frames per frame.
            "--substeps",
            "1",
            "--steps",
            "60",
            "--limit-stretch",
            "0.05",
            "--limit-compress",
            "0.01",
            "--positions-every",
            "1",
            "--quiet",
        ],
    );
    let l = &r["strain_limit"];
    assert_eq!(l["stretch"], 0.05);
    assert_eq!(l["compress"], 0.01);
    assert_eq!(l["symbolic_analyses"], 1, "one row set for the whole run");
    let tol = r["tolerance"].as_f64().unwrap();
    let edges = r["edges"].as_array().unwrap();
    let rest = r["rest_lengths"].as_array().unwrap();
    let (mut worst, mut outside, mut capped) = (0.0f64, 0usize, 0u64);
    for f in &r["frames"].as_array().unwrap()[1..] {
        let pos = f["positions"].as_array().unwrap();
        let mut any = false;
        for (e, l) in edges.iter().zip(rest) {
            let d = dist(
                &pos[e[0].as_u64().unwrap() as usize],
                &pos[e[1].as_u64().unwrap() as usize],
            );
            let rel = d / l.as_f64().unwrap() - 1.0;
            let excess = (rel - 0.05).max(-0.01 - rel);
            worst = worst.max(excess);
            if excess > tol {
                outside += 1;
                any = true;
            }
        }
        capped += u64::from(any);
    }
    let reported = l["worst_excess"].as_f64().unwrap();
    assert!((worst - reported).abs() < 1e-12, "{worst} vs {reported}");
    let fraction = outside as f64 / (60.0 * edges.len() as f64);
    assert!((fraction - l["outside_fraction"].as_f64().unwrap()).abs() < 1e-12);
    assert_eq!(r["capped_steps"].as_u64().unwrap(), capped);
}

/// A fresh directory of its own for one test.
fn tmp_dir(name: &str) -> std::path::PathBuf {
    let d = tmp(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Names in `dir` that look like temporaries (`*.tmp*`).
fn temporaries(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect()
}

/// The report goes through a symbolic link to its target (the link stays a link), and
/// through a FIFO and /dev/null (which stay what they are) instead of being renamed over
/// them; no temporary file is left behind.
#[cfg(unix)]
#[test]
fn reports_never_replace_what_is_not_a_regular_file() {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let dir = tmp_dir("special");
    let run = |json: &std::path::Path| {
        bin()
            .args(["run", "--grid", "4", "--steps", "2", "--quiet", "--json"])
            .arg(json)
            .output()
            .unwrap()
    };
    // A symbolic link to a regular file: the file is replaced, the link stays.
    let real = dir.join("real.json");
    std::fs::write(&real, b"old").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = run(&link);
    assert_ran(&out);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&real).unwrap()).unwrap();
    assert_eq!(r["steps"], 2);
    // A dangling link is refused before the run.
    let dangling = dir.join("dangling.json");
    std::os::unix::fs::symlink(dir.join("missing/x.json"), &dangling).unwrap();
    let out = run(&dangling);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A FIFO: written through to a reader, still a FIFO afterwards. The reader is open
    // (without waiting for a writer) before the run starts, and the small report fits in the
    // pipe, so it is read once the run is over.
    let fifo = dir.join("pipe.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let out = run(&fifo);
        assert_ran(&out);
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut got).unwrap();
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        let r: serde_json::Value = serde_json::from_slice(&got).unwrap();
        assert_eq!(r["steps"], 2);
    }
    // /dev/null stays a character device.
    let null = std::path::Path::new("/dev/null");
    if std::fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
        let out = run(null);
        assert_ran(&out);
        assert!(
            std::fs::metadata(null)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    let _ = std::fs::remove_dir_all(dir);
}

/// A report to a FIFO that nothing reads is refused before the run (exit 2, the flag named)
/// instead of the write waiting forever for a reader once the run is done.
#[cfg(unix)]
#[test]
fn a_report_to_a_fifo_nothing_reads_is_refused() {
    let dir = tmp_dir("fifo-no-reader");
    let fifo = dir.join("pipe.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return;
    }
    let mut child = bin()
        .args(["run", "--grid", "4", "--steps", "2", "--quiet", "--json"])
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed().as_secs() > 60 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`run --json FIFO` waited for a reader");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--json") && err.contains("nothing reads"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "the run ran: {err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Output paths that cannot be written are refused before anything runs (exit 2, the flag
/// named), not after the run with a temporary file left behind.
#[test]
fn outputs_are_checked_before_the_run() {
    let dir = tmp_dir("early");
    let slash = format!("{}/nodir/", dir.display());
    let same = dir.join("same");
    let bench_out = dir.join("bench");
    std::fs::create_dir_all(bench_out.join("bench.md")).unwrap();
    let same_s = same.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--steps", "3", "--json", &slash], "--json"),
        (
            vec!["run", "--steps", "3", "--json", same_s, "--obj-dir", same_s],
            "--obj-dir",
        ),
        (
            vec![
                "bench",
                "paper",
                "--only",
                "iterative 1e-1",
                "--grids",
                "10",
                "--steps",
                "2",
                "--out",
                bench_out.to_str().unwrap(),
            ],
            "--out",
        ),
    ];
    for (args, flag) in cases {
        let t = std::time::Instant::now();
        let out = bin().current_dir(&dir).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{args:?} ran: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(t.elapsed().as_secs() < 10, "{args:?}");
    }
    assert!(
        !same.exists(),
        "--obj-dir was created before the clash was found"
    );
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    // A directory that cannot take files (sysfs refuses even root).
    if std::path::Path::new("/sys/kernel").is_dir() {
        let out = bin()
            .args([
                "bench",
                "paper",
                "--grids",
                "10",
                "--steps",
                "2",
                "--out",
                "/sys/kernel",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--out"), "{err}");
        assert!(out.stdout.is_empty(), "the benchmark ran: {err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Flag errors name the flag and the value the user typed: not a field of the parameters,
/// not dt/substeps, integers as integers; values that pass the flag's own parser but would
/// fail mid-run are refused up front.
#[test]
fn flag_errors_name_the_flag_and_the_value() {
    for (args, wanted, unwanted) in [
        (
            vec!["run", "--size", "1e300"],
            vec!["--size", "1e300"],
            vec![],
        ),
        (
            vec!["run", "--mass", "1e-320"],
            vec!["--mass", "1e-320"],
            vec![],
        ),
        (
            vec!["run", "--threads", "10000", "--steps", "1"],
            vec!["--threads 10000"],
            vec![],
        ),
        (
            vec!["run", "--max-solves", "0"],
            vec!["--max-solves 0"],
            vec!["sle_max_solves"],
        ),
        (
            vec!["run", "--newton-steps", "0"],
            vec!["--newton-steps 0"],
            vec!["newton_max_steps"],
        ),
        (
            vec!["run", "--max-iterations", "4294967295"],
            vec!["--max-iterations 4294967295"],
            vec!["e9"],
        ),
        (
            vec!["run", "--dt", "0.001", "--substeps", "20"],
            vec!["--dt 0.001", "--substeps 20"],
            vec![],
        ),
        (vec!["run", "--dt", "0.5"], vec!["--dt 0.5"], vec![]),
        (
            vec!["run", "--scene", "drape", "--size", "500"],
            vec!["--size 500", "drape"],
            vec!["--ball"],
        ),
        (
            vec!["run", "--pin", "0,99", "--grid", "4"],
            vec!["--pin", "99"],
            vec![],
        ),
        (vec!["bench", "paper", "--only", ""], vec!["--only"], vec![]),
        (
            vec!["bench", "paper", "--only", "newton,"],
            vec!["--only"],
            vec![],
        ),
        (
            vec!["bench", "paper", "--threads", "10000", "--grids", "10"],
            vec!["--threads 10000"],
            vec![],
        ),
    ] {
        let t = std::time::Instant::now();
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        for w in wanted {
            assert!(err.contains(w), "{args:?}: `{w}` missing in {err}");
        }
        for u in unwanted {
            assert!(!err.contains(u), "{args:?}: `{u}` in {err}");
        }
        assert!(
            t.elapsed().as_secs() < 10,
            "{args:?} took {:?}",
            t.elapsed()
        );
    }
    // Pin names are case-insensitive.
    for pin in ["CORNERS", "Top-Edge", "none"] {
        let out = bin()
            .args([
                "run", "--grid", "4", "--steps", "1", "--quiet", "--pin", pin,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{pin}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Values found by fuzzing the flags are refused by the flag's own check, naming the flag,
/// before anything is written: numbers with a leading `-` that clap cannot tell from a flag
/// (`-inf`, `-1e-3`), a huge value shown in scientific notation rather than in 301 digits,
/// a grid side of 0 and a safety cap out of range.
#[test]
fn fuzzed_flag_values_are_refused_by_their_own_checks() {
    let dir = tmp_dir("fuzzed");
    let out_dir = dir.join("bench-out");
    let out_s = out_dir.to_str().unwrap();
    for (args, wanted) in [
        (vec!["run", "--tolerance", "-inf"], "--tolerance"),
        (vec!["run", "--tolerance", "-1e-3"], "--tolerance"),
        (vec!["run", "--dt", "-inf"], "--dt"),
        (vec!["run", "--size", "-1e3"], "--size"),
        (vec!["run", "--mass", "-inf"], "--mass"),
        (vec!["run", "--slack", "-inf"], "--slack"),
        (vec!["run", "--perturb", "-1e-9"], "--perturb"),
        (vec!["run", "--limit-stretch", "-1e-2"], "--limit-stretch"),
        (vec!["run", "--gravity", "-1"], "--gravity"),
        (vec!["run", "--gravity", "-inf,0,0"], "--gravity"),
        (vec!["run", "--wind", "-1e3,0,0"], "--wind"),
        (vec!["bench", "paper", "--budget-ms", "-inf"], "--budget-ms"),
        (vec!["run", "--dt", "1e300"], "--dt 1e300"),
        (
            vec!["run", "--dt", "1e300", "--substeps", "2"],
            "--dt 1e300",
        ),
        (vec!["run", "--dt", "1e-300"], "--dt 1e-300"),
        (vec!["run", "--max-splits", "7"], "--max-splits"),
        (
            vec!["bench", "paper", "--grids", "0", "--out", out_s],
            "--grids",
        ),
        (
            vec!["bench", "app", "--grids", "10,1", "--out", out_s],
            "--grids",
        ),
        (
            vec![
                "bench",
                "paper",
                "--hard-cap",
                "20000000",
                "--grids",
                "10",
                "--out",
                out_s,
            ],
            "--hard-cap",
        ),
        (
            vec!["bench", "paper", "--hard-cap", "0", "--out", out_s],
            "--hard-cap",
        ),
    ] {
        let out = bin().current_dir(&dir).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(wanted),
            "{args:?}: `{wanted}` missing in {err}"
        );
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
        assert!(!err.contains("000000000"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} ran");
        assert!(!out_dir.exists(), "{args:?} wrote its outputs");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `--drag I:X,Y,Z:T0:T1:T2` grabs particle I at T0, moves its target on a line from where
/// it was to X,Y,Z by T1, holds it and lets go at T2; the recorded frames say which particle
/// is held and where it is pulled, and a reachable target is reached (the grab is the
/// app's: the held particle goes where its target is).
#[test]
fn scripted_drag_is_recorded_and_followed() {
    let dt = 0.05;
    let (t0, t1, t2) = (0.2, 0.6, 1.0);
    let start = run_json(
        "drag-start.json",
        &[
            "run", "--grid", "10", "--steps", "4", "--dt", "0.05", "--quiet",
        ],
    );
    // Particle 95 (bottom row) where the drag starts (t = T0 = 4 steps), pulled 15 cm
    // back towards the pinned row and 5 cm up: closer to every pin, well within reach.
    let from: Vec<f64> = start["final_positions"][95]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let to = [from[0], from[1] + 0.05, from[2] - 0.15];
    let drag = format!("95:{},{},{}:{t0}:{t1}:{t2}", to[0], to[1], to[2]);
    let r = run_json(
        "drag.json",
        &[
            "run",
            "--grid",
            "10",
            "--steps",
            "30",
            "--dt",
            "0.05",
            "--quiet",
            "--drag",
            &drag,
            "--positions-every",
            "1",
            // The hand's own motion is checked: in self-contact it is bounded per step
            // (tests/self_contact.rs checks that bound).
            "--self-collision",
            "false",
        ],
    );
    let frames = r["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 31);
    for f in frames {
        let k = f["step"].as_u64().unwrap();
        let t = k as f64 * dt;
        let held = t > t0 + 1e-9 && t < t2 + 1e-9;
        if !held {
            assert!(
                f["grabbed"].is_null() && f["grab_target"].is_null(),
                "step {k}: {f:?}"
            );
            continue;
        }
        assert_eq!(f["grabbed"].as_u64(), Some(95), "step {k}");
        let s = ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
        let want: Vec<f64> = (0..3).map(|i| from[i] + s * (to[i] - from[i])).collect();
        let want = serde_json::json!(want);
        assert!(dist(&f["grab_target"], &want) < 1e-9, "step {k}: target");
        // The hand (10⁴× the cloth's mass) lands on its target up to the cloth's pull,
        // h²·T/M: 2.5 µm at h = 0.05 s for T = the cloth's weight.
        let miss = dist(&f["positions"][95], &f["grab_target"]);
        assert!(
            miss < 1e-4,
            "step {k}: the held particle is {miss} m from its target"
        );
    }
    let at_release = &frames[(t2 / dt).round() as usize];
    assert!(dist(&at_release["positions"][95], &serde_json::json!(to)) < 1e-4);
}

/// A drag on a particle that does not exist, or with times out of order, is refused before
/// the run and the message names `--drag`.
#[test]
fn bad_drags_are_refused_with_the_flag() {
    for (drag, why) in [
        ("400:0,0,0:0:1", "--drag"),
        ("5:0,0,0:1:0.5", "T1"),
        ("5:0,0:0:1", "X,Y,Z"),
    ] {
        let out = bin()
            .args(["run", "--grid", "10", "--steps", "2", "--drag", drag])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{drag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{drag}: {err}");
    }
}

/// `bench app` at its smallest: every scene with the one solver asked for, at both
/// tolerances, in a table with the documented columns; each row is the `run` its flags in
/// bench.json describe (the same worst strain and iterations, bit for bit, on one thread),
/// and the built-in drag of every pinned scene holds its particle beyond reach, so its
/// strain is far above the tolerance.
#[test]
fn bench_app_rows_are_runs_of_their_flags() {
    let dir = tmp_dir("bench-app");
    let out = bin()
        .args([
            "bench",
            "app",
            "--grids",
            "10",
            "--steps",
            "5",
            "--only",
            "strips",
            "--threads",
            "1",
            "--scenes",
            "hanging,curtain,drape,flag",
            "--self-collision",
            "off",
            // What is tested is that rows are runs of their flags: a loaded machine must
            // not stop a row at the budget.
            "--budget-ms",
            "100000",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert_ran(&out);
    let md = std::fs::read_to_string(dir.join("bench.md")).unwrap();
    let header = "| scene | grid | solver | tolerance | self-collision | step | ms/frame mean | \
                  p95 | slowest | slowest ÷ median | iterations/frame | max strain | steps over tolerance | drag held | \
                  self-contact ms/frame | gathers/frame (whole + partial) | rows | zone steps (whole cloth) | frames crossing | \
                  on ÷ off | status |";
    assert!(md.contains(header), "{md}");
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("10×10"))
        .collect();
    assert_eq!(rows.len(), 8, "{md}");
    // A 1 m cloth's 10×10 grid: its spacing is 1/9 m.
    let substeps = impulse_cloth::config::strips_substeps(1.0 / 9.0);
    let step = format!("{substeps} × 1/{} s", 60 * substeps);
    for (scene, row) in [
        "hanging", "hanging", "curtain", "curtain", "drape", "drape", "flag", "flag",
    ]
    .iter()
    .zip(&rows)
    {
        assert!(
            row.starts_with(&format!("| {scene} | 10×10 | strips |")),
            "{row}"
        );
        assert!(row.contains("| off |"), "{row}");
        assert!(row.contains(&step), "{row}");
        assert!(row.ends_with("| ok |"), "{row}");
    }
    assert!(dir.join("ms_per_frame.png").is_file());
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("bench.json")).unwrap()).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for (k, row) in rows.iter().enumerate() {
        let flags: Vec<&str> = row["run_flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let mut args = vec!["run", "--quiet"];
        args.extend(&flags);
        let r = run_json(&format!("bench-app-row-{k}.json"), &args);
        assert_eq!(r["steps"], 5);
        assert_eq!(
            row["steps"],
            5 * substeps,
            "the solver's substeps per frame"
        );
        assert_eq!(r["max_strain"], row["max_strain"], "row {k}: {flags:?}");
        assert_eq!(
            r["iterations"]["mean"], row["iterations_per_frame"],
            "row {k}"
        );
        assert!(row["held_frames"].as_u64().unwrap() > 0, "row {k}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A `--drag` particle that is not on every grid is refused before anything runs (exit 2),
/// naming the flag and the grid it does not fit; by `bench app` and `bench paper` alike.
#[test]
fn bench_drag_outside_a_grid_is_refused() {
    let dir = tmp_dir("bench-drag");
    for which in ["app", "paper"] {
        let out = bin()
            .args([
                "bench",
                which,
                "--grids",
                "30,10",
                "--steps",
                "2",
                "--drag",
                "500:0,0,0:0:1",
                "--out",
            ])
            .arg(&dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{which}: {err}");
        assert!(err.contains("--drag 500:"), "{which}: {err}");
        assert!(err.contains("10×10"), "{which}: {err}");
        assert!(out.stdout.is_empty(), "{which} ran");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // Flags that belong to the other benchmark are refused, not ignored.
    for args in [
        vec!["bench", "app", "--hard-cap", "5", "--grids", "10"],
        vec!["bench", "paper", "--scenes", "hanging", "--grids", "10"],
        vec!["bench", "paper", "--substeps", "4", "--grids", "10"],
        vec!["bench", "app", "--substeps", "0", "--grids", "10"],
        vec!["bench", "app", "--scenes", "curtain-rod", "--grids", "10"],
        vec!["bench", "app", "--only", "no-such-solver", "--grids", "10"],
    ] {
        let out = bin().args(&args).arg("--out").arg(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} ran");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `run` without flags is the app's default (hanging 30×30 with slack 0.1, the grid's
/// solver — strips, four steps a frame — at 1e-4), and it holds its tolerance in every step
/// while a drag
/// pulls the middle of the free edge 2 m down, beyond what the pinned cloth can reach: the
/// strains recomputed from the recorded positions and the reported worst are within 1e-4,
/// no step ends over it, the pins stay put and the held particle stops short.
#[test]
fn the_default_configuration_holds_its_tolerance_while_dragged_beyond_reach() {
    let r = run_json(
        "default-drag.json",
        &[
            "run",
            "--steps",
            "150",
            "--drag",
            "885:0,-2,0.5:0.5:1.5",
            "--positions-every",
            "5",
            "--quiet",
        ],
    );
    let solver = impulse_cloth::config::solver(ScenePreset::Hanging, false);
    assert_eq!(r["solver"], solver.name());
    assert_eq!(r["scene"], "hanging");
    assert_eq!(r["grid"], serde_json::json!([30, 30]));
    let world = impulse_cloth::sim::SceneSpec::new(ScenePreset::Hanging, 30, 30)
        .build(impulse_cloth::sim::SimParams::default())
        .unwrap();
    assert_eq!(
        r["substeps"],
        impulse_cloth::config::substeps(solver, &world.cloth)
    );
    let tol = r["tolerance"].as_f64().unwrap();
    assert_eq!(tol, 1e-4);
    assert!((r["dt"].as_f64().unwrap() - 1.0 / 60.0).abs() < 1e-15);
    assert!(r["error"].is_null(), "{}", r["error"]);
    assert_eq!(r["capped_steps"], 0, "steps over the tolerance");
    assert!(r["max_strain"].as_f64().unwrap() <= tol * (1.0 + 1e-9));
    let edges = r["edges"].as_array().unwrap();
    let rest = r["rest_lengths"].as_array().unwrap();
    let inv = r["inverse_masses"].as_array().unwrap();
    let frames = r["frames"].as_array().unwrap();
    let first = frames[0]["positions"].as_array().unwrap();
    for f in frames {
        let pos = f["positions"].as_array().unwrap();
        let worst = strains(&f["positions"], edges, rest).fold(0.0f64, f64::max);
        assert!(
            worst <= tol * (1.0 + 1e-9),
            "step {}: {worst:.3e}",
            f["step"]
        );
        for (i, k) in inv.iter().enumerate() {
            if k.as_f64().unwrap() == 0.0 {
                assert!(dist(&pos[i], &first[i]) < 1e-12, "pin {i} moved");
            }
        }
    }
    let last = frames.last().unwrap();
    assert_eq!(last["grabbed"], 885);
    let held = &last["positions"].as_array().unwrap()[885];
    let short = dist(held, &last["grab_target"]);
    assert!(
        short > 0.3,
        "the held particle is {short} m from the target"
    );
}

/// `--self-collision-from`: the fold's drag lays its corner through the sheet with
/// self-collision off; switched on at step 200, the crossings it made are reported at the
/// end of the first step and gone by the second, no zone holds the whole cloth, and every
/// step stays within the tolerance.
#[test]
fn self_collision_switched_on_mid_run_untangles_the_fold() {
    let r = run_json(
        "from.json",
        &[
            "run",
            "--scene",
            "fold",
            "--grid",
            "30",
            "--steps",
            "210",
            "--self-collision-from",
            "200",
            // Newton at one step a frame lays the corner through the sheet while
            // self-collision is off; strips at four (the grid's default) happen not to.
            "--solver",
            "newton",
            "--quiet",
        ],
    );
    let sc = &r["self_contact"];
    assert_eq!(sc["from_step"], 200);
    assert_eq!(sc["enabled"], true);
    assert!(sc["max_crossings"].as_u64().unwrap() > 0, "{sc}");
    assert!(sc["crossing_steps"].as_u64().unwrap() <= 1, "{sc}");
    assert_eq!(sc["whole_zone_steps"], 0, "{sc}");
    assert_eq!(sc["whole_by_contact_steps"], 0, "{sc}");
    assert!(
        r["max_strain"].as_f64().unwrap() <= 1e-4 * (1.0 + 1e-6),
        "{r}"
    );
}
