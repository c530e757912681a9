//! End-to-end tests of `prover reckle prove | update | verify` on a tiny tree, including the
//! bad-input paths (clear error, non-zero exit, nothing written).

use std::path::Path;
use std::process::{Command, Output};

/// A cache directory of the tests' own, so that the first `verify` derives the root key and
/// later ones load it.
fn cache_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

fn prover(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prover"))
        .args(args)
        .env("PROVER_CACHE_DIR", cache_dir())
        .output()
        .expect("run prover")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_fails_with(o: &Output, needle: &str) {
    assert!(!o.status.success(), "expected failure, got success; stdout: {}", String::from_utf8_lossy(&o.stdout));
    let err = stderr(o);
    assert!(err.contains(needle), "stderr does not mention {needle:?}: {err}");
    assert!(!err.contains("panicked"), "panicked: {err}");
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn prove_update_verify_and_tamper() {
    let tmp = tempfile::tempdir().unwrap();
    let leaves = tmp.path().join("leaves.txt");
    std::fs::write(&leaves, "# eight leaves\n1\n2\n0x3\n4\n\n5\n6\n7\n0xffffffffffffffff\n").unwrap();
    let out = tmp.path().join("proof");
    let o = prover(&["reckle", "prove", "--leaves-file", p(&leaves), "--batch", "1,6,7", "--log-bucket", "1", "--out", p(&out)]);
    assert!(o.status.success(), "prove failed: {}", stderr(&o));

    let o = prover(&["reckle", "verify", p(&out)]);
    assert!(o.status.success(), "verify failed: {}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(stdout.contains("verified against the statement's own C"), "{stdout}");
    assert!(stdout.contains("--root"), "{stdout}");
    // Second time from the cached key; then with the cached key damaged (ignored, re-derived).
    let o = prover(&["reckle", "verify", p(&out)]);
    assert!(o.status.success() && !stderr(&o).contains("building circuits"), "cached key not used: {}", stderr(&o));
    let key = cache_dir().join("reckle").read_dir().unwrap().next().unwrap().unwrap().path();
    std::fs::write(&key, b"RKVK\x01garbage").unwrap();
    let o = prover(&["reckle", "verify", p(&out)]);
    assert!(o.status.success() && stderr(&o).contains("ignoring damaged cached key"), "{}", stderr(&o));
    let st: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("statement.json")).unwrap()).unwrap();
    assert_eq!(st["sum"], (2u128 + 7 + u64::MAX as u128).to_string());
    assert_eq!(st["count"], 3);

    // Against an expected C: the statement's own, then another commitment.
    let root = st["root"].as_str().unwrap().to_string();
    let o = prover(&["reckle", "verify", p(&out), "--root", &root]);
    assert!(o.status.success(), "verify --root failed: {}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("verified against C = {root}")));
    let other = format!("{}{}", &root[..63], if root.ends_with('0') { '1' } else { '0' });
    assert_fails_with(&prover(&["reckle", "verify", p(&out), "--root", &other]), "not the expected C");
    assert_fails_with(&prover(&["reckle", "verify", p(&out), "--root", "12"]), "--root");

    // Update: a leaf inside the batch, one outside, add and remove an index.
    let out2 = tmp.path().join("proof2");
    let o = prover(&[
        "reckle", "update", "--state", p(&out), "--set", "6=0x10", "--set", "0=9", "--add", "2", "--remove", "1", "--out", p(&out2),
    ]);
    assert!(o.status.success(), "update failed: {}", stderr(&o));
    let o = prover(&["reckle", "verify", p(&out2)]);
    assert!(o.status.success(), "verify after update failed: {}", stderr(&o));
    let st2: serde_json::Value = serde_json::from_slice(&std::fs::read(out2.join("statement.json")).unwrap()).unwrap();
    assert_eq!(st2["sum"], (3u128 + 16 + u64::MAX as u128).to_string());

    // Wrong leaf value in the statement.
    let bad = tmp.path().join("bad-value");
    copy_dir(&out, &bad);
    let text = std::fs::read_to_string(bad.join("statement.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["batch"][0]["value"] = serde_json::json!(3);
    std::fs::write(bad.join("statement.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    assert_fails_with(&prover(&["reckle", "verify", p(&bad)]), "verification failed");

    // Flipped proof byte.
    let bad = tmp.path().join("bad-proof");
    copy_dir(&out, &bad);
    let mut proof = std::fs::read(bad.join("proof.bin")).unwrap();
    let mid = proof.len() / 2;
    proof[mid] ^= 0x40;
    std::fs::write(bad.join("proof.bin"), proof).unwrap();
    let o = prover(&["reckle", "verify", p(&bad)]);
    assert!(!o.status.success());
    assert!(!stderr(&o).contains("panicked"));

    // The updated proof with the old statement.
    let bad = tmp.path().join("mixed");
    copy_dir(&out, &bad);
    std::fs::copy(out2.join("proof.bin"), bad.join("proof.bin")).unwrap();
    assert_fails_with(&prover(&["reckle", "verify", p(&bad)]), "verification failed");

    // Corrupt state directory for update: truncated Λ_I, missing leaves.
    let bad = tmp.path().join("corrupt");
    copy_dir(&out, &bad);
    let lambda = std::fs::read(bad.join("lambda.bin")).unwrap();
    std::fs::write(bad.join("lambda.bin"), &lambda[..lambda.len() / 3]).unwrap();
    let dest = tmp.path().join("never");
    assert_fails_with(&prover(&["reckle", "update", "--state", p(&bad), "--set", "1=1", "--out", p(&dest)]), "lambda.bin");
    assert!(!dest.exists(), "a failed update wrote its output");
    std::fs::remove_file(bad.join("leaves.bin")).unwrap();
    assert_fails_with(&prover(&["reckle", "update", "--state", p(&bad), "--set", "1=1", "--out", p(&dest)]), "leaves.bin");
    assert_fails_with(&prover(&["reckle", "update", "--state", p(&out), "--set", "8=1", "--out", p(&dest)]), "outside the tree");
    assert!(!dest.exists());

    // Update in place: a failing update leaves the state as it was; a good one replaces it.
    let inplace = tmp.path().join("inplace");
    copy_dir(&out, &inplace);
    let before = std::fs::read(inplace.join("lambda.bin")).unwrap();
    assert_fails_with(&prover(&["reckle", "update", "--state", p(&inplace), "--remove", "5"]), "not in the batch");
    assert_eq!(std::fs::read(inplace.join("lambda.bin")).unwrap(), before, "a failed update changed the state");
    let o = prover(&["reckle", "update", "--state", p(&inplace), "--set", "1=77"]);
    assert!(o.status.success(), "in-place update failed: {}", stderr(&o));
    assert_ne!(std::fs::read(inplace.join("lambda.bin")).unwrap(), before);
    let st3: serde_json::Value = serde_json::from_slice(&std::fs::read(inplace.join("statement.json")).unwrap()).unwrap();
    let o = prover(&["reckle", "verify", p(&inplace), "--root", st3["root"].as_str().unwrap()]);
    assert!(o.status.success(), "verify after in-place update failed: {}", stderr(&o));
    // No scratch directories left beside it.
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with('.')).collect();
    assert!(leftovers.is_empty(), "scratch left behind: {leftovers:?}");
}

#[test]
fn bad_prove_inputs_get_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let leaves = tmp.path().join("leaves.txt");
    std::fs::write(&leaves, "1\n2\nthree\n4\n").unwrap();
    assert_fails_with(&prover(&["reckle", "prove", "--leaves-file", p(&leaves), "--batch", "0", "--out", p(&out)]), "line 3");
    std::fs::write(&leaves, "1\n2\n3\n").unwrap();
    assert_fails_with(&prover(&["reckle", "prove", "--leaves-file", p(&leaves), "--batch", "0", "--out", p(&out)]), "power of two");
    assert_fails_with(&prover(&["reckle", "prove", "--random-leaves", "8", "--batch", "8", "--out", p(&out)]), "outside the tree");
    assert_fails_with(&prover(&["reckle", "prove", "--random-leaves", "8", "--batch", "", "--out", p(&out)]), "--batch");
    assert_fails_with(&prover(&["reckle", "prove", "--random-leaves", "8", "--random-batch", "0", "--out", p(&out)]), "--random-batch");
    assert_fails_with(&prover(&["reckle", "verify", p(&tmp.path().join("missing"))]), "statement.json");
    assert!(!out.exists());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// `verify-final` refuses to run without a pinned wrap key, with the public seed's key, with a
/// key file that is not the pinned one or not a wrap key, and with a --root per directory
/// missing. (Accepting and rejecting real final proofs needs a real wrap key, minutes and
/// ~10 GB to make: scripts/bench-reckle-final.sh.)
#[test]
fn verify_final_refuses_without_the_right_pin() {
    use ark_bn254::{Bn254, Fr};
    use rand::SeedableRng;
    let tmp = tempfile::tempdir().unwrap();
    let leaves = tmp.path().join("leaves.txt");
    std::fs::write(&leaves, "1\n2\n3\n4\n").unwrap();
    let dir = tmp.path().join("job");
    let o = prover(&["reckle", "prove", "--leaves-file", p(&leaves), "--batch", "1,2", "--log-bucket", "1", "--out", p(&dir)]);
    assert!(o.status.success(), "prove failed: {}", stderr(&o));
    let root = serde_json::from_slice::<serde_json::Value>(&std::fs::read(dir.join("statement.json")).unwrap()).unwrap()["root"].as_str().unwrap().to_string();
    // A real BN254 Pari key of another circuit (1 public input) as the directory's wrap-vk.bin.
    let circuit = pari::circuits::CircuitFamily::Chain { steps: 4 };
    let (_pk, vk) = pari::generator::setup::<Bn254, _, _>(circuit.blank::<Fr>(), &mut rand_chacha::ChaCha20Rng::from_seed([3; 32])).unwrap();
    std::fs::write(dir.join("wrap-vk.bin"), vk.to_bytes()).unwrap();
    std::fs::write(dir.join("final.bin"), b"RKWF").unwrap();
    let d = p(&dir);
    assert_fails_with(&prover(&["reckle", "verify-final", d, "--root", &root]), "--wrap-vk-digest is required");
    assert_fails_with(
        &prover(&["reckle", "verify-final", d, "--root", &root, "--wrap-vk-digest", plonky2_r1cs::wrap::PINNED_WRAP_VK_DIGEST]),
        "WRAP_KEY_SEED",
    );
    let other = "ab".repeat(64);
    assert_fails_with(&prover(&["reckle", "verify-final", d, "--root", &root, "--wrap-vk-digest", &other]), "not the wrap key --wrap-vk-digest pins");
    let pinned = vk.digest().to_string();
    assert_fails_with(&prover(&["reckle", "verify-final", d, "--root", &root, "--wrap-vk-digest", &pinned]), "not a wrap key");
    assert_fails_with(&prover(&["reckle", "verify-final", d, d, "--root", &root, "--wrap-vk-digest", &other]), "one per directory");
}
