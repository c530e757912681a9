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

/// Statement values are read canonically: one spelling per field element (see
/// [`circom::canonical_field`], shared with the platform's own reading of published statements).
pub use circom::canonical_field;

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
}
