//! End-to-end tests of `prover hekaton setup | prove | verify`: keys made by a separate setup,
//! a verifier that checks against a pinned key (file or digest) and refuses to run without
//! one, and the rejections: tampered proof, other public input, a proof made under another
//! setup, keys for another circuit.

use std::path::Path;
use std::process::{Command, Output};

fn prover(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prover")).args(args).output().expect("run prover")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_ok(o: &Output) {
    assert!(o.status.success(), "failed: {}", stderr(o));
}

fn assert_fails_with(o: &Output, needle: &str) {
    assert!(!o.status.success(), "expected failure, got success; stdout: {}", stdout(o));
    let err = stderr(o);
    assert!(err.contains(needle), "stderr does not mention {needle:?}: {err}");
    assert!(!err.contains("panicked"), "panicked: {err}");
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The digest a `setup` or `prove` printed.
fn digest_of(o: &Output) -> String {
    let out = stdout(o);
    let line = out.lines().find_map(|l| l.strip_prefix("verifying key digest: ")).unwrap_or_else(|| panic!("no digest in {out}"));
    assert_eq!(line.len(), 64, "{line}");
    line.to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

const CIRCUIT: [&str; 8] = ["--circuit", "synthetic", "--subcircuits", "2", "--steps", "16", "--wires", "2"];

fn setup(out: &Path) -> String {
    let o = prover(&[&["hekaton", "setup"][..], &CIRCUIT, &["--out", p(out)]].concat());
    assert_ok(&o);
    for f in ["pk.bin", "vk.bin", "circuit.json"] {
        assert!(out.join(f).exists(), "setup wrote no {f}");
    }
    digest_of(&o)
}

fn prove(keys: &Path, out: &Path) -> Output {
    prover(&[&["hekaton", "prove"][..], &CIRCUIT, &["--seed", "3", "--keys", p(keys), "--out", p(out)]].concat())
}

#[test]
fn hekaton_setup_prove_verify_against_a_pinned_key() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let digest = setup(&keys);
    let out = tmp.path().join("hk");
    let o = prove(&keys, &out);
    assert_ok(&o);
    assert_eq!(digest_of(&o), digest);

    // Pinned by digest, and by file.
    let v = prover(&["hekaton", "verify", p(&out), "--vk-digest", &digest]);
    assert_ok(&v);
    assert!(stdout(&v).contains("verified") && stdout(&v).contains(&digest), "{}", stdout(&v));
    let keys_vk = keys.join("vk.bin");
    assert_ok(&prover(&["hekaton", "verify", p(&out), "--vk", p(&keys_vk)]));
    assert_ok(&prover(&["hekaton", "verify", p(&out), "--vk", p(&keys_vk), "--vk-digest", &digest]));

    // No pinned key: refused, unless the user says to trust the proof directory.
    assert_fails_with(&prover(&["hekaton", "verify", p(&out)]), "--vk-digest");
    let v = prover(&["hekaton", "verify", p(&out), "--trust-proof-dir"]);
    assert_ok(&v);
    assert!(stderr(&v).contains("came with the proof"), "{}", stderr(&v));
    assert_fails_with(&prover(&["hekaton", "verify", p(&out), "--vk-digest", "abc"]), "64 hex digits");

    // A flipped proof byte.
    let bad = tmp.path().join("bad-proof");
    copy_dir(&out, &bad);
    let mut proof = std::fs::read(bad.join("proof.bin")).unwrap();
    let mid = proof.len() / 2;
    proof[mid] ^= 0x40;
    std::fs::write(bad.join("proof.bin"), proof).unwrap();
    let o = prover(&["hekaton", "verify", p(&bad), "--vk-digest", &digest]);
    assert!(!o.status.success() && !stderr(&o).contains("panicked"), "{}", stderr(&o));

    // Another public input.
    let bad = tmp.path().join("bad-public");
    copy_dir(&out, &bad);
    std::fs::write(bad.join("public.json"), "[\"12345\"]").unwrap();
    assert_fails_with(&prover(&["hekaton", "verify", p(&bad), "--vk-digest", &digest]), "does not verify");

    // A proof made under another setup of the same circuit (another trapdoor): its directory's
    // key has another digest, and under the pinned key the proof does not verify.
    let keys2 = tmp.path().join("keys2");
    let digest2 = setup(&keys2);
    assert_ne!(digest, digest2);
    let out2 = tmp.path().join("hk2");
    assert_ok(&prove(&keys2, &out2));
    assert_fails_with(&prover(&["hekaton", "verify", p(&out2), "--vk-digest", &digest]), "not the expected");
    assert_fails_with(&prover(&["hekaton", "verify", p(&out2), "--vk", p(&keys_vk)]), "does not verify");
    // ...and swapping the other key into the directory does not help.
    let swapped = tmp.path().join("swapped");
    copy_dir(&out2, &swapped);
    std::fs::copy(&keys_vk, swapped.join("vk.bin")).unwrap();
    assert_fails_with(&prover(&["hekaton", "verify", p(&swapped), "--vk-digest", &digest]), "does not verify");

    // Keys for another circuit are refused by the prover; nothing is written.
    let other = tmp.path().join("other");
    let o = prover(&[
        "hekaton", "prove", "--circuit", "synthetic", "--subcircuits", "2", "--steps", "17", "--wires", "2", "--keys", p(&keys),
        "--out", p(&other),
    ]);
    assert_fails_with(&o, "another circuit");
    assert!(!other.exists());
    // A damaged key file is a clear error.
    let broken = tmp.path().join("broken");
    copy_dir(&keys, &broken);
    let pk = std::fs::read(broken.join("pk.bin")).unwrap();
    std::fs::write(broken.join("pk.bin"), &pk[..pk.len() / 2]).unwrap();
    assert_fails_with(&prove(&broken, &other), "pk.bin");
    assert!(!other.exists());
}

#[test]
fn hekaton_one_shot_prove_and_bad_parameters() {
    let tmp = tempfile::tempdir().unwrap();
    // The one-shot demo path: the prover makes its own key, and says what that means.
    let out = tmp.path().join("hk");
    let o = prover(&[&["hekaton", "prove"][..], &CIRCUIT, &["--out", p(&out)]].concat());
    assert_ok(&o);
    assert!(stderr(&o).contains("one-shot setup"), "{}", stderr(&o));
    let digest = digest_of(&o);
    assert_ok(&prover(&["hekaton", "verify", p(&out), "--vk-digest", &digest]));
    // Bad parameters: one line, nothing written.
    let bad = tmp.path().join("bad");
    assert_fails_with(
        &prover(&["hekaton", "prove", "--circuit", "merkle-update", "--depth", "5", "--parts", "2", "--out", p(&bad)]),
        "--parts must divide --depth",
    );
    assert_fails_with(
        &prover(&["hekaton", "setup", "--circuit", "merkle-update", "--depth", "5", "--parts", "2", "--out", p(&bad)]),
        "--parts must divide --depth",
    );
    assert!(!bad.exists());
}

/// `prover hekaton wrap` and `verify-final` (issue 15): two proofs of a one-subcircuit circuit
/// wrapped with one set of wrap keys (made by the first wrap, reused by the second), verified
/// in one batch against the pinned final key; a final proof with another public input is
/// named; another key digest is refused.
#[test]
fn hekaton_wrap_and_verify_final() {
    let tmp = tempfile::tempdir().unwrap();
    let one = ["--circuit", "synthetic", "--subcircuits", "1", "--steps", "4", "--wires", "2"];
    let keys = tmp.path().join("keys");
    let o = prover(&[&["hekaton", "setup"][..], &one, &["--out", p(&keys)]].concat());
    assert_ok(&o);
    let digest = digest_of(&o);
    let wrap_keys = tmp.path().join("wrap-keys");
    let mut finals = Vec::new();
    for seed in ["3", "4"] {
        let dir = tmp.path().join(format!("proof-{seed}"));
        assert_ok(&prover(&[&["hekaton", "prove"][..], &one, &["--seed", seed, "--keys", p(&keys), "--out", p(&dir)]].concat()));
        let w = prover(&["hekaton", "wrap", p(&dir), "--vk-digest", &digest, "--wrap-keys", p(&wrap_keys)]);
        assert_ok(&w);
        assert_eq!(stderr(&w).contains("made the wrap keys"), seed == "3", "{}", stderr(&w));
        let out = stdout(&w);
        finals.push(out.lines().find_map(|l| l.strip_prefix("final key digest: ")).expect("final key digest").to_string());
        assert!(dir.join("final.bin").exists() && dir.join("final-key.bin").exists());
    }
    assert_eq!(finals[0], finals[1], "the second wrap made other keys");
    let (d3, d4) = (tmp.path().join("proof-3"), tmp.path().join("proof-4"));
    let v = prover(&["hekaton", "verify-final", p(&d3), p(&d4), "--key-digest", &finals[0]]);
    assert_ok(&v);
    assert!(stdout(&v).contains("2 final proofs checked"), "{}", stdout(&v));
    assert_fails_with(&prover(&["hekaton", "verify-final", p(&d3), "--key-digest", &digest]), "not the pinned final key");
    // Another public input beside proof-4's final proof: named, the other still fine alone.
    let lie = tmp.path().join("lie");
    copy_dir(&d4, &lie);
    let public: Vec<String> = serde_json::from_slice(&std::fs::read(lie.join("public.json")).unwrap()).unwrap();
    let mut changed = public.clone();
    changed[0] = if public[0] == "1" { "2".into() } else { "1".into() };
    std::fs::write(lie.join("public.json"), serde_json::to_vec(&changed).unwrap()).unwrap();
    assert_fails_with(&prover(&["hekaton", "verify-final", p(&d3), p(&lie), "--key-digest", &finals[0]]), "lie");
    assert_fails_with(&prover(&["hekaton", "verify-final", p(&lie), "--key-digest", &finals[0]]), "does not verify");
    assert_ok(&prover(&["hekaton", "verify-final", p(&d3), "--key-digest", &finals[0]]));
}
