//! Public signals as text: each field element has exactly one accepted decimal spelling, so a
//! statement compared or deduplicated by its text (a nullifier, a published `public.json`) is
//! the statement that was proved. Used by the CLI's verifiers and by the platform's reading of
//! what it published.

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
fn shown(s: &str) -> String {
    if s.chars().count() > 100 {
        format!("{:?}… ({} characters)", s.chars().take(90).collect::<String>(), s.chars().count())
    } else {
        format!("{s:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
