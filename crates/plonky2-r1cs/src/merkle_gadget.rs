//! The last layer's hash `H` ([`crate::hasher::PoseidonBn254Hash`]) and its Merkle proofs in
//! R1CS: leaf hashing (`hash_or_noop`) over emulated Goldilocks values, and plonky2's
//! `verify_merkle_proof_to_cap` with the index given by its little-endian bits.
//!
//! Costs: packing is linear (free, for canonical inputs); a leaf of `n > 3` elements costs
//! `⌈n/9⌉` width-4 permutations (264 each); each Merkle level costs one `Poseidon(2)` (240) and
//! one constraint for the ordered pair; choosing the cap element costs `2^h − 1` constraints for
//! a cap of height `h`, and the final comparison one.

use ark_bn254::Fr;
use ark_ff::BigInt;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::select::CondSelectGadget;
use ark_relations::gr1cs::SynthesisError;
use num_bigint::BigUint;

use crate::goldilocks::GlVar;
use crate::hasher::{FR_RATE, GL_PER_FR};
use crate::poseidon::params_t4;
use crate::poseidon_gadget::{permute_var, poseidon2_var};

/// [`crate::hasher::pack`] in-circuit: `Σ g_i·2^{64 i}` of at most 3 canonical values (free).
pub fn pack_var(gs: &[GlVar]) -> FpVar<Fr> {
    assert!(gs.len() <= GL_PER_FR);
    let mut acc = FpVar::zero();
    for (i, g) in gs.iter().enumerate() {
        assert!(g.is_canonical(), "packing needs canonical values");
        acc += &g.value * Fr::from(BigUint::from(1u8) << (64 * i));
    }
    acc
}

/// `hash_no_pad` of [`crate::hasher::PoseidonBn254Hash`] in-circuit.
pub fn hash_no_pad_var(input: &[GlVar]) -> Result<FpVar<Fr>, SynthesisError> {
    let packed: Vec<FpVar<Fr>> = input.chunks(GL_PER_FR).map(pack_var).collect();
    let iv = Fr::from(BigInt::new([0, input.len() as u64, 0, 0]));
    let mut state = vec![FpVar::constant(iv), FpVar::zero(), FpVar::zero(), FpVar::zero()];
    if packed.is_empty() {
        permute_var(params_t4(), &mut state)?;
    }
    for chunk in packed.chunks(FR_RATE) {
        for (s, x) in state[1..].iter_mut().zip(chunk) {
            *s += x;
        }
        permute_var(params_t4(), &mut state)?;
    }
    Ok(state[1].clone())
}

/// `hash_or_noop` in-circuit: the packing for at most 3 elements, else [`hash_no_pad_var`].
pub fn hash_or_noop_var(input: &[GlVar]) -> Result<FpVar<Fr>, SynthesisError> {
    if input.len() <= GL_PER_FR {
        Ok(pack_var(input))
    } else {
        hash_no_pad_var(input)
    }
}

/// `cap[index]` for `index` given by little-endian bits (`cap.len() = 2^bits.len()`):
/// `cap.len() − 1` constraints.
pub fn select_by_bits(cap: &[FpVar<Fr>], bits: &[Boolean<Fr>]) -> Result<FpVar<Fr>, SynthesisError> {
    assert_eq!(cap.len(), 1 << bits.len(), "cap size must be 2^(index bits)");
    let mut layer = cap.to_vec();
    for bit in bits {
        layer = layer
            .chunks(2)
            .map(|pair| FpVar::conditionally_select(bit, &pair[1], &pair[0]))
            .collect::<Result<_, _>>()?;
    }
    Ok(layer.pop().expect("one element left"))
}

/// plonky2's `verify_merkle_proof_to_cap` for one leaf: `index_bits` are the leaf index's
/// little-endian bits, `siblings.len()` of them for the path and `log2(cap.len())` more for the
/// cap element.
pub fn verify_merkle_proof_to_cap_var(
    leaf: &[GlVar],
    index_bits: &[Boolean<Fr>],
    cap: &[FpVar<Fr>],
    siblings: &[FpVar<Fr>],
) -> Result<(), SynthesisError> {
    assert_eq!(index_bits.len(), siblings.len() + cap.len().trailing_zeros() as usize);
    let mut current = hash_or_noop_var(leaf)?;
    for (bit, sibling) in index_bits.iter().zip(siblings) {
        // bit = 1: the current node is the right child.
        let left = FpVar::conditionally_select(bit, sibling, &current)?;
        let right = &current + sibling - &left;
        current = poseidon2_var(&left, &right)?;
    }
    let root = select_by_bits(cap, &index_bits[siblings.len()..])?;
    current.enforce_equal(&root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_r1cs_std::alloc::AllocVar;
    use ark_r1cs_std::GR1CSVar;
    use ark_relations::gr1cs::{ConstraintSystem, ConstraintSystemRef};
    use plonky2::field::goldilocks_field::GoldilocksField as GL;
    use plonky2::field::types::{Field, Sample};
    use plonky2::hash::merkle_tree::MerkleTree;
    use plonky2::plonk::config::Hasher;

    use crate::hasher::PoseidonBn254Hash;

    fn leaf_vars(cs: &ConstraintSystemRef<Fr>, leaf: &[GL]) -> Vec<GlVar> {
        leaf.iter().map(|x| GlVar::new_witness(cs.clone(), Some(*x)).unwrap()).collect()
    }

    #[test]
    fn leaf_hash_matches_native() {
        for n in [0usize, 1, 3, 4, 9, 10, 20, 135] {
            let cs = ConstraintSystem::<Fr>::new_ref();
            let leaf = GL::rand_vec(n);
            let vars = leaf_vars(&cs, &leaf);
            let before = cs.num_constraints();
            let h = hash_or_noop_var(&vars).unwrap();
            let cost = cs.num_constraints() - before;
            assert_eq!(h.value().unwrap(), PoseidonBn254Hash::hash_or_noop(&leaf).0);
            if n > 0 {
                println!("leaf hash of {n} Goldilocks elements: {cost} constraints");
            }
            assert!(cs.is_satisfied().unwrap());
        }
    }

    /// Merkle paths of plonky2's `MerkleTree` verify in-circuit; a tampered leaf, sibling, cap or
    /// index leaves the system unsatisfied.
    #[test]
    fn merkle_proofs() {
        let log_leaves = 5;
        for (cap_height, leaf_len) in [(0usize, 7usize), (2, 2), (2, 20)] {
            let leaves: Vec<Vec<GL>> = (0..1 << log_leaves).map(|_| GL::rand_vec(leaf_len)).collect();
            let tree = MerkleTree::<GL, PoseidonBn254Hash>::new(leaves.clone(), cap_height);
            let index = 13usize;
            let proof = tree.prove(index);
            let run = |leaf: &[GL], idx: usize, siblings: Vec<Fr>, cap: Vec<Fr>| -> (bool, usize) {
                let cs = ConstraintSystem::<Fr>::new_ref();
                let leaf = leaf_vars(&cs, leaf);
                let bits: Vec<Boolean<Fr>> =
                    (0..log_leaves).map(|i| Boolean::new_witness(cs.clone(), || Ok((idx >> i) & 1 == 1)).unwrap()).collect();
                let cap: Vec<FpVar<Fr>> = cap.iter().map(|h| FpVar::new_witness(cs.clone(), || Ok(*h)).unwrap()).collect();
                let sib: Vec<FpVar<Fr>> =
                    siblings.iter().map(|h| FpVar::new_witness(cs.clone(), || Ok(*h)).unwrap()).collect();
                let before = cs.num_constraints();
                verify_merkle_proof_to_cap_var(&leaf, &bits, &cap, &sib).unwrap();
                (cs.is_satisfied().unwrap(), cs.num_constraints() - before)
            };
            let siblings: Vec<Fr> = proof.siblings.iter().map(|h| h.0).collect();
            let cap: Vec<Fr> = tree.cap.0.iter().map(|h| h.0).collect();
            let (ok, cost) = run(&leaves[index], index, siblings.clone(), cap.clone());
            assert!(ok);
            println!(
                "Merkle proof, 2^{log_leaves} leaves of {leaf_len}, cap height {cap_height}: {cost} constraints"
            );

            let mut bad_leaf = leaves[index].clone();
            bad_leaf[0] += GL::ONE;
            assert!(!run(&bad_leaf, index, siblings.clone(), cap.clone()).0);
            let mut bad_sib = siblings.clone();
            bad_sib[1] += Fr::from(1u64);
            assert!(!run(&leaves[index], index, bad_sib, cap.clone()).0);
            let mut bad_cap = cap.clone();
            bad_cap[index >> (log_leaves - cap_height)] += Fr::from(1u64);
            assert!(!run(&leaves[index], index, siblings.clone(), bad_cap).0);
            assert!(!run(&leaves[index], index ^ 1, siblings.clone(), cap.clone()).0);
        }
    }

    #[test]
    fn select_by_bits_picks_the_element() {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let cap: Vec<FpVar<Fr>> = (0..8u64).map(|i| FpVar::new_witness(cs.clone(), || Ok(Fr::from(100 + i))).unwrap()).collect();
        for idx in 0..8usize {
            let bits: Vec<Boolean<Fr>> = (0..3).map(|i| Boolean::constant((idx >> i) & 1 == 1)).collect();
            assert_eq!(select_by_bits(&cap, &bits).unwrap().value().unwrap(), Fr::from(100 + idx as u64));
        }
    }
}
