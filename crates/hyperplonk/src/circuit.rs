//! Vanilla Plonk circuits over the boolean hypercube (zkSpeed §3.1, Eq. 1: vanilla Plonk gates).
//!
//! A circuit has `n = 2^μ` gates. Gate `i` (the hypercube point whose big-endian bits are
//! `i`, see [`testudo::poly`]) reads three wires `w_1[i], w_2[i], w_3[i]` and holds five
//! selectors; it is satisfied iff
//!
//! `q_L·w_1 + q_R·w_2 + q_M·w_1·w_2 − q_O·w_3 + q_C − p = 0`,
//!
//! where `p[i] = x_i` for the first `ℓ` gates (`x` the public input) and `0` after: the
//! public-input term. A gate that exposes `x_i` is `q_L = 1` (so `w_1[i] = x_i`), the rest 0.
//!
//! **Copy constraints.** The `3n` wire positions are numbered `pos(j, i) = j·n + i` (column
//! `j ∈ {0, 1, 2}` for `w_1, w_2, w_3`). A permutation `σ` of the positions whose cycles are
//! the classes of wires that must carry equal values encodes them: the witness satisfies
//! them iff `w[pos] = w[σ(pos)]` for every position. [`Circuit::new`] takes the classes as
//! pairs of wires that must be equal and builds `σ` (one cycle per class).
//!
//! The [`CircuitDigest`] (Blake2s-256 of a tagged canonical encoding of `μ`, `ℓ`, the
//! selectors and `σ`) names the circuit; the index and the transcript bind it.

use ark_ff::PrimeField;
use ark_serialize::{
    CanonicalDeserialize, CanonicalSerialize, Compress, Read, SerializationError, Valid, Validate,
};
use blake2::{Blake2s256, Digest};

use crate::Error;

/// A wire: column `j ∈ {0, 1, 2}` (`w_1, w_2, w_3`) of gate `row`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Wire {
    pub column: usize,
    pub row: usize,
}

impl Wire {
    pub fn new(column: usize, row: usize) -> Self {
        Self { column, row }
    }
}

/// The five selector columns, each of length `n = 2^μ`.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Selectors<F: PrimeField> {
    pub q_l: Vec<F>,
    pub q_r: Vec<F>,
    pub q_m: Vec<F>,
    pub q_o: Vec<F>,
    pub q_c: Vec<F>,
}

impl<F: PrimeField> Selectors<F> {
    /// All-zero selectors for `n` gates (every gate trivially satisfied).
    pub fn zeros(n: usize) -> Self {
        let z = vec![F::zero(); n];
        Self {
            q_l: z.clone(),
            q_r: z.clone(),
            q_m: z.clone(),
            q_o: z.clone(),
            q_c: z,
        }
    }

    /// The columns in the crate's order `q_L, q_R, q_M, q_O, q_C`.
    pub fn columns(&self) -> [&Vec<F>; 5] {
        [&self.q_l, &self.q_r, &self.q_m, &self.q_o, &self.q_c]
    }

    /// Sets gate `i`'s selectors.
    pub fn set(&mut self, i: usize, [l, r, m, o, c]: [F; 5]) {
        self.q_l[i] = l;
        self.q_r[i] = r;
        self.q_m[i] = m;
        self.q_o[i] = o;
        self.q_c[i] = c;
    }
}

/// The witness: the three wire columns, each of length `n`.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Witness<F: PrimeField> {
    pub columns: [Vec<F>; 3],
}

/// The circuit's name: Blake2s-256 of its canonical encoding (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, CanonicalSerialize, CanonicalDeserialize)]
pub struct CircuitDigest(pub [u8; 32]);

/// A checked circuit: `2^μ` gates, `ℓ` public inputs, selectors and the wiring `σ`.
/// Decoding one runs the same checks as [`Circuit::from_sigma`].
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize)]
pub struct Circuit<F: PrimeField> {
    num_vars: usize,
    num_public: usize,
    selectors: Selectors<F>,
    /// `σ` over the `3n` positions `j·n + i`.
    sigma: Vec<u64>,
}

impl<F: PrimeField> Circuit<F> {
    /// The circuit with `2^num_vars` gates, the first `num_public` of which carry the public
    /// input term, and the copy constraints `copies` (each pair of wires must be equal; the
    /// classes they generate become the cycles of `σ`).
    pub fn new(
        num_vars: usize,
        num_public: usize,
        selectors: Selectors<F>,
        copies: &[(Wire, Wire)],
    ) -> Result<Self, Error> {
        if num_vars == 0 || num_vars > 40 {
            return Err(Error::InvalidCircuit(format!(
                "μ = {num_vars}: between 1 and 40 variables are supported"
            )));
        }
        let n = 1usize << num_vars;
        let pos = |w: &Wire| -> Result<usize, Error> {
            if w.column >= 3 || w.row >= n {
                return Err(Error::InvalidCircuit(format!(
                    "wire ({}, {}) is outside 3 × {n}",
                    w.column, w.row
                )));
            }
            Ok(w.column * n + w.row)
        };
        // Union–find over the 3n positions; then each class becomes one cycle of σ.
        let mut parent: Vec<usize> = (0..3 * n).collect();
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for (a, b) in copies {
            let (ra, rb) = (find(&mut parent, pos(a)?), find(&mut parent, pos(b)?));
            if ra != rb {
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
        // Positions in increasing order within a class; σ maps each to the next, the last to
        // the first.
        let mut last_of_class: Vec<Option<usize>> = vec![None; 3 * n];
        let mut first_of_class: Vec<usize> = vec![usize::MAX; 3 * n];
        let mut sigma: Vec<u64> = (0..3 * n as u64).collect();
        for p in 0..3 * n {
            let root = find(&mut parent, p);
            match last_of_class[root] {
                None => first_of_class[root] = p,
                Some(prev) => sigma[prev] = p as u64,
            }
            last_of_class[root] = Some(p);
        }
        for root in 0..3 * n {
            if let Some(last) = last_of_class[root] {
                sigma[last] = first_of_class[root] as u64;
            }
        }
        Self::from_sigma(num_vars, num_public, selectors, sigma)
    }

    /// The circuit with an explicit wiring `σ` (checked to be a permutation of `0 … 3n`).
    pub fn from_sigma(
        num_vars: usize,
        num_public: usize,
        selectors: Selectors<F>,
        sigma: Vec<u64>,
    ) -> Result<Self, Error> {
        if num_vars == 0 || num_vars > 40 {
            return Err(Error::InvalidCircuit(format!(
                "μ = {num_vars}: between 1 and 40 variables are supported"
            )));
        }
        let n = 1usize << num_vars;
        if num_public > n {
            return Err(Error::InvalidCircuit(format!(
                "{num_public} public inputs for {n} gates"
            )));
        }
        for col in selectors.columns() {
            if col.len() != n {
                return Err(Error::Length {
                    field: "selector column",
                    expected: n,
                    got: col.len(),
                });
            }
        }
        if sigma.len() != 3 * n {
            return Err(Error::Length {
                field: "σ",
                expected: 3 * n,
                got: sigma.len(),
            });
        }
        let mut seen = vec![false; 3 * n];
        for &s in &sigma {
            let s = usize::try_from(s).unwrap_or(usize::MAX);
            if s >= 3 * n || seen[s] {
                return Err(Error::InvalidCircuit("σ is not a permutation".into()));
            }
            seen[s] = true;
        }
        Ok(Self {
            num_vars,
            num_public,
            selectors,
            sigma,
        })
    }

    /// `μ`: the circuit has `2^μ` gates.
    pub fn num_vars(&self) -> usize {
        self.num_vars
    }

    /// `n = 2^μ`.
    pub fn num_gates(&self) -> usize {
        1 << self.num_vars
    }

    /// `ℓ`, the number of public inputs.
    pub fn num_public(&self) -> usize {
        self.num_public
    }

    pub fn selectors(&self) -> &Selectors<F> {
        &self.selectors
    }

    /// `σ` as positions.
    pub fn sigma(&self) -> &[u64] {
        &self.sigma
    }

    /// The three `σ_j` columns as field elements (`σ_j[i] = σ(j·n + i)`), what the index
    /// commits to.
    pub fn sigma_columns(&self) -> [Vec<F>; 3] {
        let n = self.num_gates();
        std::array::from_fn(|j| {
            self.sigma[j * n..(j + 1) * n]
                .iter()
                .map(|&s| F::from(s))
                .collect()
        })
    }

    /// The three identity columns `id_j[i] = j·n + i` (the verifier evaluates their MLEs
    /// itself, [`identity_eval`]).
    pub fn identity_columns(&self) -> [Vec<F>; 3] {
        let n = self.num_gates() as u64;
        std::array::from_fn(|j| (0..n).map(|i| F::from(j as u64 * n + i)).collect())
    }

    /// The public-input column `p` (`x` then zeros).
    pub fn public_column(&self, public: &[F]) -> Result<Vec<F>, Error> {
        self.check_public_len(public)?;
        let mut p = public.to_vec();
        p.resize(self.num_gates(), F::zero());
        Ok(p)
    }

    fn check_public_len(&self, public: &[F]) -> Result<(), Error> {
        if public.len() != self.num_public {
            return Err(Error::Length {
                field: "public input",
                expected: self.num_public,
                got: public.len(),
            });
        }
        Ok(())
    }

    /// Whether `witness` satisfies every gate (with public input `public`) and every copy
    /// constraint; the first failure is the error.
    pub fn check(&self, public: &[F], witness: &Witness<F>) -> Result<(), Error> {
        let n = self.num_gates();
        for col in &witness.columns {
            if col.len() != n {
                return Err(Error::Length {
                    field: "witness column",
                    expected: n,
                    got: col.len(),
                });
            }
        }
        let p = self.public_column(public)?;
        let [w1, w2, w3] = &witness.columns;
        let s = &self.selectors;
        for i in 0..n {
            let v = gate_identity(
                [s.q_l[i], s.q_r[i], s.q_m[i], s.q_o[i], s.q_c[i]],
                [w1[i], w2[i], w3[i]],
                p[i],
            );
            if !v.is_zero() {
                return Err(Error::GateUnsatisfied { gate: i });
            }
        }
        let value = |pos: usize| witness.columns[pos / n][pos % n];
        for (pos, &s) in self.sigma.iter().enumerate() {
            if value(pos) != value(s as usize) {
                return Err(Error::CopyUnsatisfied { position: pos });
            }
        }
        Ok(())
    }

    /// The circuit's digest (module doc).
    pub fn digest(&self) -> CircuitDigest {
        let mut bytes = b"hyperplonk circuit v1".to_vec();
        self.serialize_compressed(&mut bytes)
            .expect("serializing into a Vec does not fail");
        CircuitDigest(Blake2s256::digest(&bytes).into())
    }
}

impl<F: PrimeField> Valid for Circuit<F> {
    /// A `Circuit` is checked when it is made (and when it is decoded).
    fn check(&self) -> Result<(), SerializationError> {
        Ok(())
    }
}

impl<F: PrimeField> CanonicalDeserialize for Circuit<F> {
    fn deserialize_with_mode<R: Read>(
        mut reader: R,
        compress: Compress,
        validate: Validate,
    ) -> Result<Self, SerializationError> {
        // The derived encoding's field order: μ, ℓ, selectors, σ.
        let num_vars = usize::deserialize_with_mode(&mut reader, compress, validate)?;
        let num_public = usize::deserialize_with_mode(&mut reader, compress, validate)?;
        let selectors = Selectors::deserialize_with_mode(&mut reader, compress, validate)?;
        let sigma = Vec::<u64>::deserialize_with_mode(&mut reader, compress, validate)?;
        Self::from_sigma(num_vars, num_public, selectors, sigma)
            .map_err(|_| SerializationError::InvalidData)
    }
}

/// `q_L·w_1 + q_R·w_2 + q_M·w_1·w_2 − q_O·w_3 + q_C − p`: zero iff the gate is satisfied.
/// The same formula is the gate part of ZeroCheck's polynomial, at any point.
pub fn gate_identity<F: PrimeField>(q: [F; 5], w: [F; 3], p: F) -> F {
    let [q_l, q_r, q_m, q_o, q_c] = q;
    let [w1, w2, w3] = w;
    q_l * w1 + q_r * w2 + q_m * w1 * w2 - q_o * w3 + q_c - p
}

/// `id̃_j(x) = j·2^μ + Σ_k x_k·2^{μ−1−k}`, the MLE of the identity column `j` (it is linear).
pub fn identity_eval<F: PrimeField>(column: usize, point: &[F]) -> F {
    let mu = point.len();
    let mut acc = F::from(column as u64) * F::from(2u64).pow([mu as u64]);
    let mut weight = F::one();
    for x in point.iter().rev() {
        acc += *x * weight;
        weight.double_in_place();
    }
    acc
}

/// `p̃(x) = Σ_{i<ℓ} x_i·χ_i(x)`, the public-input column's MLE, in `O(ℓ + μ)`: the first
/// `2^k ≥ ℓ` entries are those whose first `μ − k` bits are zero.
pub fn public_eval<F: PrimeField>(public: &[F], point: &[F]) -> F {
    if public.is_empty() {
        return F::zero();
    }
    let mu = point.len();
    let k = public.len().next_power_of_two().trailing_zeros() as usize;
    let k = k.min(mu);
    let prefix: F = point[..mu - k].iter().map(|x| F::one() - x).product();
    let eq = testudo::poly::eq_table(&point[mu - k..]);
    prefix * public.iter().zip(&eq).map(|(a, b)| *a * b).sum::<F>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Fr;
    use ark_ff::UniformRand;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use testudo::MultilinearPoly;

    #[test]
    fn identity_and_public_evals_match_their_tables() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mu = 4;
        let c = Circuit::<Fr>::new(mu, 3, Selectors::zeros(16), &[]).unwrap();
        let r: Vec<Fr> = (0..mu).map(|_| Fr::rand(&mut rng)).collect();
        for (j, col) in c.identity_columns().into_iter().enumerate() {
            let f = MultilinearPoly::new(mu, col).unwrap();
            assert_eq!(f.evaluate(&r).unwrap(), identity_eval(j, &r));
        }
        let x: Vec<Fr> = (0..3).map(|_| Fr::rand(&mut rng)).collect();
        let p = MultilinearPoly::new(mu, c.public_column(&x).unwrap()).unwrap();
        assert_eq!(p.evaluate(&r).unwrap(), public_eval(&x, &r));
    }

    #[test]
    fn copies_become_cycles_and_bad_circuits_are_refused() {
        let copies = [
            (Wire::new(2, 0), Wire::new(0, 1)),
            (Wire::new(0, 1), Wire::new(1, 3)),
        ];
        let c = Circuit::<Fr>::new(2, 0, Selectors::zeros(4), &copies).unwrap();
        // Class {8, 1, 7}: 1 → 7 → 8 → 1.
        assert_eq!(c.sigma()[1], 7);
        assert_eq!(c.sigma()[7], 8);
        assert_eq!(c.sigma()[8], 1);
        assert_eq!(c.sigma()[0], 0);
        assert!(Circuit::<Fr>::new(
            2,
            0,
            Selectors::zeros(4),
            &[(Wire::new(3, 0), Wire::new(0, 0))]
        )
        .is_err());
        assert!(Circuit::<Fr>::from_sigma(2, 0, Selectors::zeros(4), vec![0; 12]).is_err());
        assert!(Circuit::<Fr>::new(2, 5, Selectors::zeros(4), &[]).is_err());
        assert!(Circuit::<Fr>::new(2, 0, Selectors::zeros(3), &[]).is_err());
        // Decoding checks σ like `from_sigma` does.
        let mut bytes = Vec::new();
        c.serialize_compressed(&mut bytes).unwrap();
        assert_eq!(
            Circuit::<Fr>::deserialize_compressed(&bytes[..]).unwrap(),
            c
        );
        let mut bad = c.clone();
        bad.sigma[0] = 1;
        let mut bytes = Vec::new();
        bad.serialize_compressed(&mut bytes).unwrap();
        assert!(Circuit::<Fr>::deserialize_compressed(&bytes[..]).is_err());
    }
}
