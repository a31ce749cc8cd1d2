//! What an ELF file needs from the dynamic loader: its `PT_INTERP` loader path, its `DT_NEEDED`
//! libraries and its `DT_RUNPATH`/`DT_RPATH` directories (the inputs of `ld.so`'s search, see
//! ld.so(8)).

use object::elf::{DT_NEEDED, DT_RPATH, DT_RUNPATH, FileHeader64};
use object::read::elf::{FileHeader, ProgramHeader};
use object::{Endianness, elf::ELFMAG};

/// The dynamic-loading needs of one ELF file.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    /// `PT_INTERP`, e.g. `/lib64/ld-linux-x86-64.so.2`; `None` for a shared library or a static
    /// binary.
    pub interpreter: Option<String>,
    /// `DT_NEEDED` in order, e.g. `libc.so.6`.
    pub needed: Vec<String>,
    /// `DT_RUNPATH` (or, without one, `DT_RPATH`) split on `:`, `$ORIGIN` not yet expanded.
    pub runpath: Vec<String>,
}

/// Whether `data` starts with the ELF magic.
pub(crate) fn is_elf(data: &[u8]) -> bool {
    data.starts_with(&ELFMAG)
}

/// Reads the needs of a 64-bit ELF file.
///
/// # Errors
/// The parser's message when `data` is not a well-formed 64-bit ELF file.
pub(crate) fn needs(data: &[u8]) -> Result<Needs, String> {
    let header = FileHeader64::<Endianness>::parse(data).map_err(|e| e.to_string())?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    let mut out = Needs::default();
    for segment in header
        .program_headers(endian, data)
        .map_err(|e| e.to_string())?
    {
        if let Some(interp) = segment
            .interpreter(endian, data)
            .map_err(|e| e.to_string())?
        {
            out.interpreter = Some(String::from_utf8_lossy(interp).into_owned());
        }
    }
    let sections = header.sections(endian, data).map_err(|e| e.to_string())?;
    let table = sections
        .dynamic_table(endian, data)
        .map_err(|e| e.to_string())?;
    let (mut runpath, mut rpath) = (None, None);
    for entry in &table {
        let tag = entry.tag;
        if ![DT_NEEDED, DT_RUNPATH, DT_RPATH].contains(&tag) {
            continue;
        }
        let value =
            String::from_utf8_lossy(table.string(entry).map_err(|e| e.to_string())?).into_owned();
        match tag {
            DT_NEEDED => out.needed.push(value),
            DT_RUNPATH => runpath = Some(value),
            _ => rpath = Some(value),
        }
    }
    // ld.so ignores DT_RPATH when DT_RUNPATH is present.
    out.runpath = runpath
        .or(rpath)
        .map(|p| {
            p.split(':')
                .filter(|d| !d.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test binary itself is a dynamically linked 64-bit ELF executable on the platforms we
    /// build for: it has a loader and needs libc.
    #[test]
    fn reads_the_test_binary() {
        let exe = std::env::current_exe().unwrap();
        let data = std::fs::read(&exe).unwrap();
        assert!(is_elf(&data));
        let needs = needs(&data).unwrap();
        let interp = needs.interpreter.clone().expect("a PT_INTERP");
        assert!(
            interp.starts_with('/') && interp.contains("ld-linux"),
            "{interp}"
        );
        assert!(needs.needed.iter().any(|n| n == "libc.so.6"), "{needs:?}");
    }

    #[test]
    fn rejects_what_is_not_elf() {
        assert!(!is_elf(b"#!/bin/sh\n"));
        assert!(needs(b"\x7fELF\x02\x01\x01").is_err());
        assert!(needs(b"").is_err());
    }
}
