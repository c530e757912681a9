//! The Fiat–Shamir transcript: a Poseidon sponge over the **base field** `F_q` of the
//! pairing's G1, squeezing challenges in the scalar field `F_r`.
//!
//! Why `F_q` and not `F_r`: the verifier's group elements have coordinates in `F_q`, and the
//! compression circuit that replays this verifier is a circuit over `F_q` (BLS12-381's base
//! field is BW6-767's scalar field; `docs/design/testudo-compression.md`, Decision 2). Over
//! `F_q`, every absorb of a point is native there and the sponge costs one native Poseidon
//! permutation per two absorbed elements; the `F_r` arithmetic is what gets emulated. The
//! in-circuit twin is [`constraints`] (feature `r1cs`).
//!
//! # Types
//!
//! `Transcript<F, Q>`: `F` is the field the proof's scalars and challenges live in (`F_r`),
//! `Q` the field the sponge runs over (`F_q`). [`Transcript::new`] refuses a pair for which
//! the encodings below are not injective or the challenges not close to uniform
//! ([`check_fields`]).
//!
//! # Encoding (what one absorb adds to the sponge, in `F_q` elements)
//!
//! - An `F_q` element: itself ([`Transcript::absorb_base`]).
//! - An `F_r` value: its canonical integer in `[0, r)`, read as an element of `F_q`
//!   (injective because `r < q`) ([`Transcript::absorb`]).
//! - A byte string: its length, then little-endian chunks of `⌊(log₂ q − 1)/8⌋` bytes (47 for
//!   BLS12-381), each chunk one element; every chunk is below `q`, and the length makes the
//!   packing injective ([`Transcript::absorb_bytes`]). Used for the domain tag and the R1CS
//!   digest (32 bytes: one element).
//! - A curve point (G1 over `F_q`, G2 over `F_{q²}`): the `F_q` components of its affine `x`,
//!   then of its affine `y`, then an infinity flag (`0` for a finite point; the identity is
//!   all-zero coordinates with flag `1`). An `F_{q^k}` coordinate contributes its `k`
//!   components in arkworks' `to_base_prime_field_elements` order (`c0` before `c1`). G1:
//!   3 elements, G2: 5 ([`Transcript::absorb_point`]).
//! - A `G_T` element (in `F_{q¹²}`): its 12 `F_q` components in the same order
//!   ([`Transcript::absorb_target`]).
//!
//! # Challenges
//!
//! Each challenge is one squeezed `F_q` element `c`; the challenge is the integer formed by
//! the low [`CHALLENGE_BITS`]` = 254` bits of `c`'s canonical representative, which is below
//! `2^254 < r` and so an element of `F_r` with no reduction: in the circuit, the bits come out
//! of one canonical decomposition of `c` and are the challenge, as bits (what a scalar
//! multiplication wants) or as an emulated `F_r` element (limbs are sums of bits, free).
//!
//! **Bias.** Write `q = k·2^b + t` with `b = 254`, `0 ≤ t < 2^b`. For `c` uniform in
//! `[0, q)`, a residue `v < t` of `c mod 2^b` has probability `(k + 1)/q`, any other `k/q`; the
//! statistical distance from uniform on `[0, 2^b)` is `t·(2^b − t)/(q·2^b) ≤ 2^b/(4q)`. For
//! BLS12-381 (`q > 2^380`) that is below `2^{−128}` per challenge ([`check_fields`] requires
//! `log₂ q ≥ b + 127` for exactly this). The challenge set is `[0, 2^b)`, of size
//! `2^254 ≈ 0.55·r`, so every Schwartz–Zippel bound of the protocol (`d/|S|` per sumcheck
//! round, and the MIPP's and the openings' challenges) is at most a factor `r/2^254 < 2`
//! worse than with challenges uniform in `F_r`: one bit of the ~250.
//!
//! # Poseidon parameters ([`poseidon_config`])
//!
//! Width 3 (rate [`RATE`]` = 2`, capacity [`CAPACITY`]` = 1`), S-box `x^5`, [`FULL_ROUNDS`]`
//! = 8` full and [`PARTIAL_ROUNDS`]` = 57` partial rounds, round constants and MDS matrix from
//! arkworks' Grain-LFSR derivation (`find_poseidon_ark_and_mds`, no skipped matrices), all
//! derived from the field alone: every prover and verifier gets the same constants.
//!
//! Why this is ~128-bit secure over `F_q` (BLS12-381's, `log₂ q ≈ 380.7`):
//! - `x^5` is a permutation of `F_q`: `gcd(5, q − 1) = 1` ([`check_fields`] checks it; `x^3`
//!   is not, `3 | q − 1`).
//! - Capacity: one element of 381 bits, above the `2·128` bits a 128-bit sponge needs.
//! - Rounds: the Poseidon paper's bounds for `t = 3`, `α = 5`, security level `M = 128` are
//!   the statistical one (`R_F ≥ 6`), interpolation (`R_F + R_P ≥ log_5 2·min(M, log₂ q) +
//!   log_5 t + 1`) and the Gröbner-basis ones (`log_5 2·min(M, log₂ q)`, `t − 1 + log_5 2 ·
//!   min(M/(t + 1), log₂ q / 2)`, …). Each depends on the field only through
//!   `min(M, log₂ q)` or `min(M/(t+1), log₂ q / 2)`, which are `128` and `32` for every field
//!   of 256 bits or more; so the round numbers are those of the 255-bit fields, `R_F = 8`,
//!   `R_P = 57`, which include the paper's margin (two extra full rounds, `+7.5%` partial
//!   rounds). They are the numbers the workspace's Hekaton transcript uses over the same field.
//!
//! # Layout
//!
//! What [`crate::spartan`] absorbs, in order, is documented there (and each PCS documents its
//! own part): the domain tag, the R1CS digest, the public input, the witness commitment, then
//! every prover message in the order it is sent, squeezing each challenge right after the
//! message it answers.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock};

use ark_crypto_primitives::sponge::poseidon::{
    find_poseidon_ark_and_mds, PoseidonConfig, PoseidonSponge,
};
use ark_crypto_primitives::sponge::{Absorb, CryptographicSponge, FieldBasedCryptographicSponge};
use ark_ec::AffineRepr;
use ark_ff::{AdditiveGroup, BigInteger, Field, PrimeField};

use crate::Error;

#[cfg(feature = "r1cs")]
pub mod constraints;

/// Full rounds of the permutation.
pub const FULL_ROUNDS: usize = 8;
/// Partial rounds of the permutation.
pub const PARTIAL_ROUNDS: usize = 57;
/// The S-box exponent.
pub const ALPHA: u64 = 5;
/// Field elements absorbed per permutation.
pub const RATE: usize = 2;
/// Capacity, in field elements.
pub const CAPACITY: usize = 1;
/// Bits of each challenge: the low 254 bits of a squeezed `F_q` element (module doc).
pub const CHALLENGE_BITS: usize = 254;

/// The Poseidon parameters over `Q` (see the module doc). Deterministic: every prover and
/// verifier derives the same constants. Derived once per field and cached.
pub fn poseidon_config<Q: PrimeField>() -> PoseidonConfig<Q> {
    type Cache = Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<Q>();
    // The map only ever receives whole values: a poisoned lock still holds a valid map.
    let lock = || cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cfg) = lock()
        .get(&id)
        .and_then(|c| c.downcast_ref::<PoseidonConfig<Q>>())
    {
        return cfg.clone();
    }
    let (ark, mds) = find_poseidon_ark_and_mds::<Q>(
        Q::MODULUS_BIT_SIZE as u64,
        RATE,
        FULL_ROUNDS as u64,
        PARTIAL_ROUNDS as u64,
        0,
    );
    let cfg = PoseidonConfig::new(FULL_ROUNDS, PARTIAL_ROUNDS, ALPHA, mds, ark, RATE, CAPACITY);
    lock().insert(id, Box::new(cfg.clone()));
    cfg
}

/// `a < b` for little-endian byte strings of any lengths.
fn bytes_less_than(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    for i in (0..n).rev() {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        if x != y {
            return x < y;
        }
    }
    false
}

/// `n mod m` for a little-endian byte string `n` and a small `m`.
fn bytes_mod(n: &[u8], m: u64) -> u64 {
    n.iter()
        .rev()
        .fold(0u64, |acc, &byte| (acc * 256 + byte as u64) % m)
}

/// Whether a transcript over `Q` can carry the proofs of `F` (module doc): `r < q` (the
/// integer encoding of `F` values is injective), `2^254 < r` (a 254-bit challenge is an
/// `F` element without reduction), `log₂ q ≥ 254 + 127` (the truncation's bias is below
/// `2^{−128}`), and `gcd(5, q − 1) = 1` (the S-box is a permutation).
pub fn check_fields<F: PrimeField, Q: PrimeField>() -> Result<(), Error> {
    let r = F::MODULUS.to_bytes_le();
    let q = Q::MODULUS.to_bytes_le();
    let fail = |reason: String| Err(Error::TranscriptFields(reason));
    if !bytes_less_than(&r, &q) {
        return fail(format!(
            "the scalar field ({} bits) does not embed into the sponge field ({} bits): r ≥ q",
            F::MODULUS_BIT_SIZE,
            Q::MODULUS_BIT_SIZE
        ));
    }
    if (F::MODULUS_BIT_SIZE as usize) <= CHALLENGE_BITS {
        return fail(format!(
            "the scalar field has {} bits; {CHALLENGE_BITS}-bit challenges need more",
            F::MODULUS_BIT_SIZE
        ));
    }
    if (Q::MODULUS_BIT_SIZE as usize) < CHALLENGE_BITS + 127 {
        return fail(format!(
            "the sponge field has {} bits; {CHALLENGE_BITS}-bit challenges cut from it are \
             within 2^-128 of uniform only from {} bits",
            Q::MODULUS_BIT_SIZE,
            CHALLENGE_BITS + 127
        ));
    }
    if bytes_mod(&q, ALPHA) == 1 {
        return fail(format!(
            "x^{ALPHA} is not a permutation of the sponge field ({ALPHA} divides q − 1)"
        ));
    }
    Ok(())
}

/// An `F` element as the `Q` integer it is (injective when `r < q`, which
/// [`check_fields`] ensures for a transcript's pair).
pub fn scalar_to_base<F: PrimeField, Q: PrimeField>(x: &F) -> Q {
    Q::from_le_bytes_mod_order(&x.into_bigint().to_bytes_le())
}

/// Bytes per chunk of a byte string absorbed over `Q`: `⌊(log₂ q − 1)/8⌋`.
pub fn bytes_per_chunk<Q: PrimeField>() -> usize {
    ((Q::MODULUS_BIT_SIZE - 1) / 8) as usize
}

/// What [`Transcript::absorb_bytes`] absorbs: the length, then the chunks.
pub fn bytes_to_elements<Q: PrimeField>(bytes: &[u8]) -> Vec<Q> {
    std::iter::once(Q::from(bytes.len() as u64))
        .chain(
            bytes
                .chunks(bytes_per_chunk::<Q>())
                .map(Q::from_le_bytes_mod_order),
        )
        .collect()
}

/// What [`Transcript::absorb_point`] absorbs: the `Q` components of `x`, of `y`, and the
/// infinity flag (the identity: zeros and flag `1`).
pub fn point_to_elements<G>(p: &G) -> Vec<<G::BaseField as Field>::BasePrimeField>
where
    G: AffineRepr,
{
    type Q<G> = <<G as AffineRepr>::BaseField as Field>::BasePrimeField;
    let degree = G::BaseField::extension_degree() as usize;
    match p.xy() {
        Some((x, y)) => x
            .to_base_prime_field_elements()
            .chain(y.to_base_prime_field_elements())
            .chain(std::iter::once(Q::<G>::ZERO))
            .collect(),
        None => std::iter::repeat_n(Q::<G>::ZERO, 2 * degree)
            .chain(std::iter::once(Q::<G>::ONE))
            .collect(),
    }
}

/// The challenge that the squeezed element `c` gives: its low [`CHALLENGE_BITS`] bits as an
/// integer, an element of `F` without reduction (`2^254 < r`).
pub fn challenge_from_base<F: PrimeField, Q: PrimeField>(c: &Q) -> F {
    let mut bytes = c.into_bigint().to_bytes_le();
    let (full, rem) = (CHALLENGE_BITS / 8, CHALLENGE_BITS % 8);
    bytes.truncate(full + usize::from(rem > 0));
    if rem > 0 {
        if let Some(top) = bytes.get_mut(full) {
            *top &= (1u8 << rem) - 1;
        }
    }
    F::from_le_bytes_mod_order(&bytes)
}

/// A Fiat–Shamir transcript over `Q` for proofs over `F` (module doc).
#[derive(Clone)]
pub struct Transcript<F: PrimeField, Q: PrimeField + Absorb> {
    sponge: PoseidonSponge<Q>,
    _scalar: PhantomData<F>,
}

impl<F: PrimeField, Q: PrimeField + Absorb> Transcript<F, Q> {
    /// A fresh transcript that has absorbed `domain_tag` (as a byte string). Refuses a field
    /// pair that [`check_fields`] rejects.
    pub fn new(domain_tag: &[u8]) -> Result<Self, Error> {
        check_fields::<F, Q>()?;
        let mut t = Self {
            sponge: PoseidonSponge::new(&poseidon_config::<Q>()),
            _scalar: PhantomData,
        };
        t.absorb_bytes(domain_tag);
        Ok(t)
    }

    /// Absorbs one element of the sponge's own field.
    pub fn absorb_base(&mut self, x: &Q) {
        self.sponge.absorb(x);
    }

    /// Absorbs elements of the sponge's field one after another.
    pub fn absorb_base_slice(&mut self, xs: &[Q]) {
        for x in xs {
            self.sponge.absorb(x);
        }
    }

    /// Absorbs one `F` value as its canonical integer.
    pub fn absorb(&mut self, x: &F) {
        self.absorb_base(&scalar_to_base::<F, Q>(x));
    }

    /// Absorbs `F` values one after another (the count is not absorbed: every caller
    /// absorbs a number fixed by what was absorbed before).
    pub fn absorb_slice(&mut self, xs: &[F]) {
        for x in xs {
            self.absorb(x);
        }
    }

    /// Absorbs a byte string: its length, then its bytes packed into field elements.
    pub fn absorb_bytes(&mut self, bytes: &[u8]) {
        self.absorb_base_slice(&bytes_to_elements::<Q>(bytes));
    }

    /// Absorbs a curve point over `Q` or an extension of it (G1, G2) as its coordinates and
    /// infinity flag.
    pub fn absorb_point<G>(&mut self, p: &G)
    where
        G: AffineRepr,
        G::BaseField: Field<BasePrimeField = Q>,
    {
        self.absorb_base_slice(&point_to_elements(p));
    }

    /// Absorbs points one after another (the count is fixed by what was absorbed before).
    pub fn absorb_points<G>(&mut self, ps: &[G])
    where
        G: AffineRepr,
        G::BaseField: Field<BasePrimeField = Q>,
    {
        for p in ps {
            self.absorb_point(p);
        }
    }

    /// Absorbs an element of an extension of `Q` (a `G_T` element) as its `Q` components.
    pub fn absorb_target<T: Field<BasePrimeField = Q>>(&mut self, x: &T) {
        for c in x.to_base_prime_field_elements() {
            self.absorb_base(&c);
        }
    }

    /// Squeezes one challenge (module doc).
    pub fn challenge(&mut self) -> F {
        let c = self.sponge.squeeze_native_field_elements(1);
        challenge_from_base::<F, Q>(&c[0])
    }

    /// Squeezes `n` challenges, one squeezed element each.
    pub fn challenges(&mut self, n: usize) -> Vec<F> {
        if n == 0 {
            return Vec::new();
        }
        self.sponge
            .squeeze_native_field_elements(n)
            .iter()
            .map(challenge_from_base::<F, Q>)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{Fq, Fq12, Fr, G1Affine, G1Projective, G2Affine, G2Projective};
    use ark_ec::{CurveGroup, PrimeGroup};
    use ark_ff::{One, UniformRand, Zero};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    type T = Transcript<Fr, Fq>;

    #[test]
    fn same_messages_same_challenges_and_any_change_differs() {
        let run = |tag: &[u8], x: u64| {
            let mut t = T::new(tag).unwrap();
            t.absorb(&Fr::from(x));
            t.challenges(2)
        };
        assert_eq!(run(b"a", 1), run(b"a", 1));
        assert_ne!(run(b"a", 1), run(b"a", 2));
        assert_ne!(run(b"a", 1), run(b"b", 1));
        let c = run(b"a", 1);
        assert_ne!(c[0], c[1]);
        // n challenges at once are n single ones.
        let mut t = T::new(b"a").unwrap();
        t.absorb(&Fr::from(1u64));
        assert_eq!(vec![t.challenge(), t.challenge()], c);
    }

    #[test]
    fn byte_strings_are_length_prefixed() {
        let mut a = T::new(b"t").unwrap();
        a.absorb_bytes(&[1, 2]);
        a.absorb_bytes(&[]);
        let mut b = T::new(b"t").unwrap();
        b.absorb_bytes(&[1]);
        b.absorb_bytes(&[2]);
        assert_ne!(a.challenge(), b.challenge());
        // 47-byte chunks over BLS12-381's F_q: a 32-byte digest is one element.
        assert_eq!(bytes_per_chunk::<Fq>(), 47);
        assert_eq!(bytes_to_elements::<Fq>(&[7u8; 32]).len(), 2);
        assert_eq!(bytes_to_elements::<Fq>(&[7u8; 48]).len(), 3);
    }

    #[test]
    fn challenges_are_the_low_254_bits_of_the_squeezed_element() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for _ in 0..50 {
            let c = Fq::rand(&mut rng);
            let x: Fr = challenge_from_base(&c);
            let cb = c.into_bigint().to_bits_le();
            let xb = x.into_bigint().to_bits_le();
            assert_eq!(cb[..CHALLENGE_BITS], xb[..CHALLENGE_BITS]);
            assert!(xb[CHALLENGE_BITS..].iter().all(|b| !b));
        }
        // The largest possible challenge, 2^254 − 1, is below r and kept as is.
        let max = Fq::from(2u64).pow([CHALLENGE_BITS as u64]) - Fq::one();
        let x: Fr = challenge_from_base(&max);
        assert_eq!(x, Fr::from(2u64).pow([CHALLENGE_BITS as u64]) - Fr::one());
        let x: Fr = challenge_from_base(&(max + Fq::one()));
        assert!(x.is_zero());
    }

    #[test]
    fn scalars_are_absorbed_as_integers() {
        // Absorbing an F_r value is absorbing the F_q element with the same integer.
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let x = Fr::rand(&mut rng);
        let mut a = T::new(b"t").unwrap();
        a.absorb(&x);
        let mut b = T::new(b"t").unwrap();
        b.absorb_base(&Fq::from_le_bytes_mod_order(&x.into_bigint().to_bytes_le()));
        assert_eq!(a.challenge(), b.challenge());
        // −1 in F_r is r − 1, not q − 1.
        let minus_one: Fq = scalar_to_base(&(-Fr::one()));
        assert_ne!(minus_one, -Fq::one());
        assert_eq!(
            minus_one + Fq::one(),
            Fq::from_le_bytes_mod_order(&Fr::MODULUS.to_bytes_le())
        );
    }

    #[test]
    fn points_are_coordinates_with_an_infinity_flag() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let p = (G1Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let (x, y) = p.xy().unwrap();
        assert_eq!(point_to_elements(&p), vec![x, y, Fq::zero()]);
        assert_eq!(
            point_to_elements(&G1Affine::zero()),
            vec![Fq::zero(), Fq::zero(), Fq::one()]
        );
        let q = (G2Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let (x2, y2) = q.xy().unwrap();
        assert_eq!(
            point_to_elements(&q),
            vec![x2.c0, x2.c1, y2.c0, y2.c1, Fq::zero()]
        );
        assert_eq!(point_to_elements(&G2Affine::zero()).len(), 5);
        // A point and its negation, and the identity, all absorb differently.
        let run = |p: &G1Affine| {
            let mut t = T::new(b"t").unwrap();
            t.absorb_point(p);
            t.challenge()
        };
        assert_ne!(run(&p), run(&(-p)));
        assert_ne!(run(&p), run(&G1Affine::zero()));
        // G_T: 12 components, c0 before c1.
        let g = Fq12::rand(&mut rng);
        let comps: Vec<Fq> = g.to_base_prime_field_elements().collect();
        assert_eq!(comps.len(), 12);
        assert_eq!(comps[0], g.c0.c0.c0);
        assert_eq!(comps[11], g.c1.c2.c1);
    }

    #[test]
    fn field_pairs_that_do_not_fit_are_refused() {
        // F_q into F_r: q > r.
        assert!(matches!(
            Transcript::<Fq, Fr>::new(b"t"),
            Err(Error::TranscriptFields(_))
        ));
        // BLS12-381's F_r as the sponge field for itself: r is not below r.
        assert!(matches!(
            Transcript::<Fr, Fr>::new(b"t"),
            Err(Error::TranscriptFields(_))
        ));
        assert!(check_fields::<Fr, Fq>().is_ok());
        // gcd(5, q − 1) = 1 for BLS12-381's q, and 3 | q − 1 (why x^3 is not used).
        let q = Fq::MODULUS.to_bytes_le();
        assert_ne!(bytes_mod(&q, 5), 1);
        assert_eq!(bytes_mod(&q, 3), 1);
    }
}
