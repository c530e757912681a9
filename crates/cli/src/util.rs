//! Small helpers shared by the subcommands.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// Parses a `u64` written in decimal or as `0x`-prefixed hex.
pub fn parse_u64(s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    };
    parsed.with_context(|| format!("{t:?} is not a decimal or 0x-hex integer that fits in 64 bits"))
}

/// The longest decimal string [`canonical_field`] looks at: a 256-bit field's elements have at
/// most 78 digits.
const MAX_DECIMAL_DIGITS: usize = 80;

/// Parses a statement value (a public input, a public signal) as a **canonical** decimal field
/// element: the digits `0`–`9` only (no sign, no spaces, no `0x`), no leading zero except `"0"`
/// itself, and a value below the field's modulus `r`. So each field element has exactly one
/// accepted spelling: `"5"` is accepted, and `"05"`, `"+5"`, `"-(r-5)"` (written out) and
/// `r + 5` (written out) are refused, although they name the same field element modulo `r`.
/// (arkworks' `FromStr` reduces modulo `r` and accepts a sign: a consumer that compares or
/// deduplicates statements by their text, e.g. nullifiers, would see one proof verify under
/// several statements.) The error says what is wrong; callers add where the value was.
pub fn canonical_field<F: ark_ff::PrimeField>(s: &str) -> Result<F, String> {
    let why = if s.is_empty() {
        "empty".to_string()
    } else if !s.bytes().all(|b| b.is_ascii_digit()) {
        let sign = matches!(s.as_bytes()[0], b'+' | b'-');
        if sign {
            "has a sign (write the field element itself, in 0..r-1)".to_string()
        } else {
            "not decimal digits only".to_string()
        }
    } else if s.len() > 1 && s.starts_with('0') {
        "has a leading zero".to_string()
    } else if s.len() > MAX_DECIMAL_DIGITS {
        format!("{} digits, more than any field element has", s.len())
    } else {
        let modulus = F::MODULUS.to_string();
        if (s.len(), s) >= (modulus.len(), modulus.as_str()) {
            format!("not below the field's modulus r = {modulus}")
        } else {
            match F::from_str(s) {
                // The round trip is the definition of canonical; the checks above only name
                // the reason.
                Ok(v) if v.to_string() == s => return Ok(v),
                _ => "not a canonical field element".to_string(),
            }
        }
    };
    Err(format!("{} is not a canonical decimal field element: {why}", shown(s)))
}

/// A value quoted for an error message (long ones cut).
pub fn shown(s: &str) -> String {
    if s.chars().count() > 100 {
        format!("{:?}… ({} characters)", s.chars().take(90).collect::<String>(), s.chars().count())
    } else {
        format!("{s:?}")
    }
}

/// Writes a directory atomically: `fill` writes into a fresh temporary sibling, which is then
/// renamed to `out`. A failure leaves nothing behind. `out` must not exist yet, or be empty.
pub fn write_dir_atomically(out: &Path, fill: impl FnOnce(&Path) -> anyhow::Result<()>) -> anyhow::Result<()> {
    if out.exists() {
        let empty = out.is_dir() && std::fs::read_dir(out)?.next().is_none();
        if !empty {
            bail!("--out {}: already exists and is not an empty directory", out.display());
        }
        std::fs::remove_dir(out)?;
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let name = out.file_name().context("--out must name a directory")?.to_string_lossy().to_string();
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    match fill(&tmp) {
        Ok(()) => std::fs::rename(&tmp, out).with_context(|| format!("renaming into {}", out.display())),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

/// Runs `f`, returning its result and how long it took.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

pub fn secs(d: Duration) -> String {
    if d.as_secs_f64() < 1.0 {
        format!("{:.1} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_decimal_and_hex() {
        assert_eq!(parse_u64("42").unwrap(), 42);
        assert_eq!(parse_u64("0xff").unwrap(), 255);
        assert_eq!(parse_u64(" 0XFF ").unwrap(), 255);
        assert!(parse_u64("-1").is_err());
        assert!(parse_u64("0x1_0000_0000_0000_0000").is_err());
        assert!(parse_u64("18446744073709551616").is_err());
    }

    #[test]
    fn statements_must_be_canonical_decimal_field_elements() {
        use ark_ff::{BigInteger, PrimeField};
        type F = ark_bls12_381::Fr;
        let r = F::MODULUS;
        let (mut r_plus_5, mut r_minus_5) = (r, r);
        r_plus_5.add_with_carry(&5u64.into());
        r_minus_5.sub_with_borrow(&5u64.into());
        assert_eq!(canonical_field::<F>("5").unwrap(), F::from(5u64));
        assert_eq!(canonical_field::<F>("0").unwrap(), F::from(0u64));
        let max = { let mut m = r; m.sub_with_borrow(&1u64.into()); m.to_string() };
        assert_eq!(canonical_field::<F>(&max).unwrap(), -F::from(1u64));
        for (bad, reason) in [
            (r_plus_5.to_string(), "not below the field's modulus"),
            (format!("-{r_minus_5}"), "has a sign"),
            ("05".to_string(), "leading zero"),
            ("00".to_string(), "leading zero"),
            ("+5".to_string(), "has a sign"),
            (r.to_string(), "not below the field's modulus"),
            ("".to_string(), "empty"),
            (" 5".to_string(), "not decimal digits"),
            ("0x5".to_string(), "not decimal digits"),
            ("5".repeat(200), "more than any field element"),
        ] {
            let err = canonical_field::<F>(&bad).unwrap_err();
            assert!(err.contains(reason), "{bad:?}: {err}");
            assert!(err.contains(&bad[..bad.len().min(20)]), "names the value: {err}");
        }
        // The same on BN254 (r + 5 of the other field).
        let mut bn = ark_bn254::Fr::MODULUS;
        bn.add_with_carry(&5u64.into());
        assert!(canonical_field::<ark_bn254::Fr>(&bn.to_string()).unwrap_err().contains("modulus"));
    }
}
