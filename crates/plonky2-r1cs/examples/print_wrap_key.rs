//! Runs the wrap's Pari setup from the fixed seed and prints the verifying key's digest, which
//! `plonky2_r1cs::wrap::PINNED_WRAP_VK_DIGEST` records (the setup takes minutes and several GB,
//! too much for a unit test).
//!
//! ```text
//! cargo run --release -p plonky2-r1cs --example print_wrap_key
//! ```

use std::time::Instant;

use plonky2_r1cs::shrink::ShrinkCircuit;
use plonky2_r1cs::wrap::{WrapKeys, PINNED_WRAP_VK_DIGEST, WRAP_KEY_SEED, WRAP_VERSION};

fn main() {
    let t = Instant::now();
    let shrink = ShrinkCircuit::build_default().expect("shrink circuit");
    let keys = WrapKeys::setup(&shrink, WRAP_KEY_SEED).expect("setup");
    let digest = keys.vk_digest().to_string();
    println!("wrap version {WRAP_VERSION}: setup (with the sample shrink proof) {:.1} s", t.elapsed().as_secs_f64());
    println!("vk digest: {digest}");
    println!("pinned:    {PINNED_WRAP_VK_DIGEST}");
    println!("{}", if digest == PINNED_WRAP_VK_DIGEST { "matches the pinned digest" } else { "DIFFERS from the pinned digest" });
}
