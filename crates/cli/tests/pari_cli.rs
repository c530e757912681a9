//! `prover pari`: keys pinned by digest (issue 10 item 5) and batch reports that name every bad
//! proof (issue 16).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ark_bls12_381::Bls12_381 as E;
use ark_ec::{AffineRepr, CurveGroup};
use pari::{Proof, VerifyingKey};

fn prover(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prover")).args(args).output().expect("run prover")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "failed: {}\n{}", err(&o), out(&o));
    assert!(!err(&o).contains("panicked"));
    o
}

fn failed(o: Output, needle: &str) -> Output {
    assert!(!o.status.success(), "expected failure; stdout: {}", out(&o));
    let all = format!("{}{}", out(&o), err(&o));
    assert!(all.contains(needle), "output does not mention {needle:?}: {all}");
    assert!(!all.contains("panicked"), "panicked: {all}");
    o
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `prover pari setup`; returns the printed vk digest.
fn setup(circuit: &str, size: usize, seed: u64, dir: &Path) -> String {
    let o = ok(prover(&["pari", "setup", "--circuit", circuit, "--size", &size.to_string(), "--seed", &seed.to_string(), "--out", p(dir)]));
    let text = out(&o);
    let line = text.lines().find_map(|l| l.strip_prefix("vk digest: ")).unwrap_or_else(|| panic!("no digest in {text}"));
    assert_eq!(line.len(), 128);
    line.to_string()
}

fn prove(keys: &Path, seed: u64, dir: &Path) {
    ok(prover(&["pari", "prove", "--keys", p(keys), "--witness-seed", &seed.to_string(), "--out", p(dir)]));
}

fn read_proof(dir: &Path) -> (Vec<ark_bls12_381::Fr>, Proof<E>) {
    let proof = Proof::<E>::from_bytes(&std::fs::read(dir.join("proof.bin")).unwrap()).unwrap();
    let public: Vec<String> = serde_json::from_slice(&std::fs::read(dir.join("public.json")).unwrap()).unwrap();
    (public.iter().map(|s| s.parse().unwrap()).collect(), proof)
}

/// The attack: the honest circuit is a Poseidon preimage; the attacker runs setup for a chain of
/// the same size (same n and L), proves a chain instance, and hands over its own `vk.bin`
/// beside the proof (and beside a bundle). Unpinned verifiers accept; pinned ones refuse.
#[test]
fn a_key_for_another_circuit_of_the_same_size_is_refused_when_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let honest = tmp.path().join("honest");
    let honest_digest = setup("poseidon", 1, 1, &honest);
    let forged = tmp.path().join("forged");
    // A chain of 400 squarings: 403 rows, the same domain (512) as Poseidon of one input.
    let forged_digest = setup("chain", 400, 2, &forged);
    let vk_honest = VerifyingKey::<E>::from_bytes(&std::fs::read(honest.join("vk.bin")).unwrap()).unwrap();
    let vk_forged = VerifyingKey::<E>::from_bytes(&std::fs::read(forged.join("vk.bin")).unwrap()).unwrap();
    assert_eq!((vk_honest.domain_size, vk_honest.num_instance), (vk_forged.domain_size, vk_forged.num_instance));
    let claim = tmp.path().join("claim");
    prove(&honest, 5, &claim);
    // The attacker proves a chain instance and hands over its own key, claiming the honest circuit.
    let lie = tmp.path().join("lie");
    prove(&forged, 7, &lie);
    std::fs::copy(honest.join("circuit.json"), forged.join("circuit.json")).unwrap();

    // Unpinned: accepted, and the command says it trusted the key beside the proof.
    let o = ok(prover(&["pari", "verify", "--keys", p(&forged), p(&lie)]));
    assert!(out(&o).contains("verified") && out(&o).contains("NOT PINNED") && out(&o).contains(&forged_digest), "{}", out(&o));
    // Pinned: refused, naming both digests.
    let o = failed(prover(&["pari", "verify", "--keys", p(&forged), "--vk-digest", &honest_digest, p(&lie)]), "unexpected key");
    assert!(err(&o).contains(&honest_digest) && err(&o).contains(&forged_digest), "{}", err(&o));
    failed(prover(&["pari", "batch-verify", "--keys", p(&forged), "--vk-digest", &honest_digest, p(&lie)]), "unexpected key");
    // The honest proof under the pinned honest key.
    let o = ok(prover(&["pari", "verify", "--keys", p(&honest), "--vk-digest", &honest_digest, p(&claim)]));
    assert!(out(&o).contains(&format!("has the expected vk digest {honest_digest}")), "{}", out(&o));
    // A malformed digest is a usage error.
    failed(prover(&["pari", "verify", "--keys", p(&honest), "--vk-digest", "abc", p(&claim)]), "128 hex");

    // verify-bundles with the attacker's vk.bin beside the bundle.
    let (x, proof) = read_proof(&lie);
    let bundle = pari::bundle::Bundle::new(&vk_forged, vec![(x, proof)]);
    std::fs::write(forged.join("bundle-0.bin"), bundle.to_bytes()).unwrap();
    let o = ok(prover(&["pari", "verify-bundles", p(&forged)]));
    assert!(out(&o).contains("NOT PINNED") && out(&o).contains("1 verified, 0 bad"), "{}", out(&o));
    failed(prover(&["pari", "verify-bundles", p(&forged), "--vk-digest", &honest_digest]), "unexpected key");
}

/// Issue 16: twelve proofs, three damaged in different ways; the command names exactly those
/// three with their reasons, in lines and in JSON.
#[test]
fn batch_verify_names_every_bad_proof() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let digest = setup("chain", 100, 3, &keys);
    let dirs: Vec<PathBuf> = (1..=12).map(|k| tmp.path().join(format!("p{k}"))).collect();
    for (k, d) in dirs.iter().enumerate() {
        prove(&keys, k as u64, d);
    }
    let all: Vec<&str> = dirs.iter().map(|d| p(d)).collect();
    let mut args = vec!["pari", "batch-verify", "--keys", p(&keys), "--vk-digest", &digest];
    args.extend(&all);
    let o = ok(prover(&args));
    assert!(out(&o).contains("12 verified, 0 bad"), "{}", out(&o));

    // p3: one byte of T changed so that the point does not parse.
    let bytes = std::fs::read(dirs[2].join("proof.bin")).unwrap();
    let damaged = (6..50)
        .flat_map(|pos| (0..8).map(move |bit| (pos, 1u8 << bit)))
        .map(|(pos, mask)| {
            let mut b = bytes.clone();
            b[pos] ^= mask;
            b
        })
        .find(|b| Proof::<E>::from_bytes(b).is_err())
        .unwrap();
    std::fs::write(dirs[2].join("proof.bin"), damaged).unwrap();
    // p8: U replaced by U + G, a valid point: a wrong proof.
    let (_, p8) = read_proof(&dirs[7]);
    let wrong = Proof::<E> { u: (p8.u + ark_bls12_381::G1Affine::generator()).into_affine(), ..p8 };
    std::fs::write(dirs[7].join("proof.bin"), wrong.to_bytes()).unwrap();
    // p11: a valid proof, but for another public input (p12's).
    std::fs::copy(dirs[11].join("public.json"), dirs[10].join("public.json")).unwrap();

    let o = failed(prover(&args), "3 of 12 bad");
    let text = out(&o);
    let bad: Vec<&str> = text.lines().filter(|l| l.starts_with("bad: ")).collect();
    assert_eq!(bad.len(), 3, "{text}");
    assert!(bad[0].starts_with(&format!("bad: {}: unparsable proof: proof.bin:", p(&dirs[2]))), "{text}");
    assert!(bad[1].starts_with(&format!("bad: {}: fails the check", p(&dirs[7]))), "{text}");
    assert!(bad[2].starts_with(&format!("bad: {}: fails the check", p(&dirs[10]))), "{text}");
    assert!(text.contains("9 verified, 3 bad"), "{text}");

    let mut json_args = args.clone();
    json_args.push("--json");
    let o = failed(prover(&json_args), "3 of 12 bad");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report on stdout");
    assert_eq!(report["vk_digest"], digest.as_str());
    assert_eq!(report["vk_pinned"], true);
    assert_eq!((report["total"].as_u64(), report["verified"].as_u64()), (Some(12), Some(9)));
    let bad = report["bad"].as_array().unwrap();
    let named: Vec<(&str, &str)> = bad.iter().map(|b| (b["entry"].as_str().unwrap(), b["kind"].as_str().unwrap())).collect();
    assert_eq!(named, vec![(p(&dirs[2]), "unparsable-proof"), (p(&dirs[7]), "fails-check"), (p(&dirs[10]), "fails-check")]);

    // A missing public.json and a wrong public-input count are named too.
    std::fs::remove_file(dirs[0].join("public.json")).unwrap();
    std::fs::write(dirs[1].join("public.json"), "[\"1\", \"2\"]").unwrap();
    let o = failed(prover(&args), "5 of 12 bad");
    let text = out(&o);
    assert!(text.contains(&format!("bad: {}: unparsable public input: cannot read public.json", p(&dirs[0]))), "{text}");
    assert!(text.contains(&format!("bad: {}: wrong public-input count: the key expects 1, got 2", p(&dirs[1]))), "{text}");

    // verify-bundles: a bundle whose entries 2 and 5 are damaged (a point that does not parse,
    // a wrong proof) beside a good bundle; entries are named `bundle-….bin#index`.
    let vk = VerifyingKey::<E>::from_bytes(&std::fs::read(keys.join("vk.bin")).unwrap()).unwrap();
    let good: Vec<_> = dirs[3..7].iter().map(|d| read_proof(d)).collect();
    let job = tmp.path().join("job");
    std::fs::create_dir(&job).unwrap();
    for f in ["circuit.json", "vk.bin"] {
        std::fs::copy(keys.join(f), job.join(f)).unwrap();
    }
    std::fs::write(job.join("bundle-0.bin"), pari::bundle::Bundle::new(&vk, good.clone()).to_bytes()).unwrap();
    let mut items: Vec<_> = dirs[3..10].iter().filter(|d| *d != &dirs[7]).map(|d| read_proof(d)).collect();
    items[5].1 = wrong.clone();
    let mut b = pari::bundle::Bundle::new(&vk, items.clone()).to_bytes();
    let t2 = items[2].1.to_bytes()[5..53].to_vec();
    let at = b.windows(t2.len()).position(|w| w == t2).unwrap();
    let bad_t = (0..48 * 8).map(|i| {
        let mut t = t2.clone();
        t[i / 8] ^= 1 << (i % 8);
        t
    });
    let bad_t = bad_t.into_iter().find(|t| {
        let mut c = b.clone();
        c[at..at + 48].copy_from_slice(t);
        pari::bundle::Bundle::<E>::from_bytes(&c).is_err()
    });
    b[at..at + 48].copy_from_slice(&bad_t.unwrap());
    std::fs::write(job.join("bundle-1.bin"), b).unwrap();
    let o = failed(prover(&["pari", "verify-bundles", p(&job), "--vk-digest", &digest]), "2 of 10 bad");
    let text = out(&o);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("bad: ")).collect();
    let b1 = job.join("bundle-1.bin");
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with(&format!("bad: {}#2: unparsable proof", p(&b1))), "{text}");
    assert!(lines[1].starts_with(&format!("bad: {}#5: fails the check", p(&b1))), "{text}");
    assert!(text.contains("8 verified, 2 bad"), "{text}");
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../circom/tests/fixtures").join(name)
}

/// Bring your own circuit (issue 14): circom's `.r1cs` and snarkjs's `.wtns` in, a Pari proof
/// out, verified against the pinned key with the public signals printed; a changed public
/// signal, a witness that does not satisfy the circuit and a file for the other curve refused.
#[test]
fn circom_circuits_are_set_up_proved_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    for (curve, other) in [("bn254", "bls12-381"), ("bls12381", "bn254")] {
        let r1cs = fixture(&format!("example-{curve}.r1cs"));
        let wtns = fixture(&format!("example-{curve}.wtns"));
        let keys = tmp.path().join(format!("keys-{curve}"));
        failed(prover(&["pari", "setup", "--r1cs", p(&r1cs), "--curve", other, "--out", p(&keys)]), "--prime");
        let o = ok(prover(&["pari", "setup", "--r1cs", p(&r1cs), "--seed", "3", "--out", p(&keys)]));
        let digest = out(&o).lines().find_map(|l| l.strip_prefix("vk digest: ")).expect("digest").to_string();
        failed(prover(&["pari", "prove", "--keys", p(&keys), "--out", p(&tmp.path().join("none"))]), "--wtns");

        let proof = tmp.path().join(format!("proof-{curve}"));
        let o = ok(prover(&["pari", "prove", "--keys", p(&keys), "--wtns", p(&wtns), "--out", p(&proof)]));
        assert!(out(&o).contains("public signals: 33, "), "{}", out(&o));
        let o = ok(prover(&["pari", "verify", "--keys", p(&keys), "--vk-digest", &digest, p(&proof)]));
        let text = out(&o);
        assert!(text.contains("verified") && text.contains("public signals (outputs, then public inputs): 33, "), "{text}");
        assert!(text.trim_end().ends_with(", 11"), "the public input b = 11 comes last: {text}");

        // The snarkjs-style export: the key's digest, its public-input count, the proof's
        // points as [x, y, "1"], and the same public signals.
        let public: Vec<String> = serde_json::from_slice(&std::fs::read(proof.join("public.json")).unwrap()).unwrap();
        let json = tmp.path().join(format!("json-{curve}"));
        ok(prover(&["pari", "export-snarkjs", p(&keys), "--proof", p(&proof), "--out", p(&json)]));
        let read = |n: &str| serde_json::from_slice::<serde_json::Value>(&std::fs::read(json.join(n)).unwrap()).unwrap();
        let vk = read("verification_key.json");
        assert_eq!((vk["protocol"].as_str(), vk["curve"].as_str(), vk["nPublic"].as_u64()), (Some("pari"), Some(if curve == "bn254" { "bn128" } else { "bls12381" }), Some(3)));
        assert_eq!(vk["vkDigest"].as_str(), Some(digest.as_str()));
        assert_eq!(vk["vk_delta_h"][2], serde_json::json!(["1", "0"]));
        assert_eq!(read("proof-p0.json")["t"][2], "1");
        assert_eq!(read("public-p0.json"), serde_json::json!(public));

        // Claim another output.
        let mut lie = public.clone();
        lie[0] = "34".into();
        std::fs::write(proof.join("public.json"), serde_json::to_vec(&lie).unwrap()).unwrap();
        failed(prover(&["pari", "verify", "--keys", p(&keys), "--vk-digest", &digest, p(&proof)]), "");
    }

    // A witness with one wire changed: refused before proving, naming the constraint.
    let mut w = circom::read_wtns::<ark_bn254::Fr>(&std::fs::read(fixture("example-bn254.wtns")).unwrap()).unwrap();
    w[1] += ark_bn254::Fr::from(1u64);
    let bad = tmp.path().join("bad.wtns");
    std::fs::write(&bad, circom::write_wtns(&w)).unwrap();
    failed(
        prover(&["pari", "prove", "--keys", p(&tmp.path().join("keys-bn254")), "--wtns", p(&bad), "--out", p(&tmp.path().join("bad"))]),
        "does not satisfy constraint",
    );
    // A witness for the other curve.
    failed(
        prover(&[
            "pari", "prove", "--keys", p(&tmp.path().join("keys-bn254")), "--wtns", p(&fixture("example-bls12381.wtns")), "--out",
            p(&tmp.path().join("bad2")),
        ]),
        "bls12381",
    );
}

/// `r + d` and `r − d` for the BLS12-381 scalar field's modulus r, in decimal.
fn r_plus(d: &ark_bls12_381::Fr) -> (String, String, String) {
    use ark_ff::{BigInteger, PrimeField};
    let r = ark_bls12_381::Fr::MODULUS;
    let d = d.into_bigint();
    let (mut plus, mut minus) = (r, r);
    assert!(!plus.add_with_carry(&d));
    assert!(!minus.sub_with_borrow(&d));
    (r.to_string(), plus.to_string(), minus.to_string())
}

/// Issue 32 item 6 (statement aliasing): `public.json` values must be canonical decimal field
/// elements. `r + v`, `-(r - v)`, `0v`, `+v` and `r` itself name field elements too (v, v, v,
/// v and 0 modulo r), but a proof must verify under one spelling of its statement only; each
/// other is refused, naming the value and the entry, by every command that reads proof
/// directories.
#[test]
fn non_canonical_public_inputs_are_refused_naming_the_value() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let digest = setup("chain", 100, 4, &keys);
    let proof = tmp.path().join("proof");
    prove(&keys, 9, &proof);
    let (x, _) = read_proof(&proof);
    let v = x[0].to_string();
    let verify = |dir: &Path| prover(&["pari", "verify", "--keys", p(&keys), "--vk-digest", &digest, p(dir)]);
    let o = ok(verify(&proof));
    assert!(out(&o).contains("verified"), "{}", out(&o));
    let (r, r_plus_v, r_minus_v) = r_plus(&x[0]);
    for (k, alias) in [r_plus_v, format!("-{r_minus_v}"), format!("0{v}"), format!("+{v}"), r].into_iter().enumerate() {
        let dir = tmp.path().join(format!("alias-{k}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::copy(proof.join("proof.bin"), dir.join("proof.bin")).unwrap();
        std::fs::write(dir.join("public.json"), serde_json::to_vec(&[&alias]).unwrap()).unwrap();
        let o = failed(verify(&dir), "not a canonical decimal field element");
        let text = err(&o);
        assert!(text.contains(&format!("public.json entry 0: \"{alias}\"")), "names the entry and the value: {text}");
        assert!(!out(&o).contains("verified"), "{}", out(&o));
        let o = failed(prover(&["pari", "batch-verify", "--keys", p(&keys), "--vk-digest", &digest, p(&proof), p(&dir)]), "1 of 2 bad");
        assert!(out(&o).contains(&format!("bad: {}: unparsable public input: public.json entry 0: \"{alias}\"", p(&dir))), "{}", out(&o));
        failed(
            prover(&["pari", "export-snarkjs", p(&keys), "--proof", p(&dir), "--out", p(&tmp.path().join(format!("json-{k}")))]),
            &alias,
        );
    }
}

/// A fetched circom-style job directory: the key, `bundle-<k>.bin` and `public-<k>.json` (the
/// platform's format: `[{"witness": n, "public": [...]}]`) for bundles of `per` proofs.
fn job_dir(keys: &Path, proofs: &[(Vec<ark_bls12_381::Fr>, Proof<E>)], per: usize, dir: &Path) {
    let vk = VerifyingKey::<E>::from_bytes(&std::fs::read(keys.join("vk.bin")).unwrap()).unwrap();
    std::fs::create_dir(dir).unwrap();
    for f in ["circuit.json", "vk.bin"] {
        std::fs::copy(keys.join(f), dir.join(f)).unwrap();
    }
    for (k, chunk) in proofs.chunks(per).enumerate() {
        std::fs::write(dir.join(format!("bundle-{k}.bin")), pari::bundle::Bundle::new(&vk, chunk.to_vec()).to_bytes()).unwrap();
        let public: Vec<serde_json::Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, (x, _))| serde_json::json!({ "witness": k * per + i, "public": x.iter().map(|v| v.to_string()).collect::<Vec<_>>() }))
            .collect();
        std::fs::write(dir.join(format!("public-{k}.json")), serde_json::to_vec_pretty(&public).unwrap()).unwrap();
    }
}

/// Issue 32 item 6 (`verify-bundles`): the published statements `public-<k>.json` must be what
/// the bundles prove, and a missing or extra bundle is named by index.
#[test]
fn verify_bundles_checks_the_published_statements_and_every_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let digest = setup("chain", 100, 5, &keys);
    let proofs: Vec<_> = (0..5)
        .map(|k| {
            let d = tmp.path().join(format!("p{k}"));
            prove(&keys, 20 + k, &d);
            read_proof(&d)
        })
        .collect();
    let n = std::sync::atomic::AtomicUsize::new(0);
    let fresh = || {
        let dir = tmp.path().join(format!("job{}", n.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
        job_dir(&keys, &proofs, 2, &dir);
        dir
    };
    let check = |dir: &Path, extra: &[&str]| {
        let mut args = vec!["pari", "verify-bundles", p(dir), "--vk-digest", &digest];
        args.extend(extra);
        prover(&args)
    };
    // The honest directory: three bundles (2, 2, 1 proofs).
    let good = fresh();
    let o = ok(check(&good, &[]));
    assert!(out(&o).contains("5 verified, 0 bad") && out(&o).contains("NOT PINNED"), "{}", out(&o));
    let o = ok(check(&good, &["--bundles", "3"]));
    assert!(out(&o).contains("5 verified, 0 bad") && out(&o).contains("3 expected (--bundles)"), "{}", out(&o));

    // A tampered statement: entry 1 of public-0.json claims another proof's public input.
    let dir = fresh();
    let other = proofs[4].0[0].to_string();
    let text = std::fs::read_to_string(dir.join("public-0.json")).unwrap();
    let mine = proofs[1].0[0].to_string();
    std::fs::write(dir.join("public-0.json"), text.replace(&mine, &other)).unwrap();
    let o = failed(check(&dir, &[]), "1 of 5 bad");
    assert!(out(&o).contains(&format!("bad: {}#1: publishes [{other}]", p(&dir.join("public-0.json")))), "{}", out(&o));
    // A non-canonical spelling of the right value (r + v) is refused too, naming it.
    let dir = fresh();
    let (_, r_plus_v, _) = r_plus(&proofs[2].0[0]);
    let text = std::fs::read_to_string(dir.join("public-1.json")).unwrap();
    std::fs::write(dir.join("public-1.json"), text.replace(&proofs[2].0[0].to_string(), &r_plus_v)).unwrap();
    let o = failed(check(&dir, &[]), "not a canonical decimal field element");
    assert!(out(&o).contains(&format!("bad: {}: entry 0 (witness 2), public value 0: \"{r_plus_v}\"", p(&dir.join("public-1.json")))), "{}", out(&o));
    // Witness numbers swapped between two entries.
    let dir = fresh();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("public-1.json")).unwrap()).unwrap();
    v[0]["witness"] = 3.into();
    v[1]["witness"] = 2.into();
    std::fs::write(dir.join("public-1.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    let o = failed(check(&dir, &[]), "2 of 5 bad");
    assert!(out(&o).contains("names witness 3, entry 0 of bundle-1.bin is witness 2"), "{}", out(&o));
    // public-2.json deleted while the others are published.
    let dir = fresh();
    std::fs::remove_file(dir.join("public-2.json")).unwrap();
    let o = failed(check(&dir, &[]), "1 of");
    assert!(out(&o).contains(&format!("bad: {}: missing", p(&dir.join("public-2.json")))), "{}", out(&o));

    // A deleted bundle: named by index, with or without --bundles.
    let dir = fresh();
    std::fs::remove_file(dir.join("bundle-1.bin")).unwrap();
    for extra in [&[][..], &["--bundles", "3"][..]] {
        let o = failed(check(&dir, extra), "1 of 4 bad");
        assert!(out(&o).contains(&format!("bad: {}: missing", p(&dir.join("bundle-1.bin")))), "{}", out(&o));
    }
    // The last bundle deleted with its statements: only a pinned count (or the manifest) notices.
    let dir = fresh();
    std::fs::remove_file(dir.join("bundle-2.bin")).unwrap();
    std::fs::remove_file(dir.join("public-2.json")).unwrap();
    let o = ok(check(&dir, &[]));
    assert!(out(&o).contains("4 verified, 0 bad") && out(&o).contains("NOT PINNED"), "{}", out(&o));
    let o = failed(check(&dir, &["--bundles", "3"]), "1 of 5 bad");
    assert!(out(&o).contains(&format!("bad: {}: missing: --bundles 3", p(&dir.join("bundle-2.bin")))), "{}", out(&o));
    let manifest = serde_json::json!({
        "version": 1, "job": "j", "kind": "pari.circom", "pins": {}, "verify": [],
        "files": ["bundle-0.bin", "bundle-1.bin", "bundle-2.bin", "circuit.json", "public-0.json", "public-1.json", "public-2.json", "vk.bin"],
    });
    std::fs::write(dir.join("manifest.json"), serde_json::to_vec(&manifest).unwrap()).unwrap();
    let o = failed(check(&dir, &[]), "1 of 5 bad");
    assert!(out(&o).contains(&format!("bad: {}: missing: manifest.json lists it", p(&dir.join("bundle-2.bin")))), "{}", out(&o));
    // An extra bundle beyond the pinned count.
    let dir = fresh();
    let o = failed(check(&dir, &["--bundles", "2"]), "bad");
    assert!(out(&o).contains(&format!("bad: {}: extra: --bundles 2", p(&dir.join("bundle-2.bin")))), "{}", out(&o));
    // In JSON, the kinds.
    let o = failed(check(&dir, &["--bundles", "2", "--json"]), "bad");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kinds: Vec<&str> = report["bad"].as_array().unwrap().iter().map(|b| b["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"extra-bundle"), "{report}");
}
