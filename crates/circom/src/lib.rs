//! circom's binary files as arkworks constraint systems: bring your own circuit.
//!
//! * [`R1cs`]: a `.r1cs` file (iden3's format, version 1): the header (field size `n8`, the
//!   prime, the wire counts), the constraints `⟨A_j, w⟩ · ⟨B_j, w⟩ = ⟨C_j, w⟩` as sparse linear
//!   combinations over the **wires** `w`, and the wire-to-label map. Sections may come in any
//!   order; PLONK custom-gate sections (types 4 and 5) are refused.
//! * [`read_wtns`]: a `.wtns` file (version 2): the same prime, then one value per wire.
//! * [`CircomCircuit`]: an [`ark_relations::gr1cs::ConstraintSynthesizer`], so any arkworks
//!   prover (Pari, Groth16) proves the circuit.
//!
//! # Wires and public signals
//!
//! circom numbers the wires `w_0 = 1`, then the public outputs, the public inputs, the private
//! inputs, then every other signal. The **public signals** are `w_1 … w_{nPubOut + nPubIn}`, in
//! that order (outputs first), which is also snarkjs's order for `public.json`; they become the
//! instance of the arkworks constraint system, the rest its witness.
//!
//! # Field elements
//!
//! Both files store field elements as `n8`-byte little-endian integers in standard (not
//! Montgomery) form. Each one must be below the prime; the prime must be the scalar field of
//! the curve asked for ([`Error::Prime`] names both, so a BN254 file handed to BLS12-381 says
//! so). circom's `--prime bn128` is BN254's scalar field, `--prime bls12381` BLS12-381's.
//!
//! # Bad input
//!
//! Decoding never panics and never allocates more than the file's own length justifies: every
//! count is checked against the bytes that remain before anything is reserved. The header's
//! wire count (`nWires`), which decides what a setup allocates (a column, a group element per
//! wire), is bounded by the file's content: at most [`MAX_UNUSED_WIRES`] wires besides `w_0`
//! may appear in no constraint (unused inputs, say), so a file of a few bytes cannot declare
//! millions of wires; and it is capped at [`MAX_WIRES`] whatever the file holds. A witness that does not satisfy the constraints is refused
//! by [`R1cs::check_witness`], naming the first failing constraint.

use ark_ff::{BigInteger, PrimeField};
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, SynthesisError, Variable,
};

/// Largest wire count accepted (2^24, four times the platform's constraint cap of 2^22): a
/// Pari setup allocates some 340 bytes per wire (three scalars, a projective and an affine
/// point), so 2^24 wires already need about 6 GB; a larger count in a header is a malformed
/// or hostile file.
pub const MAX_WIRES: u64 = 1 << 24;

/// Most wires (besides the constant `w_0`) that may appear in no constraint: unused inputs or
/// outputs, signals only ever assigned with `<--`. An honest circuit has few; the bound keeps
/// `nWires` within what the constraints (so the file's length) justify.
pub const MAX_UNUSED_WIRES: u64 = 1 << 16;

mod decimal;
mod r1cs_head;
mod wtns_head;

pub use decimal::canonical_field;
pub use r1cs_head::{r1cs_head, R1csHead};
pub use wtns_head::{wtns_head, WtnsHead, WTNS_HEAD_BYTES};

/// What can be wrong with a circom file or witness.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("malformed {file} file: {reason}")]
    Malformed { file: &'static str, reason: String },
    #[error("{file} file: unsupported: {reason}")]
    Unsupported { file: &'static str, reason: String },
    #[error("{file} file is over the prime {found}, but {expected} was asked for (circom --prime {hint})")]
    Prime {
        file: &'static str,
        found: String,
        expected: String,
        hint: &'static str,
    },
    #[error("the witness has {got} wires, the circuit {expected}")]
    WitnessLength { expected: usize, got: usize },
    #[error("witness wire 0 must be 1 (the constant), it is {0}")]
    WitnessOne(String),
    #[error("the witness does not satisfy constraint {index} of {total} (⟨A,w⟩·⟨B,w⟩ ≠ ⟨C,w⟩)")]
    Unsatisfied { index: usize, total: usize },
}

fn malformed(file: &'static str, reason: impl Into<String>) -> Error {
    Error::Malformed {
        file,
        reason: reason.into(),
    }
}

/// A circuit's constraints as matrices over `z = (io, 1, aux)` ([`R1cs::io_first_matrices`]):
/// `num_io` public signals, the constant, `num_aux` other wires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoFirstMatrices<F> {
    pub num_constraints: usize,
    pub num_io: usize,
    pub num_aux: usize,
    /// `(row, column, value)`.
    pub a: Vec<(usize, usize, F)>,
    pub b: Vec<(usize, usize, F)>,
    pub c: Vec<(usize, usize, F)>,
}

/// A sparse linear combination over the wires: `(wire, coefficient)` pairs.
pub type Lc<F> = Vec<(u32, F)>;

/// One constraint `⟨a, w⟩ · ⟨b, w⟩ = ⟨c, w⟩`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint<F> {
    pub a: Lc<F>,
    pub b: Lc<F>,
    pub c: Lc<F>,
}

/// A decoded `.r1cs` file over the field `F`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct R1cs<F> {
    /// All wires, `w_0 = 1` included.
    pub num_wires: u32,
    pub num_pub_out: u32,
    pub num_pub_in: u32,
    pub num_prv_in: u32,
    pub num_labels: u64,
    pub constraints: Vec<Constraint<F>>,
    /// The label (signal id of the `.sym` file) of each wire, when the file has the section.
    pub wire_labels: Option<Vec<u64>>,
}

/// A byte reader that refuses to run past the end.
struct Reader<'a> {
    file: &'static str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(file: &'static str, bytes: &'a [u8]) -> Self {
        Self {
            file,
            bytes,
            pos: 0,
        }
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(malformed(
                self.file,
                format!(
                    "{what}: {n} bytes needed at offset {}, {} left",
                    self.pos,
                    self.remaining()
                ),
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// The number of bytes of one field element of `F` in circom's files.
fn n8<F: PrimeField>() -> usize {
    (F::MODULUS_BIT_SIZE as usize).div_ceil(64) * 8
}

/// BN254's and BLS12-381's scalar-field moduli (big-endian hex): circom's `bn128` and
/// `bls12381`, the primes worth naming in an error.
const KNOWN_PRIMES: [(&str, &str, &str); 2] = [
    (
        "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001",
        "bn128 (BN254's scalar field)",
        "bn128",
    ),
    (
        "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001",
        "bls12381 (BLS12-381's scalar field)",
        "bls12381",
    ),
];

/// A prime (little-endian bytes) by name when it is a known one, else in hex.
fn prime_name(le: &[u8]) -> (String, &'static str) {
    let hex: String = le.iter().rev().map(|b| format!("{b:02x}")).collect();
    let hex = hex.trim_start_matches('0');
    for (p, name, flag) in KNOWN_PRIMES {
        if hex == p.trim_start_matches('0') {
            return (name.to_string(), flag);
        }
    }
    (format!("0x{hex}"), "<that prime>")
}

/// Reads the `n8` and prime of a header and checks them against `F`.
fn check_prime<F: PrimeField>(r: &mut Reader<'_>) -> Result<(), Error> {
    let file = r.file;
    let size = r.u32("field size")? as usize;
    if size == 0 || size > 64 || size % 8 != 0 {
        return Err(malformed(file, format!("field size {size} bytes")));
    }
    let prime = r.take(size, "prime")?;
    let want = F::MODULUS.to_bytes_le();
    let mut want_padded = want.clone();
    want_padded.resize(size.max(want.len()), 0);
    if size != n8::<F>() || prime != &want_padded[..size] {
        let (found, _) = prime_name(prime);
        let (expected, hint) = prime_name(&want);
        return Err(Error::Prime {
            file,
            found,
            expected,
            hint,
        });
    }
    Ok(())
}

/// One canonical field element (`n8` bytes, little-endian, below the prime).
fn field<F: PrimeField>(r: &mut Reader<'_>, what: &str) -> Result<F, Error> {
    let bytes = r.take(n8::<F>(), what)?;
    let mut repr = F::BigInt::default();
    for (limb, chunk) in repr.as_mut().iter_mut().zip(bytes.chunks(8)) {
        let mut a = [0u8; 8];
        a.copy_from_slice(chunk);
        *limb = u64::from_le_bytes(a);
    }
    F::from_bigint(repr).ok_or_else(|| {
        malformed(
            r.file,
            format!("{what}: a value at or above the prime (offset {})", r.pos - bytes.len()),
        )
    })
}

/// The sections of a file: `(type, content)`, after the magic, version and count.
fn sections<'a>(
    file: &'static str,
    bytes: &'a [u8],
    magic: &[u8; 4],
    versions: &[u32],
) -> Result<Vec<(u32, &'a [u8])>, Error> {
    let mut r = Reader::new(file, bytes);
    if r.take(4, "magic")? != magic {
        return Err(malformed(
            file,
            format!("does not start with {:?}", String::from_utf8_lossy(magic)),
        ));
    }
    let version = r.u32("version")?;
    if !versions.contains(&version) {
        return Err(Error::Unsupported {
            file,
            reason: format!("version {version} (this reader knows {versions:?})"),
        });
    }
    let count = r.u32("section count")?;
    let mut out = Vec::new();
    for i in 0..count {
        let kind = r.u32("section type")?;
        let size = r.u64("section size")?;
        let size = usize::try_from(size)
            .ok()
            .filter(|&s| s <= r.remaining())
            .ok_or_else(|| {
                malformed(
                    file,
                    format!("section {i} (type {kind}) claims {size} bytes, {} left", r.remaining()),
                )
            })?;
        out.push((kind, r.take(size, "section")?));
    }
    if r.remaining() != 0 {
        return Err(malformed(file, format!("{} bytes after the last section", r.remaining())));
    }
    Ok(out)
}

fn one_section<'a>(
    file: &'static str,
    sections: &[(u32, &'a [u8])],
    kind: u32,
    name: &str,
) -> Result<Option<&'a [u8]>, Error> {
    let mut found = sections.iter().filter(|(k, _)| *k == kind);
    let first = found.next().map(|(_, s)| *s);
    if found.next().is_some() {
        return Err(malformed(file, format!("two {name} sections")));
    }
    Ok(first)
}

impl<F: PrimeField> R1cs<F> {
    /// Decodes a `.r1cs` file whose prime must be `F`'s modulus.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        const FILE: &str = ".r1cs";
        let secs = sections(FILE, bytes, b"r1cs", &[1])?;
        for (kind, _) in &secs {
            if *kind == 4 || *kind == 5 {
                return Err(Error::Unsupported {
                    file: FILE,
                    reason: "custom gates (sections 4 and 5, PLONK-only circom output)".into(),
                });
            }
        }
        let header =
            one_section(FILE, &secs, 1, "header")?.ok_or_else(|| malformed(FILE, "no header section"))?;
        let body = one_section(FILE, &secs, 2, "constraints")?
            .ok_or_else(|| malformed(FILE, "no constraints section"))?;
        // The counts, checked against each other and the constraints section's length as a
        // server checks them from the header alone ([`r1cs_head`]).
        let R1csHead { num_wires, num_pub_out, num_pub_in, num_prv_in, num_labels, num_constraints } =
            r1cs_head::counts::<F>(header, body.len() as u64)?;
        let mut c = Reader::new(FILE, body);
        // Every constraint takes at least 12 bytes (three empty combinations).
        if u64::from(num_constraints) * 12 > c.remaining() as u64 {
            return Err(malformed(
                FILE,
                format!("{num_constraints} constraints cannot fit in a {}-byte section", c.remaining()),
            ));
        }
        let mut constraints = Vec::with_capacity(num_constraints as usize);
        for j in 0..num_constraints {
            let mut lc = |which: &str| -> Result<Lc<F>, Error> {
                let n = c.u32("factor count")?;
                let per = 4 + n8::<F>() as u64;
                if u64::from(n) * per > c.remaining() as u64 {
                    return Err(malformed(
                        FILE,
                        format!("constraint {j}: {which} claims {n} terms, the section ends first"),
                    ));
                }
                let mut terms = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    let wire = c.u32("wire id")?;
                    if wire >= num_wires {
                        return Err(malformed(
                            FILE,
                            format!("constraint {j}: {which} uses wire {wire} of {num_wires}"),
                        ));
                    }
                    terms.push((wire, field::<F>(&mut c, "coefficient")?));
                }
                Ok(terms)
            };
            let a = lc("A")?;
            let b = lc("B")?;
            let cc = lc("C")?;
            constraints.push(Constraint { a, b, c: cc });
        }
        if c.remaining() != 0 {
            return Err(malformed(
                FILE,
                format!("{} bytes after constraint {num_constraints}", c.remaining()),
            ));
        }
        // nWires against the wires the constraints use (a list as long as their terms, so no
        // longer than the file justifies), before anything is allocated per wire.
        let mut used: Vec<u32> = constraints
            .iter()
            .flat_map(|c| c.a.iter().chain(&c.b).chain(&c.c).map(|(w, _)| *w))
            .filter(|&w| w != 0)
            .collect();
        used.sort_unstable();
        used.dedup();
        let unused = u64::from(num_wires) - 1 - used.len() as u64;
        if unused > MAX_UNUSED_WIRES {
            return Err(malformed(
                FILE,
                format!(
                    "nWires {num_wires}: the constraints use only {} wires besides the constant, which would leave {unused} wires \
                     in no constraint (at most {MAX_UNUSED_WIRES})",
                    used.len()
                ),
            ));
        }
        drop(used);

        let wire_labels = match one_section(FILE, &secs, 3, "wire-to-label")? {
            None => None,
            Some(s) => {
                if s.len() as u64 != u64::from(num_wires) * 8 {
                    return Err(malformed(
                        FILE,
                        format!("wire-to-label section of {} bytes for {num_wires} wires", s.len()),
                    ));
                }
                let mut r = Reader::new(FILE, s);
                let mut labels = Vec::with_capacity(num_wires as usize);
                for _ in 0..num_wires {
                    labels.push(r.u64("label")?);
                }
                Some(labels)
            }
        };
        Ok(R1cs {
            num_wires,
            num_pub_out,
            num_pub_in,
            num_prv_in,
            num_labels,
            constraints,
            wire_labels,
        })
    }

    /// The number of public signals (outputs, then public inputs).
    pub fn num_public(&self) -> usize {
        self.num_pub_out as usize + self.num_pub_in as usize
    }

    /// The public signals of a full witness, in circom's order.
    pub fn public_signals<'w>(&self, witness: &'w [F]) -> &'w [F] {
        let end = (1 + self.num_public()).min(witness.len());
        &witness[1.min(end)..end]
    }

    /// The constraints as three sparse matrices over `z = (io, 1, aux)`: the public signals
    /// first, then the constant, then every other wire, the layout of proof systems that put
    /// the statement before the constant (Spartan's, §2.5 of the Testudo paper). Wire `0` (the
    /// constant) becomes column `num_io`, public wire `j ∈ 1..=num_io` column `j − 1`, and every
    /// other wire keeps its index. Entries are `(row, column, value)` in constraint order.
    pub fn io_first_matrices(&self) -> IoFirstMatrices<F> {
        let num_io = self.num_public();
        let col = |wire: u32| -> usize {
            let w = wire as usize;
            match w {
                0 => num_io,
                w if w <= num_io => w - 1,
                w => w,
            }
        };
        let mut m = IoFirstMatrices {
            num_constraints: self.constraints.len(),
            num_io,
            num_aux: (self.num_wires as usize).saturating_sub(1 + num_io),
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
        };
        for (row, k) in self.constraints.iter().enumerate() {
            m.a.extend(k.a.iter().map(|(w, v)| (row, col(*w), *v)));
            m.b.extend(k.b.iter().map(|(w, v)| (row, col(*w), *v)));
            m.c.extend(k.c.iter().map(|(w, v)| (row, col(*w), *v)));
        }
        m
    }

    /// A full witness (one value per wire, checked by [`R1cs::check_witness`] first) split as
    /// [`R1cs::io_first_matrices`] lays it out: the public signals and the other wires (the
    /// constant dropped).
    pub fn split_witness<'w>(&self, witness: &'w [F]) -> Result<(&'w [F], &'w [F]), Error> {
        self.check_witness(witness)?;
        let n = 1 + self.num_public();
        Ok((&witness[1..n], &witness[n..]))
    }

    /// Checks a full witness (one value per wire): its length, `w_0 = 1`, then every
    /// constraint, naming the first that fails.
    pub fn check_witness(&self, witness: &[F]) -> Result<(), Error> {
        if witness.len() != self.num_wires as usize {
            return Err(Error::WitnessLength {
                expected: self.num_wires as usize,
                got: witness.len(),
            });
        }
        if witness[0] != F::one() {
            return Err(Error::WitnessOne(witness[0].to_string()));
        }
        let eval = |lc: &Lc<F>| -> F {
            lc.iter()
                .map(|(w, coeff)| witness[*w as usize] * coeff)
                .sum()
        };
        for (index, c) in self.constraints.iter().enumerate() {
            if eval(&c.a) * eval(&c.b) != eval(&c.c) {
                return Err(Error::Unsatisfied {
                    index,
                    total: self.constraints.len(),
                });
            }
        }
        Ok(())
    }

    /// Encodes the file (header, constraints, wire-to-label map when present), as circom
    /// writes it: for tests, fuzzing seeds and tools that produce R1CS for circom's toolchain.
    pub fn to_bytes(&self) -> Vec<u8> {
        let n8 = n8::<F>();
        let mut header = Vec::new();
        header.extend((n8 as u32).to_le_bytes());
        header.extend(pad(F::MODULUS.to_bytes_le(), n8));
        for v in [
            self.num_wires,
            self.num_pub_out,
            self.num_pub_in,
            self.num_prv_in,
        ] {
            header.extend(v.to_le_bytes());
        }
        header.extend(self.num_labels.to_le_bytes());
        header.extend((self.constraints.len() as u32).to_le_bytes());
        let mut body = Vec::new();
        for c in &self.constraints {
            for lc in [&c.a, &c.b, &c.c] {
                body.extend((lc.len() as u32).to_le_bytes());
                for (w, coeff) in lc {
                    body.extend(w.to_le_bytes());
                    body.extend(pad(coeff.into_bigint().to_bytes_le(), n8));
                }
            }
        }
        let mut secs = vec![(1u32, header), (2u32, body)];
        if let Some(labels) = &self.wire_labels {
            secs.push((3, labels.iter().flat_map(|l| l.to_le_bytes()).collect()));
        }
        container(b"r1cs", 1, &secs)
    }
}

fn pad(mut v: Vec<u8>, n: usize) -> Vec<u8> {
    v.resize(n, 0);
    v
}

fn container(magic: &[u8; 4], version: u32, sections: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(magic);
    out.extend(version.to_le_bytes());
    out.extend((sections.len() as u32).to_le_bytes());
    for (kind, content) in sections {
        out.extend(kind.to_le_bytes());
        out.extend((content.len() as u64).to_le_bytes());
        out.extend(content);
    }
    out
}

/// Decodes a `.wtns` file (version 2) whose prime must be `F`'s modulus: one value per wire.
pub fn read_wtns<F: PrimeField>(bytes: &[u8]) -> Result<Vec<F>, Error> {
    const FILE: &str = ".wtns";
    let secs = sections(FILE, bytes, b"wtns", &[2])?;
    let header =
        one_section(FILE, &secs, 1, "header")?.ok_or_else(|| malformed(FILE, "no header section"))?;
    let mut h = Reader::new(FILE, header);
    check_prime::<F>(&mut h)?;
    let count = h.u32("witness count")?;
    if h.remaining() != 0 {
        return Err(malformed(FILE, format!("{} bytes after the header's fields", h.remaining())));
    }
    let values =
        one_section(FILE, &secs, 2, "values")?.ok_or_else(|| malformed(FILE, "no values section"))?;
    if values.len() as u64 != u64::from(count) * n8::<F>() as u64 {
        return Err(malformed(
            FILE,
            format!("{count} values need {} bytes, the section has {}", u64::from(count) * n8::<F>() as u64, values.len()),
        ));
    }
    let mut r = Reader::new(FILE, values);
    (0..count).map(|_| field::<F>(&mut r, "witness value")).collect()
}

/// Encodes a witness as a `.wtns` file (version 2).
pub fn write_wtns<F: PrimeField>(witness: &[F]) -> Vec<u8> {
    let n8 = n8::<F>();
    let mut header = Vec::new();
    header.extend((n8 as u32).to_le_bytes());
    header.extend(pad(F::MODULUS.to_bytes_le(), n8));
    header.extend((witness.len() as u32).to_le_bytes());
    let values = witness
        .iter()
        .flat_map(|v| pad(v.into_bigint().to_bytes_le(), n8))
        .collect();
    container(b"wtns", 2, &[(1, header), (2, values)])
}

/// BLAKE2b-256 of a file's bytes, as 64 hex digits: names an `.r1cs` in key directories.
pub fn digest(bytes: &[u8]) -> String {
    let mut d = FileDigest::new();
    d.update(bytes);
    d.finish()
}

/// [`digest`] of a file read in pieces (a server hashing an upload it does not hold whole).
pub struct FileDigest(blake2::Blake2bVar);

impl FileDigest {
    pub fn new() -> Self {
        use blake2::digest::{Update, VariableOutput};
        let mut h = blake2::Blake2bVar::new(32).expect("32 is a valid BLAKE2b output size");
        h.update(b"circom/r1cs/v1");
        Self(h)
    }

    /// The file's next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        blake2::digest::Update::update(&mut self.0, bytes);
    }

    /// The digest of every byte given, as 64 hex digits.
    pub fn finish(self) -> String {
        use blake2::digest::VariableOutput;
        let mut out = [0u8; 32];
        self.0.finalize_variable(&mut out).expect("the output is 32 bytes");
        out.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl Default for FileDigest {
    fn default() -> Self {
        Self::new()
    }
}

/// A circom circuit for arkworks: wire 0 is the constant, the public signals the instance,
/// every other wire a witness variable. Without a witness it synthesises the constraints
/// alone (for a setup).
pub struct CircomCircuit<'a, F> {
    pub r1cs: &'a R1cs<F>,
    /// One value per wire ([`read_wtns`]); checked with [`R1cs::check_witness`] first for a
    /// clear error.
    pub witness: Option<&'a [F]>,
}

impl<F: PrimeField> ConstraintSynthesizer<F> for CircomCircuit<'_, F> {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        let r = self.r1cs;
        if let Some(w) = self.witness {
            if w.len() != r.num_wires as usize {
                return Err(SynthesisError::AssignmentMissing);
            }
        }
        let value = |i: usize| -> Result<F, SynthesisError> {
            match self.witness {
                Some(w) => Ok(w[i]),
                None => Err(SynthesisError::AssignmentMissing),
            }
        };
        let mut vars = Vec::with_capacity(r.num_wires as usize);
        vars.push(Variable::One);
        let public = r.num_public();
        for i in 1..r.num_wires as usize {
            vars.push(if i <= public {
                cs.new_input_variable(|| value(i))?
            } else {
                cs.new_witness_variable(|| value(i))?
            });
        }
        let lc = |terms: &Lc<F>| -> LinearCombination<F> {
            let mut lc = LinearCombination::zero();
            for (w, coeff) in terms {
                lc += (*coeff, vars[*w as usize]);
            }
            lc
        };
        for c in &r.constraints {
            cs.enforce_r1cs_constraint(|| lc(&c.a), || lc(&c.b), || lc(&c.c))?;
        }
        Ok(())
    }
}
