//! A `.r1cs` file checked from its header and its sections' sizes, a few ranged reads: what a
//! server can decide about a circuit without holding it (the platform's planner refuses a
//! registration by its header and has the object store copy the file; the worker that runs the
//! setup decodes it whole).

use ark_ff::PrimeField;

use super::{check_prime, malformed, n8, Error, Reader, MAX_UNUSED_WIRES, MAX_WIRES};

/// Most sections a `.r1cs` file may have (circom writes three; the format knows five).
const MAX_SECTIONS: u32 = 16;
/// Most bytes a header section may have (a 64-byte prime and the counts take 100).
const MAX_HEADER_BYTES: u64 = 256;

/// What the header of a `.r1cs` file says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct R1csHead {
    pub num_wires: u32,
    pub num_pub_out: u32,
    pub num_pub_in: u32,
    pub num_prv_in: u32,
    pub num_labels: u64,
    pub num_constraints: u32,
}

/// Reads the header of a `.r1cs` file of `file_len` bytes through `read(at, len)` (a few reads
/// of at most [`MAX_HEADER_BYTES`]: the preamble, each section's table entry, the header
/// section; circom writes the constraints before the header, so the sections are walked by
/// their sizes), and checks its prime against `F`. Refused as [`super::R1cs::from_bytes`]
/// would refuse the whole file: a section that runs past the file, no header or constraints
/// section, custom gates, `nWires` above [`MAX_WIRES`], fewer wires than the declared signals,
/// more constraints than their section can hold, and more wires than the constraints can use
/// by [`MAX_UNUSED_WIRES`] (counted from the section's length: a term takes at least a wire id
/// and a coefficient). Decoding the whole file still checks the rest. The outer error is
/// `read`'s, the inner one the file's.
pub fn r1cs_head<F: PrimeField, E>(file_len: u64, mut read: impl FnMut(u64, u64) -> Result<Vec<u8>, E>) -> Result<Result<R1csHead, Error>, E> {
    const FILE: &str = ".r1cs";
    if file_len < 12 {
        return Ok(Err(malformed(FILE, format!("{file_len} bytes"))));
    }
    let preamble = read(0, 12)?;
    let mut r = Reader::new(FILE, &preamble);
    let count = match (|| {
        if r.take(4, "magic")? != b"r1cs" {
            return Err(malformed(FILE, "does not start with \"r1cs\""));
        }
        let version = r.u32("version")?;
        if version != 1 {
            return Err(Error::Unsupported { file: FILE, reason: format!("version {version} (this reader knows [1])") });
        }
        let count = r.u32("section count")?;
        if count > MAX_SECTIONS {
            return Err(malformed(FILE, format!("{count} sections (at most {MAX_SECTIONS})")));
        }
        Ok(count)
    })() {
        Ok(c) => c,
        Err(e) => return Ok(Err(e)),
    };
    let (mut at, mut header, mut constraints) = (12u64, None, None);
    for i in 0..count {
        if at + 12 > file_len {
            return Ok(Err(malformed(FILE, format!("section {i}'s table entry runs past the file's {file_len} bytes"))));
        }
        let entry = read(at, 12)?;
        let kind = u32::from_le_bytes(entry[0..4].try_into().expect("4 bytes"));
        let size = u64::from_le_bytes(entry[4..12].try_into().expect("8 bytes"));
        let body = at + 12;
        if size > file_len - body {
            return Ok(Err(malformed(FILE, format!("section {i} (type {kind}) claims {size} bytes, {} left", file_len - body))));
        }
        let slot = match kind {
            1 => &mut header,
            2 => &mut constraints,
            4 | 5 => return Ok(Err(Error::Unsupported { file: FILE, reason: "custom gates (sections 4 and 5, PLONK-only circom output)".into() })),
            _ => {
                at = body + size;
                continue;
            }
        };
        if slot.replace((body, size)).is_some() {
            return Ok(Err(malformed(FILE, format!("two sections of type {kind}"))));
        }
        at = body + size;
    }
    let Some((header_at, header_len)) = header else { return Ok(Err(malformed(FILE, "no header section"))) };
    let Some((_, constraints_len)) = constraints else { return Ok(Err(malformed(FILE, "no constraints section"))) };
    if header_len > MAX_HEADER_BYTES {
        return Ok(Err(malformed(FILE, format!("a header section of {header_len} bytes"))));
    }
    let bytes = read(header_at, header_len)?;
    Ok(counts::<F>(&bytes, constraints_len))
}

/// The header section's fields, checked against each other and against the constraints
/// section's length.
pub(crate) fn counts<F: PrimeField>(header: &[u8], constraints_len: u64) -> Result<R1csHead, Error> {
    const FILE: &str = ".r1cs";
    let mut r = Reader::new(FILE, header);
    check_prime::<F>(&mut r)?;
    let num_wires = r.u32("nWires")?;
    let num_pub_out = r.u32("nPubOut")?;
    let num_pub_in = r.u32("nPubIn")?;
    let num_prv_in = r.u32("nPrvIn")?;
    let num_labels = r.u64("nLabels")?;
    let num_constraints = r.u32("mConstraints")?;
    if r.remaining() != 0 {
        return Err(malformed(FILE, format!("{} bytes after the header's fields", r.remaining())));
    }
    if u64::from(num_wires) > MAX_WIRES {
        return Err(Error::Unsupported { file: FILE, reason: format!("nWires {num_wires}: more wires than the {MAX_WIRES} accepted") });
    }
    let declared = 1 + u64::from(num_pub_out) + u64::from(num_pub_in) + u64::from(num_prv_in);
    if declared > u64::from(num_wires) {
        return Err(malformed(
            FILE,
            format!("{num_wires} wires cannot hold the constant, {num_pub_out} outputs, {num_pub_in} public and {num_prv_in} private inputs"),
        ));
    }
    // Per constraint three term counts (12 bytes), per term a wire id and a coefficient.
    if u64::from(num_constraints) * 12 > constraints_len {
        return Err(malformed(FILE, format!("{num_constraints} constraints cannot fit in a {constraints_len}-byte section")));
    }
    let terms = (constraints_len - u64::from(num_constraints) * 12) / (4 + n8::<F>() as u64);
    let unused = u64::from(num_wires) - 1 - terms.min(u64::from(num_wires) - 1);
    if unused > MAX_UNUSED_WIRES {
        return Err(malformed(
            FILE,
            format!(
                "nWires {num_wires}: a constraints section of {constraints_len} bytes holds at most {terms} terms, which would leave at \
                 least {unused} wires in no constraint (at most {MAX_UNUSED_WIRES})"
            ),
        ));
    }
    Ok(R1csHead { num_wires, num_pub_out, num_pub_in, num_prv_in, num_labels, num_constraints })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Constraint, R1cs};
    use ark_ff::One;

    type F = ark_bn254::Fr;

    fn file(wires: u32, constraints: usize) -> Vec<u8> {
        let one = F::one();
        let c = Constraint { a: vec![(1, one)], b: vec![(1, one)], c: vec![(1, one)] };
        R1cs::<F> { num_wires: wires, num_pub_out: 1, num_pub_in: 0, num_prv_in: 0, num_labels: 0, constraints: vec![c; constraints], wire_labels: None }
            .to_bytes()
    }

    /// The header of `file`, read through ranged reads of it.
    fn head<G: PrimeField>(file: &[u8]) -> Result<R1csHead, Error> {
        r1cs_head::<G, ()>(file.len() as u64, |at, len| Ok(file[at as usize..(at + len) as usize].to_vec())).unwrap()
    }

    /// The head of a file `to_bytes` wrote gives its counts, with its sections in circom's order
    /// (constraints first) or the header first; a header that declares wires no constraint can
    /// use, another prime, another magic or a section past the file is refused from the head.
    #[test]
    fn heads_give_the_counts_and_refuse_what_decoding_would() {
        let f = file(2, 3);
        let want = R1csHead { num_wires: 2, num_pub_out: 1, num_pub_in: 0, num_prv_in: 0, num_labels: 0, num_constraints: 3 };
        assert_eq!(head::<F>(&f).unwrap(), want);
        R1cs::<F>::from_bytes(&f).unwrap();
        // circom's order: the constraints section (type 2) before the header (type 1).
        let sections = crate::sections(".r1cs", &f, b"r1cs", &[1]).unwrap();
        let mut swapped = f[..12].to_vec();
        for (kind, body) in sections.iter().rev() {
            swapped.extend(kind.to_le_bytes());
            swapped.extend((body.len() as u64).to_le_bytes());
            swapped.extend(*body);
        }
        assert_eq!(head::<F>(&swapped).unwrap(), want);
        R1cs::<F>::from_bytes(&swapped).unwrap();
        for wires in [1u32 << 20, 1 << 28] {
            let f = file(wires, 1);
            let e = head::<F>(&f).unwrap_err().to_string();
            assert!(e.contains(&format!("nWires {wires}")), "{e}");
            assert!(R1cs::<F>::from_bytes(&f).is_err());
        }
        let f = file(2, 1000);
        let e = head::<F>(&f[..200]).unwrap_err().to_string();
        assert!(e.contains("past the file") || e.contains("claims"), "{e}");
        assert!(matches!(head::<ark_bls12_381::Fr>(&f), Err(Error::Prime { .. })));
        let wtns = crate::write_wtns(&[F::one()]);
        assert!(head::<F>(&wtns).unwrap_err().to_string().contains("does not start with"));
    }
}
