//! A `.wtns` file checked from its first bytes: what a server can learn about a witness without
//! holding it (the platform's planner reads a witness's head by range and has the object store
//! copy the rest, so a job of 1,024 witnesses costs it no more memory than one).

use ark_ff::PrimeField;

use super::{check_prime, malformed, n8, Error, Reader};

/// Bytes of a `.wtns` file that always hold its header (magic, version, section table entry,
/// `n8`, a prime of up to 64 bytes, the count) when the header section comes first.
pub const WTNS_HEAD_BYTES: usize = 128;

/// What the head of a `.wtns` file says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WtnsHead {
    /// Values (wires) the file holds.
    pub wires: u64,
    /// The size the whole file must have, in bytes.
    pub file_len: u64,
}

/// Reads the head of a `.wtns` file (version 2, two sections, the header first, as circom and
/// snarkjs write it) from its first bytes (`head`, at least [`WTNS_HEAD_BYTES`] of them or the
/// whole file) and checks its prime against `F`: the wire count and the size the file must
/// have. [`super::read_wtns`] reads the whole file and accepts the same files (and also
/// sections in another order).
pub fn wtns_head<F: PrimeField>(head: &[u8]) -> Result<WtnsHead, Error> {
    const FILE: &str = ".wtns";
    let mut r = Reader::new(FILE, head);
    if r.take(4, "magic")? != b"wtns" {
        return Err(malformed(FILE, "does not start with \"wtns\""));
    }
    let version = r.u32("version")?;
    if version != 2 {
        return Err(Error::Unsupported { file: FILE, reason: format!("version {version} (this reader knows [2])") });
    }
    let count = r.u32("section count")?;
    if count != 2 {
        return Err(malformed(FILE, format!("{count} sections, expected 2 (header, values)")));
    }
    if r.u32("section type")? != 1 {
        return Err(malformed(FILE, "the header section must come first (as circom and snarkjs write it)"));
    }
    let header_len = r.u64("section size")?;
    let before = r.remaining();
    check_prime::<F>(&mut r)?;
    let wires = u64::from(r.u32("witness count")?);
    if (before - r.remaining()) as u64 != header_len {
        return Err(malformed(FILE, format!("a header section of {header_len} bytes")));
    }
    if r.u32("section type")? != 2 {
        return Err(malformed(FILE, "the values section must follow the header"));
    }
    let values_len = r.u64("section size")?;
    let want = wires * n8::<F>() as u64;
    if values_len != want {
        return Err(malformed(FILE, format!("{wires} values need {want} bytes, the section has {values_len}")));
    }
    let file_len = (head.len() - r.remaining()) as u64 + values_len;
    Ok(WtnsHead { wires, file_len })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read_wtns, write_wtns};
    use ark_bls12_381::Fr;

    /// The head of a file `write_wtns` wrote gives its wire count and exact size; a head cut
    /// short, another prime, or sections in another order are refused.
    #[test]
    fn heads_give_the_wire_count_and_size() {
        for n in [1usize, 3, 1000] {
            let w: Vec<Fr> = (0..n as u64).map(Fr::from).collect();
            let file = write_wtns(&w);
            let head = wtns_head::<Fr>(&file[..file.len().min(WTNS_HEAD_BYTES)]).unwrap();
            assert_eq!(head, WtnsHead { wires: n as u64, file_len: file.len() as u64 });
            assert_eq!(read_wtns::<Fr>(&file).unwrap().len(), n);
        }
        let file = write_wtns(&[Fr::from(1u64), Fr::from(2u64)]);
        assert!(wtns_head::<Fr>(&file[..20]).is_err(), "a head cut short");
        assert!(matches!(wtns_head::<ark_bn254::Fr>(&file), Err(Error::Prime { .. })), "another prime");
        let mut bad = file.clone();
        bad[0] = b'x';
        assert!(wtns_head::<Fr>(&bad).is_err());
    }
}
